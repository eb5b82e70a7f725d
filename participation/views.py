"""The participant's pages. Identity comes from the session, set by the start link in the browser
that started (or proved it may resume: Prolific's SESSION_ID of the attempt or the resume code),
so a participant can only ever see and answer their own pages, and knowing someone's participant
id is not enough to continue, answer or withdraw for them. The session ends at completion and at
withdrawal."""

from dataclasses import replace
from functools import wraps
from typing import TYPE_CHECKING, cast

from django.conf import settings
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.translation import get_language, gettext, override
from django.utils.translation.trans_real import parse_accept_lang_header
from django.views.decorators.http import require_http_methods

from participation import throttle
from participation.adaptive import resolved_page
from participation.address_range import address_range
from participation.assignment import StudyFull
from participation.enrolment import Enrolment, cached_enrolment
from participation.models import Answer, Participant
from participation.outcomes import DECLINED, completion_for, outcome_of, return_if_failed
from participation.pages import condition_index, form_answers, page_form
from participation.pilot import is_pilot_token, new_pilot_id
from participation.rendering import consent_response, page_load, resume_html, study_page_response
from participation.services import (
    InvalidStartLink,
    ResumeOutcome,
    SubmitOutcome,
    check_start_parameters,
    clean_resume_code,
    new_resume_code,
    normalise_external_id,
    page_refused,
    page_shown,
    page_submit,
    participant_arrive,
    participant_consent,
    participant_find,
    participant_record_conflict,
    participant_resume,
    participant_set_resume_code,
    participant_time_out,
    participant_withdraw,
)
from participation.signals import FIELD as SIGNALS_FIELD
from participation.signals import parse_signals, records_signals
from participation.throttle import client_address, client_network
from participation.time_limits import time_limit
from studies.lifecycle import StudyNotOpen
from studies.quotas import quota_message
from studies.services import StudyNotFound, latest_version
from studies.study_facts import StudyFacts, study_facts
from studies.translation import PLATFORM_LANGUAGES, choose_language, localized
from tasks import task_for
from tasks.attention import attention_count
from tasks.page_index import Page

if TYPE_CHECKING:
    from participation.models import ParticipantWithSpecHash

Status = Participant.Status
ACTIVE_STATES = (Status.ARRIVED, Status.ACTIVE, Status.DECLINED, Status.TIMED_OUT)  # still holding a resume code
FINISHED = (Status.COMPLETED, Status.SCREENED_OUT, Status.WITHDRAWN)  # their session ends
STUDY_PAGES = (Status.ACTIVE, Status.TIMED_OUT)  # the page view: a timed-out participant may finish, or is told


def _session_key(slug: str) -> str:
    return f"participant:{slug}"


def _ended_key(slug: str) -> str:
    return f"ended:{slug}"


def _language_key(slug: str) -> str:
    return f"language:{slug}"


def _wanted_languages(request: HttpRequest) -> list[str]:
    """The languages the visitor asks for, best first: the link's ``?lang=`` (or the resume form's, which
    carries it), then the browser's."""
    header = request.headers.get("Accept-Language", "")[:256]
    link = request.POST if request.method == "POST" else request.GET
    return [link.get("lang", "")[:16], *(code for code, _ in parse_accept_lang_header(header))]


def in_participant_language(view):
    """Run a participant view in the participant's language, chosen once at arrival and kept in the
    session (never re-read from the request once chosen); before that, the language the visitor asks
    for among the platform's. The response says which (``Content-Language``)."""

    @wraps(view)
    def wrapped(request: HttpRequest, slug: str, *args, **kwargs) -> HttpResponse:
        language = request.session.get(_language_key(slug)) or choose_language(
            PLATFORM_LANGUAGES, _wanted_languages(request)
        )
        with override(language):
            response = view(request, slug, *args, **kwargs)
        response.headers.setdefault("Content-Language", language)
        return response

    return wrapped


def _shown(facts: StudyFacts) -> tuple[dict, str]:
    """The study file in the active language and the key its cached pages go under."""
    return localized(facts.spec, facts.spec_hash, get_language())


# After completion or withdrawal the session no longer names the participant; it keeps only a
# marker (status, study version, condition) so that the completion or withdrawal page can still be
# shown for this long. The next person on a shared computer cannot reach the pages of the last.
ENDED_MARKER_SECONDS = 3600


