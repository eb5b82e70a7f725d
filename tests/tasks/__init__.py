"""Tests of the task types, one module each."""

from participation.models import Participant
from participation.page_bot import page_answers


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
