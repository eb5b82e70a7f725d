"""Every write that changes a study or a participant's state, one transaction each.

Views, management commands, the API and the simulator call these functions; nothing else saves
participants or answers.
"""

import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from participation.enrolment import Enrolment
from participation.plan import plan_for
from participation.sql import insert_row_if, insert_rows, update_rows
from participation.time_limits import TimeLimit, time_limit
from studies.services import latest_study
from studies.study_facts import study_facts
from surveys.models import (
    Answer,
    PageVisit,
    Participant,
    Study,
)


class InvalidParticipantId(ValueError):
    pass


def normalise_external_id(external_id: str) -> str:
    """The participant id as stored: NFKC-normalised (full-width and other compatibility forms of
    the same characters are one id) and stripped; control and other invisible format characters
    are refused. Raises InvalidParticipantId."""
    value = unicodedata.normalize("NFKC", external_id or "").strip()
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in value):
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
) -> tuple[Participant, bool]:
    """Find the participant with this id in any version of the study, or register them in the latest.

    Returns ``(participant, created)``. Two simultaneous first arrivals with the same id create one
    participant (the unique constraint decides; the loser reads the winner's row). ``seed`` (for
    simulations) fixes the participant's randomisation; by default it is drawn from the OS. A new
    participant stores only the keyed hash of ``resume_code``. The id is normalised
    (``normalise_external_id``). ``looked_up``: the caller has just found no participant with this
    id (``participant_find``), so the lookup is not repeated. ``pilot``: the researcher's pilot link
    (checked by the caller) brought them; pilots are left out of the balance, exports and analyses.
    """
    external_id = normalise_external_id(external_id)
    existing = None if looked_up else participant_find(study_slug=study_slug, external_id=external_id)
    if existing is not None:
        return existing, False
    study = latest_study(study_slug)
    try:
        with transaction.atomic():
            participant = Participant(
                study=study,
                external_id=external_id,
                prolific_study_id=prolific_study_id[:128],
                prolific_session_id=prolific_session_id[:128],
                seed=secrets.randbits(62) if seed is None else seed,
                simulated=simulated,
                pilot=pilot,
                arrived_at=at or timezone.now(),
            )
            if resume_code:
                participant.resume_code_hash = resume_code_digest(participant, resume_code)
            participant.save(force_insert=True)
    except IntegrityError:
        return Participant.objects.get(study=study, external_id=external_id), False
    return participant, True


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


def participant_resume(*, participant_id: int, code: str, at: datetime | None = None) -> ResumeOutcome:
    """Check a typed resume code. After PARTICIPANT_RESUME_MAX_FAILURES wrong codes in a row the
    participant's code is not checked for PARTICIPANT_RESUME_LOCK_SECONDS after the last one (the
    count is on the participant's row, so it holds across workers and servers); a right code
    resets the count."""
    now = at or timezone.now()
    with transaction.atomic():
        participant = Participant.objects.select_for_update().get(pk=participant_id)
        lock = timedelta(seconds=settings.PARTICIPANT_RESUME_LOCK_SECONDS)
        recent = participant.resume_failed_at is not None and now - participant.resume_failed_at < lock
        failures = participant.resume_failures if recent else 0
        if failures >= settings.PARTICIPANT_RESUME_MAX_FAILURES:
            return ResumeOutcome.LOCKED
        if participant.resume_code_hash and constant_time_compare(
            participant.resume_code_hash, resume_code_digest(participant, code)
        ):
            if participant.resume_failures:
                update_rows(Participant, {"resume_failures": 0}, {"id": participant_id})
            return ResumeOutcome.ACCEPTED
        update_rows(Participant, {"resume_failures": failures + 1, "resume_failed_at": now}, {"id": participant_id})
        return ResumeOutcome.WRONG


def _least_filled_condition(
    study_id: int, condition_ids: list[int], rng: np.random.Generator, limit: TimeLimit, now: datetime
) -> int:
    """Counted: completed participants, and active ones still within the study's time limit (an
    abandoned session past it no longer holds a place); never pilots."""
    cutoff = limit.cutoff(now)
    status = Participant.Status
    active = Q(status=status.ACTIVE) if cutoff is None else Q(status=status.ACTIVE, arrived_at__gte=cutoff)
    counted = Participant.objects.filter(Q(status=status.COMPLETED) | active, study_id=study_id, pilot=False)
    filled = dict(counted.values_list("condition").annotate(n=Count("id")).order_by())
    fewest = min(filled.get(pk, 0) for pk in condition_ids)
    candidates = sorted(pk for pk in condition_ids if filled.get(pk, 0) == fewest)
    return candidates[int(rng.integers(len(candidates)))]


