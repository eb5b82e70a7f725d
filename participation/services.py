"""Every write that changes a study or a participant's state, one transaction each.

Views, management commands, the API and the simulator call these functions; nothing else saves
participants or answers.
"""

import secrets
import unicodedata
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING, TypedDict, cast

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.dispatch import Signal
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from participation.adaptive import adaptive_answered
from participation.assignment import StudyFull, capacity, condition_for, item_choice
from participation.enrolment import Enrolment
from participation.models import Answer, ConflictingArrival, PageVisit, Participant, ResumeFailures
from participation.page_load import PageLoad
from participation.plan import plan_for
from participation.quotas import quota_check
from participation.recruitment import target_check
from participation.signals import COLUMNS as SIGNAL_COLUMNS
from participation.signals import UNKNOWN as UNKNOWN_SIGNALS
from participation.signals import PageSignals
from participation.sql import Statement, execute_together, insert_row_if, insert_rows, insert_statement, update_rows
from participation.time_limits import time_limit
from studies.content import study_content
from studies.lifecycle import StudyNotOpen, admits
from studies.models import Study
from studies.services import latest_version
from studies.study_facts import study_facts
from studies.translation import choose_language, file_languages
from tasks.base import AnswerInput
from tasks.page_index import Page

if TYPE_CHECKING:
    from participation.models import ParticipantWithSpecHash


class InvalidStartLink(ValueError):
    """A start link parameter that cannot be used (the participant sees the message, nothing is stored)."""


class InvalidParticipantId(InvalidStartLink):
    pass


# What the start link carries (/s/<slug>/?...; the resume form posts them back). The code typed into the
# resume form is cleaned instead (clean_resume_code keeps its letters and digits).
START_PARAMETERS = ("PROLIFIC_PID", "participant_label", "STUDY_ID", "SESSION_ID", "lang", "pilot")


def _invisible(value: str) -> bool:
    """Holds a control (NUL included), format, surrogate, private-use or unassigned character."""
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in value)


def check_start_parameters(params: Mapping[str, str]) -> None:
    """Raise InvalidStartLink naming the first of :data:`START_PARAMETERS` that holds an invisible
    character (PostgreSQL cannot store a NUL; no participant id, session or language has one)."""
    for name in START_PARAMETERS:
        if _invisible(params.get(name, "")):
            raise InvalidStartLink(f"The link's {name} contains control or invisible characters.")


def normalise_external_id(external_id: str) -> str:
    """The participant id as stored: NFKC-normalised (full-width and other compatibility forms of
    the same characters are one id) and stripped; control and other invisible format characters
    are refused. Raises InvalidParticipantId."""
    value = unicodedata.normalize("NFKC", external_id or "").strip()
    if _invisible(value):
        raise InvalidParticipantId("The participant id contains control or invisible characters.")
    return _check_external_id(value)


def _check_external_id(external_id: str) -> str:
    value = (external_id or "").strip()
    if not value:
        raise InvalidParticipantId("The link has no participant id (PROLIFIC_PID or participant_label).")
    if len(value) > 128 or not all(ch.isalnum() or ch in "-_.@" for ch in value):
        raise InvalidParticipantId(
            "The participant id may only contain letters, digits, '-', '_', '.', '@' (at most 128)."
        )
    return value


