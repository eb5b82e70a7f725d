"""The participant's pages. Identity comes from the session, set once by the start link, so a
participant can only ever see and answer their own pages."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from surveys.enrolment import Enrolment, cached_enrolment
from surveys.models import Participant, Study
from surveys.pages import condition_index, form_answers, page_form
from surveys.rendering import study_page_response
from surveys.services import (
    InvalidParticipantId,
    StudyNotFound,
    SubmitOutcome,
    latest_study,
    page_refused,
    page_shown,
    page_submit,
    participant_arrive,
    participant_consent,
    participant_withdraw,
)
from surveys.study_facts import StudyFacts, study_facts

Status = Participant.Status


def _session_key(slug: str) -> str:
    return f"participant:{slug}"


def _ended_key(slug: str) -> str:
    return f"ended:{slug}"


# After completion or withdrawal the session no longer names the participant; it keeps only a
# marker (status, study version, condition) so that the completion or withdrawal page can still be
# shown for this long. The next person on a shared computer cannot reach the pages of the last.
ENDED_MARKER_SECONDS = 3600


def _end_session(request: HttpRequest, slug: str, status: str, study_id: int, condition_id: int | None) -> None:
    """End the participant's session at completion or withdrawal: their id leaves the session
    (the whole session is flushed, with a new key, unless it also holds another study's
    participant) and only the "ended" marker stays, for ENDED_MARKER_SECONDS."""
    session = request.session
    for key in (_session_key(slug), "shown"):
        session.pop(key, None)
    if not any(key.startswith("participant:") for key in session.keys()):
        session.flush()
        session.set_expiry(ENDED_MARKER_SECONDS)
    session[_ended_key(slug)] = [status, study_id, condition_id]


def _ended(request: HttpRequest, slug: str) -> tuple[str, StudyFacts] | None:
    """The status and study facts of this browser's participant whose session has ended."""
    marker = request.session.get(_ended_key(slug))
    if not marker:
        return None
    status, study_id, condition_id = marker
    facts = study_facts(study_id, condition_id)
    return (status, facts) if facts.slug == slug else None


def _problem(request: HttpRequest, title: str, message: str, status: int) -> HttpResponse:
    return render(request, "surveys/problem.html", {"title": title, "message": message}, status=status)


def _participant(request: HttpRequest, slug: str) -> tuple[Participant | None, StudyFacts | None]:
    """The session's participant in this study and the study's facts (one query on study pages)."""
    try:
        participant = Participant.objects.get(pk=request.session[_session_key(slug)])
    except (KeyError, Participant.DoesNotExist):
        return None, None
    if participant.condition_id is None:  # before consent: check the cached file by its digest
        spec_hash = Study.objects.values_list("spec_hash", flat=True).get(pk=participant.study_id)
        facts = study_facts(participant.study_id, spec_hash=spec_hash)
    else:
        facts = study_facts(participant.study_id, participant.condition_id)
    if facts.slug != slug:
        return None, None
    return participant, facts


def _where(status: str, slug: str) -> str:
    return {
        Status.ARRIVED: reverse("surveys:consent", args=[slug]),
        Status.DECLINED: reverse("surveys:declined", args=[slug]),
        Status.ACTIVE: reverse("surveys:page", args=[slug]),
        Status.COMPLETED: reverse("surveys:done", args=[slug]),
        Status.WITHDRAWN: reverse("surveys:withdrawn", args=[slug]),
    }[status]


@require_http_methods(["GET"])
def start(request: HttpRequest, slug: str) -> HttpResponse:
    """Entry link: ``/s/<slug>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..`` or ``?participant_label=..``.

    A returning participant (any device) resumes at their first unanswered page.
    """
    external_id = request.GET.get("PROLIFIC_PID") or request.GET.get("participant_label", "")
    try:
        participant, _ = participant_arrive(
            study_slug=slug,
            external_id=external_id,
            prolific_study_id=request.GET.get("STUDY_ID", ""),
            prolific_session_id=request.GET.get("SESSION_ID", ""),
        )
    except StudyNotFound:
        return _problem(request, "Study not found", "This link does not lead to a study. Please check the link.", 404)
    except InvalidParticipantId as exc:
        return _problem(request, "The link is incomplete", str(exc), 400)
    request.session.cycle_key()
    if participant.status in (Status.COMPLETED, Status.WITHDRAWN):
        _end_session(request, slug, participant.status, participant.study_id, participant.condition_id)
    else:
        request.session[_session_key(slug)] = participant.pk
    return redirect(_where(participant.status, slug))


def _require(
    request: HttpRequest, slug: str, status: str
) -> tuple[Participant | None, StudyFacts | None, HttpResponse | None]:
    """The participant and study facts, or the response that sends the visitor where they belong."""
    participant, facts = _participant(request, slug)
    if participant is None:
        ended = _ended(request, slug)
        if ended is not None:  # completed or withdrawn in this browser: only that page is left
            ended_status, ended_facts = ended
            if ended_status == status:
                return None, ended_facts, None
            return None, None, redirect(_where(ended_status, slug))
        try:
            latest_study(slug)
        except StudyNotFound:
            return None, None, _problem(request, "Study not found", "This link does not lead to a study.", 404)
        return (
            None,
            None,
            _problem(
                request,
                "Please use your study link",
                "We could not tell who you are. Open the study from the link you were given (for example on Prolific); "
                "your answers so far are kept and you will continue where you stopped.",
                403,
            ),
        )
    if participant.status in (Status.COMPLETED, Status.WITHDRAWN):  # e.g. withdrawn by a researcher
        _end_session(request, slug, participant.status, participant.study_id, participant.condition_id)
    if participant.status != status:
        return participant, facts, redirect(_where(participant.status, slug))
    return participant, facts, None


