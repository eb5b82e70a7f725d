"""The design check of any study (``plan_study --study-file``, ``build_study``, the web builder's "Check the
design"): every task type's block gets a verdict; the builder's defaults on a CSV prepared from ProPublica's
COMPAS file (100 subjects, the choice template's pairs, 20 per participant, 150 participants, 4 stakeholder
roles) make per-group Bradley-Terry strengths fail, and the builder says so with the numbers that would work;
a design that works gets no warning; plan_study runs on every bundled study; the web builder's check is a job."""

import json
import math
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.test import Client

from runs.design_check import IDENTIFIED_SHARE, SEARCH_FACTORS, check_design, planned_participants
from runs.models import Job
from studies.builder import build_study
from studies.services import stored_file
from tasks import BLOCK_TASKS
from tests.conftest import run_jobs
from tests.studies.test_builder_features import FEATURES, built, compas_csv

BUNDLED = sorted((Path(__file__).parents[2] / "studies" / "bundled").glob("*.json"))
TEMPLATES = {task.builder_template: task.name for task in BLOCK_TASKS.values() if task.builder_template}
NOT_ESTIMABLE = "per-group strengths of block 'choices' will not be estimable for 4 of the 4 groups"


def compas_choice(tmp_path: Path, subjects: int, per_participant: int = 20) -> dict:
    """The builder's choice study on the first ``subjects`` COMPAS defendants, ``per_participant`` pairs each."""
    spec = built(compas_csv(tmp_path, n=subjects), feature_columns=FEATURES, per_participant=per_participant)
    return stored_file(spec)[0]


@pytest.mark.slow
def test_every_task_types_block_gets_a_verdict(tmp_path):
    """Each builder template's study and each bundled study, simulated with a few participants: every task
    block has a verdict row (an estimate's share identified, or its task type's reason for no analysis), and
    together they cover every registered task type."""
    path = compas_csv(tmp_path, n=24)
    (tmp_path / "models").mkdir()
    models = compas_csv(tmp_path / "models", n=160)  # the tradeoff template: an outcome and three models' labels
    table = pd.read_csv(models)
    table["strict"] = (table["ai_score"] > 0.3).astype(int)
    table["lenient"] = (table["ai_score"] > 0.7).astype(int)
    table.to_csv(models, index=False)
    specs = [stored_file(json.loads(p.read_text()))[0] for p in BUNDLED]
    for template in TEMPLATES:
        options = {"label_column": "ai_label"} if template == "disagreement" else {"score_column": "ai_score"}
        if template == "tradeoff":
            options = {
                "label_column": "ai_label",
                "outcome_column": "two_year_recid",
                "model_label_columns": ["strict"],
            }
        per = 3 if template == "feature_fairness" else 6  # its items are the 4 feature columns
        spec = build_study(
            template,
            models if template == "tradeoff" else path,
            "id",
            group_columns=["race"],
            feature_columns=FEATURES,
            per_participant=per,
            **options,
        )
        specs.append(stored_file(spec)[0])
    covered = set()
    for spec in specs:
        check = check_design(spec, participants=12, replications=1, advise=False)
        for block in (b for b in spec["blocks"] if b["type"] == "task"):
            rows = [r for r in check.rows if r.block == block["key"]]
            assert rows, (spec["slug"], block["key"])
            assert all(0 <= r.identified <= 1 for r in rows)
            task = BLOCK_TASKS[block["task"]]
            if task.analysis is None:
                assert [r.reason for r in rows] == [task.no_analysis]
            else:
                assert {r.table for r in rows} == {
                    name for name, t in task.report_tables.items() if t.estimate or t.headline
                }
            covered.add(block["task"])
        assert {b["block"] for b in check.blocks} == {b["key"] for b in spec["blocks"] if b["type"] == "task"}
    assert covered == set(BLOCK_TASKS)


@pytest.mark.slow
def test_the_compas_defaults_warn_that_per_group_strengths_fail(tmp_path):
    """The issue's reference case: with 150 participants in the 4 stakeholder roles, each group's choices leave
    some subject never chosen or always chosen (Bradley-Terry: "the maximum likelihood strengths are
    infinite") in the simulated runs, while all participants together identify them."""
    spec = compas_choice(tmp_path, 100)
    check = check_design(spec, participants=150, by=["role"], replications=2, advise=False)
    strengths = {r.rater_group: r for r in check.rows if r.table == "strengths"}
    assert len(strengths) == 5 and strengths["all participants"].identified == 1
    groups = [r for g, r in strengths.items() if g != "all participants"]
    assert all(r.identified < IDENTIFIED_SHARE for r in groups)
    assert any("the maximum likelihood strengths are infinite" in r.reason for r in groups)
    assert all(r.identified == 1 for r in check.rows if r.table in ("utility_weights", "borda"))
    [warning] = check.warnings
    assert warning.startswith(f"with 150 participants in 4 groups (role), {NOT_ESTIMABLE} (")