def participant_arrive(
    *,
    study_slug: str,
    external_id: str,
    prolific_study_id: str = "",
    prolific_session_id: str = "",
    simulated: bool = False,
    pilot: bool = False,
    at: datetime | None = None,
    seed: int | None = None,
    resume_code: str = "",
    looked_up: bool = False,
    languages: Sequence[str] = (),
    address_range: str = "",
) -> tuple[Participant, bool]:
    """Find the participant with this id in any version of the study, or register them in the latest.

    Returns ``(participant, created)``. Two simultaneous first arrivals with the same id create one
    participant (the unique constraint decides; the loser reads the winner's row). ``seed`` (for
    simulations) fixes the participant's randomisation; by default it is drawn from the OS. A new
    participant stores only the keyed hash of ``resume_code``. The id is normalised
    (``normalise_external_id``). ``looked_up``: the caller has just found no participant with this
    id (``participant_find``), so the lookup is not repeated. ``pilot``: the researcher's pilot link
    (checked by the caller) brought them; pilots are left out of the balance, exports and analyses.
    A new participant carries its version's file digest as ``spec_hash``. A study whose lifecycle state
    does not admit them (``studies.lifecycle.admits``) raises ``StudyNotOpen`` and stores nothing.
    ``languages``: the languages
    the participant asked for, best first (the link's ``?lang=``, then the browser's); a new participant
    gets the first the study is in, else the study's first (``studies.translation.choose_language``).
    ``address_range``: the keyed hash of the network they came from (``participation.address_range``).
    """
    external_id = normalise_external_id(external_id)
    existing = None if looked_up else participant_find(study_slug=study_slug, external_id=external_id)
    if existing is not None:
        return existing, False
    study_id, spec_hash, status = latest_version(study_slug)
    if not admits(status, pilot=pilot):
        raise StudyNotOpen(status)
    participant = Participant(
        study_id=study_id,
        external_id=external_id,
        prolific_study_id=prolific_study_id[:128],
        prolific_session_id=prolific_session_id[:128],
        seed=secrets.randbits(62) if seed is None else seed,
        simulated=simulated,
        pilot=pilot,
        arrived_at=at or timezone.now(),
        language=choose_language(file_languages(study_facts(study_id, spec_hash=spec_hash).spec), languages),
        address_range=address_range,
    )
    if resume_code:
        participant.resume_code_hash = resume_code_digest(participant, resume_code)
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():  # a savepoint only when needed
            participant.save(force_insert=True)
    except IntegrityError:
        return Participant.objects.get(study_id=study_id, external_id=external_id), False
    arrived = cast("ParticipantWithSpecHash", participant)  # given its spec_hash on the next line
    arrived.spec_hash = spec_hash  # as the participant pages annotate it
    return arrived, True


MAX_CONFLICTING_ARRIVALS = 10  # per participant: a flood of made-up SESSION_IDs stores no more


def participant_record_conflict(*, participant: Participant, session_id: str, at: datetime | None = None) -> bool:
    """Record that ``participant``'s id arrived with a SESSION_ID other than its own (the first
    arrival keeps the id; this one sees the resume form). Each SESSION_ID once, at most
    MAX_CONFLICTING_ARRIVALS per participant; True when a record was added."""
    session_id = session_id[:128]
    if not session_id or session_id == participant.prolific_session_id:
        return False
    known = ConflictingArrival.objects.filter(participant=participant)
    if known.count() >= MAX_CONFLICTING_ARRIVALS or known.filter(session_id=session_id).exists():
        return False
    _, created = ConflictingArrival.objects.get_or_create(
        participant=participant, session_id=session_id, defaults={"arrived_at": at or timezone.now()}
    )
    return created


def participant_find(*, study_slug: str, external_id: str) -> Participant | None:
    """The participant with this (already normalised) id in any version of the study, or None."""
    return Participant.objects.filter(study__slug=study_slug, external_id=external_id).first()


# Resume codes: what a participant types to continue in a browser that does not hold their
# session. 8 characters from 32 unambiguous ones (40 bits), shown as XXXX-XXXX; only a keyed hash
# (HMAC with SECRET_KEY, salted with the participant's pseudonym) is stored.
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L


def new_resume_code() -> str:
    code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(8))
    return f"{code[:4]}-{code[4:]}"


def clean_resume_code(typed: str) -> str:
    """A typed code in its shown form: case, spaces and dashes do not matter."""
    value = "".join(ch for ch in unicodedata.normalize("NFKC", typed or "").upper() if ch.isalnum())[:64]
    return f"{value[:4]}-{value[4:]}" if len(value) == 8 else value


def resume_code_digest(participant: Participant, code: str) -> str:
    return salted_hmac("surveys.resume-code", f"{participant.pseudonym}:{clean_resume_code(code)}").hexdigest()


def participant_set_resume_code(*, participant_id: int) -> str:
    """Give the participant a new resume code (the old one stops working); returns the code."""
    participant = Participant.objects.get(pk=participant_id)
    code = new_resume_code()
    update_rows(Participant, {"resume_code_hash": resume_code_digest(participant, code)}, {"id": participant_id})
    return code


class ResumeOutcome(Enum):
    ACCEPTED = "accepted"
    WRONG = "wrong"
    LOCKED = "locked"  # too many wrong codes lately: not even checked


# The code is locked for every client only after this many clients' worth of wrong codes in a row
# (PARTICIPANT_RESUME_MAX_FAILURES from each): guesses spread over many networks.
RESUME_CLIENTS_BEFORE_LOCK = 10


