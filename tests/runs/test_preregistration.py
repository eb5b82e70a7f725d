"""Preregistration (``manage.py preregister``, ``runs.preregistration``, ``runs.analysis_plan``): the bundle
freezes the study version, the plan, the code version and the requirements with a simulated run, every file
hashed (checked here with hashlib, and by ``--verify`` against changed, missing and extra files); the study
records it once; every later analysis states its deviations from the plan (Willroth & Atherton's fields),
computed from its options, and one that deviates needs a reason before it runs."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from participation.simulate import simulate_participants
from runs import preregistration
from runs.analysis_runs import analysis_run_create
from runs.management.commands.analyze_study import Command as AnalyzeStudy
from runs.models import AnalysisRun, Job, Preregistration
from studies.models import Study
from studies.services import spec_digest, study_load
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db
SLUG = "disagreement-synthetic"
PLAN = {
    "analyses": [{"name": "by role", "by": ["role"]}],
    "n_resamples": 10,  # the plan's, its design check's and the analyses': what is stated, not the intervals
    "seed": 3,
    "sample_size": 24,
    "hypotheses": "H1: people who work in criminal justice disagree less with the AI's labels.",
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def study(researcher, tmp_path, settings):
    settings.REPORTS_DIR = tmp_path / "reports"
    spec = json.loads((ROOT / "studies" / "bundled" / "disagreement_synthetic.json").read_text())
    spec["pools"][0]["subjects"] = spec["pools"][0]["subjects"][:40]
    return study_load(spec=spec, owner=researcher).study


@pytest.fixture(scope="module")
def _computed(tmp_path_factory) -> tuple[dict, Path]:
    """The design checks and simulated runs this module's registrations computed, by their inputs."""
    return {}, tmp_path_factory.mktemp("simulated-runs")


@pytest.fixture
def registered(study, tmp_path, monkeypatch, _computed):
    """The study registered with PLAN by ``manage.py preregister``. Its design check and simulated run are
    functions of the study file, the plan and its seed: the first registration of the module computes them,
    the later ones reuse them (the checks' object, the run's files), everything else done anew."""
    computed, folder = _computed
    check, simulate = preregistration.check_design, preregistration.simulated_run

    def check_once(spec, **options):
        key = ("check", spec_digest(spec), json.dumps(options, sort_keys=True))
        if key not in computed:
            computed[key] = check(spec, **options)
        return computed[key]

    def simulate_once(study, plan, out_dir):
        key = ("run", spec_digest(study.spec), json.dumps(plan.as_dict(), sort_keys=True))
        if key not in computed:
            simulate(study, plan, out_dir)
            computed[key] = shutil.copytree(out_dir, folder / str(len(computed)))
        else:
            shutil.copytree(computed[key], out_dir)

    monkeypatch.setattr(preregistration, "check_design", check_once)
    monkeypatch.setattr(preregistration, "simulated_run", simulate_once)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    call_command("preregister", SLUG, plan=str(plan), out=str(tmp_path / "bundle"), user="alice")
    return tmp_path / "bundle"