def participant_consent(*, participant_id: int, accept: bool, at: datetime | None = None) -> Participant:
    """Record the consent decision; on acceptance assign the least-filled condition (ties at random).

    The study row is locked for the assignment, so simultaneous arrivals are counted one after the
    other and the conditions stay balanced. The lock is held only for one count and one UPDATE
    (the study file comes from the per-process cache), so a rush of arrivals queues briefly.
    Deciding twice keeps the first decision.
    """
    with transaction.atomic():
        participant = Participant.objects.select_for_update().get(pk=participant_id)
        if participant.status != Participant.Status.ARRIVED:
            return participant
        if not accept:
            participant.status = Participant.Status.DECLINED
            participant.save(update_fields=["status"])
            return participant
        spec_hash = Study.objects.select_for_update().filter(pk=participant.study_id).values_list("spec_hash").get()[0]
        facts = study_facts(participant.study_id, spec_hash=spec_hash)
        rng = np.random.default_rng(participant.seed)
        now = at or timezone.now()
        condition_id = _least_filled_condition(
            participant.study_id, sorted(facts.condition_keys), rng, time_limit(facts.spec), now
        )
        changes = {
            "condition": condition_id,
            "plan": plan_for(facts.spec, facts.condition_keys[condition_id], participant.seed),
            "status": Participant.Status.ACTIVE,
            "consented_at": now,
        }
        update_rows(Participant, changes, {"id": participant.pk})
    participant.condition_id = condition_id
    for field in ("plan", "status", "consented_at"):
        setattr(participant, field, changes[field])
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
            (participant.pk, page_key, at or timezone.now(), None, 0),
            guard=Participant,
            where={"id": participant.pk, "status": (Participant.Status.ACTIVE, Participant.Status.TIMED_OUT)},
            conflict=("participant", "page"),
        )
    )


def page_refused(*, participant: Participant, page_key: str) -> None:
    """Count a submission that failed validation (nothing else is written)."""
    PageVisit.objects.filter(participant=participant, page=page_key).update(refusals=F("refusals") + 1)


@dataclass(frozen=True)
class AnswerInput:
    question: str
    measure: str
    set_key: str = ""
    subject_key: str = ""
    number: float | None = None
    text: str = ""


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
_VISIT_COLUMNS = ("participant", "page", "first_shown_at", "submitted_at", "refusals")


def page_submit(
    *,
    enrolment: Enrolment,
    page_key: str,
    answers: list[AnswerInput],
    at: datetime | None = None,
    show_next: bool = False,
    late: bool = False,
    screened_out: bool = False,
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
    makes them ``completed``. ``screened_out``: the answer ends the study (status ``screened_out``).
    """
    now = at or timezone.now()
    pk, plan = enrolment.participant_id, enrolment.plan
    place = enrolment.places.get(page_key)
    status = Participant.Status
    with transaction.atomic():
        changes: dict = {}
        if place is not None:
            changes["position"] = place + 1
            if screened_out:
                changes["status"] = status.SCREENED_OUT
            elif place + 1 == len(plan):
                changes.update(status=status.COMPLETED, completed_at=now)
            elif late:
                changes["status"] = status.TIMED_OUT
        open_statuses = (status.ACTIVE, status.TIMED_OUT) if late else status.ACTIVE
        advanced = place is not None and update_rows(
            Participant, changes, {"id": pk, "status": open_statuses, "position": place}
        )
        if not advanced:
            return _why_not_saved(Participant.objects.get(pk=pk), page_key)
        insert_rows(
            Answer,
            _ANSWER_COLUMNS,
            [(pk, page_key, a.question, a.measure, a.set_key, a.subject_key, a.number, a.text, now) for a in answers],
        )
        visits = [(pk, page_key, now, now, 0)]
        if show_next and place + 1 < len(plan) and not screened_out:
            visits.append((pk, plan[place + 1]["key"], now, None, 0))
        # One statement: the submitted page's visit gets its submission time (its first display
        # time stays), the next page's visit is created.
        insert_rows(PageVisit, _VISIT_COLUMNS, visits, on_conflict=("participant", "page"), update=("submitted_at",))
    return SubmitResult(SubmitOutcome.SAVED, changes.get("status", status.ACTIVE), place + 1)


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
    replace the Prolific ids (and forget the resume code), so nothing identifies them; analyses of
    the others are unaffected."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update().get(pk=participant_id)
        participant.answers.all().delete()
        participant.visits.all().delete()
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
