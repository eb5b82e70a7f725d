"""The model audit gives its study-derived estimates with all participants and without those flagged for
answer quality (issue 24, part 1; ``runs.audit_sensitivity``): the Likert alpha of its calibration, the
disagreement-derived notions and alpha, and the results of ``--metric-from / --utility-from / --features-from``,
in ``sensitivity.csv``, the report's section and results.json. "Without flagged" is checked against an
independent computation: the same audit after the flagged participants were deleted."""

import json

import pandas as pd
import pytest

from analysis.sensitivity import COLUMNS
from participation.models import Participant
from research.export import export_tables
from runs.analysis_runs import analysis_run_create
from runs.audit_parameters import AuditParameters
from runs.audit_runs import audit_run_create
from tests.runs.audit_inputs import demo_subjects_csv
from tests.runs.conftest import ANSWERED_24
from tests.runs.test_sensitivity import _machine_speed

pytestmark = pytest.mark.django_db


def _flagged(slug: str, machine_speed: list[Participant]) -> list[Participant]:
    """Everyone the study's quality rules flag: the machine-speed participants, and any simulated person whose
    answers a server rule flags (simulated people carry quality signals, ``simulation.interaction``)."""
    quality = export_tables(slug).quality
    ids = set(quality.loc[quality["flagged"].fillna(0).astype(int) == 1, "participant_id"])
    flagged = list(Participant.objects.filter(study__slug=slug, pseudonym__in=ids))
    assert {p.pk for p in machine_speed} <= {p.pk for p in flagged}
    return flagged


def _audit(slug: str, subjects, out, **options) -> tuple[pd.DataFrame, dict]:
    """The audit with 2 resamples and the subjects' groups by race only: the checks compare point estimates (the
    bootstrap draws only the intervals, and each human-metric resample is a refit, the audit's main cost) of the
    study-derived rows, which other group columns would only repeat."""
    parameters = AuditParameters(n_resamples=2, groups=("race",), **options)
    audit_run_create(slug=slug, subjects_file=subjects, out_dir=out, parameters=parameters)
    return pd.read_csv(out / "sensitivity.csv").set_index("estimate"), json.loads((out / "results.json").read_text())


@pytest.mark.slow
@pytest.mark.xdist_group(ANSWERED_24)
def test_the_audit_gives_the_feedback_estimates_and_the_likert_alpha_without_the_flagged(
    answered_24, tmp_path, no_mixed_models
):
    flagged = _flagged("effort-demo", _machine_speed("effort-demo", 6))
    path = demo_subjects_csv(tmp_path / "subjects.csv")
    analysis = analysis_run_create(slug="effort-demo", out_dir=tmp_path / "analysis", seed=2, n_resamples=20)
    table, results = _audit("effort-demo", path, tmp_path / "audit", condition="arrests")
    assert list(pd.read_csv(tmp_path / "audit" / "sensitivity.csv").columns) == COLUMNS
    # the Likert alpha: its analysis run's row (the study excludes by no flag: "all" is the calibration's alpha)
    likert = table.loc["Likert calibration v1 alpha: condition=arrests"]
    analysed = {r["estimate"]: r for r in analysis.results["sensitivity"]["estimates"]}["alpha: condition=arrests"]
    assert likert["all"] == pytest.approx(analysis.calibrations.get(condition__key="arrests").alpha)
    assert likert["without_flagged"] == pytest.approx(analysed["without_flagged"])
    # the disagreement alpha and every notion, "all" the report's own
    alpha = table.loc["disagreement calibration"]
    assert alpha["all"] == pytest.approx(results["disagreement_calibration"]["alpha"])
    notions = table[table.index.str.startswith("disagreement notions: ")]
    assert len(notions) == len(results["notions"]) > 0
    first = results["notions"][0]
    label = f"disagreement notions: model={first['model']}, subject_attribute=race, statistic={first['notion']}"
    assert table.loc[label, "all"] == pytest.approx(first["value"])
    assert results["sensitivity"]["n_flagged"] == len(flagged)
    assert set(results["sensitivity"]["estimates"][0]) == set(COLUMNS)
    html = (tmp_path / "audit" / "report.html").read_text()
    assert "Sensitivity: without participants flagged for answer quality" in html
    assert f"Without the {len(flagged)} participants flagged for answer quality" in html
    # "without_flagged" is the audit of the study without them
    Participant.objects.filter(pk__in=[p.pk for p in flagged]).delete()
    without, again = _audit("effort-demo", path, tmp_path / "again", condition="arrests")
    assert alpha["without_flagged"] == pytest.approx(again["disagreement_calibration"]["alpha"])
    values = {(r["model"], r["notion"]): r["value"] for r in again["notions"]}
    for name, row in notions.iterrows():
        model, notion = name.split("model=")[1].split(", ")[0], name.rsplit("statistic=", 1)[1]
        assert row["without_flagged"] == pytest.approx(values[(model, notion)], nan_ok=True), name
    assert again["sensitivity"]["n_flagged"] == 0  # the Likert row stays its analysis run's (with the flagged)
    recomputed = without.drop(index="Likert calibration v1 alpha: condition=arrests")
    assert recomputed["all"].tolist() == pytest.approx(recomputed["without_flagged"].tolist(), nan_ok=True)


@pytest.mark.slow
def test_the_audit_gives_what_people_said_without_the_flagged(sources, tmp_path):
    flagged = [
        p.pk
        for slug in ("people-alike", "people-choose", "people-fair")
        for p in _flagged(slug, _machine_speed(slug, 5))
    ]
    options = {
        "metric_from": "people-alike",
        "utility_from": "people-choose:choices",
        "features_from": "people-fair",
        "lipschitz": 0.2,  # the recomputation without the flagged keeps the audit's L
    }
    table, results = _audit("effort-demo", sources, tmp_path / "audit", **options)
    for prefix in ("human metric lipschitz: model=", "utility agreement: model=", "unfair feature reliance: model="):
        assert table.index.str.startswith(prefix).any(), prefix
    assert results["sensitivity"]["n_flagged"] == len(flagged) >= 15
    Participant.objects.filter(pk__in=flagged).delete()
    _, again = _audit("effort-demo", sources, tmp_path / "again", **options)
    for name, column in (
        ("human_metric_lipschitz", "statistic"),
        ("utility_agreement", "statistic"),
        ("unfair_feature_reliance", "reliance"),
    ):
        prefix = name.replace("_", " ")
        rows = table[table.index.str.startswith(f"{prefix}: ")]
        expected = [r[column] for r in again["human"][name]]
        assert len(rows) == len(expected) > 0
        assert rows["without_flagged"].tolist() == pytest.approx(expected, nan_ok=True), name
        assert rows["all"].tolist() == pytest.approx([r[column] for r in results["human"][name]], nan_ok=True)
