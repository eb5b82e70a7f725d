"""Assignment of conditions and items (participation.assignment): balance of conditions and of
judgements per item, strata, caps and the full study, fixed positions, reproducibility, and the
consent that stores it; the concurrency test runs many consents at once on PostgreSQL."""

import json
import threading
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import F

from participation.assignment import (
    StudyFull,
    build_plan_v2,
    capacity,
    condition_for,
    item_choice,
    items_for,
    rank_in,
)
from participation.models import Participant
from participation.services import participant_arrive, participant_consent
from studies.content import study_content
from studies.format1 import converted_plan
from studies.models import Condition, Study
from studies.services import spec_digest
from studies.study_file import validate_study
from tests.format1_plan import build_plan

EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "format2_example.json"


def example(**changes) -> dict:
    spec = json.loads(EXAMPLE.read_text())
    spec.update(changes)
    return validate_study(spec)


def content_of(spec: dict):
    return study_content(spec, spec_digest(spec))


def judgements(spec: dict, block: str, participants: int) -> Counter:
    content = content_of(spec)
    counts = Counter()
    for rank in range(participants):
        chosen = items_for(spec, content, block, rank)
        assert len(chosen) == len(set(chosen)) == content.blocks[block]["assignment"]["per_participant"]
        counts.update(chosen)
    return counts


def test_conditions_stay_balanced_and_stop_at_their_caps():
    spec = example(conditions=[{"key": "shown", "label": "A", "cap": 3}, {"key": "hidden", "label": "B"}])
    for n in range(1, 7):  # below the cap: least-filled, within one
        counts = Counter(condition_for(spec, t) for t in range(n))
        assert abs(counts["shown"] - counts["hidden"]) <= 1
    assert Counter(condition_for(spec, t) for t in range(11)) == {"shown": 3, "hidden": 8}
    assert capacity(spec) is None


def test_a_study_whose_conditions_are_all_capped_is_full_after_the_last_place():
    spec = example(conditions=[{"key": "shown", "label": "A", "cap": 2}, {"key": "hidden", "label": "B", "cap": 3}])
    assert capacity(spec) == 5
    assert Counter(condition_for(spec, t) for t in range(5)) == {"shown": 2, "hidden": 3}
    with pytest.raises(StudyFull):
        condition_for(spec, 5)


def test_judgements_per_item_differ_by_at_most_one_for_any_number_of_participants():
    spec = example()
    blocks = {b["key"]: b for b in spec["blocks"]}
    blocks["risk"]["assignment"] = {"per_participant": 5}  # 12 items, windows span rounds
    for n in (1, 2, 3, 7, 12, 25, 40):
        counts = judgements(spec, "risk", n)
        assert sum(counts.values()) == 5 * n
        assert max(counts.values()) - (min(counts.values()) if len(counts) == 12 else 0) <= 1


def test_stratified_sampling_gives_everyone_the_same_number_per_value():
    spec = example()
    content = content_of(spec)
    race = {s["id"]: s["groups"]["race"] for s in spec["pools"][0]["subjects"]}
    counts = Counter()
    for rank in range(30):
        chosen = items_for(spec, content, "judge", rank)
        assert Counter(race[item] for item in chosen) == {"Black": 2, "White": 2}  # per_participant 4, 2 values
        counts.update(chosen)
    for value in ("Black", "White"):
        per_item = [n for item, n in counts.items() if race[item] == value]
        assert len(per_item) == 6 and max(per_item) - min(per_item) <= 1


def test_a_block_shown_in_one_condition_numbers_only_its_participants():
    spec = example()
    shown = [t for t in range(20) if condition_for(spec, t) == "shown"]
    assert [rank_in(spec, t, ["shown"]) for t in shown] == list(range(len(shown)))
    assert "risk" in item_choice(spec, content_of(spec), shown[0])
    hidden = next(t for t in range(20) if condition_for(spec, t) == "hidden")
    assert "risk" not in item_choice(spec, content_of(spec), hidden)


