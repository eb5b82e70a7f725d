"""Calibrations and audit runs point at their Condition row instead of naming its key (step 1 of 2).

Each stored key is mapped to the condition with that key in the row's own study version; a
calibration of a slug's analysis may name a condition that only an earlier version of the slug has
(the export spans every version), and then points at the newest version's condition with that key.
The reverse writes the key back. The version-numbering constraint is rebuilt on the foreign key in
step 2."""

import django.db.models.deletion
from django.db import migrations, models


def _conditions(apps) -> tuple[dict, dict]:
    """(study id, key) -> condition id, and (slug, key) -> the newest version's condition id."""
    Condition = apps.get_model("surveys", "Condition")
    by_study, by_slug = {}, {}
    rows = Condition.objects.order_by("study__version").values_list("pk", "study_id", "study__slug", "key")
    for pk, study_id, slug, key in rows:
        by_study[(study_id, key)] = pk
        by_slug[(slug, key)] = pk
    return by_study, by_slug


def keys_to_rows(apps, schema_editor):
    by_study, by_slug = _conditions(apps)
    for name in ("Calibration", "AuditRun"):
        model = apps.get_model("surveys", name)
        for pk, study_id, slug, key in model.objects.values_list("pk", "study_id", "study__slug", "condition"):
            found = by_study.get((study_id, key)) or by_slug.get((slug, key))
            if found is None:
                raise RuntimeError(
                    f"{name} {pk}: study {slug!r} has no condition {key!r} in any version; "
                    "add the condition or delete the row, then migrate again"
                )
            model.objects.filter(pk=pk).update(condition_ref=found)


def rows_to_keys(apps, schema_editor):
    for name in ("Calibration", "AuditRun"):
        model = apps.get_model("surveys", name)
        for pk, key in model.objects.values_list("pk", "condition_ref__key"):
            model.objects.filter(pk=pk).update(condition=key)


class Migration(migrations.Migration):

    dependencies = [
        ("surveys", "0009_content_from_study_file"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="calibration", name="calibration_version_unique"),
        migrations.AlterField(model_name="calibration", name="condition", field=models.CharField(blank=True, max_length=40)),
        migrations.AlterField(model_name="auditrun", name="condition", field=models.CharField(blank=True, max_length=40)),
        migrations.AddField(
            model_name="calibration",
            name="condition_ref",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.RESTRICT, related_name="+", to="surveys.condition"
            ),
        ),
        migrations.AddField(
            model_name="auditrun",
            name="condition_ref",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.RESTRICT, related_name="+", to="surveys.condition"
            ),
        ),
        migrations.RunPython(keys_to_rows, rows_to_keys),
    ]
