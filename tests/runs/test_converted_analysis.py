"""One analysis path (issue 20, item 4): a stored format 1 study converted to format 2
(``participation.format1.convert_stored_study``) and analysed by the one analysis (``analyze_study``
without --by: one rater group) stores the Likert Calibrations the format 1 analysis stored
(``runs.analysis_runs.effort_analysis``: ``analysis.pipeline.run_pipeline`` on the pairs table), so its
alpha and CI are the golden ``calibrations.csv``'s (recorded from the format 1 path), an audit finds them,
its report holds every results.json key and file of the format 1 report, with the format 1 analysis's
tables (``golden_format1_analysis/``: recorded from the format 1 analysis of the same stored demo at
commit 26720db, before that path was deleted; never regenerated), and ``relative_fairness`` gives the
same results before and after the conversion."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command

from analysis.report import HEADINGS, TABLES
from fairness.study_parity import subject_table
from participation.format1 import convert_stored_study
from runs.models import AnalysisRun, AuditRun, Calibration
from studies.format1 import format1_to_format2
from studies.models import Study
from studies.study_file import validate_study
from tests.research.test_format1_golden_export import GOLDEN, load_stored
from tests.runs.audit_inputs import demo_subjects_csv

SEED, RESAMPLES = 1, 200  # those of the golden calibrations.csv
FORMAT1 = Path(__file__).parent / "golden_format1_analysis"  # the format 1 analysis's results.json and CSVs
FORMAT1_DP = FORMAT1 / "relative_fairness_results.json"  # relative_fairness on the format 1 export


def _assert_close(got, expected, where: str = "") -> None:
    """JSON values equal, numbers to 1e-9 relative (recorded on another machine's BLAS, perhaps)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), where
        for key in expected:
            _assert_close(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (a, b) in enumerate(zip(got, expected, strict=True)):
            _assert_close(a, b, f"{where}[{i}]")
    elif isinstance(expected, float) and not isinstance(got, bool):
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12, nan_ok=True), where
    else:
        assert got == expected, where


def _analyse(out_dir, *by: str) -> AnalysisRun:
    """``analyze_study`` on the demo (a format 2 study is split by ``by``; without it, one rater group: the
    converted demo has no questionnaire)."""
    call_command(
        "analyze_study",
        "effort-demo",
        out=str(out_dir),
        seed=SEED,
        resamples=RESAMPLES,
        by=list(by),
        stdout=open(os.devnull, "w"),
    )
    return AnalysisRun.objects.order_by("-created_at").first()


@pytest.mark.slow
@pytest.mark.django_db
def test_a_converted_study_stores_format_1_calibrations_and_tables(researcher, tmp_path, settings):
    settings.REPORTS_DIR = tmp_path / "reports"
    load_stored(researcher, "stored.json")
    Calibration.objects.all().delete()
    convert_stored_study(Study.objects.get(slug="effort-demo"))

    run = _analyse(tmp_path / "format2")  # without --by: one rater group
    assert run.results["by"] == [] and [g["rater_group"] for g in run.results["rater_groups"]] == ["all"]
    golden = pd.read_csv(GOLDEN / "calibrations.csv").set_index("condition")
    stored = {c.condition.key: c for c in Calibration.objects.filter(analysis_run=run, kind="likert")}
    assert sorted(stored) == sorted(golden.index) == ["arrests", "income"]
    for key, cal in stored.items():
        row = golden.loc[key]
        assert (cal.alpha, cal.ci_low, cal.ci_high) == pytest.approx(
            (row["alpha"], row["ci_participants_low"], row["ci_participants_high"]), abs=1e-12
        )
        assert (cal.a1, cal.a2, cal.n_participants) == pytest.approx((row["a1"], row["a2"], row["n_participants"]))
        assert cal.estimand == row["estimand"] and cal.generalise == "" and cal.version == 1
    results = run.results
    assert [c["alpha"] for c in results["calibrations"]] == [stored[k].alpha for k in ("arrests", "income")]
    html = (tmp_path / "format2" / "report.html").read_text()
    assert "effort analysis of the pair_distance blocks" in html and "stored as a Likert Calibration" in html

    # the researcher loses nothing: every results.json key and every file of the format 1 report, under its name
    format1 = json.loads((FORMAT1 / "results.json").read_text())
    assert {*format1, "seed"} <= set(results)
    written = {p.name for p in (tmp_path / "format2").iterdir()}
    assert {p.name for p in FORMAT1.glob("*.csv")} | {"report.html", "results.json", "sensitivity.csv"} <= written
    # the effort tables (headline tests, Tables 2-5, ...) are the format 1 analysis's, in results.json and CSV
    for name in ("calibrations", *TABLES, "exclusions"):
        _assert_close(results[name], format1[name], name)
    # the effort analysis's headline family, beside the task blocks' families (analysis.families)
    _assert_close(results["multiple_testing"]["effort"], format1["multiple_testing"], "multiple_testing")
    for path in FORMAT1.glob("*.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "format2" / path.name), pd.read_csv(path), rtol=1e-9)
    assert results["effort"]["sample"] == format1["sample"]
    assert {k: results["sample"][k] for k in format1["sample"] if k != "sentence"} == {
        k: v for k, v in format1["sample"].items() if k != "sentence"
    }
    alphas = [row for row in results["sensitivity"]["estimates"] if row["estimate"].startswith("alpha")]
    _assert_close(alphas, format1["sensitivity"]["estimates"], "sensitivity")  # the alphas without flagged ones
    assert html.index(HEADINGS["calibrations"]) < html.index(HEADINGS["table2"]) < html.index("Rater groups: ")
    # relative_fairness: the differential parity the format 1 runtime's export gave (recorded at 5a65c03 from the
    # stored rows unconverted, before that runtime was deleted)
    call_command("relative_fairness", "effort-demo", out=str(tmp_path / "dp"), stdout=open(os.devnull, "w"))
    dp, dp_format1 = (json.loads(p.read_text()) for p in (tmp_path / "dp" / "results.json", FORMAT1_DP))
    # the same tables as format 1's, which predate the families: each row's test id and adjusted p are new
    added = {"test_id", "pvalue_adjusted"}
    rows = {key: dp[key] for key in dp_format1 if isinstance(dp[key], list)}
    tables = {key: [{c: v for c, v in row.items() if c not in added} for row in table] for key, table in rows.items()}
    assert {**dp_format1, **tables} == dp_format1 and dp["fair_scores_vs_ai"]
    assert {key: dp[key] for key in dp_format1 if key not in rows} == {
        k: v for k, v in dp_format1.items() if k not in rows
    }
    tested = [row for table in rows.values() for row in table if row.get("pvalue") is not None]
    assert tested and all(row["pvalue_adjusted"] >= row["pvalue"] for row in tested)
    assert dp["multiple_testing"]["method"] == "holm"

    subjects = demo_subjects_csv(tmp_path / "subjects.csv")
    call_command(
        "audit_models",
        study="effort-demo",
        subjects=str(subjects),
        condition="arrests",
        out=str(tmp_path / "audit"),
        resamples=2,  # which calibration the audit takes depends on neither its bootstrap nor its group columns
        groups=["race"],
        stdout=open(os.devnull, "w"),
    )
    assert AuditRun.objects.get().likert_calibration == stored["arrests"]


@pytest.mark.django_db
def test_a_format_2_study_without_effort_measures_says_why_it_stores_no_calibration(researcher, tmp_path, settings):
    """A format 2 study without pair_distance blocks stores no Calibration: results.json says why, and its
    report says nothing of effort (tests/runs/test_design_wording.py: one whose blocks miss a measure)."""
    from runs.analysis_runs import NO_PAIR_DISTANCE

    settings.REPORTS_DIR = tmp_path / "reports"
    path = Path(settings.BASE_DIR) / "studies" / "bundled" / "disagreement_synthetic.json"
    call_command("load_study", str(path), owner=researcher.username, stdout=open(os.devnull, "w"))
    slug = json.loads(path.read_text())["slug"]
    call_command("simulate_participants", slug, n=6, seed=1, stdout=open(os.devnull, "w"))
    call_command(
        "analyze_study", slug, out=str(tmp_path / "out"), resamples=50, by=["language"], stdout=open(os.devnull, "w")
    )
    assert not Calibration.objects.exists()
    assert AnalysisRun.objects.get().results["effort"] == {"note": NO_PAIR_DISTANCE}
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Calibration" not in html


def test_relative_fairness_reads_the_same_subjects_from_a_converted_file(demo_spec):
    """``relative_fairness``'s subject table (AI score and label, demographics, series per condition) of the
    demo's conversion is the format 1 file's (format 2: the pools of each condition's fair_score blocks)."""
    original = validate_study(demo_spec)
    converted = validate_study(format1_to_format2(original))
    pd.testing.assert_frame_equal(subject_table(converted), subject_table(original))
    assert len(subject_table(original)) == sum(len(c["subjects"]) for c in original["conditions"])
