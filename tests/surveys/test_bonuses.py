import pytest
from django.core.management import call_command

from surveys.bonuses import bonus_table
from surveys.models import Participant
from surveys.simulate import simulate_participants

pytestmark = pytest.mark.django_db


def test_bonus_lists_use_raw_ids_and_top_tenth(demo_study, tmp_path):
    simulate_participants("effort-demo", n=30, seed=2)
    honesty = bonus_table("effort-demo", "honesty")
    raw_ids = set(Participant.objects.values_list("external_id", flat=True))
    assert set(honesty["participant_id"]) <= raw_ids
    assert 3 <= len(honesty) <= 5 and (honesty["amount"] == 5.0).all()
    rationale = bonus_table("effort-demo", "rationale", amount=2.5, top_fraction=0.2)
    assert (rationale["amount"] == 2.5).all() and len(rationale) >= 6
    out = tmp_path / "bonus.csv"
    call_command("export_bonuses", "effort-demo", kind="honesty", out=str(out))
    lines = out.read_text().splitlines()
    assert len(lines) == len(honesty) and all(line.split(",")[0] in raw_ids for line in lines)
    assert all(line.endswith(",5.00") for line in lines)