def participant_resume(*, participant_id: int, code: str, client: str, at: datetime | None = None) -> ResumeOutcome:
    """Check a typed resume code from ``client`` (its network, ``participation.throttle.client_network``).
    After PARTICIPANT_RESUME_MAX_FAILURES wrong codes in a row from one client, the code is not checked
    for that client for PARTICIPANT_RESUME_LOCK_SECONDS after its last one (``ResumeFailures``), and for
    any client after RESUME_CLIENTS_BEFORE_LOCK times as many from all (the participant's row): a
    stranger's guesses lock the stranger out, not the owner. The counts are in the database, so they
    hold across workers and servers; a right code resets its client's count and the participant's."""
    now = at or timezone.now()
    limit = settings.PARTICIPANT_RESUME_MAX_FAILURES
    with transaction.atomic():
        participant = Participant.objects.select_for_update().get(pk=participant_id)
        since = now - timedelta(seconds=settings.PARTICIPANT_RESUME_LOCK_SECONDS)
        recent = participant.resume_failed_at is not None and participant.resume_failed_at > since
        overall = participant.resume_failures if recent else 0
        mine = ResumeFailures.objects.filter(participant=participant, client=client, failed_at__gt=since).first()
        failures = mine.failures if mine else 0
        if failures >= limit or overall >= limit * RESUME_CLIENTS_BEFORE_LOCK:
            return ResumeOutcome.LOCKED
        if participant.resume_code_hash and constant_time_compare(
            participant.resume_code_hash, resume_code_digest(participant, code)
        ):
            ResumeFailures.objects.filter(participant=participant, client=client).delete()
            if participant.resume_failures:
                update_rows(Participant, {"resume_failures": 0}, {"id": participant_id})
            return ResumeOutcome.ACCEPTED
        ResumeFailures.objects.update_or_create(
            participant=participant, client=client, defaults={"failures": failures + 1, "failed_at": now}
        )
        update_rows(Participant, {"resume_failures": overall + 1, "resume_failed_at": now}, {"id": participant_id})
        return ResumeOutcome.WRONG


_GONE = (
    Participant.Status.TIMED_OUT,
    Participant.Status.WITHDRAWN,
    Participant.Status.SCREENED_OUT,
    Participant.Status.DECLINED,
)


def _not_counted(spec: dict, now: datetime) -> Q:
    """Participants whose ticket is free again: they stopped counting (timed out, past the time
    limit while still active, withdrawn, screened out, or declined while their consent ran)."""
    cutoff = time_limit(spec).cutoff(now)
    gone = Q(status__in=_GONE)
    return gone if cutoff is None else gone | Q(status=Participant.Status.ACTIVE, arrived_at__lt=cutoff)


def _reclaimed_ticket(participant: Participant, spec: dict, now: datetime) -> int | None:
    """Take over the lowest ticket of a participant who no longer counts (compare-and-set on their
    row: of simultaneous takers one wins, the others try the next); None when there is none."""
    gone = _not_counted(spec, now)
    candidates = (
        Participant.objects.filter(gone, study_id=participant.study_id, ticket__isnull=False)
        .order_by("ticket")
        .values_list("pk", "ticket")[:8]
    )
    for holder, ticket in candidates:
        with transaction.atomic():
            if not Participant.objects.filter(gone, pk=holder, ticket=ticket).update(ticket=None):
                continue
            if Participant.objects.filter(pk=participant.pk, ticket__isnull=True).update(ticket=ticket):
                return ticket
            transaction.set_rollback(True)  # a simultaneous consent of this participant took a ticket
            return None
    return None


def _new_ticket(participant: Participant, spec: dict) -> int | None:
    """The next place of the sequence from the version's counter: one short transaction that
    increments ``Study.tickets_issued`` (the row lock orders simultaneous consents, nobody fails or
    retries) and gives the participant the place; a rollback returns the place, so no gaps.
    When a simultaneous consent of this participant took a ticket first, that ticket; None when it
    is already gone again (the participant stopped counting and another consent reclaimed it).
    Raises StudyFull past the study's capacity."""
    limit = capacity(spec)
    counter = Study.objects.filter(pk=participant.study_id)
    with transaction.atomic():
        if not (counter if limit is None else counter.filter(tickets_issued__lt=limit)).update(
            tickets_issued=F("tickets_issued") + 1
        ):
            raise StudyFull(f"study {spec['slug']!r} is full: every condition has reached its cap")
        ticket = counter.values_list("tickets_issued", flat=True).get() - 1
        if Participant.objects.filter(pk=participant.pk, ticket__isnull=True).update(ticket=ticket):
            return ticket
        transaction.set_rollback(True)  # a simultaneous consent of this participant took a ticket
    return Participant.objects.filter(pk=participant.pk).values_list("ticket", flat=True).get()


