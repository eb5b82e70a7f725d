"""Drop the Subject, StimulusSet, Comparison and DisagreementPrompt tables: they were written at study
load but never read. Nothing is lost: every version keeps its whole study file in ``Study.spec``
(subjects, stimulus sets with their comparisons and relations, disagreement prompts), and every page,
export and analysis reads the content from there.

Conditions stay (participants, calibrations and audit runs point at them) and can hold format 2
conditions: feature, unit and desirable become optional, and a condition may have a cap.

The reverse recreates the four tables empty (nothing read them) and needs every condition to have a
``desirable`` value again (format 1 conditions only)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("surveys", "0008_item_assignment"),
    ]

    operations = [
        migrations.DeleteModel(name="Comparison"),
        migrations.DeleteModel(name="StimulusSet"),
        migrations.DeleteModel(name="DisagreementPrompt"),
        migrations.DeleteModel(name="Subject"),
        migrations.AlterField(
            model_name="condition",
            name="feature",
            field=models.CharField(blank=True, help_text="Format 1: the effort feature shown.", max_length=100),
        ),
        migrations.AlterField(
            model_name="condition",
            name="unit",
            field=models.CharField(blank=True, help_text="Format 1: the feature's unit.", max_length=40),
        ),
        migrations.AlterField(
            model_name="condition",
            name="desirable",
            field=models.BooleanField(blank=True, help_text="Format 1: whether more of the feature is good.", null=True),
        ),
        migrations.AddField(
            model_name="condition",
            name="cap",
            field=models.PositiveIntegerField(blank=True, help_text="Most participants assigned (format 2).", null=True),
        ),
        migrations.AddConstraint(
            model_name="condition",
            constraint=models.CheckConstraint(
                condition=models.Q(("cap__isnull", True), ("cap__gte", 1), _connector="OR"),
                name="condition_cap_positive",
            ),
        ),
    ]
