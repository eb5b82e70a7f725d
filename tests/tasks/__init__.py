"""Tests of the task types, one module each."""

import re

import pytest

from participation.loadclient import HTTPParticipant
from participation.models import Participant
from studies.study_file import InvalidStudyFile, validate_study


def reach_task_page(client, spec: dict, kind: str, label: str = "p1") -> tuple[Participant, dict]:
    """A participant ``label`` of the loaded study ``spec`` consents and answers every page (as a browser
    would, attention checks right) until the first page of ``kind``; returns them and that page."""
    slug = spec["slug"]
    client.get(f"/s/{slug}/?participant_label={label}")
    client.post(f"/s/{slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id=label)
    checks = {b["key"]: b["correct"] for b in spec["blocks"] if b["type"] == "attention"}
    person = HTTPParticipant(0, label, checks)
    for _ in range(len(participant.plan)):
        page = participant.plan[participant.position]
        if page["kind"] == kind:
            return participant, page
        html = client.get(f"/s/{slug}/page/").content.decode()
        client.post(f"/s/{slug}/page/", person.answer(page["key"], html))
        participant.refresh_from_db()
    raise AssertionError(f"no {kind} page in the plan of {label}")


def assert_refused(problems: dict[str, tuple[dict, str]]) -> None:
    """Each study file (its last block's options set to None dropped) is refused with its message."""
    for name, (bad, message) in problems.items():
        bad["blocks"][-1] = {k: v for k, v in bad["blocks"][-1].items() if v is not None}
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)
        assert name
