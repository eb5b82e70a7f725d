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
from studies.models import Study
from studies.services import convert_version


@transaction.atomic
def convert_stored_study(study: Study) -> int:
    """Store the format 1 version ``study`` as its format 2 conversion and convert its participants'
    plans (:func:`studies.services.convert_version`); returns the number of plans converted. A version
    already in format 2 is left as it is."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    return convert_version(study, Participant.objects.filter(study=study))
