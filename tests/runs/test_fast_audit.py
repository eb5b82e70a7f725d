"""The audit path, once: one parameter object whose defaults are the command's, the API's and the form's; one
export of each study per job (the same numbers as exporting on every read, the old path); progress by stage with
counts and a time estimate in the command's output and the job's log; the job page's started time and attempts
while the job runs; the run stores the results the report wrote."""

import json
import os
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from research import export
from runs import study_exports
from runs.audit_parameters import DEFAULTS, AuditParameters
from runs.audit_runs import STAGES, audit_run_create
from runs.stage_progress import StageProgress
from tests.runs.test_sensitivity import _machine_speed
from tests.surveys.test_report_browser import open_as_alice

OPTIONS = {"metric_from": "people-alike", "utility_from": "people-choose:choices", "features_from": "people-fair"}


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_gives_the_stage_its_count_the_whole_and_the_time_left():
    clock, reports, lines = Clock(), [], []
    progress = StageProgress(
        report=lambda fraction, message: reports.append((round(fraction, 4), message)),
        stages=("export", "metric bootstrap", "report"),
        log=lines.append,
        clock=clock,
    )
    progress("export", 0, 1)
    clock.now = 3.0
    progress("export", 1, 1)
    progress("metric bootstrap", 0, 500)
    clock.now = 3.2
    progress("metric bootstrap", 10, 500)  # within 0.5 s of the last report: not reported
    clock.now = 5.4
    progress("metric bootstrap", 120, 500)  # 2.4 s for 120: 380 more take 7.6 s
    clock.now = 9.0
    progress("metric bootstrap", 500, 500)
    progress("unplanned", 1, 4)  # its own share
    assert reports == [
        (0.0, "export 0/1"),
        (round(1 / 3, 4), "export 1/1"),
        (round(1 / 3, 4), "metric bootstrap 0/500"),
        (round((1 + 120 / 500) / 3, 4), "metric bootstrap 120/500, about 8 s left"),
        (round(2 / 3, 4), "metric bootstrap 500/500"),
        (0.25, "unplanned 1/4"),
    ]
    assert lines == ["export: 1 in 3.0 s", "metric bootstrap: 500 in 6.0 s"]
    assert progress.durations() == {"export": 3.0, "metric bootstrap": 6.0, "unplanned": 0.0}


def test_the_parameters_defaults_are_the_commands_the_apis_and_the_forms(db, demo_study, researcher, client):
    from runs.management.commands.audit_models import Command
    from runs.serializers import AuditRequestSerializer

    parser = Command().create_parser("manage.py", "audit_models")
    given = vars(parser.parse_args(["--study", "s", "--subjects", "f.csv"]))
    assert AuditParameters.from_request({**given, "n_resamples": given["resamples"]}) == DEFAULTS
    fields = AuditRequestSerializer().fields
    assert {name: fields[name].default for name in ("shown_model", "lipschitz", "surrogate")} == {
        "shown_model": DEFAULTS.shown_model,
        "lipschitz": DEFAULTS.lipschitz,
        "surrogate": DEFAULTS.surrogate,
    }
    client.force_login(researcher)
    page = client.get("/researcher/studies/effort-demo/start/").content.decode()
    assert f'id="audit-shown" name="shown_model" value="{DEFAULTS.shown_model}"' in page
    assert f'id="audit-lipschitz" name="lipschitz" step="any" min="0" value="{DEFAULTS.lipschitz}"' in page
    assert f'<option value="{DEFAULTS.surrogate}" selected>' in page
    # a job queued with none of the options (or before they existed) runs with the defaults
    assert AuditParameters.from_request({"shown_model": "", "by": [], "calibration": None}) == DEFAULTS


