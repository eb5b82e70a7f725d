"""Shortcuts that take a participant through pages via the services, with valid answers; a simulated demo study
a module's tests share."""

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.datastructures import MultiValueDict

from participation.enrolment import enrolment_of
from participation.models import Participant
from participation.pages import condition_index, form_answers, page_form
from participation.services import page_submit, participant_arrive, participant_consent
from studies.models import Study
from tasks.attention import attention_check

# A valid answer per form field (by its name without the item prefix; ``score_<subject>`` by its start)
VALID = {
    "rating": "2",
    "prediction": "60",
    "k_decision": "accept",
    "score": "40",
    "rationale": "Similar trend and total.",
    "agree": "1",
    "answer": "1",
}


def valid_data(page: dict, index) -> dict:
    """Valid POST data for any page: a rating of 2 (prediction 60), the AI's score accepted and every
    fair score 40 with a rationale, agreement, the attention check's correct option."""
    if page["kind"] == "attention":
        return {"choice": attention_check(page, index)["correct"]}
    data = {}
    for name in page_form(page, index).fields:
        field = name.rsplit("-", 1)[-1]
        key = field if field in VALID else field.split("_", 1)[0]
        if key in VALID:
            data[name] = VALID[key]
    return data


def answers_for(participant: Participant, page: dict) -> list:
    study = participant.study
    index = condition_index(study.spec, study.spec_hash, participant.condition.key)
    form = page_form(page, index, data=MultiValueDict({k: [v] for k, v in valid_data(page, index).items()}))
    assert form.is_valid(), form.errors
    return form_answers(page, index, form)


def output_page(participant: Participant) -> dict:
    """The participant's current page, a fair-score page of a converted format 1 study, with the
    comparison subjects it asks scores for (``subjects``: its form's ``score_<subject>`` fields) and its
    stimulus set (``set``: the page's item)."""
    participant.refresh_from_db()
    page = participant.plan[participant.position]
    study = participant.study
    form = page_form(page, condition_index(study.spec, study.spec_hash, participant.condition.key))
    subjects = [name.removeprefix("score_") for name in form.fields if name.startswith("score_")]
    return {**page, "subjects": subjects, "set": page["item"]}


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


@dataclass(frozen=True)
class SharedStudy:
    """The demo study a module's tests share (:func:`shared_demo_study`): its owner, its run files' folder and
    the ``STORAGES`` setting that reads them (a test sets it to fetch stored reports)."""

    study: Study
    owner: Any
    folder: Path
    storages: dict


@contextmanager
def shared_demo_study(
    django_db_blocker,
    folder: Path,
    *,
    n: int,
    seed: int,
    edit: Callable[[dict], None] | None = None,
    **simulation: Any,
) -> Iterator[SharedStudy]:
    """The demo study (its stored spec changed by ``edit``) with ``n`` simulated participants (``simulation``: more
    options of ``simulate_participants``, such as its generative ``model``), made outside any
    test's transaction for a module-scoped fixture: its tests share it and what a test writes in its own
    transaction is rolled back (a test reads the study afresh from the database before changing it). Run files
    go to ``folder``; the study, its participants, runs and owner are deleted afterwards."""
    from django.contrib.auth import get_user_model
    from django.test import override_settings

    from core.caching import clear_process_caches
    from participation.simulate import simulate_participants
    from studies.services import study_load
    from tests.conftest import DEMO_FILE

    storages = {**settings.STORAGES, "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(folder)}}}
    with django_db_blocker.unblock(), override_settings(STORAGES=storages, REPORTS_DIR=folder / "reports"):
        owner = get_user_model().objects.create_user("shared-owner", password="shared-pass-123")
        study = study_load(spec=json.loads(DEMO_FILE.read_text()), owner=owner).study
        if edit is not None:
            edit(study.spec)
            study.save(update_fields=["spec"])
        try:
            simulate_participants(study.slug, n=n, seed=seed, **simulation)
            yield SharedStudy(study, owner, folder, storages)
        finally:
            Participant.objects.filter(study__slug=study.slug).delete()
            Study.objects.filter(slug=study.slug).delete()
            owner.delete()
            clear_process_caches()
