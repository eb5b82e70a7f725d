"""What a study is, who took part and what they answered.

Rules that must never break are database constraints as well as service checks: one answer per
participant and question, numbers in the range of their measure, one version number per slug.
"""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from tasks import MEASURES, TASK_TYPES


class Study(models.Model):
    """One version of a study file. A changed file for a study with answers becomes a new version."""

    slug = models.SlugField(max_length=60)
    version = models.PositiveIntegerField(default=1)
    title = models.CharField(max_length=200)
    spec = models.JSONField(help_text="The validated study file, defaults filled in.")
    spec_hash = models.CharField(max_length=64)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="owned_studies"
    )
    collaborators = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_studies")
    created_at = models.DateTimeField(auto_now_add=True)
    tickets_issued = models.PositiveIntegerField(
        default=0,
        editable=False,
        help_text="How many places of the assignment sequence consenting participants took: the next ticket "
        "(participation.assignment).",
    )

    class Meta:
        ordering = ["slug", "-version"]
        constraints = [models.UniqueConstraint(fields=["slug", "version"], name="study_slug_version_unique")]
        verbose_name_plural = "studies"

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
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="condition_key_unique"),
            models.CheckConstraint(condition=Q(cap__isnull=True) | Q(cap__gte=1), name="condition_cap_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.study} / {self.key}"


class Participant(models.Model):
    class Status(models.TextChoices):
        ARRIVED = "arrived", "Arrived (consent pending)"
        DECLINED = "declined", "Declined consent"
        ACTIVE = "active", "In progress"
        COMPLETED = "completed", "Completed"
        WITHDRAWN = "withdrawn", "Withdrew (answers deleted)"
        TIMED_OUT = "timed_out", "Timed out (past the study's time limit)"
        SCREENED_OUT = "screened_out", "Screened out"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participants")
    condition = models.ForeignKey(
        Condition, null=True, blank=True, on_delete=models.PROTECT, related_name="participants"
    )
    external_id = models.CharField(max_length=128, help_text="PROLIFIC_PID or participant_label, as received.")
    pseudonym = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    prolific_study_id = models.CharField(max_length=128, blank=True)
    prolific_session_id = models.CharField(max_length=128, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ARRIVED)
    seed = models.BigIntegerField(help_text="Seed of this participant's randomised order.")
    plan = models.JSONField(default=list, blank=True, help_text="The ordered pages this participant is shown.")
    position = models.PositiveIntegerField(default=0, help_text="Index in plan of the first unanswered page.")
    ticket = models.PositiveIntegerField(
        null=True,
        blank=True,
        editable=False,
        help_text="Place in the study version's assignment sequence (participation.assignment), which fixes the "
        "condition and the sampled items; empty for pilots, before consent, and once a drop-out's place went to "
        "another participant.",
    )
    simulated = models.BooleanField(default=False)
    pilot = models.BooleanField(
        default=False, help_text="Came through the researcher's pilot link: left out of balance, exports and analyses."
    )
    arrived_at = models.DateTimeField(default=timezone.now)
    consented_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    resume_code_hash = models.CharField(
        max_length=64, blank=True, help_text="Keyed hash (HMAC) of the resume code shown to the participant."
    )
    resume_failures = models.PositiveSmallIntegerField(default=0, help_text="Wrong resume codes in a row.")
    resume_failed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "arrived_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="participant_external_id_unique"),
            models.UniqueConstraint(fields=["study", "ticket"], name="participant_ticket_unique"),
            models.CheckConstraint(
                condition=Q(status__in=["arrived", "declined"]) | Q(condition__isnull=False),
                name="participant_active_has_condition",
            ),
        ]
        indexes = [
            models.Index(fields=["study", "condition", "status"]),
            models.Index(fields=["study", "status", "arrived_at"], name="participant_gone_lookup"),
        ]

    def __str__(self) -> str:
        return str(self.pseudonym)


