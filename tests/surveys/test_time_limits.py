"""Time limits: participants active past ``time_limit.max_minutes`` become timed_out (on their next
request or by expire_participants), may finish only when the study allows it, and stop counting
towards the condition balance."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from participation.models import Answer, Participant
from participation.services import participant_arrive, participant_consent
from tests.surveys.helpers import consented
from tests.surveys.prolific_helpers import arrive, finish, load_variant, post_page

pytestmark = pytest.mark.django_db


def _age(participant: Participant, minutes: float) -> None:
    """Move the participant's arrival ``minutes`` into the past (time travel)."""
    Participant.objects.filter(pk=participant.pk).update(arrived_at=timezone.now() - timedelta(minutes=minutes))


def test_a_participant_past_the_limit_is_timed_out_on_their_next_page(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, time_limit={"max_minutes": 60})
    participant = arrive(client, "slow")
    assert client.get("/s/effort-demo/page/").status_code == 200
    _age(participant, 59)
    assert "The time for this study is over" not in client.get("/s/effort-demo/page/").content.decode()
    _age(participant, 61)
    page = client.get("/s/effort-demo/page/")
    assert page.status_code == 200 and "The time for this study is over" in page.content.decode()
    assert "60 minutes" in page.content.decode()
    participant.refresh_from_db()
    assert participant.status == "timed_out"


def test_a_page_sent_past_the_limit_is_not_saved(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, time_limit={"max_minutes": 60})
    participant = arrive(client, "late-post")
    client.get("/s/effort-demo/page/")  # the enrolment (with the arrival time) is cached now
    _age(participant, 90)
    response = post_page(client, participant, participant.plan[0])
    assert response.status_code == 302 and response["Location"] == "/s/effort-demo/page/"
    participant.refresh_from_db()
    assert participant.status == "timed_out" and participant.position == 0
    assert not Answer.objects.exists()
    assert "The time for this study is over" in client.get("/s/effort-demo/page/").content.decode()


def test_a_study_may_let_timed_out_participants_finish(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, time_limit={"max_minutes": 60, "may_finish_late": True})
    participant = arrive(client, "finishes-late")
    _age(participant, 90)
    assert "The time for this study is over" not in client.get("/s/effort-demo/page/").content.decode()
    participant.refresh_from_db()
    assert participant.status == "timed_out"  # no longer counted, but may go on
    response = post_page(client, participant, participant.plan[0])
    assert response.status_code == 200  # the next page
    participant.refresh_from_db()
    assert participant.status == "timed_out" and participant.position == 1
    done = finish(client, participant, late=True)
    assert done.status_code == 200 and b"C1A2B3D4" in done.content
    participant.refresh_from_db()
    assert participant.status == "completed"


def test_expire_participants_marks_only_active_participants_past_their_limit(demo_spec, researcher):
    load_variant(demo_spec, researcher, time_limit={"max_minutes": 30})
    old, recent, done_long_ago = (consented("effort-demo", pid) for pid in ("old", "recent", "done"))
    _age(old, 31)
    _age(recent, 29)
    Participant.objects.filter(pk=done_long_ago.pk).update(
        status="completed", arrived_at=timezone.now() - timedelta(days=1)
    )
    out = StringIO()
    call_command("expire_participants", "effort-demo", stdout=out)
    assert "1 participant(s) timed out" in out.getvalue()
    statuses = dict(Participant.objects.values_list("external_id", "status"))
    assert statuses == {"old": "timed_out", "recent": "active", "done": "completed"}
    call_command("expire_participants", stdout=StringIO())  # every study: nothing more to do
    assert Participant.objects.filter(status="timed_out").count() == 1


def _newcomer(external_id: str, **kwargs) -> Participant:
    return participant_consent(
        participant_id=participant_arrive(study_slug="effort-demo", external_id=external_id, **kwargs)[0].pk,
        accept=True,
    )


def test_balance_ignores_abandoned_sessions_past_the_limit(demo_spec, researcher):
    load_variant(demo_spec, researcher, time_limit={"max_minutes": 60})
    for i in range(4):
        consented("effort-demo", f"b{i}")
    assert sorted(p.ticket for p in Participant.objects.all()) == [0, 1, 2, 3]
    arrests = [p for p in Participant.objects.order_by("ticket") if p.condition.key == "arrests"]
    assert len(arrests) == 2
    within = _newcomer("n0")  # everyone within the limit: the next new place
    assert within.ticket == 4
    for participant in arrests:
        _age(participant, 61)  # both in "arrests" abandoned their sessions (not yet marked timed out)
    first, second = _newcomer("n1"), _newcomer("n2")
    assert [first.condition.key, second.condition.key] == ["arrests", "arrests"]
    assert [first.ticket, second.ticket] == [p.ticket for p in arrests]
    assert Participant.objects.filter(pk__in=[p.pk for p in arrests], ticket__isnull=True).count() == 2
    assert _newcomer("n3").ticket == 5  # no free place left: the next new one


def test_balance_ignores_timed_out_and_pilot_participants_but_counts_completed(demo_spec, researcher):
    load_variant(demo_spec, researcher)  # no time limit
    for i in range(4):
        consented("effort-demo", f"c{i}")
    first, second, third, fourth = Participant.objects.order_by("ticket")
    Participant.objects.filter(pk=first.pk).update(status="completed", arrived_at=timezone.now() - timedelta(days=9))
    Participant.objects.filter(pk=second.pk).update(status="timed_out")
    pilot = _newcomer("pilot-1", pilot=True)
    assert pilot.ticket is None  # pilots take no place
    assert pilot.condition_id == second.condition_id  # they see the place the next participant gets
    newcomer = _newcomer("n")
    assert newcomer.condition_id == second.condition_id  # the timed-out participant's place
    assert newcomer.ticket == second.ticket
    assert Participant.objects.get(pk=first.pk).ticket == first.ticket  # completed participants always count
    assert _newcomer("m").ticket == 4
