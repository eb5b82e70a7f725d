"""How a sampled EaIF is drawn and bounded, in ``audit_models``, the API, the web form and the job
(``--bound``, ``--n-pairs``, ``--half-width``): each value refused with its own message, the options stored in
the job's params, the Hoeffding interval's half-width against its formula computed here, a target half-width
reached, and the defaults giving today's numbers. Above the exact limit only: the tests lower it."""

import json
import math
from functools import partial
from html import escape
from io import StringIO

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

import runs.audit_runs
from fairness.individual import eaif_sampled
from fairness.model_audit import audit as real_audit
from fairness.model_audit import effort_and_aggregate, read_subjects
from runs.models import AuditRun, Job
from tests.runs.audit_inputs import demo_subjects_csv, queued_audits_resampled

pytestmark = pytest.mark.django_db

REFUSED = [
    ({"bound": "exact"}, "bound", "--bound must be one of bernstein, hoeffding, normal, not 'exact'"),
    ({"n_pairs": 999}, "n_pairs", "--n-pairs must be a whole number of sampled pairs from 1,000 to the cap of"),
    ({"n_pairs": 2 * 10**9}, "n_pairs", "to the cap of 1,000,000,000, not 2000000000"),
    ({"half_width": 0.0}, "half_width", "--half-width must be a number from 5e-05 to below 0.5, not 0.0"),
    ({"half_width": -0.1}, "half_width", "--half-width must be a number from 5e-05 to below 0.5, not -0.1"),
    ({"half_width": 1e-6}, "half_width", "could need more than the cap of 1,000,000,000 sampled pairs"),
    ({"half_width": 0.5}, "half_width", "--half-width must be a number from 5e-05 to below 0.5, not 0.5"),
]


def audit_command(subjects, out, **options):
    """The audit by the command, with 2 bootstrap resamples and the group metrics by race only: the tests read the
    sampled EaIF, whose pairs and interval neither the resamples nor the group columns touch."""
    call_command(
        "audit_models",
        study="effort-demo",
        subjects=str(subjects),
        condition="arrests",
        out=str(out),
        resamples=2,
        groups=["race"],
        **options,
    )
    return json.loads((out / "results.json").read_text())


@pytest.fixture
def subjects_file(demo_study, tmp_path, settings):
    """The effort demo's (owned by ``researcher``) subjects file, condition arrests."""
    settings.REPORTS_DIR = tmp_path / "reports"
    return demo_subjects_csv(tmp_path / "subjects.csv")


@pytest.fixture
def answered_subjects(answered_demo, subjects_file):
    """The subjects file, the effort demo taken by 12 simulated participants (a snapshot: no simulation)."""
    return subjects_file


@pytest.fixture
def sampled(monkeypatch):
    """The audit samples EaIF above 10 subjects (the demo's subjects are below the real limit of 50,000)."""
    monkeypatch.setattr(runs.audit_runs, "audit", partial(real_audit, exact_limit=10))


def test_each_bad_sampling_value_is_refused_by_its_own_message(subjects_file, researcher, client, tmp_path):
    api = APIClient()
    api.force_authenticate(researcher)
    client.force_login(researcher)
    for options, field, message in REFUSED:
        with pytest.raises(CommandError, match=message.replace("(", r"\(")):
            audit_command(subjects_file, tmp_path / "o", **options)
        with subjects_file.open("rb") as fh:
            response = api.post(
                "/api/studies/effort-demo/audits/",
                {"subjects": fh, "condition": "arrests", **options},
                format="multipart",
            )
        assert response.status_code == 400, (options, response.content)
        assert any(message in error for error in response.json()["fields"][field]), (options, response.json())
        with subjects_file.open("rb") as fh:
            page = client.post(
                "/researcher/studies/effort-demo/start/audit/", {"subjects": fh, "condition": "arrests", **options}
            )
        assert page.status_code == 400, options
        html = page.content.decode()
        own = html[html.index(f'id="audit-{field.replace("_", "-")}"') :]
        assert escape(message) in own[: own.index("</div>")], (options, field)  # under its own field
    with pytest.raises(CommandError, match="argument --bound: invalid choice: 'exact'"):  # the command line's
        call_command("audit_models", "--study", "effort-demo", "--subjects", str(subjects_file), "--bound", "exact")
    assert Job.objects.count() == 0 and AuditRun.objects.count() == 0