class PageVisit(models.Model):
    """When a page was first shown and when it was submitted (time spent = the difference)."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="visits")
    page = models.CharField(max_length=120)
    first_shown_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    refusals = models.PositiveIntegerField(default=0, help_text="Submissions refused by validation.")

    class Meta:
        ordering = ["participant", "first_shown_at"]
        constraints = [models.UniqueConstraint(fields=["participant", "page"], name="page_visit_unique")]

    def __str__(self) -> str:
        return self.page

    @property
    def seconds(self) -> float | None:
        if self.submitted_at is None:
            return None
        return (self.submitted_at - self.first_shown_at).total_seconds()


# Answer.measure: every measure a registered task type writes (``TaskType.measures``), with its meaning.
# (A measure several types write, such as "prediction", keeps the meaning of the first type that has it.)
_MEANINGS: dict[str, str] = {}
for _task in TASK_TYPES:
    for _measure, _column in _task.measures.items():
        _MEANINGS.setdefault(_measure, _column.meaning)
MEASURE_CHOICES = [(measure, _MEANINGS[measure]) for measure in MEASURES]


LIKERT_MEASURES = ("trajectory", "aggregate", "overall")


class Answer(models.Model):
    """One answer to one question. ``number`` holds numeric answers, ``text`` the rest."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="answers")
    page = models.CharField(max_length=120)
    question = models.CharField(max_length=160)
    measure = models.CharField(max_length=16, choices=MEASURE_CHOICES)
    set_key = models.CharField(max_length=40, blank=True)
    subject_key = models.CharField(max_length=40, blank=True)
    number = models.FloatField(null=True, blank=True)
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["participant", "id"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "question"], name="one_answer_per_question"),
            # Only the measures of registered task types: a task type writing another is refused by the
            # database, not only by the form (a new measure needs a migration: makemigrations --check in CI).
            models.CheckConstraint(condition=Q(measure__in=MEASURES), name="answer_measure_known"),
            models.CheckConstraint(
                condition=~Q(measure__in=LIKERT_MEASURES) | Q(number__gte=1, number__lte=11),
                name="answer_likert_range",
            ),
            models.CheckConstraint(
                condition=~Q(measure="prediction") | Q(number__gte=0, number__lte=100), name="answer_percent_range"
            ),
            models.CheckConstraint(
                condition=~Q(measure__in=["k_score", "fair_score"]) | Q(number__gte=0, number__lte=1),
                name="answer_score_range",
            ),
            models.CheckConstraint(
                condition=~Q(measure__in=["k_accept", "agree", "attention", "comparable"]) | Q(number__in=[0, 1]),
                name="answer_binary",
            ),
            models.CheckConstraint(
                condition=~Q(measure__in=["confidence", "strength"]) | Q(number__gte=1, number__lte=5),
                name="answer_sureness_range",
            ),
        ]
        indexes = [models.Index(fields=["participant", "measure"])]

    def __str__(self) -> str:
        return self.question


class AnalysisRun(models.Model):
    """One run of the study pipeline (``analyze_study``): where its report is and what it found."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="analysis_runs")
    seed = models.BigIntegerField()
    n_resamples = models.PositiveIntegerField()
    files_prefix = models.CharField(max_length=500, help_text="Storage folder of the report files.")
    results = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.study} analysis (seed {self.seed})"


class Calibration(models.Model):
    """A human-calibrated effort weight alpha for one condition, versioned per study, kind and condition."""

    class Kind(models.TextChoices):
        LIKERT = "likert", "Likert regression (Eq. 5)"
        DISAGREEMENT = "disagreement", "Yes/no disagreement feedback"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="calibrations")
    analysis_run = models.ForeignKey(
        AnalysisRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="calibrations"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    condition = models.ForeignKey(Condition, on_delete=models.RESTRICT, related_name="calibrations")
    version = models.PositiveIntegerField()
    alpha = models.FloatField(help_text="Weight of trajectory (effort) distance; 1 - alpha weights the aggregate.")
    ci_low = models.FloatField()
    ci_high = models.FloatField()
    a1 = models.FloatField(null=True, blank=True, help_text="Coefficient of aggregate distance d_S")
    a2 = models.FloatField(null=True, blank=True, help_text="Coefficient of trajectory distance d_E")
    n_participants = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["study", "kind", "condition__key", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["study", "kind", "condition", "version"], name="calibration_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} {self.kind}/{self.condition.key} v{self.version}: alpha={self.alpha:.4f}"


class AuditRun(models.Model):
    """One ``audit_models`` run: the models compared, under which weights, and where the report is."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="audit_runs")
    condition = models.ForeignKey(Condition, on_delete=models.RESTRICT, related_name="audit_runs")
    subjects_file = models.CharField(max_length=500)
    likert_calibration = models.ForeignKey(
        Calibration, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    files_prefix = models.CharField(max_length=500, help_text="Storage folder of the report files.")
    results = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.study} audit ({self.condition.key})"
