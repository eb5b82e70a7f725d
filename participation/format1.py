"""A stored format 1 study version, with its participants, turned into its format 2 conversion.

The version's study file becomes :func:`studies.format1.format1_to_format2`'s file (validated; the
format 1 file is kept in ``Study.format1_spec``), and each participant's stored plan becomes the
same pages in format 2's page shape (:func:`studies.format1.converted_plan`): the converted blocks
keep format 1's page and question keys (``page_key``, ``tasks.questions``), so the stored page
visits and answers stay as they are, the exports read them unchanged (byte for byte, tested on the
effort demo's golden files) and a participant in the middle of the study continues on the format 2
runtime at the page they reached.
"""

from django.db import transaction

from participation.models import Participant
from studies.format1 import converted_plan, format1_to_format2
from studies.models import Study
from studies.services import spec_digest
from studies.study_file import validate_study


@transaction.atomic
def convert_stored_study(study: Study) -> int:
    """Store the format 1 version ``study`` as its format 2 conversion and convert its participants'
    plans; returns the number of plans converted. A version already in format 2 is left as it is."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    if study.spec.get("format", 1) == 2:
        return 0
    original = validate_study(study.spec)
    spec = validate_study(format1_to_format2(original))
    study.format1_spec, study.spec, study.spec_hash = original, spec, spec_digest(spec)
    study.save(update_fields=["format1_spec", "spec", "spec_hash"])
    converted = 0
    participants = Participant.objects.filter(study=study, condition__isnull=False).values_list("pk", "condition__key")
    for pk, condition in participants:  # with a condition: those who consented (a plan)
        participant = Participant.objects.get(pk=pk)
        participant.plan = converted_plan(spec, condition, participant.plan)
        participant.save(update_fields=["plan"])
        converted += 1
    return converted
