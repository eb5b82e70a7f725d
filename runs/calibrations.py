"""Storing a Calibration: versions are numbered per study, kind and condition, under a lock so
that two runs finishing at the same moment get consecutive versions instead of one failing on
``calibration_version_unique``."""

from django.db import transaction
from django.db.models import Max

from runs.models import Calibration
from studies.models import Condition, Study


def study_condition(study: Study, key: str) -> Condition:
    """The condition ``key`` of this study version, else of the newest version of its slug that has it
    (an analysis spans every version, so its conditions may include one the latest file dropped)."""
    found = (
        Condition.objects.filter(study=study, key=key).first()
        or Condition.objects.filter(study__slug=study.slug, key=key).order_by("-study__version").first()
    )
    if found is None:
        raise LookupError(f"study {study.slug!r} has no condition {key!r}")
    return found


def calibration_create(*, study: Study, kind: str, condition: str, **fields) -> Calibration:
    """Create the next version of (study, kind, condition key); call inside the run's transaction."""
    with transaction.atomic():
        # The study row is the lock: concurrent runs of one study number their versions one by one.
        Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True).first()
        row = study_condition(study, condition)
        previous = Calibration.objects.filter(study=study, kind=kind, condition=row).aggregate(v=Max("version"))
        return Calibration.objects.create(
            study=study, kind=kind, condition=row, version=(previous["v"] or 0) + 1, **fields
        )