def _end_session(
    request: HttpRequest, slug: str, participant_id: int, status: str, study_id: int, condition_id: int | None
) -> None:
    """End the participant's session at completion or withdrawal: their id leaves the session
    (the whole session is flushed, with a new key, unless it also holds another study's
    participant) and only the "ended" marker stays, for ENDED_MARKER_SECONDS."""
    session = request.session
    for key in (_session_key(slug), _resume_key(slug), "shown"):
        session.pop(key, None)
    language = session.get(_language_key(slug))
    if not any(key.startswith("participant:") for key in session.keys()):
        session.flush()
        session.set_expiry(ENDED_MARKER_SECONDS)
    session[_ended_key(slug)] = [status, study_id, condition_id, participant_id]
    if language:  # the last pages stay in the participant's language
        session[_language_key(slug)] = language


def _ended(request: HttpRequest, slug: str) -> tuple[str, StudyFacts] | None:
    """The status and study facts of this browser's participant whose session has ended."""
    marker = request.session.get(_ended_key(slug))
    if not marker:
        return None
    status, study_id, condition_id = marker[:3]
    facts = study_facts(study_id, condition_id)
    return (status, facts) if facts.slug == slug else None


def _problem(request: HttpRequest, title: str, message: str, status: int) -> HttpResponse:
    return render(request, "surveys/problem.html", {"title": title, "message": message}, status=status)


def _participant(request: HttpRequest, slug: str) -> "tuple[ParticipantWithSpecHash, StudyFacts] | None":
    """The session's participant in this study and the study's facts, or None (one query; before consent
    the cached file is checked by the version's digest, read in the same query)."""
    try:
        participant: ParticipantWithSpecHash = Participant.objects.annotate(spec_hash=F("study__spec_hash")).get(
            pk=request.session[_session_key(slug)]
        )
    except (KeyError, Participant.DoesNotExist):
        return None
    if participant.condition_id is None:
        facts = study_facts(participant.study_id, spec_hash=participant.spec_hash)
    else:
        facts = study_facts(participant.study_id, participant.condition_id)
    if facts.slug != slug:
        return None
    return participant, facts


def _where(status: str, slug: str) -> str:
    where: dict[str, str] = {
        Status.ARRIVED: reverse("surveys:consent", args=[slug]),
        Status.DECLINED: reverse("surveys:declined", args=[slug]),
        Status.ACTIVE: reverse("surveys:page", args=[slug]),
        Status.TIMED_OUT: reverse("surveys:page", args=[slug]),
        Status.COMPLETED: reverse("surveys:done", args=[slug]),
        Status.SCREENED_OUT: reverse("surveys:done", args=[slug]),
        Status.WITHDRAWN: reverse("surveys:withdrawn", args=[slug]),
    }
    return where[status]


def _resume_key(slug: str) -> str:
    return f"resume:{slug}"


def _bind(request: HttpRequest, slug: str, participant: Participant, code: str = "") -> HttpResponse:
    """This browser is now the participant's (``_remember``); it goes to where they stand."""
    _remember(request, slug, participant, code)
    return redirect(_where(participant.status, slug))


def _remember(request: HttpRequest, slug: str, participant: Participant, code: str = "") -> None:
    """Their id (and resume code, when known) go into a fresh session; a finished participant's
    session ends at once."""
    request.session.cycle_key()
    if participant.status in FINISHED:
        _end_session(request, slug, participant.pk, participant.status, participant.study_id, participant.condition_id)
    else:
        # A previous participant's "ended" marker and its short expiry do not carry over.
        request.session.pop(_ended_key(slug), None)
        request.session.set_expiry(None)
        request.session[_session_key(slug)] = participant.pk
        request.session[_language_key(slug)] = participant.language
        if code:
            request.session[_resume_key(slug)] = code


def _too_many(request: HttpRequest, message: str) -> HttpResponse:
    response = _problem(request, gettext("Please wait a little"), message, 429)
    response["Retry-After"] = str(settings.PARTICIPANT_LIMIT_WINDOW_SECONDS)
    return response


def _resume_form(
    request: HttpRequest, slug: str, params, external_id: str, *, error: str = "", status: int = 200
) -> HttpResponse:
    link = {name: params.get(name, "")[:128] for name in ("STUDY_ID", "SESSION_ID", "lang")}
    context = {"slug": slug, "external_id": external_id, "link": link, "error": error}
    return render(request, "surveys/resume.html", context, status=status)


