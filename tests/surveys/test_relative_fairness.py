import io
import json

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from participation.simulate import simulate_participants
from tests.conftest import REFERENCE_DATA, run_jobs
from tests.surveys.test_report_security import assert_no_inline_script

pytestmark = pytest.mark.django_db
CST = REFERENCE_DATA / "counterfactual_situation_testing"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_study_differential_parity_command_and_api(demo_study, researcher, other_researcher, tmp_path):
    simulate_participants("effort-demo", n=20, seed=3)
    call_command("relative_fairness", "effort-demo", out=str(tmp_path / "dp"))
    results = json.loads((tmp_path / "dp" / "results.json").read_text())
    # the tables, no cross-task bridge between conditions; and the estimates without flagged participants
    assert set(results) == {"fair_scores_vs_ai", "disagreements", "sensitivity", "multiple_testing"}
    rows = results["fair_scores_vs_ai"]
    assert {r["condition"] for r in rows} == {"arrests", "income"} and {r["attribute"] for r in rows} == {"race", "sex"}
    for r in rows:  # the verdict names who, which group and the direction in the outcome's words
        group = f"subjects whose {r['attribute']} is {r['group']}"
        rest = f"subjects whose {r['attribute']} is not {r['group']}"
        assert r["favourable"] == "lower risk scores"
        if r["direction"] is None:
            assert r["verdict"].startswith("No evidence at alpha = 0.05 that participants gave " + group)
            assert r["favoured_group"] is None
        else:
            assert r["verdict"].startswith(
                f"Participants gave {group} {r['direction']} risk scores than the AI did, relative to {rest}."
            )
            # risk scores: higher than the AI means the group is disfavoured
            assert r["favoured_group"] == (rest if r["direction"] == "higher" else group)
            assert (r["DPT"] > 0) == (r["direction"] == "higher")
    html = (tmp_path / "dp" / "report.html").read_text()
    assert "R0 = the fair risk score a participant gave" in html and "R1 = the AI&#x27;s label" in html
    assert "Per-item differences" in html and "report-assets/vendor/plotly.min.js" in html
    assert_no_inline_script(html)
    client = APIClient()
    client.force_authenticate(other_researcher)
    assert client.get("/api/studies/effort-demo/differential-parity/").status_code == 404
    client.force_authenticate(researcher)
    assert client.get("/api/studies/effort-demo/differential-parity/").status_code == 404  # no run yet
    assert client.post("/api/studies/effort-demo/differential-parity/", {}, format="json").status_code == 202
    run_jobs()
    body = client.get("/api/studies/effort-demo/differential-parity/").json()
    assert len(body["fair_scores_vs_ai"]) == len(rows)


@pytest.fixture
def loan_files():
    if not CST.exists():
        pytest.skip("reference data not present")
    return CST / "LoanApplication_v2.csv", CST / "cf_LoanApplication_v2.csv"


def _st_loan_command(data, tmp_path, **options) -> str:
    """The situation_testing command on the loan data (Gender, LoanApproval, two features, k = 15)."""
    out = io.StringIO()
    call_command(
        "situation_testing",
        str(data),
        sep="|",
        protected="Gender",
        protected_value="1",
        target="LoanApproval",
        negative="-1",
        features=["AnnualSalary", "AccountBalance"],
        k=[15],
        out=str(tmp_path / "st"),
        stdout=out,
        **options,
    )
    return out.getvalue()


