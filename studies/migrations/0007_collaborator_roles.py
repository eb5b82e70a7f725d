"""Collaborators get a role (viewer, editor) and a log of changes. The many-to-many table Django made
for ``Study.collaborators`` becomes the ``Collaborator`` model as it is (state only: same table, columns
and unique index), then gains its ``role`` column (existing collaborators: editors, what they could do
before) and a check of its values."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0006_study_lifecycle"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Collaborator",
                    fields=[
                        ("id", models.AutoField(primary_key=True, serialize=False)),
                        ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="studies.study")),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, to=settings.AUTH_USER_MODEL
                            ),
                        ),
                    ],
                    options={"db_table": "surveys_study_collaborators", "unique_together": {("study", "user")}},
                ),
                migrations.AlterField(
                    model_name="study",
                    name="collaborators",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="shared_studies",
                        through="studies.Collaborator",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name="collaborator",
            name="role",
            field=models.CharField(
                choices=[("viewer", "Viewer"), ("editor", "Editor")],
                db_default="editor",
                default="editor",
                max_length=10,
            ),
        ),
        migrations.AddConstraint(
            model_name="collaborator",
            constraint=models.CheckConstraint(
                condition=models.Q(("role__in", ["viewer", "editor"])), name="collaborator_role_known"
            ),
        ),
        migrations.CreateModel(
            name="CollaboratorChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("username", models.CharField(help_text="The collaborator's username at the time.", max_length=150)),
                (
                    "action",
                    models.CharField(
                        choices=[("added", "added"), ("role", "role changed"), ("removed", "removed")], max_length=10
                    ),
                ),
                (
                    "role",
                    models.CharField(blank=True, help_text="The role given (empty when removed).", max_length=10),
                ),
                ("changed_at", models.DateTimeField()),
                (
                    "changed_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "study",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="collaborator_changes",
                        to="studies.study",
                    ),
                ),
            ],
            options={"ordering": ["-changed_at", "-pk"]},
        ),
    ]
