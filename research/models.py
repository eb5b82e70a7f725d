"""What the platform knows of a study on Prolific (``research.prolific_services``): the Prolific study made
by ``prolific_publish``, its submissions' Prolific statuses (from webhook events and ``prolific_sync``), the
webhook events already processed (``X-Event-ID``), and each bulk bonus with its payment state (the outbox
that pays a bonus exactly once). Also each completed participant's own answer-quality verdicts
(:class:`ParticipantQuality`, ``research.quality_verdicts``)."""

from django.db import models

from core.strict_json import StrictJSONField
from participation.models import Participant


class ProlificStudy(models.Model):
    """The Prolific study of a platform study (one per slug: every version shares the start link)."""

    slug = models.SlugField(max_length=60, unique=True)
    prolific_id = models.CharField(max_length=64, unique=True, help_text="Prolific's study id.")
    status = models.CharField(max_length=32, help_text="Prolific's study status (UNPUBLISHED, ACTIVE, ...).")
    places = models.PositiveIntegerField(help_text="total_available_places")
    reward_cents = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    synced_at = models.DateTimeField(null=True, blank=True, help_text="Last reconciliation with Prolific.")
    note = models.TextField(blank=True, help_text="What the last action started from the dashboard or API did.")

    def __str__(self) -> str:
        return f"{self.slug} on Prolific ({self.prolific_id}, {self.status})"


class ProlificPendingDraft(models.Model):
    """A Prolific draft being created: its unique ``internal_name`` is stored before ``POST /studies/``, so a
    run that dies before storing the draft's id leaves this marker, and the rerun finds the draft by that name
    (``GET /studies/``) instead of creating a second one. Deleted once the ``ProlificStudy`` is stored."""

    slug = models.SlugField(max_length=60, unique=True)
    internal_name = models.CharField(max_length=120, unique=True, help_text="The draft's name on Prolific.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.slug}: creating {self.internal_name!r} on Prolific"


class ProlificSubmission(models.Model):
    """A Prolific submission of the study and its Prolific status; ``participant`` is the platform's
    participant whose link carried the submission id as ``SESSION_ID`` (none when they never arrived)."""

    prolific_study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="submissions")
    submission_id = models.CharField(max_length=64, unique=True)
    participant = models.OneToOneField(
        Participant, on_delete=models.SET_NULL, null=True, blank=True, related_name="prolific_submission"
    )
    status = models.CharField(max_length=32, help_text="Prolific's submission status (AWAITING REVIEW, ...).")
    evidence = models.TextField(blank=True, help_text="Why prolific_review left it to the researcher ('': not).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["prolific_study", "status"], name="prolific_submission_status")]

    def __str__(self) -> str:
        return f"submission {self.submission_id} ({self.status})"


class ProlificEvent(models.Model):
    """A webhook delivery processed once: a retry with the same ``X-Event-ID`` changes nothing."""

    event_id = models.CharField(max_length=128, unique=True)
    event_type = models.CharField(max_length=64)
    resource_id = models.CharField(max_length=64, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id}"


class ProlificBonus(models.Model):
    """One bulk bonus of a study (one per slug and kind). ``prepared``: set up on Prolific (its bulk id and
    Prolific's totals known, nothing paid); ``paying``: stored before ``/pay/`` is called, so that no run
    ever calls it again (a crash leaves it here: check on Prolific); ``paid``: Prolific accepted the payment."""

    class State(models.TextChoices):
        PREPARED = "prepared"
        PAYING = "paying"
        PAID = "paid"

    slug = models.SlugField(max_length=60)
    kind = models.CharField(max_length=16)
    bulk_id = models.CharField(max_length=64, unique=True)
    csv_bonuses = models.TextField(help_text="Prolific's bulk-bonus lines: participant id,amount.")
    recipients = models.PositiveIntegerField()
    amount = models.DecimalField(max_digits=12, decimal_places=2, help_text="Bonuses, in the study's currency.")
    fees = models.DecimalField(max_digits=12, decimal_places=2, help_text="Prolific's fees and VAT, same currency.")
    total = models.DecimalField(max_digits=12, decimal_places=2, help_text="Prolific's total with fees.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PREPARED)
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["slug", "kind"], name="prolific_bonus_once_per_kind")]

    def __str__(self) -> str:
        return f"{self.kind} bonus of {self.slug} ({self.state})"


class ParticipantQuality(models.Model):
    """A completed participant's own answer-quality rule results (``research.quality.assess`` on their pages
    and answers; the rules comparing them with other participants left unknown) and their failed attention
    checks, stored once (``research.quality_verdicts``): final for as long as ``basis`` (their study
    version's file digest and the rules' revision) stays the same."""

    participant = models.OneToOneField(
        Participant, primary_key=True, on_delete=models.CASCADE, related_name="stored_quality"
    )
    basis = models.CharField(
        max_length=80, help_text="The study version's file digest and the rules' revision the verdicts hold for."
    )
    rules = StrictJSONField(help_text="[rule, value, threshold, flagged] per rule, in their order (null: unknown).")
    flags = StrictJSONField(default=list, db_default=[], help_text="The rules that flag the participant.")
    attention_failed = models.PositiveIntegerField(default=0, db_default=0, help_text="Attention checks failed.")

    def __str__(self) -> str:
        return f"quality of {self.participant}: {', '.join(self.flags) or 'no flag'}"
