"""Storing a Calibration: versions are numbered per study, kind and condition, under a lock so
that two runs finishing at the same moment get consecutive versions instead of one failing on
``calibration_version_unique``."""

from django.db import transaction
from django.db.models import Max

from surveys.models import Calibration, Study


def calibration_create(*, study: Study, kind: str, condition: str, **fields) -> Calibration:
    """Create the next version of (study, kind, condition); call inside the run's transaction."""
    with transaction.atomic():
        # The study row is the lock: concurrent runs of one study number their versions one by one.
        Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True).first()
        previous = Calibration.objects.filter(study=study, kind=kind, condition=condition).aggregate(v=Max("version"))
        return Calibration.objects.create(
            study=study, kind=kind, condition=condition, version=(previous["v"] or 0) + 1, **fields
        )
