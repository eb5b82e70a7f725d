"""No silent gaps (issue 20, item 2) in a converted study: the effort demo, loaded (stored as its format 2
conversion) and taken by simulated participants, analysed by the one analysis (``analyze_study`` without
--by). Its blocks' answers carry format 1's parts in the export (``answers.block`` ``pairs``, ``output``,
``disagreement``), and each block's analysis reads its own rows (``tasks.answers_where``), so every block
appears in results.json with its tables, or with a true reason, and the numbers are the export's."""

import os

import pandas as pd
import pytest
from django.core.management import call_command

from fairness.rater_group_alpha import alpha_by_rater_group
from fairness.rater_groups import ALL
from participation.simulate import simulate_participants
from research.export import export_tables
from runs.models import AnalysisRun
from studies.services import latest_study
from tasks.fair_score import FairScore

RESAMPLES = 50


@pytest.mark.slow
@pytest.mark.django_db
def test_a_converted_study_analyses_every_block_from_the_export(demo_study, tmp_path, settings):
    """The converted demo with 16 simulated participants, analysed once; the checks below."""
    settings.REPORTS_DIR = tmp_path / "reports"
    simulate_participants("effort-demo", n=16, seed=3)
    call_command(
        "analyze_study",
        "effort-demo",
        out=str(tmp_path / "out"),
        seed=1,
        resamples=RESAMPLES,
        stdout=open(os.devnull, "w"),
    )
    analysed = AnalysisRun.objects.get().results, export_tables("effort-demo")
    _every_block_has_its_results_or_a_true_reason(analysed)
    _an_agree_block_has_the_disagreement_rate_of_the_disagreements_table(analysed)
    _a_pair_block_has_the_alpha_of_its_set_in_the_pairs_table(analysed)


def _analysed_rows(table: pd.DataFrame, people: pd.DataFrame) -> pd.DataFrame:
    """The rows of completed participants not excluded by the attention checks (whom the analysis keeps)."""
    kept = people.loc[(people["status"] == "completed") & (people["excluded"] != 1), "participant_id"]
    return table[table["participant_id"].isin(kept)]


def _every_block_has_its_results_or_a_true_reason(analysed) -> None:
    """Every task block in results.json, in file order, with tables (a fair_score block: its task type's
    reason, it has no estimator), none saying it has no answers."""
    results, tables = analysed
    spec = latest_study("effort-demo").spec
    tasks = {b["key"]: b for b in spec["blocks"] if b["type"] == "task"}
    blocks = {b["block"]: b for b in results["blocks"]}
    assert list(blocks) == list(tasks)  # every task block, in file order
    assert set(tables.answers["block"]) >= {"pairs", "output", "disagreement"}  # format 1's parts
    for key, block in blocks.items():
        assert block["tables"] or block["notes"], key
        assert not any("no answers" in note.lower() for note in block["notes"]), (key, block["notes"])
        if tasks[key]["task"] == "fair_score":  # no estimator yet: the task type's stated reason
            assert block["notes"] == [FairScore.no_analysis] and not block["tables"]
        else:
            assert block["tables"], (key, block["notes"])


def _an_agree_block_has_the_disagreement_rate_of_the_disagreements_table(analysed) -> None:
    """Each condition's ``<condition>-disagreement`` block: DR over all participants equals the mean of the
    export's disagreements table's ``disagreement`` in that condition (computed here from that table)."""
    results, tables = analysed
    blocks = {b["block"]: b for b in results["blocks"]}
    disagreements = _analysed_rows(tables.disagreements, tables.participants)
    for condition in ("arrests", "income"):
        rows = disagreements[disagreements["condition"] == condition]
        assert len(rows) >= 8 * 4  # 8 prompts, at least 4 participants
        rate = pd.DataFrame(blocks[f"{condition}-disagreement"]["tables"]["disagreement_rate"])
        overall = rate.set_index("rater_group").loc[ALL]
        assert overall["mean"] == pytest.approx(rows["disagreement"].mean(), abs=1e-9)
        assert (overall["n_answers"], overall["n_raters"]) == (len(rows), rows["participant_id"].nunique())


def _a_pair_block_has_the_alpha_of_its_set_in_the_pairs_table(analysed) -> None:
    """Each converted ``pair_distance`` block: its alpha (over all participants) is the Likert alpha of the
    export's pairs table's rated pairs of its condition and set."""
    results, tables = analysed
    spec = latest_study("effort-demo").spec
    blocks = {b["block"]: b for b in results["blocks"]}
    pairs = _analysed_rows(tables.pairs, tables.participants).dropna(subset=["d_traj", "d_aggr", "d_overall"])
    converted = [b for b in spec["blocks"] if b.get("page_key", {}).get("block") == "pairs"]
    assert len(converted) == 6
    for block in converted:
        (condition,) = block["conditions"]
        rated = pairs[(pairs["condition"] == condition) & (pairs["set"] == block["page_key"]["key"])]
        rated = rated.assign(rater_group="all", stimulus=rated["reference"] + "~" + rated["comparison"])
        expected = alpha_by_rater_group(rated, "rater_group", n_resamples=RESAMPLES, n_permutations=RESAMPLES, seed=1)
        got = pd.DataFrame(blocks[block["key"]]["tables"]["alpha"]).set_index("rater_group").loc[ALL]
        assert got["alpha"] == pytest.approx(expected.overall.alpha, abs=1e-9)  # results.json: 10 digits
        assert got["n_observations"] == len(rated) >= 4 * 4