def _pilot_place(participant: Participant, spec: dict) -> int:
    """A pilot takes no ticket: they see the plan of the next free place (the last one when full)."""
    place = Study.objects.filter(pk=participant.study_id).values_list("tickets_issued", flat=True).get()
    limit = capacity(spec)
    return place if limit is None else min(place, limit - 1)


def _plan(spec: dict, spec_hash: str, place: int, seed: int) -> tuple[str, list[Page]]:
    """The condition and pages of a place (ticket) for a participant with this seed."""
    condition_key = condition_for(spec, place)
    content = study_content(spec, spec_hash)
    return condition_key, plan_for(
        spec, condition_key, seed, item_choice=item_choice(spec, content, place), content=content
    )


def participant_consent(
    *,
    participant_id: int,
    accept: bool,
    at: datetime | None = None,
    participant: "ParticipantWithSpecHash | None" = None,
) -> Participant:
    """Record the consent decision; on acceptance assign the condition and items of a ticket
    (``participation.assignment``): a drop-out's freed ticket first, else the next one.

    The ticket is taken in one short transaction on the version's counter row, the plan is built
    from the per-process study cache, and the decision is stored by a compare-and-set
    ``UPDATE .. WHERE status = 'arrived'``, so deciding twice (or twice at once) keeps the first
    decision. Pilots take no ticket and are not counted. Raises StudyFull
    when every condition has reached its cap (the participant stays ``arrived``). ``participant``:
    the row the caller has just read (annotated with ``spec_hash``), so it is not read again.
    """
    status = Participant.Status
    if participant is None:
        # Typed as the parameter: the django-stubs plugin's inferred type loses spec_hash in a union.
        read: ParticipantWithSpecHash = Participant.objects.annotate(spec_hash=F("study__spec_hash")).get(
            pk=participant_id
        )
        participant = read
    if participant.status != status.ARRIVED:
        return participant
    now = at or timezone.now()
    changes: dict[str, object]
    if not accept:
        changes = {"status": status.DECLINED}
    else:
        facts = study_facts(participant.study_id, spec_hash=participant.spec_hash)
        spec = facts.spec
        place: int | None
        if participant.pilot:
            place = _pilot_place(participant, spec)
        elif participant.ticket is not None:  # an earlier attempt took it
            place = participant.ticket
        else:
            place = _reclaimed_ticket(participant, spec, now)
            if place is None:
                place = _new_ticket(participant, spec)
            if place is None:  # a simultaneous consent took a ticket, and it was reclaimed: that consent decided
                return Participant.objects.get(pk=participant_id)
        condition_key, plan = _plan(spec, facts.spec_hash, place, participant.seed)
        condition_id = next(pk for pk, key in facts.condition_keys.items() if key == condition_key)
        changes = {"condition": condition_id, "plan": plan, "status": status.ACTIVE, "consented_at": now}
        participant.condition_id, participant.ticket = condition_id, None if participant.pilot else place
    if not update_rows(Participant, changes, {"id": participant.pk, "status": status.ARRIVED}):
        return Participant.objects.get(pk=participant_id)  # decided at the same moment elsewhere
    for field, value in changes.items():
        if field != "condition":
            setattr(participant, field, value)
    return participant


def page_shown(*, participant: Participant, page_key: str, at: datetime | None = None) -> bool:
    """Store when a page was first shown (later views keep the first time): one INSERT that the
    unique (participant, page) constraint turns into a no-op when the row exists.

    The INSERT also requires, in the same statement, that the participant is still active, so a
    page view racing a withdrawal cannot leave a visit behind: either the visit is inserted first
    and the withdrawal (which locks the participant row, then deletes) removes it, or the
    withdrawal commits first and the INSERT finds no active participant. Returns whether a row was
    inserted."""
    return bool(
        insert_row_if(
            PageVisit,
            _VISIT_COLUMNS,
            _visit_row(participant.pk, page_key, at or timezone.now()),
            guard=Participant,
            where={"id": participant.pk, "status": (Participant.Status.ACTIVE, Participant.Status.TIMED_OUT)},
            conflict=("participant", "page"),
        )
    )


