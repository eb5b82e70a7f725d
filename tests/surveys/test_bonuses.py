import uuid
from collections.abc import Iterator
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from participation.models import Answer, Participant
from participation.simulate import simulate_participants
from research.bonuses import bonus_table
from tests.surveys.helpers import shared_demo_study

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def answered_demo(django_db_setup, django_db_blocker, tmp_path_factory):
    """The demo study with 30 simulated participants, made once: the tests below read it, and what a test
    changes (answers deleted or rewritten, a participant added) is rolled back with its transaction."""
    with shared_demo_study(django_db_blocker, tmp_path_factory.mktemp("bonuses"), n=30, seed=2) as shared:
        yield shared.study


@pytest.mark.slow
def test_bonus_lists_use_raw_ids_and_top_tenth(answered_demo, tmp_path):
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


@pytest.mark.slow
def test_only_completed_non_excluded_participants_are_eligible(answered_demo):
    from tests.surveys.helpers import answer_pages, consented

    stopper = answer_pages(consented("effort-demo", "stopped-at-15"), 15)
    assert stopper.status != Participant.Status.COMPLETED
    completed = set(
        Participant.objects.filter(status=Participant.Status.COMPLETED).values_list("external_id", flat=True)
    )
    from research.export import export_tables

    tables = export_tables("effort-demo")
    people = tables.participants
    answered = tables.pairs.dropna(subset=["d_overall", "fair_score"])
    assert str(stopper.pseudonym) in set(answered["participant_id"])  # scored before the fix
    excluded = set(people.loc[people["excluded"] == 1, "participant_id"])
    eligible = {
        p.external_id
        for p in Participant.objects.filter(status=Participant.Status.COMPLETED)
        if str(p.pseudonym) not in excluded
    }
    for kind in ("honesty", "rationale"):
        everyone = bonus_table("effort-demo", kind, amount=1.0, top_fraction=1.0)
        assert "stopped-at-15" not in set(everyone["participant_id"])
        assert set(everyone["participant_id"]) <= eligible <= completed
        assert everyone.attrs["eligible"] == everyone.attrs["target"] <= len(eligible)


@pytest.mark.slow
@pytest.mark.parametrize("value", ["0", "-0.2", "1.5", "ten"])
def test_export_bonuses_top_fraction_must_be_in_zero_one(answered_demo, value):
    with pytest.raises(CommandError, match=r"--top-fraction must be"):
        call_command("export_bonuses", "effort-demo", "--top-fraction", value)


@pytest.mark.slow
def test_export_bonuses_reports_ties_at_the_cut_off(answered_demo, monkeypatch):
    import pandas as pd

    import research.bonuses

    def all_tied(answers, positives, **kwargs):
        ids = answers["participant_id"].unique()
        return pd.DataFrame({"participant_id": ids, "total": 0.5})

    monkeypatch.setattr(research.bonuses, "honesty_scores", all_tied)
    out, err = StringIO(), StringIO()
    call_command("export_bonuses", "effort-demo", kind="honesty", stdout=out, stderr=err)
    lines = out.getvalue().splitlines()
    table = bonus_table("effort-demo", "honesty")
    assert len(lines) == len(table) == table.attrs["eligible"] > 1.5 * table.attrs["target"]
    assert f"{len(lines)} of {len(lines)} eligible participants" in err.getvalue()
    assert "ties at the cut-off" in err.getvalue()