def test_the_api_and_the_form_store_the_sampling_options_in_the_job(subjects_file, researcher, client):
    api = APIClient()
    api.force_authenticate(researcher)
    asked = {"bound": "hoeffding", "n_pairs": 5000, "half_width": 0.01}
    with subjects_file.open("rb") as fh:
        response = api.post(
            "/api/studies/effort-demo/audits/", {"subjects": fh, "condition": "arrests", **asked}, format="multipart"
        )
    assert response.status_code == 202, response.content
    first = Job.objects.get()
    assert {name: first.params[name] for name in asked} == asked
    client.force_login(researcher)
    page = client.get("/researcher/studies/effort-demo/start/").content.decode()
    assert '<option value="bernstein" selected>bernstein</option>' in page
    assert '<option value="hoeffding">hoeffding</option><option value="normal">normal</option>' in page
    assert 'id="audit-n-pairs" name="n_pairs" min="1000" max="1000000000" step="1" value="2000000"' in page
    assert 'id="audit-half-width" name="half_width" step="any" min="5e-05" max="0.5" value=""' in page
    with subjects_file.open("rb") as fh:
        posted = client.post(
            "/researcher/studies/effort-demo/start/audit/",
            {"subjects": fh, "condition": "arrests", "bound": "normal", "n_pairs": "3000", "half_width": ""},
        )
    assert posted.status_code == 302
    params = Job.objects.exclude(pk=first.pk).get().params
    assert (params["bound"], params["n_pairs"], params.get("half_width")) == ("normal", 3000, None)


def test_a_hoeffding_audit_states_its_interval_by_the_formula(answered_subjects, sampled, tmp_path):
    results = audit_command(answered_subjects, tmp_path / "h", bound="hoeffding", n_pairs=5000)
    rows = pd.DataFrame(results["eaif"])
    assert len(rows) and set(rows["bound"]) == {"hoeffding"} and set(rows["n_pairs"]) == {5000}
    half = math.sqrt(math.log(2 / 0.05) / (2 * 5000))  # Hoeffding (1963): 0.0192 at m = 5,000, delta = 0.05
    for row in rows.itertuples():
        assert row.half_width == pytest.approx(half, abs=1e-9)  # results.json keeps 10 decimals
        assert row.ci_low == pytest.approx(max(0.0, row.eaif - half), abs=1e-9)  # results.json keeps 10 decimals
        assert row.ci_high == pytest.approx(min(1.0, row.eaif + half), abs=1e-9)  # results.json keeps 10 decimals
        assert row.violation_share_ci_low == pytest.approx(
            max(0.0, row.violation_share - half), abs=1e-9
        )  # results.json keeps 10 decimals
    stated = results["settings"]["pair_sampling"]
    assert stated["estimand"].startswith("the exact value over all n(n - 1)/2 pairs of these subjects")
    assert stated["assumptions"].startswith("Hoeffding's inequality: each pair's term lies in [0, 1]")
    html = (tmp_path / "h" / "report.html").read_text()
    assert "Draws: 5,000 uniform pairs of subjects per row" in html and "by the hoeffding bound" in html
    assert f"(+/- {half:.2g}); violating pairs" in html


