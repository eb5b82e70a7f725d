"""Calibrations and audit runs point at their Condition row (step 2 of 2): the key column goes, the
filled foreign key takes its name and becomes required, and versions are numbered per study, kind and
condition row. A separate migration from step 1, so that PostgreSQL alters the tables in a transaction
without pending row updates."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("surveys", "0010_condition_foreign_keys"),
    ]

    operations = [
        migrations.RemoveField(model_name="calibration", name="condition"),
        migrations.RemoveField(model_name="auditrun", name="condition"),
        migrations.RenameField(model_name="calibration", old_name="condition_ref", new_name="condition"),
        migrations.RenameField(model_name="auditrun", old_name="condition_ref", new_name="condition"),
        migrations.AlterField(
            model_name="calibration",
            name="condition",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.RESTRICT, related_name="calibrations", to="surveys.condition"
            ),
        ),
        migrations.AlterField(
            model_name="auditrun",
            name="condition",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.RESTRICT, related_name="audit_runs", to="surveys.condition"
            ),
        ),
        migrations.AlterModelOptions(
            name="calibration",
            options={"ordering": ["study", "kind", "condition__key", "-version"]},
        ),
        migrations.AddConstraint(
            model_name="calibration",
            constraint=models.UniqueConstraint(
                fields=("study", "kind", "condition", "version"), name="calibration_version_unique"
            ),
        ),
    ]