def page_refused(*, participant: Participant, page_key: str) -> None:
    """Count a submission that failed validation (nothing else is written)."""
    PageVisit.objects.filter(participant=participant, page=page_key).update(refusals=F("refusals") + 1)


class SubmitOutcome(Enum):
    SAVED = "saved"
    REPLAYED = "replayed"  # the page was already saved: nothing changes
    OUT_OF_ORDER = "out_of_order"  # a page the participant has not reached
    CLOSED = "closed"  # the participant is not active (declined, completed, not yet consented)


@dataclass(frozen=True)
class SubmitResult:
    outcome: SubmitOutcome
    status: str  # the participant's status after the submission
    position: int  # how many pages they have saved


def _why_not_saved(participant: Participant, page_key: str) -> SubmitResult:
    keys = [page["key"] for page in participant.plan or []]
    status, position = participant.status, participant.position
    if status == Participant.Status.COMPLETED and page_key in keys:
        outcome = SubmitOutcome.REPLAYED
    elif status != Participant.Status.ACTIVE:
        outcome = SubmitOutcome.CLOSED
    elif page_key in keys[:position]:
        outcome = SubmitOutcome.REPLAYED
    else:
        outcome = SubmitOutcome.OUT_OF_ORDER
    return SubmitResult(outcome, status, position)


class _PageChanges(TypedDict, total=False):
    """What saving a page changes on the participant's row."""

    quota_screened_out: str
    position: int
    status: str
    completed_at: datetime


_ANSWER_COLUMNS = (
    "participant",
    "page",
    "question",
    "measure",
    "set_key",
    "subject_key",
    "number",
    "text",
    "created_at",
)
_VISIT_COLUMNS = (
    "participant",
    "page",
    "first_shown_at",
    "submitted_at",
    "refusals",
    *SIGNAL_COLUMNS,
    "words_shown",
    "inputs_shown",
)
_UNKNOWN_LOAD = (None, None)

# Sent (after the completing page's transaction commits) with participant_id, study_id and condition_id when a
# participant completes the study; the ``research`` app stores their answer-quality verdict then
# (``research.quality_writes``).
participant_completed = Signal()


def _answer_rows(pk: int, page_key: str, answers: Sequence[AnswerInput], now: datetime) -> list[tuple]:
    return [(pk, page_key, a.question, a.measure, a.set_key, a.subject_key, a.number, a.text, now) for a in answers]


def _visit_row(
    pk: int,
    page_key: str,
    shown: datetime,
    submitted: datetime | None = None,
    signals: PageSignals | None = None,
    load: PageLoad | None = None,
) -> tuple:
    """A page's visit (``_VISIT_COLUMNS``): shown, and sent with its signals and load when ``submitted``."""
    measured = (load.words, load.inputs) if load else _UNKNOWN_LOAD
    return (pk, page_key, shown, submitted, 0, *(signals.values() if signals else UNKNOWN_SIGNALS), *measured)


def _completed(enrolment: Enrolment) -> None:
    """In the transaction that completed the participant: close the study at its recruitment target, and send
    :data:`participant_completed` once the transaction commits."""
    facts = study_facts(enrolment.study_id, enrolment.condition_id)
    target_check(slug=facts.slug, spec=facts.spec)
    transaction.on_commit(
        lambda: participant_completed.send(
            Participant,
            participant_id=enrolment.participant_id,
            study_id=enrolment.study_id,
            condition_id=enrolment.condition_id,
        ),
        robust=True,  # a receiver's failure is logged: the participant's completed page is shown
    )