def test_plan_has_blocks_in_file_order_with_fixed_positions_and_positions():
    spec = example()
    content = content_of(spec)
    for seed in range(6):
        plan = build_plan_v2(spec, content, "shown", seed, item_choice(spec, content, 0))
        blocks = list(dict.fromkeys(page.get("block") for page in plan))
        assert blocks == ["intro", "about", "judge", "check", "risk", "alike", "distance", "fair"]
        alike = [page for page in plan if page.get("block") == "alike"]
        assert alike[0]["item"] == "d01~d02" and alike[0]["key"] == "alike/d01~d02"  # order.fixed: position 0
        assert [page["position"] for page in alike] == [0, 1, 2]
        distance = [page["key"] for page in plan if page.get("block") == "distance"]
        assert distance == [f"distance/d01~d03/{m}" for m in ("trajectory", "aggregate", "overall")]
        assert len({page["key"] for page in plan}) == len(plan)
    hidden = build_plan_v2(spec, content, "hidden", 0, {})
    assert "risk" not in {page.get("block") for page in hidden}
    assert sum(page.get("block") == "judge" for page in hidden) == 12  # no choice given: every item


def test_plan_is_reproducible_from_the_seed_and_the_ticket():
    spec = example()
    content = content_of(spec)

    def plan(seed, ticket):
        return build_plan_v2(spec, content, condition_for(spec, ticket), seed, item_choice(spec, content, ticket))

    assert plan(11, 3) == plan(11, 3)
    orders = {tuple(page["key"] for page in plan(seed, 0)) for seed in range(8)}
    assert len(orders) > 1  # the order is randomised per participant


# --- consent, stored ------------------------------------------------------------------------------


def store(spec: dict) -> Study:
    """A format 2 version with its condition rows."""
    study = Study.objects.create(slug=spec["slug"], title=spec["title"], spec=spec, spec_hash=spec_digest(spec))
    for position, condition in enumerate(spec["conditions"]):
        Condition.objects.create(
            study=study,
            key=condition["key"],
            label=condition["label"],
            feature="",
            unit="",
            desirable=False,
            position=position,
        )
    return study


def consent(slug: str, external_id: str, **kwargs) -> Participant:
    participant, _ = participant_arrive(study_slug=slug, external_id=external_id, **kwargs)
    return participant_consent(participant_id=participant.pk, accept=True)


@pytest.mark.django_db
def test_consent_stores_ticket_condition_and_the_plan_of_the_ticket():
    spec = example()
    store(spec)
    people = [consent(spec["slug"], f"p{i}") for i in range(6)]
    content = content_of(spec)
    for ticket, person in enumerate(people):
        stored = Participant.objects.get(pk=person.pk)
        assert stored.ticket == ticket and stored.status == "active"
        assert stored.condition.key == condition_for(spec, ticket)
        expected = build_plan_v2(spec, content, stored.condition.key, stored.seed, item_choice(spec, content, ticket))
        assert stored.plan == expected


@pytest.mark.django_db
def test_when_every_condition_is_full_the_participant_is_told_and_stays_arrived(client):
    spec = example(conditions=[{"key": "shown", "label": "S", "cap": 1}, {"key": "hidden", "label": "H", "cap": 1}])
    store(spec)
    consent(spec["slug"], "a"), consent(spec["slug"], "b")
    client.get(f"/s/{spec['slug']}/?PROLIFIC_PID=c&STUDY_ID=s&SESSION_ID=x")
    response = client.post(f"/s/{spec['slug']}/consent/", {"decision": "accept"})
    assert response.status_code == 200 and "This study is full" in response.content.decode()
    late = Participant.objects.get(external_id="c")
    assert late.status == "arrived" and late.ticket is None and late.condition_id is None
    Participant.objects.filter(external_id="a").update(status="withdrawn")  # a place frees up
    response = client.post(f"/s/{spec['slug']}/consent/", {"decision": "accept"})
    late.refresh_from_db()
    assert response.status_code == 302 and late.status == "active" and late.ticket == 0


