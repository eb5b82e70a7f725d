"""What the audit tests feed an audit: the demo audit's subjects CSV (``generate_demo_audit``) made once per
process and copied into each test's folder (a pure function of the bundled effort demo, its condition and seed,
whose three scikit-learn fits cost more than a second of CPU every time the command runs), and the bootstrap size
of audit jobs already queued (the API does not take it; a job's stored ``n_resamples`` sets it)."""

import tempfile
from functools import cache
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from runs.models import Job


@cache
def _written(condition: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "subjects.csv"
        call_command("generate_demo_audit", condition=condition, out=str(path), stdout=StringIO())
        return path.read_bytes()


def demo_subjects_csv(path: Path, condition: str = "arrests") -> Path:
    """``path`` holding the file ``generate_demo_audit --condition CONDITION --out PATH`` writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_written(condition))
    return path


def queued_audits_resampled(n_resamples: int) -> None:
    """Every queued audit job runs with ``n_resamples`` bootstrap resamples (for tests that compare point estimates
    or check a job's life cycle, not its intervals)."""
    for job in Job.objects.filter(kind=Job.Kind.AUDIT, status=Job.Status.QUEUED):
        job.params = {**job.params, "n_resamples": n_resamples}
        job.save(update_fields=["params"])
