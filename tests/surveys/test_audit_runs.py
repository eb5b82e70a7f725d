from io import StringIO

import pytest
from django.core.management import call_command

from runs.models import AuditRun, Calibration
from tests.runs.audit_inputs import demo_subjects_csv
from tests.surveys.helpers import shared_demo_study

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def analysed_study(django_db_setup, django_db_blocker, tmp_path_factory):
    """The demo study with 16 simulated participants, analysed once (its Likert calibration v1, which the audits
    use), and the subjects file for condition arrests: the audits below share them (about 15 CPU seconds)."""
    folder = tmp_path_factory.mktemp("audited")
    with shared_demo_study(django_db_blocker, folder, n=16, seed=4) as shared:
        demo_subjects_csv(folder / "subjects.csv")
        call_command("analyze_study", "effort-demo", out=str(folder / "analysis"), resamples=20, stdout=StringIO())
        yield shared


@pytest.fixture
def demo_subjects(analysed_study):
    return analysed_study.folder / "subjects.csv"


@pytest.mark.slow
def test_boundary_alpha_is_explained_in_the_command_output_and_the_report(demo_subjects, tmp_path, monkeypatch):
    """A disagreement alpha of 0.00 [0.00, 0.87] (as the issue's demo audit printed; here the real estimate
    moved onto the boundary): the command and the report say that the estimate is at the boundary of
    [0, 1], what alpha = 0 means and that the CI is wide; an interior estimate gets no such note."""
    import dataclasses

    import fairness.model_audit
    from fairness.calibration import boundary_note

    real = fairness.model_audit.calibrate_from_disagreement
    monkeypatch.setattr(
        fairness.model_audit,
        "calibrate_from_disagreement",
        lambda *a, **k: dataclasses.replace(real(*a, **k), alpha=0.0, ci=(0.0, 0.87)),
    )
    out = StringIO()
    call_command(
        "audit_models",
        study="effort-demo",
        subjects=str(demo_subjects),
        condition="arrests",
        out=str(tmp_path / "audit"),
        resamples=2,  # the notes and estimands are checked, the interval is the stand-in's
        groups=["race"],  # the subjects' other group columns would only add rows of the same kinds
        stdout=out,
    )
    cal = AuditRun.objects.get().results["disagreement_calibration"]
    assert cal["alpha"] == 0 and cal["ci"][1] - cal["ci"][0] >= 0.5
    html = (tmp_path / "audit" / "report.html").read_text()
    for text in (out.getvalue(), html, cal["boundary_note"]):
        assert "is at the boundary of [0, 1]" in text and "effort carries no weight" in text
        assert "[0.00, 0.87] spans 87% of the range: the feedback barely determines alpha" in text
    estimand = f"for these {cal['n_subjects']} subjects (participants resampled; other subjects not represented)"
    assert cal["estimand"] == estimand and f"({estimand})" in out.getvalue()  # issue 23 item 8
    assert f"Estimand: alpha {estimand}." in html
    assert "(for these 12 stimulus pairs (participants resampled" in html  # the Likert calibration used
    assert Calibration.objects.get(kind="disagreement").estimand_text == estimand
    assert boundary_note(0.4, (0.0, 0.87)) == ""
    assert "(alpha = 1: the distance uses effort alone" in boundary_note(1.0, (0.9, 1.0))


@pytest.mark.slow
def test_audit_command_writes_report_and_disagreement_calibration(demo_subjects, analysed_study, tmp_path, client):
    call_command(
        "audit_models",
        study="effort-demo",
        subjects=str(demo_subjects),
        condition="arrests",
        out=str(tmp_path / "audit"),
        resamples=2,  # what is stored and shown, not the intervals' width
        groups=["race"],  # the subjects' other group columns would only add rows of the same kinds
    )
    run = AuditRun.objects.get()
    assert {r["model"] for r in run.results["eaif"]} == {
        "logistic_regression",
        "random_forest",
        "gradient_boosting",
        "study_ai",
    }
    assert {r["weights"] for r in run.results["eaif"]} == {"equal", "human (likert v1)", "human (disagreement)"}
    assert run.results["notions"] and run.results["disagreement_calibration"] is not None
    assert Calibration.objects.filter(kind="disagreement", condition__key="arrests").count() == 1
    html = (tmp_path / "audit" / "report.html").read_text()
    assert "Effort-aware individual fairness" in html and "cdn" not in html.lower()
    client.force_login(analysed_study.owner)
    dashboard = client.get("/researcher/studies/effort-demo/").content.decode()
    assert "/researcher/studies/effort-demo/audit/report.html" in dashboard
    assert "(condition arrests," in dashboard and "<td>disagreement</td><td>arrests</td>" in dashboard
    runs = client.get("/researcher/studies/effort-demo/runs/").content.decode()
    assert "<td>v1</td><td>arrests</td>" in runs and "effort-demo v1 / arrests" not in runs
    assert "condition arrests, likert calibration v1" in html
    assert client.get("/researcher/studies/effort-demo/audit/report.html").status_code == 200


@pytest.mark.slow
def test_audit_command_errors_are_specific(demo_subjects, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,x_1,x_2\n1,2,3\n")
    with pytest.raises(Exception, match="at least 3 effort columns"):
        call_command("audit_models", study="effort-demo", subjects=str(bad), out=str(tmp_path / "o"))
    with pytest.raises(Exception, match="unknown condition"):
        call_command(
            "audit_models", study="effort-demo", subjects=str(demo_subjects), condition="nope", out=str(tmp_path / "o")
        )


def test_a_format2_study_is_audited_with_its_conditions_effort_feature(db, demo_spec, tmp_path, settings):
    """The demo converted to format 2 keeps its conditions' ``desirable`` and ``aggregate_scale``, which the
    audit scores effort with (the same EaIF as the format 1 demo's, without a calibration: equal weights);
    a format 2 condition that does not say whether its feature is desirable is refused with the reason."""
    from runs.audit_parameters import AuditParameters
    from runs.audit_runs import AuditError, audit_run_create
    from studies.format1 import format1_to_format2
    from studies.services import study_load
    from studies.study_file import validate_study

    settings.REPORTS_DIR = tmp_path / "reports"
    subjects = demo_subjects_csv(tmp_path / "subjects.csv", "income")
    results = {}
    for fmt in (1, 2):  # slugs apart from the module's analysed study: these have no calibration
        spec = demo_spec | {"slug": "effort-demo-1"}
        spec = spec if fmt == 1 else format1_to_format2(validate_study(demo_spec)) | {"slug": "effort-demo-2"}
        study_load(spec=spec)
        run = audit_run_create(
            slug=spec["slug"],
            subjects_file=subjects,
            out_dir=tmp_path / f"audit{fmt}",
            parameters=AuditParameters(condition="income", n_resamples=2, groups=("race",)),  # equal EaIF, no interval
        )
        results[fmt] = run.results
    assert results[1]["eaif"] == results[2]["eaif"] and results[1]["settings"] == results[2]["settings"]
    assert (results[2]["settings"]["desirable"], results[2]["settings"]["scale"]) == (True, 20.0)
    spec = format1_to_format2(validate_study(demo_spec)) | {"slug": "effort-demo-3"}
    for condition in spec["conditions"]:
        del condition["desirable"], condition["aggregate_scale"]
    study_load(spec=spec)
    with pytest.raises(AuditError, match="condition 'income' does not say whether more of its effort feature is good"):
        audit_run_create(
            slug="effort-demo-3",
            subjects_file=subjects,
            out_dir=tmp_path / "audit3",
            parameters=AuditParameters(condition="income"),
        )
