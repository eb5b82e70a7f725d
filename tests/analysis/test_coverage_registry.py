"""Every registered interval and test (analysis.coverage.REGISTRY, simulation.coverage_studies) holds its
coverage floor or size ceiling at the reduced size; every report table (design and audit reports) that prints
an interval or a p-value names registered procedures or is listed as not yet measured here."""

from collections.abc import Collection
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simulation.coverage_studies  # noqa: F401 - registers the procedures
from analysis.coverage import REGISTRY, Measured, Reading, Study, measure, measure_many


def _study(key: str) -> Study | None:
    simulate = REGISTRY[key].simulate
    return simulate.study if isinstance(simulate, Reading) else None


@cache
def _shared(study: Study) -> dict[str, Measured]:
    """Every procedure reading ``study`` at its reduced size, seed 7: the study drawn once for them all."""
    keys = [k for k in sorted(REGISTRY) if _study(k) is study]
    return measure_many({k: REGISTRY[k].reduced for k in keys}, seed=7)


def _procedures() -> list:
    """Each key, the procedures of one shared study on one xdist worker (it simulates their studies once)."""
    first = {}
    for key in sorted(REGISTRY):
        first.setdefault(_study(key), key)
    return [
        pytest.param(key, marks=pytest.mark.xdist_group(f"coverage: {first[study]}")) if study else key
        for key in sorted(REGISTRY)
        for study in [_study(key)]
    ]


# Monte Carlo error at the reduced sizes: a measured coverage p over R studies has SE sqrt(p (1 - p) / R); at the
# nominal .95 and R = 60, sqrt(.95 x .05 / 60) = .028, so a floor of .86-.88 sits 2.5-3 SEs below nominal. An
# interval 30% too narrow (z 1.96 x .7 = 1.37) covers about .83, SE sqrt(.83 x .17 / 60) = .048: one procedure at
# R = 60 still passes a floor of .86 with P ~ .3, so a shared study's several procedures are the check. Checked by
# hand with every ICC interval shrunk 30% about its estimate (seed 7, R = 60): coverage .78-.90, five of the six
# ICC procedures fail (as they are: .93-.98, all pass). Full-size figures: bench/coverage.py.
@pytest.mark.slow
@pytest.mark.parametrize("key", _procedures())
def test_procedure_holds_its_bound_at_reduced_size(key):
    study = _study(key)
    result = _shared(study)[key] if study else measure(key, studies=REGISTRY[key].reduced, seed=7)
    assert result.studies == REGISTRY[key].reduced
    assert result.acceptable, (key, result.rate, REGISTRY[key].bound)


def test_a_shared_study_measures_each_procedure_as_its_own_simulation_would():
    """measure_many draws a shared study once for all its readers: each rate is the one the procedure's own
    generator gives it alone (measure), also when the readers' sizes differ."""
    keys = ["ICC(1,1)", "ICC(C,k)"]
    assert _study(keys[0]) is _study(keys[1]) is not None
    together = measure_many({keys[0]: 2, keys[1]: 3}, seed=3)
    for key, count in zip(keys, (2, 3), strict=True):
        alone = measure(key, studies=count, seed=3)
        assert together[key] == alone and alone.studies == count
        rng = np.random.default_rng(3)
        assert alone.rate == sum(REGISTRY[key].simulate(rng) for _ in range(count)) / count


def test_registry_entries_state_their_estimand():
    for key, procedure in REGISTRY.items():
        assert procedure.estimand and procedure.function and procedure.scenario, key
        assert 0 < procedure.nominal < 1 and procedure.reduced < procedure.full, key


# Report tables that print intervals or p-values whose coverage or size no registered simulation measures
# yet (their estimators' coverage is measured by the bench/ scripts named in their explanations). A new table
# with an interval or a test must name registered procedures instead of joining this list.
NOT_YET_REGISTERED: set[str] = set()


def _prints_inference(table) -> bool:
    return any(c == "ci" or c == "pvalue" or c.endswith("_pvalue") for c in table.columns)


def test_every_report_table_with_intervals_or_tests_names_registered_procedures():
    from runs.reports.design import DESIGN_TABLES

    unregistered = {
        name
        for name, table in DESIGN_TABLES.items()
        if _prints_inference(table) and not table.procedures and name not in NOT_YET_REGISTERED
    }
    assert unregistered == set(), "register their procedures in simulation.coverage_studies"
    for name, table in DESIGN_TABLES.items():
        assert set(table.procedures) <= set(REGISTRY), name
    stale = {name for name in NOT_YET_REGISTERED if name in DESIGN_TABLES and DESIGN_TABLES[name].procedures}
    assert stale == set(), "registered now: take them off NOT_YET_REGISTERED"


