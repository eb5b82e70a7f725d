"""Every analysis report gives its headline estimates with all participants and without those flagged
for answer quality (``analysis.sensitivity``, ``sensitivity.csv``, the report's section and results.json),
the exclusion made by the export's own machinery (``export_tables(quality_exclusion=...)``). Participants
are flagged by answering at machine speed (every page submitted as it was shown: rule ``fast``)."""

import json

import pandas as pd
import pytest
from django.db.models import F

from analysis.pipeline import run_pipeline
from participation.models import Answer, PageVisit, Participant
from participation.simulate import simulate_participants
from research.export import export_tables
from runs.analysis_runs import analysis_run_create
from tests.conftest import ROOT
from tests.runs.conftest import ANSWERED_24

pytestmark = pytest.mark.django_db


def _machine_speed(slug: str, n: int) -> list[Participant]:
    """The first ``n`` completed participants made to submit every page as it was shown (flag ``fast``)."""
    chosen = list(Participant.objects.filter(study__slug=slug, status="completed").order_by("pk")[:n])
    PageVisit.objects.filter(participant__in=chosen).update(submitted_at=F("first_shown_at"))
    return chosen


@pytest.mark.slow
@pytest.mark.xdist_group(ANSWERED_24)
def test_effort_report_gives_alpha_with_and_without_the_flagged(answered_24, tmp_path, no_mixed_models):
    _machine_speed("effort-demo", 6)
    run = analysis_run_create(slug="effort-demo", out_dir=tmp_path, seed=2, n_resamples=20)  # alpha: a point estimate
    table = pd.read_csv(tmp_path / "sensitivity.csv")
    assert list(table.columns) == ["estimate", "all", "without_flagged", "conclusion_changes", "reason"]
    effort = table[table["estimate"].str.startswith("alpha: condition=")]  # the blocks' estimates follow
    assert sorted(effort["estimate"]) == ["alpha: condition=arrests", "alpha: condition=income"]
    # "all" is the report's own alpha (the study excludes by no flag) ...
    alphas = {c["condition"]: c["alpha"] for c in run.results["calibrations"]}
    for row in effort.itertuples():
        assert row.all == pytest.approx(alphas[row.estimate.split("=")[1]])
    # ... and "without_flagged" the pipeline's alpha on the export without the flagged participants.
    tables = export_tables("effort-demo")
    kept = set(tables.participants.loc[tables.participants["quality_flags"] == "", "participant_id"])
    pairs = tables.pairs[tables.pairs["participant_id"].isin(kept)].dropna(subset=["d_overall"])
    by_hand = run_pipeline(pairs, tables.participants, seed=2, n_resamples=20, mixed_models=False)
    for calibration in by_hand.calibrations:
        row = table[table["estimate"] == f"alpha: condition={calibration.condition}"].iloc[0]
        assert row.without_flagged == pytest.approx(calibration.alpha)
    analysed = tables.participants[
        (tables.participants["status"] == "completed") & (tables.participants["excluded"] == 0)
    ]
    flagged = int((analysed["quality_flags"] != "").sum())
    assert run.results["sensitivity"]["n_flagged"] == flagged >= 1
    html = (tmp_path / "report.html").read_text()
    assert "Sensitivity: without participants flagged for answer quality" in html
    assert f"Without the {flagged} participants flagged for answer quality" in html


def _disagreement_study(researcher, **quality) -> dict:
    from studies.services import study_load

    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["quality"] = quality
    return study_load(spec=spec, owner=researcher).study.spec


@pytest.mark.slow
def test_design_report_flags_a_conclusion_the_flagged_participants_carry(researcher, tmp_path):
    """Flagged participants who disagree with every AI prediction raise the disagreement rate: without them
    the rate falls outside the all-participants CI, which the table reports as a changed conclusion; with
    ``exclude_if: [fast]`` the report's own estimates are those without the flagged."""
    _disagreement_study(researcher, exclude_if=["fast"])
    simulate_participants("disagreement-synthetic", n=60, seed=7, decline_rate=0)  # rater groups of 10 or more
    bots = _machine_speed("disagreement-synthetic", 12)
    Answer.objects.filter(participant__in=bots, measure="agree").update(number=0, text="0")
    run = analysis_run_create(slug="disagreement-synthetic", out_dir=tmp_path, seed=1, n_resamples=200, by=["role"])
    table = pd.read_csv(tmp_path / "sensitivity.csv").set_index("estimate")
    overall = table.loc["agree disagreement_rate: rater_group=all participants"]
    answers = export_tables("disagreement-synthetic", quality_exclusion="flagged").answers
    agree = answers[(answers["measure"] == "agree") & (answers["excluded"] == 0)]  # every flagged one out
    assert overall["without_flagged"] == pytest.approx(1 - agree["value"].mean())
    assert overall["all"] > overall["without_flagged"] and overall["conclusion_changes"]
    assert overall["reason"] == "outside the 95% CI with all participants"
    assert any(e.startswith("agree notions: ") for e in table.index)
    # the report itself excludes the bots (exclude_if: fast); a simulated person another rule flags is in it,
    # not in "without_flagged"
    dr = run.results["blocks"][0]["tables"]["disagreement_rate"][0]
    study = export_tables("disagreement-synthetic").answers
    kept = study[(study["measure"] == "agree") & (study["excluded"] == 0)]
    assert dr["mean"] == pytest.approx(1 - kept["value"].mean())
    assert run.results["sensitivity"]["n_flagged"] >= 12
    html = (tmp_path / "report.html").read_text()  # the report lists the changed estimates, the CSV all of them
    assert "agree disagreement_rate: rater_group=all participants" in html
    kept = int((~table["conclusion_changes"]).sum())
    assert f"The other {kept} headline estimates keep their conclusion" in html


@pytest.mark.slow
@pytest.mark.xdist_group(ANSWERED_24)
def test_differential_parity_report_gives_each_test_with_and_without_the_flagged(answered_24, tmp_path):
    from dataclasses import replace

    from runs.relative_fairness import study_differential_parity, write_study_dp_report

    _machine_speed("effort-demo", 8)
    _, tables = write_study_dp_report("effort-demo", tmp_path)
    table = pd.read_csv(tmp_path / "sensitivity.csv")
    scores = tables["fair_scores_vs_ai"]
    assert len(table) == len(scores) + len(tables["disagreements"]) > 0
    assert table["all"].tolist()[: len(scores)] == pytest.approx(scores["DPT"].tolist())
    # "without_flagged": the same tests on the export with the flagged participants marked excluded by hand
    export = export_tables("effort-demo")
    flagged = set(export.participants.loc[export.participants["quality_flags"] != "", "participant_id"])
    assert flagged

    def drop(frame: pd.DataFrame) -> pd.DataFrame:  # attention exclusions kept
        return frame.assign(excluded=(frame["excluded"].eq(1) | frame["participant_id"].isin(flagged)).astype(int))

    by_hand = replace(export, pairs=drop(export.pairs), disagreements=drop(export.disagreements))
    without = study_differential_parity("effort-demo", by_hand)[0]["fair_scores_vs_ai"]
    assert table["without_flagged"].tolist()[: len(scores)] == pytest.approx(without["DPT"].tolist())
    assert "Sensitivity: without participants flagged for answer quality" in (tmp_path / "report.html").read_text()
