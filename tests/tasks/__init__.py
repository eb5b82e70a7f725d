"""Tests of the task types, one module each."""

import re

import pytest

from participation.models import Participant
from participation.page_bot import page_answers
from studies.study_file import InvalidStudyFile, validate_study


def reach_task_page(client, spec: dict, kind: str, label: str = "p1") -> tuple[Participant, dict]:
    """A participant ``label`` of the loaded study ``spec`` consents and answers every page (with its task
    type's bot, ``TaskType.fill``) until the first page of ``kind``; returns them and that page."""
    slug = spec["slug"]
    client.get(f"/s/{slug}/?participant_label={label}")
    client.post(f"/s/{slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id=label)
    for _ in range(len(participant.plan)):
        page = participant.plan[participant.position]
        if page["kind"] == kind:
            return participant, page
        client.get(f"/s/{slug}/page/")
        client.post(f"/s/{slug}/page/", page_answers(participant.pk))
        participant.refresh_from_db()
    raise AssertionError(f"no {kind} page in the plan of {label}")


def assert_refused(problems: dict[str, tuple[dict, str]]) -> None:
    """Each study file (its last block's options set to None dropped) is refused with its message."""
    for name, (bad, message) in problems.items():
        bad["blocks"][-1] = {k: v for k, v in bad["blocks"][-1].items() if v is not None}
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)
        assert name