@pytest.mark.slow
def test_build_study_warns_with_the_sizes_that_work(tmp_path):
    """``build_study`` runs the check on the file it wrote (``--participants``, split by the stakeholder role).
    30 COMPAS defendants and 60 participants: per-group strengths fail, and the warning gives the participants
    at which a run grown by more participants identified them (n*) and the subjects that give 60 participants
    as many choices per pair and group (30 x 60 / n*, computed, not typed)."""
    path = compas_csv(tmp_path, n=30)
    common = ["--template", "choice", "--subjects", str(path), "--id-column", "id", "--score-column", "ai_score"]
    common += ["--feature-columns", *FEATURES, "--per-participant", "20", "--out", str(tmp_path / "s.json")]
    out = StringIO()
    call_command("build_study", *common, "--participants", "60", stdout=out)
    printed = out.getvalue()
    assert "design check: 3 simulated runs of 60 participants in 4 rater groups (role)" in printed
    warning = next(line for line in printed.splitlines() if line.startswith("Warning: "))
    assert warning.startswith(f"Warning: with 60 participants in 4 groups (role), {NOT_ESTIMABLE} (")
    fix = warning.rsplit(": use at most ", 1)[1].split()
    subjects, needed = int(fix[0]), int(fix[3])
    assert fix[1:3] == ["subjects", "or"] and fix[4] == "participants"
    assert needed in {math.ceil(60 * f) for f in SEARCH_FACTORS} and subjects == 30 * 60 // needed
    out = StringIO()
    call_command("build_study", *common, "--no-design-check", stdout=out)
    assert "design check" not in out.getvalue()


def test_a_design_that_works_gets_no_warning(tmp_path):
    """10 COMPAS defendants (all their 16 pairs to every participant) and 75 participants: every group's strengths
    are identified in every run, so nothing is warned; the intervals are finite and all participants' are
    narrower than one group's. (20 defendants, 20 of their pairs each, and 150 participants work too, at twice the
    simulation's cost.)"""
    check = check_design(compas_choice(tmp_path, 10, per_participant=16), participants=75, by=["role"], replications=2)
    assert check.warnings == () and check.advice == {}
    strengths = {r.rater_group: r for r in check.rows if r.table == "strengths"}
    assert all(r.identified == 1 for r in strengths.values())
    one_group = strengths["Member of the public"].ci_width
    assert 0 < strengths["all participants"].ci_width < one_group


# the effort demo's plan simulates its effort design too: 2 CPU-s (slow)
@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.stem == "effort_demo" else p for p in BUNDLED],
    ids=lambda p: p.stem,
)
def test_plan_study_runs_on_every_bundled_study(path):
    """Text and JSON; the effort demo also gets its effort plan. Planned participants: recruitment.target,
    else --n."""
    small = ["--study-file", str(path), "--n", "8", "--studies", "1", "--resamples", "100", "--replications", "1"]
    out = StringIO()
    call_command("plan_study", *small, "--json", stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue())
    check = result["design_check"]
    assert check["participants"] == planned_participants(json.loads(path.read_text()), 8) == 8
    assert check["replications"] == 1 and check["estimates"]
    assert (result["effort_plan"] is not None) == (path.stem == "effort_demo")
    out = StringIO()
    call_command("plan_study", *small, stdout=out, stderr=StringIO())
    assert "Design check of " in out.getvalue() and "1 simulated runs of 8 participants" in out.getvalue()


def test_the_recruitment_target_is_the_planned_size():
    assert planned_participants({"recruitment": {"target": 240}}, 150) == 240
    assert planned_participants({}, 150) == 150


def test_more_participants_than_the_caps_allow_is_refused():
    spec = stored_file(json.loads(BUNDLED[0].read_text()))[0]
    spec = stored_file({**spec, "conditions": [{**c, "cap": 5} for c in spec["conditions"]]})[0]
    allowed = 5 * len(spec["conditions"])
    with pytest.raises(ValueError, match=f"{allowed + 1} participants is more than the conditions' caps allow"):
        check_design(spec, participants=allowed + 1, replications=1)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_web_builder_checks_the_design_in_a_job(researcher, tmp_path):
    """ "Check the design" on the builder's preview queues a design-check job (not run in the request); the
    worker writes its warnings to the job's log and a report; a bad number goes back to the preview."""
    from tests.studies.test_builder_views import form

    client = Client()
    client.force_login(researcher)
    response = client.post("/researcher/build/", form(per_participant="4"))
    assert response.status_code == 302
    preview = response["Location"]
    assert "Check the design" in client.get(preview).content.decode()
    digest = preview.rstrip("/").rsplit("/", 1)[1]
    response = client.post(f"/researcher/build/{digest}/design-check/", {"participants": "2"})
    assert response.status_code == 302 and response["Location"] == preview and not Job.objects.exists()
    response = client.post(f"/researcher/build/{digest}/design-check/", {"participants": "12"})
    job = Job.objects.get()
    assert response["Location"] == f"/researcher/jobs/{job.pk}/"
    assert job.kind == Job.Kind.DESIGN_CHECK and job.status == Job.Status.QUEUED
    assert job.params == {"digest": digest, "participants": 12, "by": ["role"], "replications": 3}
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["participants"] == 12 and job.result["rater_groups"] == 4
    for warning in job.result["warnings"]:
        assert warning in job.log
    page = client.get(f"/researcher/jobs/{job.pk}/").content.decode()
    assert "Open the report" in page
    report = client.get(job.result["report_url"])
    assert report.status_code == 200 and b"Identified estimates and interval widths" in b"".join(report)
