"""Tests of the task types, one module each."""

from participation.loadclient import HTTPParticipant
from participation.models import Participant


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
