"""Reports a researcher can put in a paper (issue 12 §1): every report renders every section with its
explanation, the provenance block, paper-style numbers (``< .001``, CIs at the estimate's precision,
stars with their legend, the multiple-testing family), Table 5 split per model with a CSV link, and
figures with PNG/SVG downloads, without inline script."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from fairness import law_school
from fairness.situation_testing import situation_testing
from participation.simulate import simulate_participants
from runs.analysis_runs import analysis_run_create
from runs.audit_parameters import AuditParameters
from runs.audit_runs import audit_run_create
from runs.provenance import Provenance
from runs.relative_fairness import write_study_dp_report
from runs.report_explanations import ANALYSIS, AUDIT, DESIGN, DIFFERENTIAL_PARITY, SITUATION_TESTING, ST_METHODS
from runs.report_format import decimals_for, format_ci, format_estimate, format_pvalue, stars, stars_legend
from runs.reports.base import table_context
from runs.reports.effort import regression_tables
from runs.reports.situation_testing import write_law_school_report, write_st_report
from tests.surveys.test_report_security import assert_no_inline_script

CST_DATA = Path(__file__).resolve().parents[3] / "shared" / "reference-data" / "counterfactual_situation_testing"
PROVENANCE_FIELDS = ["Study", "Participants", "Excluded", "Seeds", "Software", "Date"]


class _Report(HTMLParser):
    """Sections (id, heading, explanation text, csv links), nav links, provenance fields, figure buttons."""

    def __init__(self):
        super().__init__()
        self.sections: list[dict] = []
        self.nav: list[str] = []
        self.provenance: list[str] = []
        self.buttons: list[tuple[str, str]] = []
        self.figures: list[str] = []
        self._stack: list[str] = []
        self._where = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "nav":
            self._where = "nav"
        elif tag == "a" and self._where == "nav" and a.get("href", "").startswith("#"):
            self.nav.append(a["href"][1:])
        elif tag == "section" and "report-section" in classes:
            self.sections.append({"id": a["id"], "heading": "", "explanation": "", "csv": []})
        elif tag == "section" and a.get("id") == "provenance":
            self._where = "provenance"
        elif tag == "dt" and self._where == "provenance":
            self._stack.append("dt")
        elif tag == "h2" and self.sections and not self.sections[-1]["heading"]:
            self._stack.append("h2")
        elif tag == "p" and "explanation" in classes:
            self._stack.append("explanation")
        elif tag == "a" and "download" in a and self.sections:
            self.sections[-1]["csv"].append(a["href"])
        elif tag == "button" and "data-download" in a:
            self.buttons.append((a["data-download"], a["data-target"]))
        elif tag == "div" and "data-figure" in a:
            self.figures.append(a["id"])

    def handle_endtag(self, tag):
        if tag == "nav" or (tag == "section" and self._where == "provenance"):
            self._where = ""
        if self._stack and tag in ("dt", "h2", "p") and self._stack[-1] in ("dt", "h2", "explanation"):
            if tag == "p" and self._stack[-1] != "explanation":
                return
            self._stack.pop()

    def handle_data(self, data):
        if not self._stack:
            return
        if self._stack[-1] == "dt":
            self.provenance.append(data.strip())
        elif self._stack[-1] == "h2":
            self.sections[-1]["heading"] += data
        else:
            self.sections[-1]["explanation"] += data


def check_report(path: Path, *, min_sections: int, figures: int) -> _Report:
    """Every section is in the nav bar and has a 2-4 part explanation with formula and source; the
    provenance block has its fields; every CSV link exists; each figure has PNG and SVG buttons."""
    html = path.read_text()
    assert_no_inline_script(html)
    report = _Report()
    report.feed(html)
    assert len(report.sections) >= min_sections
    assert report.nav == ["main", "provenance", *[s["id"] for s in report.sections]]
    for section in report.sections:
        text = " ".join(section["explanation"].split())
        assert "Formula:" in text and "Source:" in text, (section["heading"], text)
        assert 150 <= len(text) <= 900, text  # a few sentences, not a page
        for link in section["csv"]:
            assert (path.parent / link).is_file(), link
    assert [f for f in PROVENANCE_FIELDS if f not in report.provenance] == []
    assert len(report.figures) == figures
    assert sorted(report.buttons) == sorted([(f, fig) for fig in report.figures for f in ("png", "svg")])
    return report


def test_every_explanation_says_what_how_formula_and_source():
    for explanations in (ANALYSIS, AUDIT, DIFFERENTIAL_PARITY, SITUATION_TESTING, DESIGN):
        for name, e in explanations.items():
            assert all(len(part) > 10 for part in (e.shows, e.read, e.formula)), name
            assert "paper" in e.source or "poster" in e.source or re.search(r"\((19|20)\d\d\)", e.source), name
    assert set(ST_METHODS) == {"ST", "CSTwo", "CSTwi", "CF"}


# Numbers --------------------------------------------------------------------------------------------


def test_pvalues_estimates_and_cis_are_printed_like_a_paper():
    assert format_pvalue(0.0004) == "< .001" and format_pvalue(0.00099) == "< .001"
    assert format_pvalue(0.001) == "0.001" and format_pvalue(0.0123) == "0.012" and format_pvalue(np.nan) == ""
    assert format_estimate(0.65547) == "0.655" and format_estimate(-12.34567) == "-12.346"
    assert format_estimate(0.0486) == "0.049" and format_estimate(0.0070) == "0.0070" and format_estimate(12) == "12"
    assert decimals_for(0.5) == 3 and decimals_for(0.00943) == 4 and decimals_for(0.0) == 3
    # the CI takes its estimate's precision, not its own bounds'
    assert format_ci(0.62912, 0.68031, 0.6555) == "[0.629, 0.680]"
    assert format_ci(0.00502, 0.00913, 0.0070) == "[0.0050, 0.0091]"
    assert format_ci(-0.0652, 0.2159) == "[-0.065, 0.216]"


def test_stars_and_their_legends_follow_the_papers_levels():
    assert [stars(p) for p in (0.0005, 0.005, 0.03, 0.2)] == ["***", "**", "*", ""]
    assert stars_legend() == "*** p < .001, ** p < .01, * p < .05"  # effort paper, Tables 2-3
    assert stars_legend((0.01, 0.05, 0.1)) == "*** p < .01, ** p < .05, * p < .1"  # Table 5
    frame = pd.DataFrame(
        {
            "r": [0.48301, 0.0769],
            "pvalue": [1e-9, 0.274],
            "stars": ["***", ""],
            "ci_low": [0.3666, -0.0652],
            "ci_high": [0.5844, 0.2159],
        }
    )
    table = table_context(frame, notes=["Family: five correlations."])
    assert table.columns == ["r", "pvalue", "95% CI"]
    assert table.rows == [["0.483***", "< .001", "[0.367, 0.584]"], ["0.077", "0.274", "[-0.065, 0.216]"]]
    assert table.notes == ["Stars: *** p < .001, ** p < .01, * p < .05.", "Family: five correlations."]
    assert [cell[:2] for cell in table.body[0]] == [("0.483", "***"), ("< .001", None), ("[0.367, 0.584]", None)]
    assert table_context(frame.drop(columns="stars")).notes == []  # no stars, no legend


def test_table5_is_split_into_one_table_per_model_and_outcome():
    rows = []
    for model in ("income", "moderation (C = arrests)"):
        for outcome in ("d", "D"):
            for se, scale in (("ols", 1.0), ("clustered", 1.5)):
                for term, coef in (("Intercept", 0.1591), ("d_aggr", 0.0101), ("d_traj", 0.6095)):
                    rows.append(
                        {
                            "model": model,
                            "outcome": outcome,
                            "se": se,
                            "term": term,
                            "coef": coef,
                            "std_err": 0.0011 * scale,
                            "pvalue": 0.004 * scale,
                            "stars": "***" if se == "ols" else "**",
                            "ci_low": coef - 0.002,
                            "ci_high": coef + 0.002,
                            "r_squared": 0.8987,
                            "r_squared_adj": 0.8977,
                            "f_statistic": 863.05,
                            "n": 204,
                            "wald_joint_chi2": 48.3438,
                            "wald_joint_p": 1e-8,
                            "wald_equal_chi2": 2.5,
                            "wald_equal_p": 0.114,
                        }
                    )
    tables = regression_tables(pd.DataFrame(rows))
    assert [t.caption for t in tables] == [
        "income: overall input-space distance d (Eq. 5)",
        "income: output-space (fair-score) distance D (Eq. 6)",
        "moderation (C = arrests): overall input-space distance d (Eq. 7-8)",
        "moderation (C = arrests): output-space (fair-score) distance D (Eq. 7-8)",
    ]
    first = tables[0]
    assert first.columns == [
        "Term",
        "b",
        "SE (OLS)",
        "p (OLS)",
        "SE (clustered)",
        "95% CI (clustered)",
        "p (clustered)",
    ]
    # d_S: b and its SEs at the precision the SE needs (0.0011 -> 4 decimals), stars from the clustered p
    assert first.rows[1] == ["d_S: Aggregate", "0.0101**", "0.0011", "0.004", "0.0016", "[0.0081, 0.0121]", "0.006"]
    assert first.notes[0] == "Stars: *** p < .01, ** p < .05, * p < .1."
    assert first.notes[1] == "R² = 0.899, adjusted R² = 0.898, F = 863.050, N = 204 pairs."
    assert first.notes[2].startswith("Wald tests (clustered): a1 = a2 = 0: χ² = 48.344, p < .001; a1 = a2: χ² = 2.500")


# Every report, every section --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db
def test_analysis_audit_and_dp_reports_render_every_section(demo_study, tmp_path, settings):
    settings.REPORTS_DIR = tmp_path / "reports"
    simulate_participants("effort-demo", n=12, seed=5)
    analysis_run_create(slug="effort-demo", out_dir=tmp_path / "analysis", seed=3, n_resamples=40)
    # the effort analysis's three figures and one per converted agree block (its disagreement rate by rater group)
    analysis = check_report(tmp_path / "analysis" / "report.html", min_sections=14, figures=5)
    headings = [s["heading"] for s in analysis.sections]
    assert headings[:11] == [
        "Calibration (alpha = a2 / (a1 + a2))",
        "Headline: participant-level tests (participant bootstrap, cluster-robust Wald)",
        "Mixed models with crossed random effects for participant and stimulus (Eq. 5-8)",
        "Effect sizes: a2 - a1 per participant (two-stage), Cohen's d with CI",
        "Table 2: Spearman correlations (descriptive: pairs treated as independent)",
        "Repeated-measures correlations beside Table 2 (rmcorr)",
        "Inter-rater agreement on the Likert ratings (ICC)",
        "Table 3: Hotelling and Steiger tests (descriptive: pairs treated as independent)",
        "Table 4: participant-bootstrap 95% CIs of r_traj - r_aggr",
        "Table 5: regressions (ols rows descriptive, clustered rows participant-level)",
        "Rationale factors chosen",
    ]
    html = (tmp_path / "analysis" / "report.html").read_text()
    assert 'href="table5.csv" download' in html and html.count("<h3>") >= 4  # one table per model
    assert "Stars: *** p &lt; .001, ** p &lt; .01, * p &lt; .05." in html
    assert "Multiple-testing family of p (Bonferroni): the five correlations of one condition." in html
    assert "effort-demo), version 1" in html and "analysis 3" in html and "analysed: 12" in html
    assert "Analysed 12 participants (completed participants only); none dropped." in html
    # the headline table fits: short method names, p and p (Holm) shown; mixed models' variances once per model
    assert re.search(r"<th [^>]*>p \(Holm\)</th>", html) and "cluster Wald (CR1)" in html
    assert html.count("variance participant") == 6 and re.search(r"<th [^>]*>d, 95% CI</th>", html)

    subjects = tmp_path / "subjects.csv"
    call_command("generate_demo_audit", condition="arrests", out=str(subjects))
    audit_run_create(
        slug="effort-demo",
        subjects_file=subjects,
        out_dir=tmp_path / "audit",
        parameters=AuditParameters(n_resamples=5),  # every section drawn, whatever the intervals
    )
    # the effort audit's five figures and the group metrics by each of its three guessed group columns
    audit = check_report(tmp_path / "audit" / "report.html", min_sections=5, figures=8)
    assert "Calibration used" in audit.provenance
    html = (tmp_path / "audit" / "report.html").read_text()
    cal = demo_study.calibrations.get(kind="likert", condition__key="arrests")
    assert f"likert calibration v{cal.version}: N = {cal.n_participants} participants, alpha = {cal.alpha:.3f}" in html
    assert f"95% CI [{cal.ci_low:.3f}, {cal.ci_high:.3f}]" in html

    write_study_dp_report("effort-demo", tmp_path / "dp")
    dp = check_report(tmp_path / "dp" / "report.html", min_sections=2, figures=2)
    assert "Significance level alpha" in dp.provenance
    html = (tmp_path / "dp" / "report.html").read_text()
    assert "The family is this table" in html and "p (one-sided), Holm" in html  # adjusted beside raw
    results = json.loads((tmp_path / "dp" / "results.json").read_text())
    families = results["multiple_testing"]["families"]
    assert results["multiple_testing"]["method"] == "holm" and set(families) <= {
        f"{name}/pvalue" for name in ("fair_scores_vs_ai", "disagreements")
    }
    scores = pd.read_csv(tmp_path / "dp" / "fair_scores_vs_ai.csv")
    expected = np.minimum(1, np.maximum.accumulate(np.sort(scores["pvalue"]) * np.arange(len(scores), 0, -1)))
    np.testing.assert_allclose(np.sort(scores["pvalue_adjusted"]), expected)  # Holm (1979) step-down, by hand


def _cst_sample(n: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    data = pd.read_csv(CST_DATA / "LoanApplication_v2.csv", sep="|").head(n)
    cf = pd.read_csv(CST_DATA / "cf_LoanApplication_v2.csv", sep="|").head(n)
    return data, cf


def test_situation_testing_report_explains_the_methods(tmp_path):
    data, cf = _cst_sample()
    result = situation_testing(
        data[["AnnualSalary", "AccountBalance", "Gender", "LoanApproval"]],
        protected="Gender",
        protected_value=1,
        target="LoanApproval",
        negative_outcome=-1,
        k=[5, 10],
        counterfactuals=cf[["AnnualSalary", "AccountBalance", "Gender", "LoanApproval"]],
    )
    path = write_st_report(
        result, data, tmp_path, title="ST", settings={"k": [5, 10]}, provenance=Provenance(settings={"k": "5 10"})
    )
    report = check_report(path, min_sections=3, figures=1)
    assert "k" in report.provenance and "Study" in report.provenance
    html = path.read_text()
    for method in ("ST", "CSTwo", "CSTwi", "CF"):
        assert f"<dt>{method}</dt>" in html
    assert "counterfactual, the same person had they not been in the protected group" in html


def test_law_school_report_renders_every_section(tmp_path):
    sample = tmp_path / "law.csv"
    pd.read_csv(CST_DATA / "clean_LawSchool.csv", sep="|").sample(600, random_state=1).to_csv(
        sample, sep="|", index=False
    )
    results = law_school.run(sample, k=[5, 10])
    path = write_law_school_report(results, results.data, tmp_path / "out", k=[5, 10])
    report = check_report(path, min_sections=11, figures=3)
    headings = [section["heading"] for section in report.sections]
    assert headings[-2:] == [
        "Multiple discrimination (gender and race, each at alpha / 2)",
        "Comparison with the published tables (CST paper, Tables 10-13)",
    ]
    assert "Seeds" in report.provenance


def test_dp_verdicts_of_rows_with_evidence_are_notes_under_the_table(tmp_path):
    from runs.reports.parity import write_dp_report

    frame = pd.DataFrame(
        {
            "condition": ["arrests", "arrests"],
            "comparison": ["fair score - AI score"] * 2,
            "attribute": ["race", "race"],
            "group": ["Black", "White"],
            "n_group": [38, 76],
            "n_rest": [190, 152],
            "mean_diff_group": [0.2687, 0.074],
            "mean_diff_rest": [0.0559, 0.1001],
            "DPT": [5.4886, -0.955],
            "df": [44.26, 137.33],
            "pvalue": [9.3e-7, 0.1706],
            "DPD": [1.2452, -0.1388],
            "effect": ["very large", "very small"],
            "favourable": ["lower risk scores"] * 2,
            "direction": ["higher", None],
            "favoured_group": ["others", None],
            "verdict": ["Participants gave Black subjects higher scores.", "No evidence."],
        }
    )
    html = write_dp_report({"fair_scores_vs_ai": frame}, [], tmp_path, title="DP").read_text()
    assert '<p class="table-note">arrests, race = Black: Participants gave Black subjects higher scores.</p>' in html
    assert "No evidence." not in html and "2 tests; p is adjusted within it (holm" in html
    assert ">5.489</td>" in html and ">&lt; .001</td>" in html and ">0.171</td>" in html