@pytest.mark.slow
def test_the_bundle_freezes_study_plan_code_and_requirements_with_a_simulated_run(study, registered):
    manifest = json.loads((registered / "manifest.json").read_text())
    assert set(manifest["files"]) >= {"study.json", "analysis_plan.json", "plan.json", "requirements.txt"}
    for name, digest in manifest["files"].items():  # every file hashed, recomputed here
        assert sha256(registered / name) == digest, name
    files = {str(p.relative_to(registered)) for p in registered.rglob("*") if p.is_file()}
    assert files == set(manifest["files"]) | {"manifest.json"}
    assert spec_digest(json.loads((registered / "study.json").read_text())) == manifest["study"]["spec_digest"]
    assert manifest["study"] | {"spec_digest": ""} == {
        "slug": SLUG,
        "version": 1,
        "title": study.title,
        "spec_digest": "",
    }
    assert (registered / "requirements.txt").read_text() == (ROOT / "requirements.txt").read_text()
    assert manifest["code_version"].startswith(("commit ", "platform ")) and manifest["participants_before"] == 0
    plan = json.loads((registered / "analysis_plan.json").read_text())
    assert plan["analyses"] == PLAN["analyses"] and plan["sample_size"] == 24 and plan["multiple_testing"] == "holm"
    preregr = json.loads((registered / "plan.json").read_text())
    assert preregr["form"]["metadata"]["form_id"] == "OSFprereg_v1"
    assert sorted(preregr["specs"], key=lambda k: int(k.split("_")[1])) == [f"item_{i}" for i in range(1, 26)]
    assert (
        preregr["specs"]["item_4"]["text"] == PLAN["hypotheses"]
        and preregr["specs"]["item_13"]["text"] == "24 participants"
    )
    check = json.loads((registered / "design-check" / "by role.json").read_text())
    assert check["participants"] == 24 and check["by"] == ["role"] and check["estimates"]
    assert preregr["specs"]["item_14"]["text"].startswith("Design check of 'by role' (3 simulated runs of 24")
    # the simulated run: the planned analysis on simulated participants of a copy that was rolled back
    simulated = json.loads((registered / "simulated-run" / "by role" / "results.json").read_text())
    assert simulated["by"] == ["role"] and simulated["sample"]["included"] > 0
    assert list(Study.objects.values_list("slug", flat=True)) == [SLUG]
    registration = Preregistration.objects.get()
    assert registration.study == study and registration.registered_by.username == "alice"
    assert registration.manifest_sha256 == sha256(registered / "manifest.json")


@pytest.mark.slow
def test_verify_finds_changed_missing_and_extra_files(registered):
    call_command("preregister", verify=str(registered))
    (registered / "extra.txt").write_text("added later")
    (registered / "requirements.txt").unlink()
    plan = registered / "analysis_plan.json"
    plan.write_text(plan.read_text().replace('"seed": 3', '"seed": 4'))
    with pytest.raises(CommandError) as caught:
        call_command("preregister", verify=str(registered))
    message = str(caught.value)
    assert "requirements.txt: missing" in message and "extra.txt: not in the manifest" in message
    assert "analysis_plan.json: changed" in message


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"seeds": 3}, "plan: unknown field(s) seeds"),
        ({"n_resamples": "many"}, "plan.n_resamples: must be int"),
        ({"analyses": [{"name": "x", "by": ["colour"]}]}, "plan.analyses[0].by: colour not a question of the study"),
        ({"multiple_testing": "bonferroni"}, "plan.multiple_testing: one of holm, bh, none"),
        ({"sample_size": 0}, "plan.sample_size: a positive whole number"),
    ],
)
def test_a_bad_plan_is_refused_by_its_field_and_nothing_is_registered(study, tmp_path, plan, message):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        call_command("preregister", SLUG, plan=str(path), out=str(tmp_path / "bundle"))
    assert not Preregistration.objects.exists()


@pytest.mark.slow
def test_a_registration_is_never_replaced(registered, tmp_path):
    with pytest.raises(CommandError, match="a registration is never replaced"):
        call_command("preregister", SLUG, out=str(tmp_path / "again"))
    assert Preregistration.objects.count() == 1


def test_the_plan_defaults_are_the_analysis_commands(study, tmp_path, monkeypatch):
    """The plan's file is written before the design checks and the simulated run (the tests above check those):
    the registration is stopped at the first check."""

    class Written(Exception):
        pass

    def stop(*args, **kwargs):
        raise Written

    monkeypatch.setattr(preregistration, "check_design", stop)
    with pytest.raises(Written):
        call_command("preregister", SLUG, out=str(tmp_path / "bundle"), by=["role"])
    plan = json.loads((tmp_path / "bundle" / "analysis_plan.json").read_text())
    defaults = vars(AnalyzeStudy().create_parser("manage.py", "analyze_study").parse_args([SLUG]))
    for name, option in {
        "seed": "seed",
        "n_resamples": "resamples",
        "multiple_testing": "multiple_testing",
        "min_group_size": "min_group_size",
        "min_subject_group": "min_subject_group",
        "pool_small": "pool_small",
        "include_pilot": "include_pilot",
        "include_incomplete": "include_incomplete",
    }.items():
        assert plan[name] == defaults[option], name
    assert plan["analyses"] == [{"name": "primary", "by": ["role"]}] and plan["sample_size"] is None


