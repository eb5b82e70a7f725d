"""plan_study as a background job: POST /api/studies/<slug>/plans/ answers 202, the worker runs
the same simulation as the command, the report and plan.csv are stored with the job."""

import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from runs.models import Job
from runs.plan_parameters import PLAN_PARAMETERS
from runs.planning_runs import plan_results, run_plan
from tests.conftest import run_jobs

PARAMS = {"n": 12, "studies": 3, "seed": 5, "participant_slope_sd": 0.2, "stimulus_sd": 0.05}


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.mark.django_db(transaction=True)
def test_plan_job_matches_the_synchronous_call_and_stores_its_report(demo_study, api, researcher, client):
    response = api.post("/api/studies/effort-demo/plans/", PARAMS, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert response["Location"] == body["url"] == f"/api/jobs/{body['id']}/" and body["kind"] == "plan"
    assert body["status"] == "queued"
    run_jobs()
    job = api.get(body["url"]).json()
    assert job["status"] == "succeeded", job["error"]
    params = {name: p.default for name, p in PLAN_PARAMETERS.items()} | PARAMS
    assert job["params"] == params
    expected = json.loads(json.dumps(plan_results(run_plan(demo_study.spec, params))))  # same seed, numbers
    assert {k: v for k, v in job["result"].items() if k != "report_url"} == expected
    result = job["result"]
    assert {row["condition"] for row in result["table"]} == {"arrests", "income"}
    assert "coverage_mcse" in result["table"][0] and result["model"]["participant_slope_sd"] == 0.2
    assert sorted(f.rsplit("/", 1)[1] for f in job["files"]) == [
        "plan.csv",
        "report.html",
        "results.json",
        "stimuli.csv",
    ]
    assert {row["stimulus_pairs"] for row in result["stimuli"]} == {12, 24, 48, 96}
    client.force_login(researcher)
    report = client.get(job["result"]["report_url"])
    assert report.status_code == 200 and b"coverage_plain" in b"".join(report.streaming_content)
    csv = client.get(f"/researcher/jobs/{body['id']}/plan.csv")
    content = b"".join(csv.streaming_content)
    assert (
        csv.status_code == 200
        and content.startswith(b"condition,n_stimuli,estimand,estimand_mcse,bias,ci_width_mean")
        and b"_mcse" in content
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "payload, field",
    [
        ({"n": 3}, "n"),
        ({"studies": 0}, "studies"),
        ({"n": "many"}, "n"),
        ({"participant_slope_sd": -0.1}, "participant_slope_sd"),
        ({"stimulus_sd": 6}, "stimulus_sd"),
        ({"size_studies": -1}, "size_studies"),
        ({"a1": -0.5, "a2": 0.4}, "a2"),
    ],
)
def test_invalid_plan_parameters_are_400_with_field_errors(demo_study, api, payload, field):
    response = api.post("/api/studies/effort-demo/plans/", payload, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["status"] == 400 and body["code"] == "invalid" and list(body["fields"]) == [field]
    assert body["detail"].startswith(f"{field}: ")
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_nan_from_a_form_is_refused(demo_study, api):
    response = api.post("/api/studies/effort-demo/plans/", {"noise": "nan"})
    assert response.status_code == 400 and "noise" in response.json()["fields"]


@pytest.mark.django_db
def test_only_the_owner_can_plan_and_see_the_plan(demo_study, api, other_researcher):
    other = APIClient()
    other.force_authenticate(other_researcher)
    refused = other.post("/api/studies/effort-demo/plans/", PARAMS, format="json")
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    assert not Job.objects.exists()
    url = api.post("/api/studies/effort-demo/plans/", PARAMS, format="json").json()["url"]
    assert other.get(url).status_code == 404
    assert APIClient().post("/api/studies/effort-demo/plans/", PARAMS, format="json").status_code in (401, 403)


@pytest.mark.django_db
def test_plan_warns_about_quota_groups_too_small_to_compare(demo_spec):
    """A quota of 30 judges among 100 participants: under the 64 per group of a medium difference
    (Cohen 1988, Table 2.4.1); the public, uncapped, can reach 100: no warning."""
    from studies.services import stored_file
    from studies.study_file import validate_study

    screening = {"question": "Your role?", "options": ["Judge", "Public", "Neither"], "eligible": ["Judge", "Public"]}
    spec, _ = stored_file(
        {**demo_spec, "screening": screening, "quotas": [{"question": "screening", "max": {"Judge": 30}}]}
    )
    params = {name: p.default for name, p in PLAN_PARAMETERS.items()} | PARAMS | {"n": 100, "studies": 2}
    result = run_plan(spec, params)
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith("Quota group screening = Judge: 30 participants, fewer than the 64 per group")
    assert plan_results(result)["warnings"] == list(result.warnings)
    shares = {"question": "screening", "share": {"Judge": 0.7, "Public": 0.3}, "tolerance": 0, "of": 100}
    spec = validate_study({**spec, "quotas": [shares]})
    assert [w.split(":")[0] for w in run_plan(spec, params).warnings] == ["Quota group screening = Public"]


@pytest.mark.django_db(transaction=True)
def test_plan_job_measures_the_headline_tests_size_when_asked(demo_study, api):
    """size_studies > 0: sizes.csv, the result's sizes (per stimulus SD 0, 0.1, 0.3) and progress over all."""
    response = api.post("/api/studies/effort-demo/plans/", PARAMS | {"size_studies": 2}, format="json")
    assert response.status_code == 202, response.content
    run_jobs()
    job = api.get(response.json()["url"]).json()
    assert job["status"] == "succeeded", job["error"]
    assert "sizes.csv" in {f.rsplit("/", 1)[1] for f in job["files"]}
    sizes = job["result"]["sizes"]
    assert {row["stimulus_sd"] for row in sizes} == {0.0, 0.1, 0.3} and {row["n_studies"] for row in sizes} == {2}
    assert {row["model"] for row in sizes} == {"arrests", "income", "moderation"}


GOLDEN_FORMAT1 = Path(__file__).parents[1] / "simulation" / "golden_plan_effort_demo_format1.json"
NO_EFFORT = "plan_study simulates the effort design: pair_distance blocks rating trajectory, aggregate, overall"


@pytest.mark.django_db
def test_the_converted_demo_plans_as_its_format1_file_did(demo_study):
    """The plan of the demo as stored (its conversion: ``study.spec``, what the job reads) is, with the same
    seed and parameters, the plan its format 1 file gave before the plan read format 2 (``run_plan`` at
    commit 26720db: table, stimuli, sizes, true alpha; stimulus copies and size studies on)."""
    golden = json.loads(GOLDEN_FORMAT1.read_text())
    assert demo_study.spec["format"] == 2 and demo_study.format1_spec is not None
    result = json.loads(json.dumps(plan_results(run_plan(demo_study.spec, golden["params"]))))
    assert result == golden["plan"]
    assert result["true_alpha"] == golden["plan"]["true_alpha"] and len(result["sizes"]) > 0


@pytest.mark.django_db(transaction=True)
def test_a_native_format2_effort_study_is_planned_by_the_job(researcher, api, demo_spec):
    """The demo's blocks written as a native format 2 file (no ``page_key``) plan as the conversion does:
    the same pairs drawn, only their sets named by the block keys."""
    from studies.services import stored_file, study_load

    converted, _ = stored_file(demo_spec)
    blocks = [{k: v for k, v in b.items() if k != "page_key"} for b in converted["blocks"]]
    study_load(spec={**converted, "slug": "effort-native", "blocks": blocks}, owner=researcher)
    golden = json.loads(GOLDEN_FORMAT1.read_text())
    response = api.post("/api/studies/effort-native/plans/", golden["params"], format="json")
    assert response.status_code == 202, response.content
    run_jobs()
    job = api.get(response.json()["url"]).json()
    assert job["status"] == "succeeded", job["error"]
    assert {k: v for k, v in job["result"].items() if k != "report_url"} == golden["plan"]


@pytest.mark.django_db
def test_a_study_without_effort_blocks_is_refused_by_the_api_and_planned_by_its_design_check(researcher, api, tmp_path):
    """The bundled disagreement study (agree blocks only): the API's effort plan answers 400 with the reason and
    queues no job; the job, queued anyway, fails with it; the command runs the design check alone (every design
    has one, ``runs.design_check``), with no effort plan."""
    from io import StringIO

    from django.core.management import call_command

    from runs.runners import JobContext, run_plan_job
    from studies.services import study_load

    path = Path(__file__).parents[2] / "studies" / "bundled" / "disagreement_synthetic.json"
    study = study_load(spec=json.loads(path.read_text()), owner=researcher).study
    response = api.post(f"/api/studies/{study.slug}/plans/", PARAMS, format="json")
    assert response.status_code == 400, response.content
    assert NO_EFFORT in response.json()["detail"] and "its task blocks: agree (agree)" in response.json()["detail"]
    assert not Job.objects.exists()
    out = StringIO()
    call_command("plan_study", "--study-file", str(path), "--n", "4", "--replications", "1", stdout=out, stderr=out)
    assert "Design check of disagreement-synthetic: 1 simulated runs of 4 participants" in out.getvalue()
    assert NO_EFFORT not in out.getvalue() and "estimand" not in out.getvalue()
    params = {name: p.default for name, p in PLAN_PARAMETERS.items()} | PARAMS
    job = Job.objects.create(kind=Job.Kind.PLAN, study=study, created_by=researcher, params=params)
    with pytest.raises(ValueError, match=NO_EFFORT):
        run_plan_job(JobContext(job, tmp_path, progress=lambda *a: None, log=lambda *a: None))


@pytest.mark.slow
def test_the_command_plans_a_format1_file_as_its_conversion():
    """``plan_study --study-file`` (default: the bundled format 1 demo) stores the file as its conversion
    first (``stored_file``) and prints the plan its format 1 file gave (the golden table's figures)."""
    from io import StringIO

    from django.core.management import call_command

    golden = json.loads(GOLDEN_FORMAT1.read_text())
    names = ("n", "studies", "seed", "participant_slope_sd", "stimulus_sd", "resamples", "stimulus_copies")
    options = [arg for name in names for arg in (f"--{name.replace('_', '-')}", str(golden["params"][name]))]
    out = StringIO()
    call_command("plan_study", *options, stdout=out, stderr=StringIO())
    printed = out.getvalue()
    for row in golden["plan"]["table"]:
        for column in ("estimand", "ci_width_mean", "se_ratio"):
            assert f"{row[column]:.4f}" in printed, (row["condition"], column)
