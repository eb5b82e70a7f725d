"""Who took part and what they answered: participants, their page visits and their answers.

Rules that must never break are database constraints as well as service checks: one answer per
participant and question, only the measures of registered task types, numbers in the range of their
measure."""

import uuid
from typing import TYPE_CHECKING, TypedDict

from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.strict_json import StrictJSONField
from studies.models import Condition, Study


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
    plan = StrictJSONField(default=list, blank=True, help_text="The ordered pages this participant is shown.")
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
    language = models.CharField(
        max_length=8,
        default="en",
        help_text="The language of the participant's pages, chosen at arrival (studies.translation.choose_language).",
    )
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
    quota_screened_out = models.CharField(
        max_length=300,
        blank=True,
        help_text="The quota that screened the participant out ('question = group' full, or 'question: minimums').",
    )
    address_range = models.CharField(
        max_length=16,
        blank=True,
        help_text="Keyed hash of the network the participant arrived from (IPv4 /24, IPv6 /48; "
        "participation.address_range): compared, never shown; blank when unknown (simulated).",
    )
    resume_failures = models.PositiveSmallIntegerField(
        default=0, help_text="Wrong resume codes in a row, from every client (ResumeFailures: from each)."
    )
    resume_failed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "surveys_participant"  # the table keeps its name from before the app owned it
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
            # every column the dashboard's aggregates read (research.dashboard), none that a saved page changes:
            # they scan this index alone, and page saves stay heap-only updates
            models.Index(
                fields=[
                    *("study", "condition", "arrived_at", "id", "status", "pilot", "simulated"),
                    *("consented_at", "completed_at", "withdrawn_at", "address_range"),
                ],
                name="participant_dashboard",
            ),
        ]

    def __str__(self) -> str:
        return str(self.pseudonym)


class SpecHash(TypedDict):
    """What the participant pages annotate a participant with: their study version's file digest
    (``Participant.objects.annotate(spec_hash=F("study__spec_hash"))``; ``participant_arrive`` sets it)."""

    spec_hash: str


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    ParticipantWithSpecHash = WithAnnotations[Participant, SpecHash]


class ConflictingArrival(models.Model):
    """A participant id that arrived again with another Prolific SESSION_ID than the one it first
    came with (someone else may have used the id first: "participant-id squatting"). Kept so the
    researcher can see both attempts (``export_submissions``, the dashboard) and decide."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="conflicting_arrivals")
    session_id = models.CharField(max_length=128, help_text="The SESSION_ID of the later arrival, as received.")
    arrived_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["participant", "arrived_at"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "session_id"], name="conflicting_arrival_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.participant} again with SESSION_ID {self.session_id}"


class ResumeFailures(models.Model):
    """Wrong resume codes in a row typed for one participant from one client network
    (``participation.throttle.client_network``): the code is locked for that client alone
    (``participation.services.participant_resume``), so a stranger's guesses cannot lock the owner out."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="resume_failures_by_client")
    client = models.CharField(max_length=64, help_text="The client's network (an IPv4 address, an IPv6 /64).")
    failures = models.PositiveSmallIntegerField(default=0)
    failed_at = models.DateTimeField(help_text="When the last wrong code came.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "client"], name="resume_failures_per_client_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.participant}: {self.failures} wrong resume codes from {self.client}"


class PageVisit(models.Model):
    """When a page was first shown and when it was submitted (time spent = the difference)."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="visits")
    page = models.CharField(max_length=120)
    first_shown_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    refusals = models.PositiveIntegerField(default=0, help_text="Submissions refused by validation.")
    # What the page's script saw (``participation.signals``; null: unknown, e.g. without JavaScript).
    time_on_page_ms = models.PositiveIntegerField(null=True, blank=True)
    focus_losses = models.PositiveIntegerField(null=True, blank=True, help_text="Times the page lost focus.")
    pastes = models.PositiveIntegerField(null=True, blank=True, help_text="Paste events in text fields.")
    pasted_chars = models.PositiveIntegerField(null=True, blank=True, help_text="Characters pasted in text fields.")
    keystrokes = models.PositiveIntegerField(null=True, blank=True, help_text="Keys pressed in text fields.")
    typing_ms = models.PositiveIntegerField(null=True, blank=True, help_text="First to last key in text fields.")
    text_chars = models.PositiveIntegerField(null=True, blank=True, help_text="Characters in text fields when sent.")
    # What the server showed (``participation.page_load``, measured on the served page; null: unknown).
    words_shown = models.PositiveIntegerField(null=True, blank=True, help_text="Words of text the page showed.")
    inputs_shown = models.PositiveIntegerField(null=True, blank=True, help_text="Questions (form inputs) it asked.")

    class Meta:
        db_table = "surveys_pagevisit"  # the table keeps its name from before the app owned it
        ordering = ["participant", "first_shown_at"]
        constraints = [models.UniqueConstraint(fields=["participant", "page"], name="page_visit_unique")]

    def __str__(self) -> str:
        return self.page

    @property
    def seconds(self) -> float | None:
        if self.submitted_at is None:
            return None
        return (self.submitted_at - self.first_shown_at).total_seconds()


class Answer(models.Model):
    """One answer to one question. ``number`` holds numeric answers, ``text`` the rest. The database
    refuses a measure no registered task type writes and a number its measure does not allow
    (``participation.answer_rules``: a trigger made from the task registry by every ``migrate``)."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="answers")
    page = models.CharField(max_length=120)
    question = models.CharField(max_length=160)
    measure = models.CharField(max_length=16)
    set_key = models.CharField(max_length=40, blank=True)
    subject_key = models.CharField(max_length=40, blank=True)
    number = models.FloatField(null=True, blank=True)
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "surveys_answer"  # the table keeps its name from before the app owned it
        ordering = ["participant", "id"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "question"], name="one_answer_per_question"),
        ]
        indexes = [models.Index(fields=["participant", "measure"])]

    def __str__(self) -> str:
        return self.question