@pytest.mark.slow
def test_a_converted_study_honesty_scores_are_format1_bts_of_the_pairs(answered_demo):
    """The effort demo, stored as its conversion, takes the format 2 path (``honesty_scores`` over
    ``bts_positives``: each converted pair block's rows of ``pairs`` in its condition about its pairs), and
    its scores are format 1's ``participant_bts`` over the pairs table, per participant (to 1e-12), with the
    same questions left out: 30 simulated participants, 6 of whom lose their prediction on set 1's pair
    (K1, A1), so that question has fewer than 10 respondents in a condition."""
    from analysis.bts import honesty_scores, participant_bts
    from research.export import export_tables
    from studies.services import latest_study
    from tasks import bts_positives

    completed = Participant.objects.filter(status=Participant.Status.COMPLETED).order_by("pk")
    dropped = [p for condition in ("arrests", "income") for p in completed.filter(condition__key=condition)[:6]]
    gone, _ = Answer.objects.filter(participant__in=dropped, question="pair/set1/A1/overall/prediction").delete()
    assert gone == 12
    study = latest_study("effort-demo")
    tables = export_tables("effort-demo")
    people = tables.participants
    eligible = set(people.loc[(people["status"] == "completed") & (people["excluded"] != 1), "participant_id"])
    pairs = tables.pairs[tables.pairs["participant_id"].isin(eligible)].dropna(subset=["d_overall", "fair_score"])
    bts1 = participant_bts(pairs, similar_max=study.format1_spec["likert"]["similar_max"])
    answers = tables.answers[tables.answers["participant_id"].isin(eligible)]
    bts2 = honesty_scores(answers, bts_positives(study.spec))
    format1, format2 = bts1.set_index("participant_id"), bts2.set_index("participant_id")
    assert len(format1) == len(eligible) >= 25 and (format1["n_questions"] >= 11).all()
    assert sorted(format2.index) == sorted(format1.index)
    format2 = format2.loc[format1.index]
    assert (format2["n_questions"] == format1["n_questions"]).all()
    for column in ("information", "prediction", "total"):
        assert np.abs(format2[column] - format1[column]).max() < 1e-12, column
    names = {  # format 1's question condition/set/comparison -> the converted block's block/subject
        f"{b['conditions'][0]}/{b['page_key']['key']}/{pair['b']}": f"{b['key']}/{pair['a']}~{pair['b']}"
        for b in study.spec["blocks"]
        if b.get("page_key", {}).get("block") == "pairs"
        for pair in b["pairs"]
    }
    assert set(bts1.attrs["left_out"]) == {"arrests/set1/A1", "income/set1/A1"}
    assert bts2.attrs["left_out"] == {names[q]: n for q, n in bts1.attrs["left_out"].items()}
    table = bonus_table("effort-demo", "honesty", amount=1.0, top_fraction=1.0)
    assert table.attrs["left_out"] == bts2.attrs["left_out"] and table.attrs["eligible"] == len(eligible)
    raw = dict(Participant.objects.values_list("external_id", "pseudonym"))
    paid = table.assign(participant_id=[str(raw[p]) for p in table["participant_id"]]).set_index("participant_id")
    assert np.abs(paid["score"] - format1.loc[paid.index, "total"]).max() < 1e-12


