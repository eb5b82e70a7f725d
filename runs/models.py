"""A background job: one analysis, audit, situation test, differential-parity run or study plan
started from the web, executed by a worker process (``manage.py db_worker``), never inside a web request."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Job(models.Model):
    class Kind(models.TextChoices):
        ANALYSIS = "analysis", "Study analysis"
        AUDIT = "audit", "Model audit"
        SITUATION_TESTING = "situation_testing", "Situation testing"
        DIFFERENTIAL_PARITY = "differential_parity", "Differential parity"
        PLAN = "plan", "Study plan (simulation)"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    study = models.ForeignKey("surveys.Study", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    params = models.JSONField(default=dict, help_text="The job's options as given (files by their storage name).")
    inputs = models.JSONField(default=dict, help_text="Uploaded files: field name -> storage name.")
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=200, blank=True)
    log = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    files_prefix = models.CharField(max_length=200, blank=True, help_text="Storage folder of the job's output files.")
    files = models.JSONField(default=list, blank=True, help_text="Names of the output files, listed once at success.")
    task_id = models.CharField(max_length=64, blank=True, help_text="The task framework's result id.")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__gte=0) & Q(progress__lte=1), name="job_progress_range"),
        ]
        indexes = [models.Index(fields=["created_by", "-created_at"]), models.Index(fields=["study", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.id} ({self.status})"