class AdaptiveFit(models.Model):
    """One fit of an adaptive block (``participation.adaptive``), stored as plain numbers so that the web
    worker scores candidate items without the scientific stack (``runs.adaptive``): the design's
    parameters, their estimate and covariance (``choose``: the subjects' Bradley-Terry strengths, centred
    on their mean; ``pair_comparable``, ``triplet``: the learned metric's per-column weights) and, for the
    metric designs, each subject's scaled feature vector (``analysis.adaptive_design``)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="adaptive_fits")
    block = models.CharField(max_length=40)
    version = models.PositiveIntegerField(help_text="1, 2, ... per study version and block.")
    n_answers = models.PositiveIntegerField(help_text="Answers of the block the fit used.")
    parameters = StrictJSONField(
        help_text="The parameters' names (choose: subject ids; metric: scaled feature columns), in the order of "
        "estimate and covariance."
    )
    estimate = StrictJSONField(
        help_text="The parameters' estimates (choose: strengths on the log-odds scale, centred on their mean; "
        "metric: the weights M_kk)."
    )
    covariance = StrictJSONField(help_text="The covariance matrix of the estimates (a list of rows).")
    vectors = StrictJSONField(
        default=dict, blank=True, help_text="Metric designs: subject id -> scaled feature vector (choose: empty)."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["study", "block", "version"]
        constraints = [
            models.UniqueConstraint(fields=["study", "block", "version"], name="adaptive_fit_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.block} fit v{self.version}"


class AdaptiveState(models.Model):
    """One adaptive block of a study version: its current fit and the counters that queue a refit every
    ``refit_every`` answers."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="adaptive_states")
    block = models.CharField(max_length=40)
    fit = models.ForeignKey(AdaptiveFit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    answers = models.PositiveIntegerField(default=0, help_text="Answers saved on the block's adaptive pages.")
    fitted_answers = models.PositiveIntegerField(default=0, help_text="``answers`` when the last refit started.")
    refit_queued = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "block"], name="adaptive_state_unique")]

    def __str__(self) -> str:
        return f"{self.block} adaptive state"


class AdaptiveStripe(models.Model):
    """The decisions of one stripe of an adaptive block's participants (participant id modulo
    ``participation.adaptive.STRIPES``): the row each of their decisions locks, so that the stripe's
    participants are decided one after the other, and what those decisions need."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="adaptive_stripes")
    block = models.CharField(max_length=40)
    stripe = models.PositiveSmallIntegerField()
    fit = models.ForeignKey(
        AdaptiveFit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="``pending``'s fit."
    )
    decisions = models.PositiveIntegerField(default=0, help_text="Decisions made (the next decision's sequence).")
    counts = StrictJSONField(default=dict, help_text="Item id -> times assigned (balanced fallback).")
    pending = StrictJSONField(default=dict, help_text="Item id -> Fisher information assigned since ``fit``.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "block", "stripe"], name="adaptive_stripe_unique")]

    def __str__(self) -> str:
        return f"{self.block} stripe {self.stripe}"


class AdaptiveDecision(models.Model):
    """One adaptive choice of the next item: for whom and which page, the fit it used (none: the balanced
    fallback), the candidates with their scores, and the item chosen (the best-scoring candidate)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="adaptive_decisions")
    participant = models.ForeignKey(
        Participant,
        null=True,
        on_delete=models.SET_NULL,
        related_name="adaptive_decisions",
        help_text="Empty once the participant was deleted (a pilot): the decision stays for the replay.",
    )
    block = models.CharField(max_length=40)
    slot = models.PositiveIntegerField(help_text="The participant's page of the block (0, 1, ...).")
    stripe = models.PositiveSmallIntegerField(help_text="The participant's stripe (``AdaptiveStripe``).")
    sequence = models.PositiveIntegerField(help_text="Order of the decision within its stripe (0, 1, ...).")
    fit = models.ForeignKey(AdaptiveFit, null=True, blank=True, on_delete=models.PROTECT, related_name="decisions")
    item = models.CharField(max_length=120)
    candidates = StrictJSONField(help_text="[[item id, score], ...] in the order they were scored.")
    seconds = models.FloatField(
        help_text="How long the decision took until this row was written (the block's lock wait included)."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["study", "block", "stripe", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "block", "slot"], name="adaptive_decision_unique"),
            models.UniqueConstraint(fields=["study", "block", "stripe", "sequence"], name="adaptive_decision_sequence"),
        ]

    def __str__(self) -> str:
        return f"{self.block}#{self.slot}: {self.item}"
