"""Shortcuts that take a participant through pages via the services, with valid answers."""

from django.utils.datastructures import MultiValueDict

from participation.enrolment import enrolment_of
from participation.models import Participant
from participation.pages import condition_index, form_answers, page_form
from participation.services import page_submit, participant_arrive, participant_consent


def valid_data(page: dict, index) -> dict:
    kind = page["kind"]
    if kind == "likert":
        data = {"rating": "2"}
        if page["measure"] in index.spec["bts"]["questions"]:
            data["prediction"] = "60"
        return data
    if kind == "output":
        data = {"k_decision": "accept"}
        for x in page["subjects"]:
            data[f"score_{x}"] = "40"
            data[f"rationale_{x}"] = "Similar trend and total."
        return data
    if kind == "disagreement":
        return {f"agree_{k}": "1" for k in page["prompts"]}
    if kind == "attention":
        return {"choice": index.checks[page["check"]]["correct"]}
    return {}


def answers_for(participant: Participant, page: dict) -> list:
    study = participant.study
    index = condition_index(study.spec, study.spec_hash, participant.condition.key)
    form = page_form(page, index, data=MultiValueDict({k: [v] for k, v in valid_data(page, index).items()}))
    assert form.is_valid(), form.errors
    return form_answers(page, index, form)


def consented(slug: str, external_id: str) -> Participant:
    participant, _ = participant_arrive(study_slug=slug, external_id=external_id)
    return participant_consent(participant_id=participant.pk, accept=True)


def answer_pages(participant: Participant, count: int | None = None) -> Participant:
    participant.refresh_from_db()
    pages = participant.plan[participant.position :]
    for page in pages if count is None else pages[:count]:
        page_submit(enrolment=enrolment_of(participant), page_key=page["key"], answers=answers_for(participant, page))
    participant.refresh_from_db()
    return participant


def participant_session(client):
    """The participant's signed-cookie session (cookie ``participant_session``) as a session store;
    Django's ``client.session`` shows the researcher session (``sessionid``) instead."""
    from django.conf import settings

    from config.sessions import ParticipantSessionStore

    cookie = client.cookies.get(settings.PARTICIPANT_SESSION_COOKIE_NAME)
    return ParticipantSessionStore(session_key=cookie.value if cookie and cookie.value else None)