def test_an_audit_to_a_target_half_width_reports_the_pairs_it_used(answered_subjects, sampled, tmp_path):
    out = StringIO()
    rows = pd.DataFrame(
        audit_command(answered_subjects, tmp_path / "w", half_width=0.002, n_pairs=1000, stdout=out)["eaif"]
    )
    assert (rows["half_width"] <= 0.002).all() and (rows["half_width"] > 0).all()
    assert set(rows["n_pairs"]) <= {1000 * 2**j for j in range(1, 30)}  # a check of the doubling grid
    assert (rows["ci_high"] - rows["ci_low"] <= 2 * 0.002 + 1e-15).all()
    first = rows.iloc[0]
    assert f"({first['n_pairs']:,} pairs, bernstein bound)" in out.getvalue()
    html = (tmp_path / "w" / "report.html").read_text()
    assert "until the interval&#x27;s half-width was at most 0.002, checked at 1,000 x 2^j pairs" in html


def test_the_defaults_give_todays_numbers(answered_subjects, sampled, tmp_path):
    """No sampling option: 2,000,000 pairs, the empirical Bernstein bound and the audit's seed, as the audit drew them
    before the options existed (``eaif_sampled(..., n_pairs=2_000_000, seed=seed)``)."""
    rows = pd.DataFrame(audit_command(answered_subjects, tmp_path / "d")["eaif"]).set_index(["model", "weights"])
    subjects = read_subjects(answered_subjects)
    e, s = effort_and_aggregate(subjects, desirable=False, scale=1.0)  # the arrests condition's
    for (model, weights), row in rows.iterrows():
        if weights != "equal":
            continue
        before = eaif_sampled(e, s, subjects.scores(model), alpha=0.5, n_pairs=2_000_000, seed=1)
        got = [row["eaif"], row["ci_low"], row["ci_high"], row["violation_share"]]
        assert got == pytest.approx([before.estimate, *before.ci, before.violation_share], abs=1e-9)  # 10 decimals
        assert row["method"] == (f"sampled: 2,000,000 uniform pairs; CI by the bernstein bound ({before.assumptions})")


@pytest.mark.slow  # two audit jobs, one on the suite's shared Dask cluster (tests/conftest.py)
@pytest.mark.django_db(transaction=True)
def test_a_parquet_file_through_the_api_on_dask_gives_the_csv_numbers(answered_subjects, researcher, dask_scheduler):
    """The API's ``engine`` "dask" with a Parquet upload: the job reads it on the server's Dask cluster
    (DASK_SCHEDULER_ADDRESS) and stores the CSV upload's numbers; a CSV with engine "dask" is refused."""
    from tests.conftest import run_jobs

    parquet = answered_subjects.with_suffix(".parquet")
    pd.read_csv(answered_subjects).to_parquet(parquet)
    api = APIClient()
    api.force_authenticate(researcher)
    results = {}
    for path, engine in ((answered_subjects, "pandas"), (parquet, "dask")):
        with path.open("rb") as fh:
            response = api.post(
                "/api/studies/effort-demo/audits/",
                {"subjects": fh, "condition": "arrests", "engine": engine, "groups": ["race"]},
                format="multipart",
            )
        assert response.status_code == 202, response.content
        queued_audits_resampled(2)  # the two engines' numbers are compared, not the intervals' width
        run_jobs()
        job = api.get(response["Location"]).json()
        assert job["status"] == "succeeded", job["error"]
        results[engine] = job["result"]["results"]
    for part in ("group_metrics", "eaif"):
        assert results["dask"][part] == results["pandas"][part], part
    assert {row["group_column"] for row in results["dask"]["group_metrics"]} == {"race"}
    with answered_subjects.open("rb") as fh:
        refused = api.post(
            "/api/studies/effort-demo/audits/", {"subjects": fh, "engine": "dask"}, format="multipart"
        ).json()
    assert refused["fields"]["engine"] == [
        "engine 'dask' reads a Parquet subjects file; this upload is a CSV: use engine 'pandas'"
    ]
    truncated = parquet.read_bytes()[:-3]
    refused = api.post(
        "/api/studies/effort-demo/audits/",
        {"subjects": SimpleUploadedFile("s.parquet", truncated), "engine": "dask"},
        format="multipart",
    ).json()
    assert "starts like Parquet but does not end like it" in refused["fields"]["subjects"][0]
