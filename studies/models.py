"""What a study is: its stored versions (one per changed study file) and their between-subjects
conditions. One version number per slug is a database constraint."""

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.strict_json import StrictJSONField


class Study(models.Model):
    """One version of a study file. A changed file for a study with answers becomes a new version."""

    class Status(models.TextChoices):
        """The study's lifecycle (``studies.lifecycle``): who may start it (every version has the slug's state)."""

        DRAFT = "draft"
        PILOT = "pilot"
        LIVE = "live"
        PAUSED = "paused"
        CLOSED = "closed"

    slug = models.SlugField(max_length=60)
    version = models.PositiveIntegerField(default=1)
    title = models.CharField(max_length=200)
    spec = StrictJSONField(help_text="The validated study file, defaults filled in.")
    spec_hash = models.CharField(max_length=64)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="owned_studies"
    )
    collaborators: "models.ManyToManyField[Any, Collaborator]" = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="shared_studies", through="Collaborator"
    )
    loaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who loaded this version's file (the owner, or an account with studies.load_any_study).",
    )
    format1_spec = StrictJSONField(
        null=True,
        blank=True,
        editable=False,
        help_text="The format 1 study file (validated) this version was converted from (studies.format1): provenance.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.LIVE,
        db_default=Status.LIVE,  # rows written by code (or migrations) that predate the column are live
        help_text="Lifecycle state, the same on every version of the slug (studies.lifecycle).",
    )
    tickets_issued = models.PositiveIntegerField(
        default=0,
        editable=False,
        help_text="How many places of the assignment sequence consenting participants took: the next ticket "
        "(participation.assignment).",
    )

    class Meta:
        db_table = "surveys_study"  # the table keeps its name from before the app owned it
        ordering = ["slug", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="study_slug_version_unique"),
            models.CheckConstraint(
                condition=Q(status__in=["draft", "pilot", "live", "paused", "closed"]), name="study_status_known"
            ),
        ]
        verbose_name_plural = "studies"
        permissions = [("load_any_study", "Can load a new version of any researcher's study")]

    def __str__(self) -> str:
        return f"{self.slug} v{self.version}"


class Condition(models.Model):
    """A between-subjects condition of a study version (participants point at it; its content is in
    ``Study.spec``). Format 1 conditions name the effort feature shown; format 2 conditions have only a
    key, a label and an optional cap on participants."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    key = models.CharField(max_length=40)
    label = models.CharField(max_length=200)
    feature = models.CharField(max_length=100, blank=True, help_text="Format 1: the effort feature shown.")
    unit = models.CharField(max_length=40, blank=True, help_text="Format 1: the feature's unit.")
    desirable = models.BooleanField(null=True, blank=True, help_text="Format 1: whether more of the feature is good.")
    cap = models.PositiveIntegerField(null=True, blank=True, help_text="Most participants assigned (format 2).")
    position = models.PositiveSmallIntegerField()

    class Meta:
        db_table = "surveys_condition"  # the table keeps its name from before the app owned it
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="condition_key_unique"),
            models.CheckConstraint(condition=Q(cap__isnull=True) | Q(cap__gte=1), name="condition_cap_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.study} / {self.key}"


class StudyStatusChange(models.Model):
    """One change of a study's lifecycle state: who (None: the platform, e.g. the recruitment target),
    when, from and to which state, and why."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="status_changes")
    old_status = models.CharField(max_length=10, blank=True, help_text="Empty when the study was created.")
    new_status = models.CharField(max_length=10, choices=Study.Status.choices)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField()
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-changed_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.study.slug}: {self.old_status or '-'} -> {self.new_status}"


class Collaborator(models.Model):
    """A researcher the study is shared with, and their role (``studies.collaborators``): a viewer sees the
    dashboard, reports and exports; an editor also changes the study's state, starts runs and cancels jobs. The study's
    first version holds its collaborators (``studies.selectors.owning_version``). The table is the one
    Django made for the plain many-to-many field before roles."""

    class Role(models.TextChoices):
        VIEWER = "viewer"
        EDITOR = "editor"

    id = models.AutoField(primary_key=True)  # the many-to-many table's own key
    study = models.ForeignKey(Study, on_delete=models.CASCADE)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    role = models.CharField(
        max_length=10,
        choices=Role.choices,
        default=Role.EDITOR,
        db_default=Role.EDITOR,  # collaborators from before roles could do everything an editor can
    )

    class Meta:
        db_table = "surveys_study_collaborators"
        unique_together = [("study", "user")]  # the many-to-many table's own unique index
        constraints = [
            models.CheckConstraint(condition=Q(role__in=["viewer", "editor"]), name="collaborator_role_known")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}: {self.user} ({self.role})"


class CollaboratorChange(models.Model):
    """One change of a study's collaborators, shown on its dashboard: who changed what (added, role
    changed, removed), for whom and when. The collaborator's name is kept as text, so the log reads the
    same after their account is gone."""

    class Action(models.TextChoices):
        ADDED = "added", "added"
        ROLE = "role", "role changed"
        REMOVED = "removed", "removed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="collaborator_changes")
    username = models.CharField(max_length=150, help_text="The collaborator's username at the time.")
    action = models.CharField(max_length=10, choices=Action.choices)
    role = models.CharField(max_length=10, blank=True, help_text="The role given (empty when removed).")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["-changed_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.study.slug}: {self.username} {self.action}"
