"""Simulated participants carry interaction signals from a documented model (``simulation.interaction``)
and the server's page load, so every answer-quality rule has a measurable false-flag rate among them."""

import json

import pytest

from participation.models import PageVisit, Participant
from participation.simulate import simulate_participants
from research.export import export_tables
from studies.services import study_load
from studies.study_file import validate_study
from tests.conftest import ROOT


@pytest.mark.slow
@pytest.mark.django_db
def test_simulated_people_carry_signals_and_load_and_are_rarely_flagged(researcher):
    spec = json.loads((ROOT / "studies" / "bundled" / "disagreement_synthetic.json").read_text())
    study = study_load(spec=validate_study(spec), owner=researcher).study
    simulate_participants(study.slug, n=40, seed=5, decline_rate=0)
    visits = PageVisit.objects.filter(participant__study=study, submitted_at__isnull=False)
    known = visits.filter(keystrokes__isnull=False, words_shown__gt=0, inputs_shown__isnull=False)
    assert visits.count() == known.count() == 40 * 24
    agree = visits.filter(page__startswith="agree").first()
    assert agree.inputs_shown == 3  # agree, confidence, the BTS prediction
    for visit in visits:  # the script's time on the page is within the server's
        assert visit.time_on_page_ms / 1000 <= (visit.submitted_at - visit.first_shown_at).total_seconds()
    quality = export_tables(study.slug).quality
    rates = quality.groupby("rule")["flagged"].agg(lambda f: f.fillna(0).mean())
    assert Participant.objects.filter(study=study, status="completed").count() == 40
    for rule in ("fast", "hurried", "clock", "straightline", "pasted", "away", "untyped"):
        assert rates[rule] <= 0.05, (rule, rates.to_dict())