@require_http_methods(["GET", "POST"])
@in_participant_language
def start(request: HttpRequest, slug: str) -> HttpResponse:
    """Entry link: ``/s/<slug>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..`` or ``?participant_label=..``.

    A new id registers a participant bound to this browser (its session), who gets a resume code
    and is answered with the consent page itself.
    A known id resumes at the first unanswered page only in a browser that holds that participant's
    session, or with Prolific's SESSION_ID of the same attempt (as stored at arrival), or with the
    participant's resume code, asked for by a form (POST here; wrong codes are limited per
    participant and per address). New arrivals are limited per address.

    The researcher's pilot link adds ``pilot=<token>`` (``participation.pilot``): a new participant it
    brings is a pilot (an id is made up when the link has none); a wrong token is refused.

    A new participant of a study that is not live (``studies.lifecycle``; pilots: not draft, pilot or
    live) sees a page that says so, and nothing is stored; a known participant goes on in every state.
    """
    params = request.POST if request.method == "POST" else request.GET
    address = client_network(request)
    pilot = "pilot" in params
    try:
        check_start_parameters(params)
        if pilot and not is_pilot_token(slug, params["pilot"]):
            return _problem(
                request,
                gettext("This pilot link is not valid"),
                gettext("Ask the researcher for the study's pilot link."),
                403,
            )
        external_id = normalise_external_id(
            params.get("PROLIFIC_PID") or params.get("participant_label") or (new_pilot_id() if pilot else "")
        )
    except InvalidStartLink as exc:
        return _problem(request, gettext("The link is incomplete"), str(exc), 400)
    participant = participant_find(study_slug=slug, external_id=external_id)
    if participant is None:
        if request.method == "POST":
            return redirect(_where(Status.ARRIVED, slug))  # nothing to resume; _require explains
        if not throttle.count("arrival", address, settings.PARTICIPANT_ARRIVALS_PER_ADDRESS):
            return _too_many(request, gettext("Too many people have started this study from your network just now."))
        code = new_resume_code()
        try:
            participant, created = participant_arrive(
                study_slug=slug,
                external_id=external_id,
                prolific_study_id=params.get("STUDY_ID", ""),
                prolific_session_id=params.get("SESSION_ID", ""),
                pilot=pilot,
                resume_code=code,
                looked_up=True,
                languages=_wanted_languages(request),
                address_range=address_range(client_address(request)),
            )
        except StudyNotFound:
            return _problem(
                request,
                gettext("Study not found"),
                gettext("This link does not lead to a study. Please check the link."),
                404,
            )
        except StudyNotOpen as exc:  # nothing stored: a polite page that says why
            return render(request, "surveys/not_open.html", {"status": exc.status}, status=403)
        if created:  # the consent page at once (its form posts to /consent/): one request less per arrival
            _remember(request, slug, participant, code)
            arrived = cast("ParticipantWithSpecHash", participant)  # a new participant carries it (participant_arrive)
            facts = study_facts(arrived.study_id, spec_hash=arrived.spec_hash)
            with override(participant.language):
                response = consent_response(request, *_shown(facts), resume_code=code)
            response.headers["Content-Language"] = participant.language
            return response
    # A returning participant.
    ended = request.session.get(_ended_key(slug))
    if ended and len(ended) > 3 and ended[3] == participant.pk:  # finished in this browser: their last page
        return redirect(_where(participant.status, slug))
    if request.session.get(_session_key(slug)) == participant.pk:
        code = _resume_code(request, slug)
        if not code and not participant.resume_code_hash and participant.status in ACTIVE_STATES:
            # A participant from before resume codes gets one; one bound through Prolific's
            # SESSION_ID keeps the code shown in their first browser (it cannot be read back).
            code = participant_set_resume_code(participant_id=participant.pk)
        return _bind(request, slug, participant, code)
    session_id = params.get("SESSION_ID", "")
    if (
        session_id
        and participant.prolific_session_id
        and constant_time_compare(session_id[:128], participant.prolific_session_id)
    ):
        # Prolific's link of the same attempt: the code stays the one shown in the first browser.
        return _bind(request, slug, participant)
    if request.method == "GET":
        # Another SESSION_ID for a known id: maybe the real participant after a squatter; kept for the researcher.
        participant_record_conflict(participant=participant, session_id=session_id)
    if request.method == "GET":
        return _resume_form(request, slug, params, external_id)
    if throttle.exceeded("resume-failure", address, settings.PARTICIPANT_RESUME_FAILURES_PER_ADDRESS):
        return _too_many(
            request, gettext("Too many wrong codes were entered from your network. Please try again later.")
        )
    typed = clean_resume_code(params.get("code", ""))
    outcome = participant_resume(participant_id=participant.pk, code=typed, client=address)
    if outcome is ResumeOutcome.ACCEPTED:
        return _bind(request, slug, participant, typed)
    if outcome is ResumeOutcome.LOCKED:
        minutes = max(1, settings.PARTICIPANT_RESUME_LOCK_SECONDS // 60)
        return _resume_form(
            request,
            slug,
            params,
            external_id,
            error=gettext(
                "Too many wrong codes. Please wait %(minutes)d minutes, or continue in the browser where you started."
            )
            % {"minutes": minutes},
            status=429,
        )
    throttle.count("resume-failure", address, settings.PARTICIPANT_RESUME_FAILURES_PER_ADDRESS)
    return _resume_form(request, slug, params, external_id, error=gettext("This code is not right."), status=422)


def _resume_code(request: HttpRequest, slug: str) -> str:
    """The resume code this browser's session holds for the study ('' when it holds none)."""
    return request.session.get(_resume_key(slug), "")


def _require(
    request: HttpRequest, slug: str, status: str | tuple[str, ...]
) -> "tuple[ParticipantWithSpecHash | None, StudyFacts] | HttpResponse":
    """The participant and study facts, or the response that sends the visitor where they belong
    (``status``: the status, or statuses, this page is for). The participant is None when this
    browser's participant has finished (their session has ended) and ``status`` is their last status."""
    statuses = status if isinstance(status, tuple) else (status,)
    found = _participant(request, slug)
    if found is None:
        ended = _ended(request, slug)
        if ended is not None:  # finished or withdrawn in this browser: only that page is left
            ended_status, ended_facts = ended
            if ended_status in statuses:
                return None, ended_facts
            return redirect(_where(ended_status, slug))
        try:
            latest_version(slug)
        except StudyNotFound:
            return _problem(request, gettext("Study not found"), gettext("This link does not lead to a study."), 404)
        return _problem(
            request,
            gettext("Please use your study link"),
            gettext(
                "We could not tell who you are. Open the study from the link you were given (for example on "
                "Prolific); your answers so far are kept and you will continue where you stopped."
            ),
            403,
        )
    participant, facts = found
    if participant.status in FINISHED:  # e.g. withdrawn by a researcher
        _end_session(request, slug, participant.pk, participant.status, participant.study_id, participant.condition_id)
    if participant.status not in statuses:
        return redirect(_where(participant.status, slug))
    return participant, facts


@require_http_methods(["GET", "POST"])
@in_participant_language
def consent(request: HttpRequest, slug: str) -> HttpResponse:
    required = _require(request, slug, Status.ARRIVED)
    if isinstance(required, HttpResponse):
        return required
    participant, facts = required
    assert participant is not None  # an ended session's status is one of FINISHED, never ARRIVED
    spec, spec_key = _shown(facts)
    if request.method == "POST":
        decision = request.POST.get("decision")
        if decision in ("accept", "decline"):
            try:
                decided = participant_consent(
                    participant_id=participant.pk, accept=decision == "accept", participant=participant
                )
            except StudyFull:  # the participant stays "arrived": a place may free up later
                return render(request, "surveys/full.html", {"spec": spec})
            return redirect(_where(decided.status, slug))
        return render(
            request,
            "surveys/consent.html",
            {
                "spec": spec,
                "records_signals": records_signals(spec),
                "error": gettext("Choose whether you agree to take part."),
                "resume_html": resume_html(_resume_code(request, slug)),
            },
            status=422,
        )
    return consent_response(request, spec, spec_key, resume_code=_resume_code(request, slug))


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
    limit = time_limit(facts.spec)
    late = limit.expired(enrolment.arrived_at, timezone.now())  # from the cached enrolment: no query
    if late and not limit.may_finish_late:
        participant_time_out(participant_id=enrolment.participant_id)
        return redirect("surveys:page", slug=slug)  # which says that the time is over
    try:
        return _save_or_refuse(request, slug, enrolment, facts, enrolment.plan[place], late=late)
    except Participant.DoesNotExist:  # removed by a researcher since the plan was cached
        return None


def _save_or_refuse(
    request: HttpRequest, slug: str, enrolment: Enrolment, facts: StudyFacts, page: Page, *, late: bool
) -> HttpResponse:
    place = enrolment.places[page["key"]]
    spec, spec_key = _shown(facts)
    index = condition_index(spec, spec_key, facts.condition_keys[enrolment.condition_id])
    page = resolved_page(page, index, participant_id=enrolment.participant_id, study_id=enrolment.study_id)
    form = page_form(page, index, data=request.POST)
    if form.is_valid():
        result = page_submit(
            enrolment=enrolment,
            page_key=page["key"],
            answers=form_answers(page, index, form),
            show_next=True,
            late=late,
            screened_out=task_for(page).screens_out(form),
            signals=parse_signals(request.POST.get(SIGNALS_FIELD, "")) if records_signals(facts.spec) else None,
            load=page_load(page, index, spec_key),
        )
        if result.status in FINISHED:  # the last page saved (or resent), or screened out: the session ends here
            _end_session(
                request, slug, enrolment.participant_id, result.status, enrolment.study_id, enrolment.condition_id
            )
        if result.outcome is SubmitOutcome.SAVED and result.status in STUDY_PAGES:
            # The answer to the POST is the next page itself (one round trip, not a redirect and a
            # GET); page_submit has recorded it as shown. Its address stays /page/, so a reload
            # (made a GET by page.js) or a resent form shows the current page and saves nothing.
            following = resolved_page(
                enrolment.plan[result.position],
                index,
                participant_id=enrolment.participant_id,
                study_id=enrolment.study_id,
                just_reached=True,
            )
            return study_page_response(
                request,
                following,
                index,
                spec_key,
                position=result.position,
                total=len(enrolment.plan),
                resume_code=_resume_code(request, slug),
            )
        return redirect(_where(result.status, slug))
    participant = Participant.objects.get(pk=enrolment.participant_id)
    if participant.status not in STUDY_PAGES or participant.position != place:
        # A page already answered (back button, double click, second tab) or not yet reached.
        return redirect("surveys:page", slug=slug)
    page_refused(participant=participant, page_key=page["key"])
    return study_page_response(
        request,
        page,
        index,
        spec_key,
        form=form,
        status=422,
        position=place,
        total=len(enrolment.plan),
        resume_code=_resume_code(request, slug),
    )


@require_http_methods(["GET", "POST"])
@in_participant_language
def page(request: HttpRequest, slug: str) -> HttpResponse:
    if request.method == "POST":
        response = _submit(request, slug)
        if response is not None:
            return response
    required = _require(request, slug, STUDY_PAGES)
    if isinstance(required, HttpResponse):
        return required
    participant, facts = required
    assert participant is not None  # an ended session's status is one of FINISHED, never one of STUDY_PAGES
    limit = time_limit(facts.spec)
    if participant.status == Status.ACTIVE and limit.expired(participant.arrived_at, timezone.now()):
        participant_time_out(participant_id=participant.pk)  # lazily, on their next request
        participant.status = Status.TIMED_OUT
    if participant.status == Status.TIMED_OUT and not limit.may_finish_late:
        return render(request, "surveys/timed_out.html", {"spec": _shown(facts)[0], "minutes": limit.max_minutes})
    if request.method == "POST":  # a participant whose enrolment could not be read
        return redirect("surveys:page", slug=slug)
    spec, spec_key = _shown(facts)
    assert participant.condition_id is not None  # participant_active_has_condition: active and timed out have one
    index = condition_index(spec, spec_key, facts.condition_keys[participant.condition_id])
    current = resolved_page(
        participant.plan[participant.position], index, participant_id=participant.pk, study_id=participant.study_id
    )
    if request.session.get("shown") != current["key"]:
        page_shown(participant=participant, page_key=current["key"])
        request.session["shown"] = current["key"]  # a reload does not write again
    return study_page_response(
        request,
        current,
        index,
        spec_key,
        position=participant.position,
        total=len(participant.plan),
        resume_code=_resume_code(request, slug),
    )


@in_participant_language
def done(request: HttpRequest, slug: str) -> HttpResponse:
    """The last page: the completion code and link of the participant's outcome (completed, failed
    attention checks, screened out), with the outcome's message (screened out by a quota: the
    quota's, ``studies.quotas.quota_message``)."""
    required = _require(request, slug, (Status.COMPLETED, Status.SCREENED_OUT))
    if isinstance(required, HttpResponse):
        return required
    _, facts = required
    spec = _shown(facts)[0]
    outcome, quota, from_prolific = _outcome(request, slug, facts.spec)
    completion = completion_for(spec, outcome, from_prolific=from_prolific)
    if quota:
        completion = replace(completion, message=quota_message(spec, quota))
    return render(request, "surveys/done.html", {"spec": spec, "completion": completion})


def _outcome(request: HttpRequest, slug: str, spec: dict) -> tuple[str, str, bool]:
    """The outcome of this browser's finished participant, the quota that screened them out ('' if none)
    and whether they came from Prolific (their link carried Prolific's STUDY_ID or SESSION_ID), worked out
    once (one read of the participant; one count of their failed attention checks, only when they could
    reach the threshold) and kept in the session's "ended" marker, so a reload of the page runs no query."""
    marker = request.session[_ended_key(slug)]  # [status, study, condition, participant(, outcome, quota, prolific)]
    if len(marker) > 6:
        return marker[4], marker[5], marker[6]
    status, participant_id = marker[0], marker[3] if len(marker) > 3 else None
    failed, quota, from_prolific = 0, "", True
    if participant_id is not None:  # (a marker from before it held the participant: no answers, no quota)
        if status == Status.COMPLETED and attention_count(spec) >= return_if_failed(spec):
            failed = Answer.objects.filter(participant_id=participant_id, measure="attention", number=0).count()
        found = Participant.objects.filter(pk=participant_id).values_list(
            "quota_screened_out", "prolific_study_id", "prolific_session_id"
        )
        for quota_key, study_id, session_id in found:
            quota = quota_key if status == Status.SCREENED_OUT else ""
            from_prolific = bool(study_id or session_id)
    outcome = outcome_of(spec, status, failed)
    request.session[_ended_key(slug)] = [*marker[:4], outcome, quota, from_prolific]
    return outcome, quota, from_prolific


@in_participant_language
def declined(request: HttpRequest, slug: str) -> HttpResponse:
    """The decline message; from Prolific, the ``declined`` code and its link back there, if the file has one."""
    required = _require(request, slug, Status.DECLINED)
    if isinstance(required, HttpResponse):
        return required
    participant, facts = required
    assert participant is not None  # an ended session's status is one of FINISHED, never DECLINED
    from_prolific = bool(participant.prolific_study_id or participant.prolific_session_id)
    spec = _shown(facts)[0]
    completion = completion_for(spec, DECLINED, from_prolific=from_prolific)
    return render(request, "surveys/declined.html", {"spec": spec, "completion": completion})


@require_http_methods(["GET", "POST"])
@in_participant_language
def withdraw(request: HttpRequest, slug: str) -> HttpResponse:
    """Withdraw from the study at any point: confirm, then every answer is deleted."""
    found = _participant(request, slug)
    if found is None or found[0].status in FINISHED:
        required = _require(request, slug, Status.WITHDRAWN)  # ends a finished session, explains
        return required if isinstance(required, HttpResponse) else redirect(_where(Status.WITHDRAWN, slug))
    participant, facts = found
    if request.method == "POST" and request.POST.get("confirm") == "withdraw":
        gone = participant_withdraw(participant_id=participant.pk)
        _end_session(request, slug, gone.pk, gone.status, gone.study_id, gone.condition_id)
        return redirect(_where(gone.status, slug))
    return render(
        request, "surveys/withdraw.html", {"spec": _shown(facts)[0], "back": _where(participant.status, slug)}
    )


@in_participant_language
def withdrawn(request: HttpRequest, slug: str) -> HttpResponse:
    required = _require(request, slug, Status.WITHDRAWN)
    if isinstance(required, HttpResponse):
        return required
    _, facts = required
    return render(request, "surveys/withdrawn.html", {"spec": _shown(facts)[0]})
