"""A background job: one analysis, audit, situation test, differential-parity run, study plan, design check,
preregistration, or a large study file's build, check or load started from the web, executed by a worker
process (``manage.py job_worker``), never inside a web request."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.strict_json import StrictJSONField
from studies.models import Condition, Study


class Job(models.Model):
    class Kind(models.TextChoices):
        ANALYSIS = "analysis", "Study analysis"
        AUDIT = "audit", "Model audit"
        SITUATION_TESTING = "situation_testing", "Situation testing"
        DIFFERENTIAL_PARITY = "differential_parity", "Differential parity"
        PLAN = "plan", "Study plan (simulation)"
        STUDY_BUILD = "study_build", "Study build (from a CSV)"
        STUDY_UPLOAD = "study_upload", "Study file check"
        STUDY_LOAD = "study_load", "Study file load"
        ADAPTIVE_REFIT = "adaptive_refit", "Adaptive block refit"
        PREREGISTRATION = "preregistration", "Preregistration"
        DESIGN_CHECK = "design_check", "Design check (simulation)"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)
    # Kinds that only read stored data and write a new run folder (or only their own row): repeating one
    # whose worker died gives a run like the first, with nothing of the dead attempt kept (docs, "Job
    # lifecycle"). The study file kinds and the adaptive refit change shared state (the stash, a study, an
    # assignment) that a dead attempt may have left half written: they fail instead.
    RETRY_SAFE_KINDS = frozenset(
        {Kind.ANALYSIS, Kind.AUDIT, Kind.SITUATION_TESTING, Kind.DIFFERENTIAL_PARITY, Kind.PLAN, Kind.DESIGN_CHECK}
    )
    MAX_ATTEMPTS = 2  # a retry-safe job whose worker died runs once more

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    study = models.ForeignKey("studies.Study", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    params = StrictJSONField(default=dict, help_text="The job's options as given (files by their storage name).")
    inputs = StrictJSONField(default=dict, help_text="Uploaded files: field name -> storage name.")
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=200, blank=True)
    log = models.TextField(blank=True)
    result = StrictJSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    files_prefix = models.CharField(max_length=200, blank=True, help_text="Storage folder of the job's output files.")
    files = StrictJSONField(default=list, blank=True, help_text="Names of the output files, listed once at success.")
    output_prefix = models.CharField(
        max_length=200,
        blank=True,
        help_text="Storage folder the running job writes its output into, recorded before its first file is "
        "copied: deleted when the job fails or its worker dies.",
    )
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="How many times a worker started the job (2: re-run once after its worker died)."
    )
    task_id = models.CharField(max_length=64, blank=True, help_text="The task framework's result id.")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life from the worker running the job (every second)."
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__gte=0) & Q(progress__lte=1), name="job_progress_range"),
        ]
        indexes = [models.Index(fields=["created_by", "-created_at"]), models.Index(fields=["study", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.id} ({self.status})"

    @property
    def retry_safe(self) -> bool:
        """Whether the job runs once more when its worker dies (its kind is in RETRY_SAFE_KINDS)."""
        return self.kind in self.RETRY_SAFE_KINDS

    @property
    def reported_status(self) -> str:
        """The status people and API clients see: a job whose run is stored (``runs.services.run_storing``
        marks it succeeded inside the run's transaction, so that a late cancel finds it ended) but whose result
        is not yet recorded (``runs.services.job_succeed``, a moment later) is still running: a client that
        saw "succeeded" would otherwise find no result to follow."""
        if self.status == self.Status.SUCCEEDED and self.result is None:
            return self.Status.RUNNING
        return self.status


class AnalysisRun(models.Model):
    """One run of the study pipeline (``analyze_study``): where its report is and what it found."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="analysis_runs")
    seed = models.BigIntegerField()
    n_resamples = models.PositiveIntegerField()
    files_prefix = models.CharField(max_length=500, help_text="Storage folder of the report files.")
    results = StrictJSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "surveys_analysisrun"  # the table keeps its name from before the app owned it
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
    generalise = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="'stimuli': the CI resamples participants and stimulus pairs (alpha for a population of such "
        "pairs); empty: participants only (alpha for the study's own pairs).",
    )
    estimand = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="What alpha and its CI are about, as the analysis states it (e.g. 'for these 12 stimulus pairs "
        "(participants resampled; ...)'); empty: stated from ``generalise`` (``estimand_text``).",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "surveys_calibration"  # the table keeps its name from before the app owned it
        ordering = ["study", "kind", "condition__key", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["study", "kind", "condition", "version"], name="calibration_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} {self.kind}/{self.condition.key} v{self.version}: alpha={self.alpha:.4f}"

    @property
    def estimand_text(self) -> str:
        """The estimand of alpha and its CI, printed wherever they are (issue 23, item 8): the stored one, else
        (calibrations stored before it, disagreement calibrations) the one ``generalise`` implies."""
        if self.estimand:
            return self.estimand
        if self.generalise == "stimuli":
            return "for a population of stimulus pairs like the study's (participants and stimuli resampled)"
        return "for the study's own stimuli (participants resampled; other stimuli not represented)"


class AuditRun(models.Model):
    """One ``audit_models`` run: the models compared, under which weights, and where the report is."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="audit_runs")
    condition = models.ForeignKey(Condition, on_delete=models.RESTRICT, related_name="audit_runs")
    subjects_file = models.CharField(max_length=500)
    likert_calibration = models.ForeignKey(
        Calibration, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    files_prefix = models.CharField(max_length=500, help_text="Storage folder of the report files.")
    results = StrictJSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "surveys_auditrun"  # the table keeps its name from before the app owned it
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.study} audit ({self.condition.key})"


class Preregistration(models.Model):
    """A study version registered with its analysis plan (``runs.preregistration``): when, by whom, the plan
    (``runs.analysis_plan.AnalysisPlan.as_dict``), the code version, the sha256 of the bundle's manifest and
    where the bundle is stored. Every later analysis of the study states its deviations from the plan."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="preregistrations")
    registered_at = models.DateTimeField(default=timezone.now)
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    plan = StrictJSONField(default=dict)
    code_version = models.CharField(max_length=100, blank=True)
    manifest_sha256 = models.CharField(max_length=64)
    files_prefix = models.CharField(max_length=500, help_text="Storage folder of the bundle.")
    participants_before = models.PositiveIntegerField(
        default=0, db_default=0, help_text="Non-pilot participants with answers when it was registered."
    )

    class Meta:
        ordering = ["-registered_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.study} registered {self.registered_at:%Y-%m-%d %H:%M}"