# Audit tables (runs.reports.audit.AUDIT_PROCEDURES) whose intervals no registered simulation measures yet.
AUDIT_NOT_YET_REGISTERED: set[str] = set()


def _csv_prints_inference(columns) -> bool:
    return any(c.startswith("ci_") or c == "pvalue" or c.endswith("_pvalue") for c in columns)


def assert_report_intervals_are_registered(out: Path, procedures: dict, not_yet: Collection[str] = ()) -> None:
    """Every CSV in ``out`` with an interval or a p-value is a table of ``procedures`` (CSV stem -> registry keys),
    whose keys are registered or which is listed in ``not_yet``."""
    with_inference = {p.stem for p in out.glob("*.csv") if _csv_prints_inference(pd.read_csv(p, nrows=0).columns)}
    assert with_inference, "the report printed no interval or p-value: nothing was checked"
    assert with_inference <= set(procedures), "name their procedures in the report's procedures"
    for name in with_inference:
        assert procedures[name] or name in not_yet, name
        assert set(procedures[name]) <= set(REGISTRY), name


def assert_audit_intervals_are_registered(out: Path) -> None:
    """Every CSV of the audit in ``out`` with an interval or a p-value is a table of AUDIT_PROCEDURES, whose keys
    are registered or which is listed in AUDIT_NOT_YET_REGISTERED."""
    from runs.reports.audit import AUDIT_PROCEDURES

    assert_report_intervals_are_registered(out, AUDIT_PROCEDURES, AUDIT_NOT_YET_REGISTERED)


def test_audit_procedures_are_registered_or_listed():
    from runs.reports.audit import AUDIT_PROCEDURES

    for name, keys in AUDIT_PROCEDURES.items():
        assert set(keys) <= set(REGISTRY), name
        assert bool(keys) != (name in AUDIT_NOT_YET_REGISTERED), f"{name}: registered, or listed as not yet"


def test_every_audit_table_with_intervals_names_registered_procedures(tmp_path):
    """An audit with effort series (sampled EaIF, so it has intervals), yes/no feedback and group columns."""
    from fairness.model_audit import audit, read_subjects
    from runs.reports.audit import write_audit_report
    from tests.fairness.test_model_audit import table

    frame = table(200, seed=2)
    rng = np.random.default_rng(3)
    shown = (frame["score_a"] >= 0.5).astype(int)
    feedback = pd.DataFrame(
        [
            {"participant": f"p{p}", "subject": frame["id"][i], "model_label": shown[i]}
            | {"disagreement": int(rng.random() < 0.3)}
            for p in range(10)
            for i in range(0, 200, 4)
        ]
    )
    subjects = read_subjects(frame)
    result = audit(
        subjects, desirable=False, scale=1.0, feedback=feedback, shown_model="a", n_resamples=50, exact_limit=100
    )
    write_audit_report(result, tmp_path, title="audit")
    assert {"group_metrics", "eaif", "disagreement_notions"} <= {p.stem for p in tmp_path.glob("*.csv")}
    assert_audit_intervals_are_registered(tmp_path)


def test_every_situation_testing_csv_with_pvalues_names_registered_procedures(tmp_path):
    """A situation-testing report with counterfactuals (ST, CSTwo, CSTwi, CF): its p-value columns are the exact
    tests whose size the registry measures."""
    from fairness.situation_testing import situation_testing
    from runs.reports.situation_testing import ST_PROCEDURES, write_st_report

    rng = np.random.default_rng(5)
    data = pd.DataFrame({"x": rng.normal(size=120), "g": np.repeat([0, 1], 60), "y": rng.integers(0, 2, 120)})
    cf = data.assign(x=data["x"] + 0.3, g=0)
    result = situation_testing(data, protected="g", target="y", negative_outcome=0, k=[5], counterfactuals=cf)
    write_st_report(result, data, tmp_path, title="ST")
    assert "CSTwi_pvalue" in pd.read_csv(tmp_path / "individuals.csv", nrows=0).columns
    assert_report_intervals_are_registered(tmp_path, ST_PROCEDURES)
