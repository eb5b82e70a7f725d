"""Every stored format 1 study version becomes its format 2 conversion (``studies.services.convert_version``:
the spec, its hash, the original kept in ``format1_spec``, and each participant's plan as the same pages in
format 2's shape); page visits and answers keep their keys, so exports stay byte-identical.

One-way for the data: the reverse leaves the versions converted, which the code before this migration
runs and exports as well (it already had the format 2 runtime with ``page_key`` and
``participation.format1.convert_stored_study``); the format 1 file stays in ``format1_spec``."""

from django.db import migrations

from studies.services import convert_version


def convert_format1_versions(apps, schema_editor):
    study_model = apps.get_model("studies", "Study")
    participant_model = apps.get_model("participation", "Participant")
    for study in study_model.objects.order_by("pk").iterator():
        convert_version(study, participant_model.objects.filter(study=study))


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0003_study_format1_spec"),
        ("participation", "0010_adaptive_designs"),
    ]

    operations = [migrations.RunPython(convert_format1_versions, migrations.RunPython.noop, elidable=False)]
