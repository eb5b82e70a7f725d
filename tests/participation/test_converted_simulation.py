"""A study converted from format 1 (``format1_to_format2``) plans and is simulated drawing from the
participant's random streams exactly as format 1 does (the PostgreSQL golden test,
``tests/research/test_format1_golden_export.py``, checks every export of the converted demo byte for byte;
these run on any database)."""

import datetime as dt
import json

import pytest
from django.utils import timezone

from participation.models import Answer, Participant
from participation.plan import plan_for
from participation.simulate import simulate_participants
from studies.format1 import format1_to_format2
from studies.services import study_load
from studies.study_file import validate_study
from tests.conftest import DEMO_FILE
from tests.format1_plan import build_plan

NOW = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def demo() -> dict:
    return validate_study(json.loads(DEMO_FILE.read_text()))


def test_a_converted_plan_is_the_format_1_plan_page_for_page(demo):
    """Same seed: the same pages in the same order, the output page's subjects in the order of the set's
    pairs, the disagreement page's subjects in the order of format 1's prompts."""
    converted = validate_study(format1_to_format2(demo))
    for condition in demo["conditions"]:
        subject_of = {p["key"]: p["subject"] for p in condition["disagreement_prompts"]}
        for seed in range(100):
            old = build_plan(demo, condition["key"], seed)
            new = plan_for(converted, condition["key"], seed)
            assert [p["key"] for p in new] == [p["key"] for p in old]
            for before, after in zip(old, new, strict=True):
                if before["kind"] == "output":
                    assert after["subjects"] == before["subjects"]
                if before["kind"] == "disagreement":
                    assert after["items"] == [subject_of[key] for key in before["prompts"]]


def _answers(slug: str) -> list[tuple]:
    return list(
        Answer.objects.filter(participant__study__slug=slug)
        .order_by("pk")
        .values_list(
            "participant__external_id", "page", "question", "measure", "set_key", "subject_key", "number", "text"
        )
    )


@pytest.mark.django_db
def test_simulated_participants_answer_the_converted_demo_as_the_demo(demo, researcher, monkeypatch):
    """Same seed and clock: the same participants (condition, seed, times) give the same answers, with
    format 1's rationale factors (the format 2 raters never tick them)."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    study_load(spec=demo, owner=researcher)
    study_load(spec=validate_study(format1_to_format2(demo) | {"slug": "converted"}), owner=researcher)
    for slug in ("effort-demo", "converted"):
        assert simulate_participants(slug, n=4, seed=1, decline_rate=0).completed == 4
    people = ("external_id", "condition__key", "seed", "arrived_at", "completed_at", "status")
    assert list(Participant.objects.filter(study__slug="converted").order_by("pk").values_list(*people)) == list(
        Participant.objects.filter(study__slug="effort-demo").order_by("pk").values_list(*people)
    )
    assert _answers("converted") == _answers("effort-demo")
    assert Answer.objects.filter(participant__study__slug="converted", measure="factors").exists()