@pytest.mark.slow
@pytest.mark.django_db
def test_one_export_per_study_gives_the_numbers_of_exporting_on_every_read(sources, tmp_path, monkeypatch):
    """Participants of a source flagged by a server-measured rule (the sensitivity's modes then differ): the
    audit with the job's snapshot and with an export on every read (the old path) store the same results; the
    snapshot builds each study's export once per sample and exclusion mode, fewer than the old path."""
    _machine_speed("people-alike", 4)
    built: list[tuple] = []

    def counted(slug, **options):
        built.append((slug, str(options.get("participants")), options.get("quality_exclusion", "study")))
        return export.export_tables(slug, **options)

    monkeypatch.setattr(study_exports, "export_tables", counted)
    read_text = Path.read_text

    def not_results(path, *args, **kwargs):
        assert path.name != "results.json", "the run reads its own results.json back"
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", not_results)
    parameters = AuditParameters(n_resamples=2, seed=4, lipschitz=0.3, **OPTIONS)  # equal numbers: any count
    run = audit_run_create(slug="effort-demo", subjects_file=sources, out_dir=tmp_path / "once", parameters=parameters)
    monkeypatch.setattr(Path, "read_text", read_text)
    once = list(built)
    assert len(set(once)) == len(once)  # no export built twice
    assert {slug for slug, _, _ in once} == {"effort-demo", "people-alike", "people-choose", "people-fair"}
    assert {mode for slug, _, mode in once if slug == "people-alike"} >= {"study", "flagged"}
    assert run.results["sensitivity"]["n_flagged"] >= 4
    # the run stores what the report wrote, without reading it back
    assert run.results == json.loads((tmp_path / "once" / "results.json").read_text())

    built.clear()

    def every_read(self, slug, *, completed=False, quality_exclusion="study", include_pilot=False):
        participants = study_exports.Q(status="completed", pilot=False) if completed else None
        return counted(
            slug,
            include_pilot=include_pilot and not completed,
            participants=participants,
            quality_exclusion=quality_exclusion,
        )

    monkeypatch.setattr(study_exports.StudyExports, "tables", every_read)
    again = audit_run_create(
        slug="effort-demo", subjects_file=sources, out_dir=tmp_path / "again", parameters=parameters
    )
    assert len(built) > len(once)
    assert again.results == run.results


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)  # the job worker commits
def test_progress_names_every_stage_in_the_command_and_the_job_log(sources, researcher, demo_study, monkeypatch):
    """Stages are named whatever the counts: the command's 3 resamples, and the job's 6 refits of the human
    metric capped at MAX_METRIC_RESAMPLES (here 2, so that the cap is seen without its 200 refits)."""
    from django.core.files import File

    from runs import human_sources
    from runs.models import Job
    from runs.services import job_create
    from tests.conftest import run_jobs

    out = StringIO()
    call_command(
        "audit_models",
        study="effort-demo",
        subjects=str(sources),
        out=str(Path(sources).parent / "audit"),
        resamples=3,
        stdout=out,
        **OPTIONS,
    )
    lines = [line for line in out.getvalue().splitlines() if line.startswith("  [")]
    shown = [line.split("] ", 1)[1] for line in lines]
    stages = [next((stage for stage in STAGES if message.startswith(f"{stage} ")), None) for message in shown]
    assert None not in stages and list(dict.fromkeys(stages)) == list(STAGES)  # each stage, in the order planned
    assert "human metric bootstrap 3/3" in shown  # the metric's refits, counted
    assert lines[-1] == "  [100%] report 1/1"
    with sources.open("rb") as fh:
        job = job_create(
            kind=Job.Kind.AUDIT,
            user=researcher,
            study=demo_study,
            params={**OPTIONS, "lipschitz": 1.0, "surrogate": "linear", "n_resamples": 6},
            uploads={"subjects": File(fh, name="subjects.csv")},
        )
    monkeypatch.setattr(human_sources, "MAX_METRIC_RESAMPLES", 2)  # the job's process is forked from this one
    run_jobs()
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    logged = [line.split(" ", 1)[1] for line in job.log.splitlines()]
    assert [line.split(":")[0] for line in logged if " in " in line and line.endswith(" s")] == list(STAGES)
    assert "human metric bootstrap: 2 in " in job.log  # MAX_METRIC_RESAMPLES of the job's 6


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_job_page_shows_the_started_time_attempts_and_progress_while_running(browser, live_server, researcher):  # noqa: F811
    """The page opened while the job is queued follows it: once a worker starts it, the started time and the
    attempt count, then the stage's progress with its time left (``JOB_SCREENSHOTS=DIR`` keeps screenshots)."""
    from runs.models import Job
    from runs.services import job_progress, job_start

    job = Job.objects.create(kind=Job.Kind.PLAN, created_by=researcher, params={"n_per_condition": 10})
    shots = os.environ.get("JOB_SCREENSHOTS")
    for width in (1280, 390):
        Job.objects.filter(pk=job.pk).update(status=Job.Status.QUEUED, started_at=None, attempts=0)
        page = browser.new_page(viewport={"width": width, "height": 900})
        open_as_alice(page, live_server, f"/researcher/jobs/{job.pk}/")
        assert page.locator("#job-attempts").inner_text().startswith("0")
        job_start(job_id=job.pk)
        page.locator("#job-attempts", has_text=re.compile(r"^1 ")).wait_for(timeout=15_000)  # reloaded when started
        job.refresh_from_db()
        assert page.locator("#job-status").inner_text() == "running"
        started = page.locator("dt:text-is('Started') + dd").inner_text()
        assert started != "-" and started[:4] == str(job.started_at.year)
        job_progress(job_id=job.pk, fraction=0.4, message="human metric bootstrap 120/500, about 8 s left")
        page.locator("#job-message", has_text="120/500, about 8 s left").wait_for(timeout=15_000)
        assert page.locator("#job-progress").evaluate("bar => bar.value") == pytest.approx(0.4)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if shots:
            page.screenshot(path=str(Path(shots) / f"job-running-{width}.png"), full_page=True)
        page.close()