def run(tmp_path, name: str, **options) -> AnalysisRun:
    options = {"seed": 3, "n_resamples": PLAN["n_resamples"], "by": ["role"], **options}
    return analysis_run_create(slug=SLUG, out_dir=tmp_path / name, **options)


@pytest.mark.slow
def test_an_analysis_that_follows_the_plan_says_so(registered, tmp_path):
    simulate_participants(SLUG, n=24, seed=1, decline_rate=0)
    results = run(tmp_path, "planned").results
    assert results["sample"]["included"] == 24
    assert results["deviations"]["follows_plan"] is True and results["deviations"]["deviations"] == []
    assert results["deviations"]["planned_analysis"] == "by role"
    html = (tmp_path / "planned" / "report.html").read_text()
    assert "This analysis follows the plan the study was preregistered on" in html


@pytest.mark.slow
def test_deviations_are_computed_and_need_a_reason_before_the_analysis_runs(registered, tmp_path):
    simulate_participants(SLUG, n=20, seed=1, decline_rate=0)
    with pytest.raises(ValueError, match="deviates from the plan .*seed 5; planned 3.*say why"):
        run(tmp_path, "refused", seed=5)
    assert not AnalysisRun.objects.exists() and not (tmp_path / "refused").exists()
    why = "the seed was mistyped in the first run"
    deviations = run(tmp_path, "reseeded", seed=5, deviation_reason=why).results["deviations"]
    assert deviations["follows_plan"] is False and deviations["planned_analysis"] == "by role"
    listed = {d["type"]: d for d in deviations["deviations"]}
    assert set(listed) == {"computation", "sample size"}
    assert listed["computation"]["what"] == "seed 5; planned 3"
    assert listed["sample size"]["what"] == "20 participants analysed; 24 planned"
    assert all(d["why"] == why and d["when"] and d["impact"] for d in deviations["deviations"])
    pooled = run(tmp_path, "pooled", by=[], multiple_testing="bh", deviation_reason="exploring").results["deviations"]
    types = [d["type"] for d in pooled["deviations"]]
    assert pooled["planned_analysis"] == "" and types[0] == "exploratory analysis" and "inference" in types
    assert "Deviations from the preregistered plan" in (tmp_path / "pooled" / "report.html").read_text()