def page_submit(
    *,
    enrolment: Enrolment,
    page_key: str,
    answers: list[AnswerInput],
    at: datetime | None = None,
    show_next: bool = False,
    late: bool = False,
    screened_out: bool = False,
    signals: PageSignals | None = None,
    load: PageLoad | None = None,
) -> SubmitResult:
    """Save one page's answers and advance the participant, all in one transaction.

    The enrolment's plan (fixed at consent) says where the page stands; the database decides the
    rest. The participant advances by a compare-and-set ``UPDATE .. SET position = p + 1 WHERE
    status = 'active' AND position = p``, which also locks the row, so of simultaneous submissions
    of one page (double click, two tabs, a retry) exactly one matches and the others find the page
    already saved and change nothing. Completing the last page sets the status to completed in the
    same UPDATE, so the completion code is shown only after every answer is committed.
    ``show_next`` also records the next page as shown now (the participant's browser is sent there
    at once), sparing that request a write. The statements are built by ``participation.sql`` rather
    than the ORM: this is the one path that runs once per page for every participant.

    ``late``: the participant is past the study's time limit and the study lets them finish; the
    page is saved for a timed-out participant too, who stays ``timed_out`` until the last page
    makes them ``completed``. ``screened_out``: the answer ends the study (status ``screened_out``), as
    it does when it places the participant in a group whose quota is full (``participation.quotas``).
    ``signals``: what the page's script saw (``participation.signals``), stored on the page's visit, as is
    ``load``: the words and questions the server showed on it (``participation.page_load``).
    A saved page of an adaptive block counts towards the block's next refit (``participation.adaptive``),
    after the page's transaction, and the completing page sends :data:`participant_completed`.
    """
    now = at or timezone.now()
    pk, plan = enrolment.participant_id, enrolment.plan
    place = enrolment.places.get(page_key)
    status = Participant.Status
    with transaction.atomic():
        changes: _PageChanges = {}
        if place is not None and not screened_out:
            facts = study_facts(enrolment.study_id, enrolment.condition_id)
            quota = quota_check(slug=facts.slug, spec=facts.spec, participant_id=pk, answers=answers)
            if quota:
                screened_out, changes["quota_screened_out"] = True, quota
        if place is not None:
            changes["position"] = place + 1
            if screened_out:
                changes["status"] = status.SCREENED_OUT
            elif place + 1 == len(plan):
                changes["status"], changes["completed_at"] = status.COMPLETED, now
            elif late:
                changes["status"] = status.TIMED_OUT
        open_statuses = (status.ACTIVE, status.TIMED_OUT) if late else status.ACTIVE
        if place is None or not update_rows(
            Participant, changes, {"id": pk, "status": open_statuses, "position": place}
        ):  # not advanced
            return _why_not_saved(Participant.objects.get(pk=pk), page_key)
        insert_rows(Answer, _ANSWER_COLUMNS, _answer_rows(pk, page_key, answers, now))
        visits = [_visit_row(pk, page_key, now, now, signals, load)]
        if show_next and place + 1 < len(plan) and not screened_out:
            visits.append(_visit_row(pk, plan[place + 1]["key"], now))
        # One statement: the submitted page's visit gets its submission time and signals (its first
        # display time stays), the next page's visit is created.
        insert_rows(
            PageVisit,
            _VISIT_COLUMNS,
            visits,
            on_conflict=("participant", "page"),
            update=("submitted_at", *SIGNAL_COLUMNS, "words_shown", "inputs_shown"),
        )
        if changes.get("status") == status.COMPLETED:
            _completed(enrolment)
    if "slot" in plan[place]:  # an adaptive block's page: counts towards its next refit
        facts = study_facts(enrolment.study_id, enrolment.condition_id)
        block = study_content(facts.spec, facts.spec_hash).blocks[plan[place]["block"]]
        adaptive_answered(study_id=enrolment.study_id, block=block)
    return SubmitResult(SubmitOutcome.SAVED, changes.get("status", status.ACTIVE), place + 1)


@dataclass(frozen=True)
class SentPage:
    """One page as a participant sent it (what :func:`page_submit` takes): its answers, when, and what was
    measured on it."""

    page_key: str
    answers: list[AnswerInput]
    at: datetime
    signals: PageSignals | None = None
    load: PageLoad | None = None


def submits_at_once(spec: dict, plan: Sequence[Page]) -> bool:
    """Whether a participant's pages can be saved together (:func:`participant_submit_all`): no page of the plan
    is an adaptive block's (its item is decided from the answers saved before it) and the study has no quotas
    (each answer is checked against the others' as it is saved)."""
    return not spec.get("quotas") and not any("slot" in page for page in plan)