@pytest.mark.slow
def test_situation_testing_command_report_and_errors(loan_files, tmp_path):
    data, cf = loan_files
    text = _st_loan_command(data, tmp_path, counterfactuals=str(cf), mode="reference")
    assert "55" in text and "288" in text
    html = (tmp_path / "st" / "report.html").read_text()
    assert "Control group" in html and "Test group" in html and "<details" in html
    assert_no_inline_script(html)
    with pytest.raises(CommandError, match="missing column"):
        call_command(
            "situation_testing",
            str(data),
            sep="|",
            protected="Sex",
            protected_value="1",
            target="LoanApproval",
            negative="-1",
            out=str(tmp_path / "x"),
        )
    dag = tmp_path / "dag.json"
    dag.write_text(json.dumps({"a": ["b"], "b": ["a"]}))
    with pytest.raises(CommandError, match="cycle"):
        call_command(
            "situation_testing",
            str(data),
            sep="|",
            protected="Gender",
            protected_value="1",
            target="LoanApproval",
            negative="-1",
            dag=str(dag),
            do=["Gender=0"],
            out=str(tmp_path / "x"),
        )


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_situation_testing_api(loan_files, researcher):
    data, cf = loan_files
    client = APIClient()
    assert client.post("/api/situation-testing/", {}).status_code in (401, 403)
    client.force_authenticate(researcher)
    with data.open("rb") as d, cf.open("rb") as c:
        response = client.post(
            "/api/situation-testing/",
            {
                "data": d,
                "counterfactuals": c,
                "sep": "|",
                "protected": "Gender",
                "protected_value": "1",
                "target": "LoanApproval",
                "negative": "-1",
                "features": ["AnnualSalary", "AccountBalance"],
                "k": [15],
                "mode": "reference",
            },
            format="multipart",
        )
    assert response.status_code == 202, response.content
    run_jobs()
    job = client.get(response["Location"]).json()
    assert job["status"] == "succeeded", job["error"]
    body = job["result"]
    assert body["counts"][0]["ST"] == 55 and body["counts"][0]["CSTwo"] == 288
    first = body["flagged"][0]
    assert len(first["control"]) == 15 and len(first["test"]) == 15
    with data.open("rb") as d:
        bad = client.post(
            "/api/situation-testing/",
            {
                "data": d,
                "sep": "|",
                "protected": "Gender",
                "protected_value": "9",
                "target": "LoanApproval",
                "negative": "-1",
            },
            format="multipart",
        )
    assert bad.status_code == 202
    run_jobs()
    failed = client.get(bad["Location"]).json()
    assert failed["status"] == "failed" and "no row has Gender = 9" in failed["error"]


@pytest.mark.slow
def test_law_school_command_small(tmp_path):
    path = CST / "clean_LawSchool.csv"
    if not path.exists():
        pytest.skip("reference data not present")
    sample = tmp_path / "law.csv"
    pd.read_csv(path, sep="|").sample(n=3000, random_state=1).to_csv(sample, sep="|", index=False)
    out = io.StringIO()
    call_command("law_school_experiment", data=str(sample), k=[15, 30], out=str(tmp_path / "law"), stdout=out)
    text = out.getvalue()
    assert "gender:" in text and "race:" in text and "intersectional:" in text and "multiple" in text
    counts = pd.read_csv(tmp_path / "law" / "counts_gender.csv")
    assert list(counts["k"]) == [15, 30] and (counts["CSTwo"] >= counts["CSTwo_sig"]).all()
    html = (tmp_path / "law" / "report.html").read_text()
    assert "Multiple discrimination" in html and html.count("data-figure=") == 3
    assert_no_inline_script(html)


def _st_dag_command(data, tmp_path, do, **extra):
    dag = tmp_path / "dag.json"
    dag.write_text(json.dumps({"AnnualSalary": ["Gender"], "AccountBalance": ["Gender", "AnnualSalary"]}))
    return _st_loan_command(data, tmp_path, dag=str(dag), do=do, **extra)


@pytest.mark.slow
def test_situation_testing_dag_omits_cf_and_cst_with_the_complainant(loan_files, tmp_path):
    """An SCM gives counterfactual features, not the model's decision on them: CF and CSTwi would
    only copy the factual decision, so they are omitted and the output says so."""
    text = _st_dag_command(loan_files[0], tmp_path, ["Gender=0"])
    assert "CF and CST with the complainant (CSTwi) omitted" in text
    counts = pd.read_csv(tmp_path / "st" / "counts.csv")
    suffixes = ("", "_sig", "_sig_exact", "_sig_adjusted")
    assert list(counts.columns) == ["k", *(f"{m}{suffix}" for suffix in suffixes for m in ("ST", "CSTwo"))]
    results = json.loads((tmp_path / "st" / "results.json").read_text())
    assert "omitted" in results["settings"]["counterfactual decisions"]


def test_situation_testing_non_numeric_do_for_a_numeric_column(loan_files, tmp_path):
    with pytest.raises(CommandError, match="Gender is numeric: do.*needs a finite number, not 'Male'"):
        _st_dag_command(loan_files[0], tmp_path, ["Gender=Male"])