@pytest.mark.slow
def test_a_new_study_version_is_a_deviation_and_an_unregistered_study_has_none(registered, study, tmp_path):
    simulate_participants(SLUG, n=24, seed=1, decline_rate=0)
    spec = {**study.spec, "title": "Changed after the registration"}
    study_load(spec=spec, owner=study.owner)  # participants have arrived: a new version
    simulate_participants(SLUG, n=2, seed=2, decline_rate=0)
    with pytest.raises(ValueError, match="study version 2 analysed; version 1 was registered"):
        run(tmp_path, "v2")
    Preregistration.objects.all().delete()
    assert run(tmp_path, "unregistered").results["deviations"] is None


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_dashboard_and_the_api_register_a_plan_once_as_a_job(study, researcher, other_researcher, client, tmp_path):
    import io
    import zipfile

    from rest_framework.test import APIClient

    from studies.collaborators import collaborator_add
    from tests.conftest import run_jobs

    collaborator_add(slug=SLUG, by=researcher, name=other_researcher.username, role="viewer")
    client.force_login(other_researcher)  # a viewer sees the page and registers nothing
    assert client.get(f"/researcher/studies/{SLUG}/preregistration/").status_code == 200
    assert client.post(f"/researcher/studies/{SLUG}/preregistration/", {"by": ["role"]}).status_code == 403
    viewer = APIClient()
    viewer.force_authenticate(other_researcher)
    assert viewer.post(f"/api/studies/{SLUG}/preregistration/", {"by": []}, format="json").status_code == 403
    assert not Job.objects.exists()
    client.force_login(researcher)
    page = client.get(f"/researcher/studies/{SLUG}/preregistration/")
    assert page.status_code == 200 and b"Register the analysis plan" in page.content
    bad = client.post(f"/researcher/studies/{SLUG}/preregistration/", {"by": ["colour"]})
    assert bad.status_code == 400 and not Preregistration.objects.exists()
    hypothesis = "H1: <b>criminal-justice</b> workers disagree less"
    response = client.post(
        f"/researcher/studies/{SLUG}/preregistration/",
        {"by": ["role"], "hypotheses": hypothesis, "sample_size": "24", "n_resamples": "100", "seed": "2"},
    )
    assert response.status_code == 302 and "/researcher/jobs/" in response["Location"]
    assert Job.objects.get().kind == "preregistration"
    run_jobs()
    job = Job.objects.get()
    assert job.status == "succeeded", job.error
    registration = Preregistration.objects.get()
    assert registration.plan["analyses"] == [{"name": "primary", "by": ["role"]}]
    assert registration.plan["sample_size"] == 24 and registration.registered_by == researcher
    page = client.get(f"/researcher/studies/{SLUG}/preregistration/").content.decode()
    assert registration.manifest_sha256 in page and "&lt;b&gt;criminal-justice&lt;/b&gt;" in page
    bundle = client.get(f"/researcher/studies/{SLUG}/preregistration/bundle.zip")
    names = zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))).namelist()
    assert {"manifest.json", "study.json", "plan.json", "analysis_plan.json", "requirements.txt"} <= set(names)
    # the same through the API; a second registration is refused (409), a stranger sees nothing (404)
    api = APIClient()
    api.force_authenticate(researcher)
    body = api.get(f"/api/studies/{SLUG}/preregistration/").json()
    assert body["manifest_sha256"] == registration.manifest_sha256 and body["study_version"] == 1
    assert api.post(f"/api/studies/{SLUG}/preregistration/", {"by": []}, format="json").status_code == 409
    from studies.collaborators import collaborator_remove

    collaborator_remove(slug=SLUG, by=researcher, user_id=other_researcher.pk)
    assert viewer.get(f"/api/studies/{SLUG}/preregistration/").status_code == 404  # no longer shared: a stranger
    client.force_login(other_researcher)
    assert client.get(f"/researcher/studies/{SLUG}/preregistration/bundle.zip").status_code == 404
    # the analysis form asks why an analysis deviates, before the job is queued
    client.force_login(researcher)
    form = client.get(f"/researcher/studies/{SLUG}/start/").content.decode()
    assert "Why this analysis deviates from the registered plan" in form
    refused = client.post(
        f"/researcher/studies/{SLUG}/start/analysis/", {"seed": "9", "n_resamples": "100", "by": ["role"]}
    )
    assert refused.status_code == 400 and "say why" in refused.content.decode()
    assert Job.objects.count() == 1


@pytest.mark.slow
def test_an_audit_of_a_registered_study_says_it_is_exploratory(registered, study, tmp_path):
    import pandas as pd

    from runs.audit_parameters import AuditParameters
    from runs.audit_runs import audit_run_create

    subjects = pd.DataFrame(
        [
            {"id": s["id"], "race": s["groups"]["race"], "score_ai": s["models"]["ai"]["score"]}
            for s in study.spec["pools"][0]["subjects"]
        ]
    )
    path = tmp_path / "subjects.csv"
    subjects.to_csv(path, index=False)
    parameters = AuditParameters(groups=("race",), n_resamples=5)  # its deviations are checked
    results = audit_run_create(slug=SLUG, subjects_file=path, out_dir=tmp_path / "audit", parameters=parameters).results
    (deviation,) = results["deviations"]["deviations"]
    assert deviation["type"] == "exploratory analysis" and results["deviations"]["follows_plan"] is False
    assert "Deviations from the preregistered plan" in (tmp_path / "audit" / "report.html").read_text()
    # a differential-parity run of the registered study is exploratory too
    from runs.relative_fairness import write_study_dp_report

    simulate_participants(SLUG, n=12, seed=1, decline_rate=0)
    write_study_dp_report(SLUG, tmp_path / "dp")
    dp = json.loads((tmp_path / "dp" / "results.json").read_text())["deviations"]
    assert dp["deviations"][0]["what"].startswith("a differential-parity run, not an analysis")
    Preregistration.objects.all().delete()
    again = audit_run_create(slug=SLUG, subjects_file=path, out_dir=tmp_path / "again", parameters=parameters)
    assert again.results["deviations"] is None