@pytest.fixture(scope="module")
def disagreement_study(django_db_setup, django_db_blocker) -> Iterator[str]:
    """The bundled disagreement study (agree + BTS, 20 sampled of 200 defendants per participant) with an
    honesty bonus of 1.5 for the top tenth and 40 simulated participants (about 4 answers per defendant), made
    once for the tests below (what a test changes is rolled back with its transaction) and removed after them;
    its slug."""
    import json
    from pathlib import Path

    from core.caching import clear_process_caches
    from studies.models import Study
    from studies.services import study_load

    spec = json.loads((Path(__file__).resolve().parents[2] / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["bonus"] = {"honesty": {"amount": 1.5, "top_fraction": 0.1}}
    with django_db_blocker.unblock():
        study_load(spec=spec)
        try:
            simulate_participants(spec["slug"], n=40, seed=4)
            yield spec["slug"]
        finally:
            Participant.objects.filter(study__slug=spec["slug"]).delete()
            Study.objects.filter(slug=spec["slug"]).delete()
            clear_process_caches()


@pytest.mark.slow
def test_format2_honesty_bonus_ranks_the_bts_scores_of_every_question(disagreement_study):
    """The list is the top tenth of the per-participant mean BTS computed from the exported answers, with the
    study's own floor of respondents (3)."""
    from analysis.bts import honesty_scores
    from core.caching import clear_process_caches
    from research.export import export_tables
    from studies.models import Study
    from studies.services import latest_study
    from tasks import bts_positives

    slug = disagreement_study
    study = Study.objects.get(slug=slug)
    study.spec["bonus"]["honesty"]["min_respondents"] = 3
    study.save(update_fields=["spec"])
    clear_process_caches()
    honesty = bonus_table(slug, "honesty")
    tables = export_tables(slug)
    people = tables.participants
    eligible = set(people.loc[(people["status"] == "completed") & (people["excluded"] != 1), "participant_id"])
    answers = tables.answers[tables.answers["participant_id"].isin(eligible)]
    scores = honesty_scores(answers, bts_positives(latest_study(slug).spec), min_respondents=3)
    assert len(scores) == len(eligible) >= 30 and (scores["n_questions"] >= 1).all()
    raw = dict(Participant.objects.values_list("pseudonym", "external_id"))
    best = scores.nlargest(honesty.attrs["target"], "total")
    assert set(honesty["participant_id"]) >= {raw[uuid.UUID(p)] for p in best["participant_id"]}
    assert honesty.attrs["eligible"] == len(eligible) and honesty.attrs["target"] == 4
    assert (honesty["amount"] == 1.5).all() and honesty["score"].min() >= best["total"].min() - 1e-12
    with pytest.raises(ValueError, match="no eligible participant wrote a rationale"):
        bonus_table(slug, "rationale", amount=1.0)  # agree blocks ask for no rationale


def _rationale_study(spec: dict) -> dict[str, str]:
    """``spec`` loaded with 6 simulated participants whose i-th (in arrival order) writes every rationale
    as the i distinct words "w1 ... wi"; raw id -> i."""
    from studies.services import study_load

    study_load(spec=spec)
    simulate_participants(spec["slug"], n=6, seed=5)
    people = Participant.objects.filter(study__slug=spec["slug"]).order_by("arrived_at", "pk")
    assert [p.status for p in people] == [Participant.Status.COMPLETED] * 6
    for i, p in enumerate(people, start=1):
        Answer.objects.filter(participant=p, measure="rationale").update(
            text=" ".join(f"W{j}" for j in range(1, i + 1))
        )
    return {p.external_id: str(i) for i, p in enumerate(people, start=1)}


@pytest.mark.parametrize("fmt", [1, 2])
def test_rationale_bonus_ranks_the_fair_score_rationales_of_both_formats(db, demo_spec, fmt):
    """The effort demo (format 1) and its format 2 conversion (fair_score blocks) pay the same rationale
    bonus: with rationales of 1..6 distinct words, the top half (ceil(0.5 x 6) = 3) are participants 4-6,
    scored by their mean distinct words per rationale."""
    from studies.format1 import format1_to_format2
    from studies.study_file import validate_study

    spec = demo_spec if fmt == 1 else format1_to_format2(validate_study(demo_spec))
    spec = {**spec, "slug": f"effort-demo-{fmt}"}  # beside the shared demo study
    rank = _rationale_study(spec)
    table = bonus_table(spec["slug"], "rationale", amount=2.0, top_fraction=0.5)
    assert [rank[p] for p in table["participant_id"]] == ["6", "5", "4"]
    assert table["score"].tolist() == [6.0, 5.0, 4.0] and (table["amount"] == 2.0).all()
    assert table.attrs == {"eligible": 6, "target": 3, "tie_warning": ""}


@pytest.mark.slow
def test_format1_rationale_scores_are_those_of_the_pairs_table(answered_demo):
    """For format 1 the answers' rationales give the scores the pairs table's rationales gave."""
    from analysis.bts import rationale_detail
    from research.export import export_tables

    rationales = list(Answer.objects.filter(measure="rationale"))
    for answer in rationales:  # rationales of 0-6 words, some repeated
        answer.text = " ".join(f"w{answer.pk % (j + 2)}" for j in range(answer.pk % 7))
    Answer.objects.bulk_update(rationales, ["text"])
    tables = export_tables("effort-demo")
    from_pairs = rationale_detail(tables.pairs.dropna(subset=["d_overall", "fair_score"]))
    answers = tables.answers[tables.answers["measure"] == "rationale"]
    from_answers = rationale_detail(answers.rename(columns={"text": "rationale"}))
    assert from_answers[list(from_pairs)].equals(from_pairs)
    assert from_pairs["rationale_words"].nunique() > 1


@pytest.mark.slow
def test_export_bonuses_names_the_questions_with_too_few_respondents(disagreement_study):
    """Questions answered by fewer than --min-respondents eligible participants count in no honesty score;
    the command names each (with its number of respondents) on stderr, and with the default floor of 10
    (no question reaches it at about 4 answers each) it refuses with the reason."""
    from research.export import export_tables

    slug = disagreement_study
    with pytest.raises(CommandError, match="answered by at least 10 eligible participants"):
        call_command("export_bonuses", slug, kind="honesty")
    answers = export_tables(slug).answers
    answered = answers[(answers["measure"] == "prediction") & (answers["excluded"] != 1)]
    per_question = answered.groupby("subject")["participant_id"].nunique()
    few = per_question[per_question < 5]
    assert 0 < len(few) < len(per_question)
    out, err = StringIO(), StringIO()
    call_command("export_bonuses", slug, kind="honesty", min_respondents=5, stdout=out, stderr=err)
    note = err.getvalue()
    assert f"{len(few)} question(s) left out of the honesty scores, answered by fewer than 5 participants" in note
    for subject, n in few.items():
        assert f"/{subject} ({n})" in note
    table = bonus_table(slug, "honesty", min_respondents=5)
    assert table.attrs["min_respondents"] == 5 and len(table.attrs["left_out"]) == len(few)
