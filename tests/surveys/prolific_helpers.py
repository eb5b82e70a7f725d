"""Shortcuts for the Prolific tests: a study variant, a participant from a Prolific link, and
taking them to the end with some attention checks failed."""

from django.test import Client

from participation.enrolment import enrolment_of
from participation.models import Participant
from participation.pages import condition_index
from participation.services import AnswerInput, page_submit
from studies.models import Study
from studies.services import study_load
from tasks.questions import attention_question
from tests.surveys.helpers import answers_for, valid_data

CODES = {"completed": "COMP1", "failed_attention": "FAIL1", "screened_out": "SCRN1", "declined": "DECL1"}


def load_variant(spec: dict, owner, **changes) -> Study:
    return study_load(spec={**spec, **changes}, owner=owner).study


def arrive(client: Client, pid: str, session: str = "") -> Participant:
    """Open the Prolific link and consent."""
    client.get("/s/effort-demo/", {"PROLIFIC_PID": pid, "STUDY_ID": "ST1", "SESSION_ID": session or f"S-{pid}"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    return Participant.objects.get(external_id=pid)


def wrong_check(participant: Participant, page: dict) -> list[AnswerInput]:
    check = next(
        c
        for c in participant.study.format1_spec["attention_checks"]["items"]
        if attention_question(c["key"]) == page["key"]
    )
    wrong = next(o for o in check["options"] if o != check["correct"])
    return [AnswerInput(question=f"attention/{check['key']}", measure="attention", number=0, text=wrong)]


def answer_all_but_last(participant: Participant, *, failed_checks: int = 0, late: bool = False) -> Participant:
    """Save every page but the last through the services, failing the first ``failed_checks``
    attention checks (``late``: past the time limit, in a study that lets them finish)."""
    participant.refresh_from_db()
    failed = 0
    for page in participant.plan[participant.position : -1]:
        answers = answers_for(participant, page)
        if page["kind"] == "attention" and failed < failed_checks:
            answers, failed = wrong_check(participant, page), failed + 1
        page_submit(enrolment=enrolment_of(participant), page_key=page["key"], answers=answers, late=late)
    assert failed == failed_checks
    participant.refresh_from_db()
    return participant


def post_page(client: Client, participant: Participant, page: dict, data: dict | None = None):
    study = participant.study
    index = condition_index(study.spec, study.spec_hash, participant.condition.key)
    return client.post("/s/effort-demo/page/", {"page_key": page["key"], **(data or valid_data(page, index))})


def finish(client: Client, participant: Participant, *, failed_checks: int = 0, late: bool = False):
    """Every page, the last one from the participant's browser; returns the done page."""
    participant = answer_all_but_last(participant, failed_checks=failed_checks, late=late)
    response = post_page(client, participant, participant.plan[-1])
    assert response.status_code == 302 and response["Location"] == "/s/effort-demo/done/"
    return client.get("/s/effort-demo/done/")
