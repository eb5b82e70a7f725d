"""The answers' CHECK constraints (measure known, Likert / percent / score / sureness ranges, 0/1 answers)
become the task registry's rules, a trigger every ``migrate`` reinstalls (``participation.answer_rules``),
so that a new task type's measures need no migration. The stored answers are checked against the rules
first: a row they would refuse stops the migration with its measure and count (nothing is changed)."""

from django.db import migrations, models

OLD_CONSTRAINTS = (
    "answer_likert_range",
    "answer_percent_range",
    "answer_score_range",
    "answer_sureness_range",
    "answer_measure_known",
    "answer_binary",
)


def check_stored_answers(apps, schema_editor):
    from participation.answer_rules import stored_violations

    refused = stored_violations(schema_editor.connection)
    if refused:
        raise RuntimeError(
            "stored answers the task registry's rules refuse (measure: rows): "
            + ", ".join(f"{m}: {n}" for m, n in sorted(refused.items()))
        )


def install_rules(apps, schema_editor):
    from participation.answer_rules import install

    install(schema_editor.connection)


def uninstall_rules(apps, schema_editor):
    from participation.answer_rules import uninstall

    uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("participation", "0010_adaptive_designs")]

    operations = [
        migrations.RunPython(check_stored_answers, migrations.RunPython.noop),
        *(migrations.RemoveConstraint(model_name="answer", name=name) for name in OLD_CONSTRAINTS),
        migrations.AlterField(model_name="answer", name="measure", field=models.CharField(max_length=16)),
        migrations.RunPython(install_rules, uninstall_rules),
    ]