@require_http_methods(["GET", "POST"])
def consent(request: HttpRequest, slug: str) -> HttpResponse:
    participant, facts, detour = _require(request, slug, Status.ARRIVED)
    if detour:
        return detour
    spec = facts.spec
    if request.method == "POST":
        decision = request.POST.get("decision")
        if decision in ("accept", "decline"):
            participant = participant_consent(participant_id=participant.pk, accept=decision == "accept")
            return redirect(_where(participant.status, slug))
        return render(
            request,
            "surveys/consent.html",
            {"spec": spec, "error": "Choose whether you agree to take part."},
            status=422,
        )
    return render(request, "surveys/consent.html", {"spec": spec})


def _submit(request: HttpRequest, slug: str) -> HttpResponse | None:
    """A page's POST without reading the participant row: the plan comes from the cached
    enrolment and the submission's own UPDATE decides whether the page is still open. None when
    the session has no consented participant of this study (the caller then redirects)."""
    pk = request.session.get(_session_key(slug))
    enrolment = cached_enrolment(pk) if pk is not None else None
    if enrolment is None:
        return None
    facts = study_facts(enrolment.study_id, enrolment.condition_id)
    place = enrolment.places.get(request.POST.get("page_key", ""))
    if facts.slug != slug:
        return None
    if place is None:
        return redirect("surveys:page", slug=slug)
    try:
        return _save_or_refuse(request, slug, enrolment, facts, enrolment.plan[place])
    except Participant.DoesNotExist:  # removed by a researcher since the plan was cached
        return None


def _save_or_refuse(
    request: HttpRequest, slug: str, enrolment: Enrolment, facts: StudyFacts, page: dict
) -> HttpResponse:
    place = enrolment.places[page["key"]]
    index = condition_index(facts.spec, facts.spec_hash, facts.condition_keys[enrolment.condition_id])
    form = page_form(page, index, data=request.POST)
    if form.is_valid():
        result = page_submit(
            enrolment=enrolment, page_key=page["key"], answers=form_answers(page, index, form), show_next=True
        )
        if result.status == Status.COMPLETED:  # the last page saved (or resent): the session ends here
            _end_session(request, slug, result.status, enrolment.study_id, enrolment.condition_id)
        if result.outcome is SubmitOutcome.SAVED and result.status == Status.ACTIVE:
            # The answer to the POST is the next page itself (one round trip, not a redirect and a
            # GET); page_submit has recorded it as shown. Its address stays /page/, so a reload
            # (made a GET by page.js) or a resent form shows the current page and saves nothing.
            following = enrolment.plan[result.position]
            return study_page_response(
                request, following, index, facts.spec_hash, position=result.position, total=len(enrolment.plan)
            )
        return redirect(_where(result.status, slug))
    participant = Participant.objects.get(pk=enrolment.participant_id)
    if participant.status != Status.ACTIVE or participant.position != place:
        # A page already answered (back button, double click, second tab) or not yet reached.
        return redirect("surveys:page", slug=slug)
    page_refused(participant=participant, page_key=page["key"])
    return study_page_response(
        request, page, index, facts.spec_hash, form=form, status=422, position=place, total=len(enrolment.plan)
    )


@require_http_methods(["GET", "POST"])
def page(request: HttpRequest, slug: str) -> HttpResponse:
    if request.method == "POST":
        response = _submit(request, slug)
        if response is not None:
            return response
    participant, facts, detour = _require(request, slug, Status.ACTIVE)
    if detour:
        return detour
    if request.method == "POST":  # an active participant whose enrolment could not be read
        return redirect("surveys:page", slug=slug)
    current = participant.plan[participant.position]
    index = condition_index(facts.spec, facts.spec_hash, facts.condition_keys[participant.condition_id])
    if request.session.get("shown") != current["key"]:
        page_shown(participant=participant, page_key=current["key"])
        request.session["shown"] = current["key"]  # a reload does not write again
    return study_page_response(
        request, current, index, facts.spec_hash, position=participant.position, total=len(participant.plan)
    )


def done(request: HttpRequest, slug: str) -> HttpResponse:
    participant, facts, detour = _require(request, slug, Status.COMPLETED)
    if detour:
        return detour
    return render(request, "surveys/done.html", {"spec": facts.spec})


def declined(request: HttpRequest, slug: str) -> HttpResponse:
    participant, facts, detour = _require(request, slug, Status.DECLINED)
    if detour:
        return detour
    return render(request, "surveys/declined.html", {"spec": facts.spec})


@require_http_methods(["GET", "POST"])
def withdraw(request: HttpRequest, slug: str) -> HttpResponse:
    """Withdraw from the study at any point: confirm, then every answer is deleted."""
    participant, facts = _participant(request, slug)
    if participant is None:
        ended = _ended(request, slug)
        if ended is not None:
            return redirect(_where(ended[0], slug))
        return _problem(request, "Please use your study link", "Open the study from your link first.", 403)
    if participant.status == Status.WITHDRAWN:
        _end_session(request, slug, participant.status, participant.study_id, participant.condition_id)
        return redirect(_where(participant.status, slug))
    if request.method == "POST" and request.POST.get("confirm") == "withdraw":
        participant = participant_withdraw(participant_id=participant.pk)
        _end_session(request, slug, participant.status, participant.study_id, participant.condition_id)
        return redirect(_where(participant.status, slug))
    return render(request, "surveys/withdraw.html", {"spec": facts.spec, "back": _where(participant.status, slug)})


def withdrawn(request: HttpRequest, slug: str) -> HttpResponse:
    participant, facts, detour = _require(request, slug, Status.WITHDRAWN)
    if detour:
        return detour
    return render(request, "surveys/withdrawn.html", {"spec": facts.spec})
