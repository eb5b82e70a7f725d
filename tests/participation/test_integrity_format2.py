"""The integrity check on a format 2 study: each saved page's answers are bounded by its task type."""

import json
from pathlib import Path

import pytest

from participation.integrity import check_integrity
from participation.models import Answer, Participant
from participation.simulate import simulate_participants
from studies.services import study_load

BUNDLED = Path(__file__).resolve().parents[2] / "studies" / "bundled" / "disagreement_synthetic.json"


@pytest.mark.django_db
def test_integrity_check_finds_a_lost_answer_in_a_format2_study():
    spec = json.loads(BUNDLED.read_text())
    study_load(spec=spec)
    simulate_participants(spec["slug"], n=6, seed=5)
    report = check_integrity(spec["slug"])
    assert report.participants == 6 and report.completed >= 5 and report.wrong == [] and report.ok
    victim = Participant.objects.filter(status="completed").first()
    # An agree page stores the answer, its confidence and the BTS prediction: losing one is found.
    Answer.objects.filter(participant=victim, measure="agree").first().delete()
    assert check_integrity(spec["slug"]).wrong == [str(victim.pseudonym)]