def participant_submit_all(*, enrolment: Enrolment, shown_at: datetime, pages: Sequence[SentPage]) -> None:
    """Save a participant's whole plan at once, for a writer that knows every answer beforehand (the simulator):
    the rows that :func:`page_shown` of the first page at ``shown_at`` and then :func:`page_submit` with
    ``show_next`` of each page in turn store (each page's visit shown when the previous page was sent), the
    participant completed, in one transaction of three statements (two round trips on PostgreSQL) instead of
    four per page. ``pages``: the plan's pages in order. Raises ValueError for pages that are not the plan's or a
    plan that :func:`submits_at_once` refuses, RuntimeError when the participant is not active on their first
    page (nothing is stored then)."""
    plan = enrolment.plan
    facts = study_facts(enrolment.study_id, enrolment.condition_id)
    if not pages or [page.page_key for page in pages] != [page["key"] for page in plan]:
        raise ValueError("the pages sent together must be the participant's plan, in order")
    if not submits_at_once(facts.spec, plan):
        raise ValueError(f"{facts.slug}: adaptive pages and quotas are saved page by page (page_submit)")
    pk, status = enrolment.participant_id, Participant.Status
    answers = [row for page in pages for row in _answer_rows(pk, page.page_key, page.answers, page.at)]
    shown = [shown_at, *(page.at for page in pages[:-1])]  # each next page is shown when the previous is sent
    visits = [_visit_row(pk, p.page_key, first, p.at, p.signals, p.load) for p, first in zip(pages, shown, strict=True)]
    with transaction.atomic():
        changes = {"position": len(plan), "status": status.COMPLETED, "completed_at": pages[-1].at}
        if not update_rows(Participant, changes, {"id": pk, "status": status.ACTIVE, "position": 0}):
            raise RuntimeError(f"participant {pk} is not active on their first page: nothing was saved")
        execute_together(
            [
                *_statements(Answer, _ANSWER_COLUMNS, answers),
                *_statements(PageVisit, _VISIT_COLUMNS, visits),
            ]
        )
        _completed(enrolment)


def _statements(model: type[Answer | PageVisit], names: Sequence[str], rows: list[tuple]) -> list[Statement]:
    """INSERTs of ``rows``, as many rows in each as the database takes parameters."""
    size = max(1, connection.ops.bulk_batch_size(names, rows))
    return [insert_statement(model, names, rows[i : i + size]) for i in range(0, len(rows), size)]


def participant_time_out(*, participant_id: int) -> bool:
    """Mark an active participant ``timed_out`` (the caller has found them past the time limit);
    returns whether they were still active."""
    status = Participant.Status
    return bool(update_rows(Participant, {"status": status.TIMED_OUT}, {"id": participant_id, "status": status.ACTIVE}))


def participants_expire(*, slug: str | None = None, at: datetime | None = None) -> int:
    """Mark every active participant past their study version's time limit ``timed_out`` (all
    studies, or the versions of ``slug``); returns how many."""
    now = at or timezone.now()
    studies = Study.objects.filter(slug=slug) if slug else Study.objects.all()
    expired = 0
    for study_id, spec in studies.filter(spec__has_key="time_limit").values_list("pk", "spec"):
        cutoff = time_limit(spec).cutoff(now)
        expired += Participant.objects.filter(
            study_id=study_id, status=Participant.Status.ACTIVE, arrived_at__lt=cutoff
        ).update(status=Participant.Status.TIMED_OUT)
    return expired


def pilot_participants_delete(*, slug: str) -> int:
    """Delete the study's pilot participants with their answers and page times; returns how many.
    Real and simulated participants are untouched."""
    with transaction.atomic():
        pilots = Participant.objects.filter(study__slug=slug, pilot=True)
        count = pilots.count()
        pilots.delete()
    return count


def participant_withdraw(*, participant_id: int, at: datetime | None = None) -> Participant:
    """Withdraw consent: delete every answer and page visit, mark the participant withdrawn and
    replace the Prolific ids (and forget the resume code and conflicting arrivals), so nothing
    identifies them; analyses of the others are unaffected."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update().get(pk=participant_id)
        participant.answers.all().delete()
        participant.visits.all().delete()
        participant.conflicting_arrivals.all().delete()  # their SESSION_IDs identify them too
        participant.resume_failures_by_client.all().delete()  # so do the networks wrong codes came from
        participant.status = Participant.Status.WITHDRAWN
        participant.withdrawn_at = at or timezone.now()
        participant.external_id = f"withdrawn-{participant.pseudonym}"
        participant.prolific_study_id = participant.prolific_session_id = participant.resume_code_hash = ""
        participant.resume_failures, participant.resume_failed_at = 0, None
        participant.save(
            update_fields=[
                "status",
                "withdrawn_at",
                "external_id",
                "prolific_study_id",
                "prolific_session_id",
                "resume_code_hash",
                "resume_failures",
                "resume_failed_at",
            ]
        )
        return participant
