"""``audit_models --tradeoff-from SLUG:BLOCK``: a tradeoff study answered by simulated raters, then an audit that
scores each audited model by the raters' trade-off weights over its accuracy and its gaps on the audited subjects,
with the intervals of the models' differences (a registered procedure)."""

import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import confusion_matrix

from analysis.tradeoff import FEATURES
from participation.simulate import simulate_participants
from studies.services import study_load
from tests.analysis.test_coverage_registry import assert_audit_intervals_are_registered
from tests.runs import db_snapshot
from tests.runs.conftest import researcher_and_demo
from tests.tasks.test_tradeoff import models_csv, tradeoff_spec


def _answered(owner) -> None:
    study_load(spec=tradeoff_spec(), owner=owner)
    simulate_participants("tradeoff-models", n=40, seed=3, decline_rate=0)


@pytest.fixture(scope="module")
def _answered_snapshot(django_db_setup, django_db_blocker):
    return db_snapshot.take(researcher_and_demo, _answered, blocker=django_db_blocker)


@pytest.fixture
def tradeoff_source(_answered_snapshot, demo_study, researcher, tmp_path, settings):
    """The tradeoff study answered by 40 simulated raters (simulated once per process, ``tests.runs.db_snapshot``),
    and an audit's subjects file of three models."""
    settings.REPORTS_DIR = tmp_path / "reports"
    db_snapshot.restore(_answered_snapshot[0])
    frame = models_csv(200)
    subjects = frame[["id", "race", "outcome"]].assign(
        label_ai=frame["ai_label"], label_strict=frame["strict"], label_lenient=frame["lenient"]
    )
    path = tmp_path / "subjects.csv"
    subjects.to_csv(path, index=False)
    return path, subjects


def features_of(subjects: pd.DataFrame, model: str) -> np.ndarray:
    """Accuracy and the FPR, FNR and selection-rate gaps between the races, from scikit-learn's confusion matrices."""
    rates = {}
    for race, part in subjects.groupby("race"):
        tn, fp, fn, tp = confusion_matrix(part["outcome"], part[f"label_{model}"], labels=[0, 1]).ravel()
        rates[race] = np.array([fp / (fp + tn), fn / (fn + tp), (fp + tp) / len(part)])
    gaps = np.abs(rates["Black"] - rates["White"])
    return np.array([(subjects["outcome"] == subjects[f"label_{model}"]).mean(), *gaps])


@pytest.mark.slow
@pytest.mark.django_db
def test_the_audit_scores_each_model_by_the_raters_tradeoff_weights(tradeoff_source, tmp_path, capsys):
    from analysis.tradeoff import tradeoff_weights
    from runs.study_exports import StudyExports
    from tasks.tradeoff import choices_of

    path, subjects = tradeoff_source
    out = tmp_path / "audit"
    call_command(
        "audit_models",
        study="effort-demo",
        subjects=str(path),
        out=str(out),
        groups=["race"],
        outcome_column="outcome",
        tradeoff_from="tradeoff-models:fairer",
    )
    printed = capsys.readouterr().out
    scores = pd.read_csv(out / "tradeoff_scores.csv").set_index("model")
    assert list(scores.index) == ["ai", "strict", "lenient"] and set(scores["reference"]) == {"ai"}
    # the weights the audit used: the block's, fitted to the completed raters' choices
    spec = tradeoff_spec()
    block = spec["blocks"][-1]
    answers = StudyExports().tables("tradeoff-models", completed=True).answers
    frame = answers[(answers["block"] == "fairer") & (answers["measure"] == "fairer")]
    frame = frame.assign(value=frame["value"].astype(float))
    groups = pd.Series(np.nan, index=frame["participant_id"].unique(), dtype=object)
    w = (
        tradeoff_weights(choices_of(spec, block, frame, groups))
        .table.set_index("feature")
        .loc[list(FEATURES), "weight"]
    )
    x = {model: features_of(subjects, model) for model in scores.index}
    for model in scores.index:
        assert scores.loc[model, "score"] == pytest.approx(x[model] @ w.to_numpy())
        assert scores.loc[model, "difference"] == pytest.approx((x[model] - x["ai"]) @ w.to_numpy())
        assert scores.loc[model, "ci_low"] <= scores.loc[model, "difference"] <= scores.loc[model, "ci_high"]
    assert "strict                 trade-off score of all participants:" in printed
    results = json.loads((out / "results.json").read_text())["human"]
    assert len(results["tradeoff_scores"]) == 3
    assert results["sources"]["--tradeoff-from"].startswith("tradeoff-models:fairer (tradeoff, 40 raters")
    html = (out / "report.html").read_text()
    assert "Models scored by the stakeholders&#x27; trade-off weights" in html
    assert_audit_intervals_are_registered(out)


@pytest.mark.slow
@pytest.mark.django_db
def test_the_tradeoff_source_needs_the_outcome_and_the_blocks_group(tradeoff_source, tmp_path):
    path, subjects = tradeoff_source
    options = {"study": "effort-demo", "out": str(tmp_path / "audit"), "tradeoff_from": "tradeoff-models"}
    with pytest.raises(CommandError, match="the trade-off features need the audited subjects' true outcomes"):
        call_command("audit_models", subjects=str(path), groups=["race"], **options)
    fewer = tmp_path / "fewer.csv"
    subjects.drop(columns="race").to_csv(fewer, index=False)
    with pytest.raises(CommandError, match="the block's group features race are not columns of the audited subjects"):
        call_command("audit_models", subjects=str(fewer), outcome_column="outcome", **options)