@pytest.mark.django_db
def test_a_consent_whose_participant_lost_the_ticket_a_simultaneous_consent_took_returns_their_state():
    """A consent finds that a simultaneous consent of the same participant took a ticket, which is gone
    again when it reads it (the participant declined in the meantime and another consent reclaimed
    their ticket): it returns the participant as decided elsewhere (it used to build a plan for ticket
    None and fail with a TypeError)."""
    spec = example()
    study = store(spec)
    arrived, _ = participant_arrive(study_slug=spec["slug"], external_id="twice")
    stale = Participant.objects.annotate(spec_hash=F("study__spec_hash")).get(pk=arrived.pk)  # read before the race
    Participant.objects.filter(pk=arrived.pk).update(ticket=0)  # the simultaneous consent's ticket
    Study.objects.filter(pk=study.pk).update(tickets_issued=1)
    raced = []

    def race(execute, sql, params, many, context):
        if sql.startswith('SELECT "surveys_participant"."ticket"') and not raced:  # _new_ticket reads the ticket
            raced.append(sql)
            Participant.objects.filter(pk=arrived.pk).update(status="declined", ticket=None)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(race):
        decided = participant_consent(participant_id=arrived.pk, accept=True, participant=stale)
    assert raced, "the ticket was not read back"
    assert decided.status == "declined" and decided.ticket is None and decided.condition_id is None
    assert Study.objects.get(pk=study.pk).tickets_issued == 1  # the place it counted was given back


@pytest.mark.django_db
def test_format_1_consent_keeps_its_plan(demo_study):
    """A format 1 file is stored as its conversion: the consent stores format 1's plan (its pages, in
    its order, with its keys) in format 2's shape, as a migrated participant's plan is converted."""
    participant = consent("effort-demo", "f1")
    stored = Participant.objects.get(pk=participant.pk)
    condition = stored.condition.key
    format1_plan = build_plan(demo_study.format1_spec, condition, stored.seed)
    assert stored.plan == converted_plan(demo_study.spec, condition, format1_plan)
    assert [page["key"] for page in stored.plan] == [page["key"] for page in format1_plan]
    assert stored.ticket == 0 and condition == condition_for(demo_study.spec, 0)


def _postgres_only():
    from tests.conftest import required

    if connection.vendor != "postgresql":
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires PostgreSQL")
        pytest.skip("needs PostgreSQL (concurrent writers): set DATABASE_URL")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_consents_keep_conditions_items_and_strata_balanced():
    _postgres_only()
    spec = example()
    store(spec)
    n = 30
    ids = [participant_arrive(study_slug=spec["slug"], external_id=f"rush-{i}")[0].pk for i in range(n)]
    barrier, errors = threading.Barrier(n), []

    def worker(pk):
        try:
            barrier.wait()
            participant_consent(participant_id=pk, accept=True)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(pk,)) for pk in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    people = list(Participant.objects.select_related("condition"))
    assert sorted(p.ticket for p in people) == list(range(n))
    conditions = Counter(p.condition.key for p in people)
    assert sum(conditions.values()) == n and abs(conditions["shown"] - conditions["hidden"]) <= 1
    race = {s["id"]: s["groups"]["race"] for s in spec["pools"][0]["subjects"]}
    judged = Counter()
    for p in people:
        items = [page["item"] for page in p.plan if page.get("block") == "judge"]
        assert Counter(race[i] for i in items) == {"Black": 2, "White": 2}
        judged.update(items)
    assert len(judged) == 12 and max(judged.values()) - min(judged.values()) <= 1
    rated = Counter(page["item"] for p in people for page in p.plan if page.get("block") == "risk")
    assert sum(rated.values()) == 2 * conditions["shown"]
    assert max(rated.values()) - min(rated.get(s, 0) for s in race) <= 1
