"""The researcher's dashboard in the browser, through Django's test client: figures from database
aggregates (checked against the export's participants table), the real / simulated filter on the
dashboard and its exports, uploading a study file (errors, preview, load, ownership, the stash),
starting runs with the API's options, the job page and the runs page."""

import io
import json
from dataclasses import replace
from types import SimpleNamespace

import pandas as pd
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from core.caching import clear_process_caches
from participation.models import Participant
from participation.simulate import simulate_participants
from research.dashboard import summarise
from research.export import export_tables
from research.participant_samples import SAMPLES, sample_filter
from research.study_upload import spec_changes
from runs.models import Job
from studies.models import Study
from tests.conftest import DEMO_FILE, run_jobs
from tests.surveys.helpers import answer_pages, consented, shared_demo_study

pytestmark = pytest.mark.django_db


def expected_from_export(sample: str) -> dict:
    """The dashboard's figures computed independently, from the export's participants table."""
    table = export_tables("effort-demo").participants
    if sample != "all":
        table = table[table["simulated"] == (1 if sample == "simulated" else 0)]
    consented = table[table["status"].isin(["active", "completed"])]
    completed = table[table["status"] == "completed"]
    counts = table.assign(condition=table["condition"].replace("", "(none)")).pivot_table(
        index="condition", columns="status", values="participant_id", aggfunc="count", fill_value=0
    )
    return {
        "total": len(table),
        "counts": counts,
        "completion_rate": len(completed) / len(consented),
        "exclusion_rate": completed["excluded"].mean(),
        "median_minutes": completed["duration_seconds"].median() / 60,
    }


@pytest.fixture(scope="class")
def shared_mixed(django_db_setup, django_db_blocker, tmp_path_factory):
    """10 simulated participants (seed 10: one declines, one fails the attention checks) and three real ones:
    completed, in progress, arrived without consenting; made once for the class below (each test's changes are
    rolled back) and removed after it."""
    from participation.services import participant_arrive

    with shared_demo_study(django_db_blocker, tmp_path_factory.mktemp("dashboard"), n=10, seed=10) as shared:
        answer_pages(consented("effort-demo", "real-done"))
        answer_pages(consented("effort-demo", "real-active"), 3)
        participant_arrive(study_slug="effort-demo", external_id="real-arrived")
        yield shared


@pytest.mark.slow
class TestOneAnsweredStudy:
    """The dashboard's figures, filters and caches on one shared study of simulated and real participants."""

    @pytest.fixture
    def researcher(self, shared_mixed):
        """The shared study's owner."""
        return shared_mixed.owner

    @pytest.fixture
    def mixed_study(self, shared_mixed) -> Study:
        """The shared study, read afresh, seen by a process that has kept nothing (as a fresh study was)."""
        clear_process_caches()
        return Study.objects.get(pk=shared_mixed.study.pk)

    @pytest.mark.parametrize("sample", ["all", "real", "simulated"])
    def test_dashboard_figures_equal_those_of_the_export(self, mixed_study, sample):
        expected = expected_from_export(sample)
        summary = summarise("effort-demo", participants=sample_filter(sample))
        assert summary.total == expected["total"]
        table = summary.by_condition_status
        counts = pd.DataFrame([row for _, row in table.rows], index=[c for c, _ in table.rows], columns=table.columns)
        pd.testing.assert_frame_equal(counts, expected["counts"].sort_index(axis=1), check_names=False)
        assert summary.completion_rate == pytest.approx(expected["completion_rate"])
        assert summary.exclusion_rate == pytest.approx(expected["exclusion_rate"])
        assert summary.median_minutes == pytest.approx(expected["median_minutes"])
        figure = json.loads(summary.arrivals_figure_json)
        assert sum(len(trace["y"]) for trace in figure["data"]) == expected["total"]
        assert all(trace["y"] == list(range(1, len(trace["y"]) + 1)) for trace in figure["data"])

    def test_the_sample_has_what_the_figures_need(self, mixed_study):
        """The comparison above would be vacuous without exclusions, declines and both kinds of participant."""
        table = export_tables("effort-demo").participants
        assert table["excluded"].sum() >= 1 and (table["status"] == "declined").sum() >= 1
        assert set(table["simulated"]) == {0, 1} and (table["status"] == "arrived").sum() == 1

    def test_the_dashboard_does_not_build_the_export(self, mixed_study, researcher, client, monkeypatch):
        import research.export

        def refuse(*args, **kwargs):
            raise AssertionError("the dashboard built the export")

        monkeypatch.setattr(research.export, "cached_export", refuse)
        monkeypatch.setattr(research.export, "export_tables", refuse)
        client.force_login(researcher)
        assert client.get("/researcher/studies/effort-demo/").status_code == 200

    def test_participant_filter_on_the_dashboard_and_its_exports(self, mixed_study, researcher, client):
        client.force_login(researcher)
        real = client.get("/researcher/studies/effort-demo/?participants=real").content.decode()
        assert "<b>3</b>participants" in real
        assert "export/pairs.csv?participants=real" in real
        csv = client.get("/researcher/studies/effort-demo/export/participants.csv?participants=simulated")
        frame = pd.read_csv(io.StringIO(csv.content.decode()))
        assert len(frame) == 10 and set(frame["simulated"]) == {1}
        assert 'filename="effort-demo-simulated-participants.csv"' in csv["Content-Disposition"]
        pairs = pd.read_csv(
            io.StringIO(
                client.get("/researcher/studies/effort-demo/export/pairs.csv?participants=real").content.decode()
            )
        )
        assert pairs["participant_id"].nunique() == 2  # the completed and the active real participant
        assert client.get("/researcher/studies/effort-demo/?participants=pilots").status_code == 404
        assert client.get("/researcher/studies/effort-demo/export/pairs.csv?participants=x").status_code == 404

    @pytest.mark.parametrize("sample", ["all", "real"])
    def test_the_study_counts_equal_those_of_their_queries(self, mixed_study, researcher, client, sample):
        """The pilot and status sections' counts come from the dashboard's groups (no query of their own), for the
        whole study whatever the sample, and equal ``participation.recruitment``'s and a pilot count's queries."""
        from participation.recruitment import completed_count, in_progress_count
        from participation.services import participant_arrive

        for n in range(2):
            participant_arrive(study_slug="effort-demo", external_id=f"pilot-{n}", pilot=True)
        Participant.objects.filter(external_id="real-active").update(status=Participant.Status.TIMED_OUT)
        counts = summarise("effort-demo", participants=sample_filter(sample)).counts
        pilots = Participant.objects.filter(study__slug="effort-demo", pilot=True).count()
        assert (counts.pilots, counts.completed, counts.in_progress) == (
            pilots,
            completed_count("effort-demo"),
            in_progress_count("effort-demo"),
        )
        assert counts.pilots == 2 and counts.in_progress == 2  # the arrived and the timed-out real participant
        client.force_login(researcher)
        assert "<p>2 pilot participants so far.</p>" in client.get("/researcher/studies/effort-demo/").content.decode()

    def test_samples_partition_the_participants(self, mixed_study):
        counts = {s: Participant.objects.filter(sample_filter(s)).count() for s in SAMPLES}
        assert counts["all"] == counts["real"] + sum(counts[s] for s in SAMPLES if s not in ("all", "real", "study"))
        assert counts["study"] == counts["all"] - counts["pilot"]

    def test_preview_lists_changes_and_loads_a_new_version(self, client, researcher, mixed_study, spec):
        client.force_login(researcher)
        spec["title"] = "Second wave"
        spec["conditions"][1]["subjects"][0]["risk_score"] = 0.123
        preview_url = upload(client, spec)["Location"]
        body = client.get(preview_url).content.decode()
        subject = spec["conditions"][1]["subjects"][0]["id"]
        assert f"<code>conditions[income].subjects[{subject}].risk_score</code></td><td>changed</td>" in body
        assert "<code>title</code></td><td>changed</td>" in body
        assert "saved as a new version" in body and "Load as new version" in body
        client.post(preview_url)
        assert list(Study.objects.filter(slug="effort-demo").values_list("version", "title")) == [
            (2, "Second wave"),
            (1, mixed_study.title),
        ]

    def test_the_dashboard_reads_no_more_as_participants_complete(
        self, mixed_study, researcher, client, django_capture_on_commit_callbacks
    ):
        """The dashboard's queries do not grow with participants, and its figures after more participants
        complete (completed participants' own rules kept per process, comparisons brought up to date) equal
        those of a process that has seen nothing before (``clear_process_caches``)."""
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        from core.caching import clear_process_caches

        client.force_login(researcher)

        def queries() -> int:
            with CaptureQueriesContext(connection) as captured:
                assert client.get("/researcher/studies/effort-demo/").status_code == 200
            return len(captured)

        few = queries()
        # their completing pages' callbacks run, as they do after each page's commit in production (the test's
        # transaction holds them back otherwise): each new participant's verdict is stored when they complete
        with django_capture_on_commit_callbacks(execute=True):
            simulate_participants("effort-demo", n=12, seed=6)
        more = queries()
        assert more <= few
        kept = replace(summarise("effort-demo"), arrivals_figure_json="")  # the chart's time axis ends now
        clear_process_caches()
        fresh = replace(summarise("effort-demo"), arrivals_figure_json="")
        assert kept == fresh and kept.total == 13 + 12
        assert sum(kept.quality_flags.values()) >= 1 and kept.exclusion_rate > 0  # the comparison is not vacuous

    @pytest.mark.parametrize("sample", ["study", "all", "real"])
    def test_each_figure_is_kept_until_what_it_depends_on_changes(
        self, mixed_study, monkeypatch, django_capture_on_commit_callbacks, sample
    ):
        """``summarise`` keeps each figure while the part of ``study_state`` it depends on is the same, and its
        figures equal a from-scratch computation (``summary``) after each change: a saved page computes nothing
        again (the demo asks no free-text question), an arrival the chart and the quality flags, a completion
        and a withdrawal also the median."""
        import research.dashboard
        from participation.services import participant_arrive, participant_withdraw
        from research.dashboard import summary

        computed: list[str] = []
        # the chart is also kept under the minute: one fixed minute here, so that a slow run crossing a minute's
        # end does not recompute it
        monkeypatch.setattr(research.dashboard, "time", SimpleNamespace(time=lambda: 1.8e9))
        for name in ("arrivals_figure", "median_minutes", "completed_own_flags", "completed_flags"):
            real = getattr(research.dashboard, name)
            monkeypatch.setattr(
                research.dashboard, name, lambda *a, _n=name, _f=real, **k: computed.append(_n) or _f(*a, **k)
            )
        chosen = sample_filter(sample)

        def kept_after(change) -> set[str]:
            """What the view after ``change`` computed; its figures checked against a from-scratch summary."""
            change()
            computed.clear()
            kept = summarise("effort-demo", participants=chosen)
            again = set(computed)
            fresh = summary("effort-demo", participants=chosen)
            chart, fresh_chart = (json.loads(s.arrivals_figure_json) for s in (kept, fresh))
            assert chart["data"] == fresh_chart["data"]
            assert replace(kept, arrivals_figure_json="") == replace(fresh, arrivals_figure_json="")
            return again

        everything = {"arrivals_figure", "median_minutes", "completed_own_flags", "completed_flags"}
        assert kept_after(lambda: None) == everything
        first = summarise("effort-demo", participants=chosen)
        assert kept_after(lambda: None) == set()
        active = Participant.objects.get(external_id="real-active")
        assert kept_after(lambda: answer_pages(active, 1)) == set()
        arrival = lambda: participant_arrive(study_slug="effort-demo", external_id="real-new")  # noqa: E731
        assert kept_after(arrival) == {"arrivals_figure", "completed_flags"}

        def complete():  # the completing page's callbacks run, as after its commit in production
            with django_capture_on_commit_callbacks(execute=True):
                answer_pages(active)

        assert kept_after(complete) == everything - {"arrivals_figure"}
        done = Participant.objects.get(external_id="real-done")
        assert kept_after(lambda: participant_withdraw(participant_id=done.pk)) == everything - {"arrivals_figure"}
        assert summarise("effort-demo", participants=chosen).total == first.total + 1

    def test_a_saved_page_changes_the_state_only_when_free_texts_are_compared(self, mixed_study, monkeypatch):
        """How far participants got is part of ``study_state`` only when a version asks free-text questions (the
        near-duplicate rule compares their answers); the demo asks none, so its saved pages change no figure."""
        import research.dashboard
        from research.dashboard import study_state

        active = Participant.objects.get(external_id="real-active")
        before = study_state("effort-demo")
        answer_pages(active, 1)
        assert study_state("effort-demo") == before and before.position is None
        monkeypatch.setattr(research.dashboard, "free_text_questions", lambda spec: {("about", "comment")})
        clear_process_caches()
        with_texts = study_state("effort-demo")
        answer_pages(active, 1)
        assert study_state("effort-demo").position == with_texts.position + 1


# --- uploading a study file -------------------------------------------------------------------


def upload(client, spec_or_bytes, name="study.json"):
    raw = spec_or_bytes if isinstance(spec_or_bytes, bytes) else json.dumps(spec_or_bytes).encode()
    return client.post("/researcher/upload/", {"file": SimpleUploadedFile(name, raw, "application/json")})


@pytest.fixture
def spec():
    return json.loads(DEMO_FILE.read_text())


def test_an_invalid_file_lists_each_problem_with_its_path_escaped(client, researcher, spec):
    client.force_login(researcher)
    spec["conditions"][0]["subjects"][3]["risk_score"] = 1.5
    spec["<script>x</script>"] = 1
    response = upload(client, spec)
    body = response.content.decode()
    assert response.status_code == 400
    escaped = "(&#x27;&lt;script&gt;x&lt;/script&gt;&#x27; was unexpected)"
    assert f"<code>(top level)</code>: Additional properties are not allowed {escaped}" in body
    assert "<script>x" not in body
    assert not Study.objects.exists()
    del spec["<script>x</script>"]
    body = upload(client, spec).content.decode()
    assert "<code>conditions[0].subjects[3].risk_score</code>: must be &lt;= 1 (got 1.5)" in body


def test_unreadable_and_oversized_files_are_refused(client, researcher, spec, settings):
    client.force_login(researcher)
    assert "not valid JSON: Expecting value at line 1, column 1" in upload(client, b"nope").content.decode()
    assert "not UTF-8 text (byte 0)" in upload(client, b"\xff\xfe{}").content.decode()
    settings.STUDY_FILE_MAX_BYTES = 1000
    body = upload(client, spec).content.decode()
    assert "file is larger than the limit of 1,000 bytes" in body
    assert not Study.objects.exists() and not default_storage.exists("study-uploads")


def test_the_upload_form_needs_the_csrf_token(researcher, spec):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert upload(client, spec).status_code == 403


def test_preview_then_load_a_new_study_owned_by_the_uploader(client, other_researcher, spec):
    client.force_login(other_researcher)
    spec["slug"] = "bobs-study"
    response = upload(client, spec)
    assert response.status_code == 302
    preview = client.get(response["Location"]).content.decode()
    assert 'Criminal justice (yearly arrests) <code>arrests</code></th><td class="num">44</td>' in preview
    assert "No study has this slug yet" in preview and "Load as new study" in preview
    assert not Study.objects.exists()  # nothing stored before "Load"
    loaded = client.post(response["Location"])
    assert loaded["Location"] == "/researcher/studies/bobs-study/"
    study = Study.objects.get(slug="bobs-study")
    assert (study.version, study.owner) == (1, other_researcher)
    assert "bobs-study v1: created as a new study, owned by you." in client.get(loaded["Location"]).content.decode()
    assert client.post(response["Location"]).status_code == 404  # the stash is gone once loaded


def test_the_same_file_again_changes_nothing(client, researcher, demo_study, spec):
    client.force_login(researcher)
    body = client.get(upload(client, spec)["Location"]).content.decode()
    assert "unchanged: the same content is already loaded" in body and '<form method="post" class' not in body


def test_another_researchers_slug_is_refused(client, other_researcher, demo_study, spec):
    client.force_login(other_researcher)
    spec["title"] = "Taken over"
    preview_url = upload(client, spec)["Location"]
    body = client.get(preview_url).content.decode()
    taken = "is taken by another researcher&#x27;s study; only its owner or an account with the "
    assert taken + "studies.load_any_study permission can load a new version" in body
    assert "Load as new version" not in body
    refused = client.post(preview_url).content.decode()
    assert "only its owner or an account with the studies.load_any_study permission can load a new version" in refused
    assert Study.objects.filter(slug="effort-demo").count() == 1


def test_the_load_reads_the_stash_and_checks_its_hash(client, researcher, other_researcher, spec):
    client.force_login(researcher)
    spec["slug"] = "stash-check"
    preview_url = upload(client, spec)["Location"]
    digest = preview_url.rstrip("/").rsplit("/", 1)[1]
    other = Client()
    other.force_login(other_researcher)
    assert other.get(preview_url).status_code == 404  # stashes are per researcher
    name = f"study-uploads/{researcher.pk}/{digest}.json"
    spec["title"] = "Tampered"
    default_storage.delete(name)
    default_storage.save(name, ContentFile(json.dumps(spec).encode()))
    assert client.post(preview_url).status_code == 404
    assert client.get("/researcher/upload/not-a-hash/").status_code == 404
    assert not Study.objects.filter(slug="stash-check").exists()


def test_spec_changes_names_added_removed_and_reordered_items():
    old = {"a": 1, "items": [{"key": "x", "v": 1}, {"key": "y", "v": 2}], "plain": [1, 2]}
    new = {"a": 1, "items": [{"key": "y", "v": 3}, {"key": "z", "v": 0}], "plain": [1, 3], "b": "new"}
    found = [(c.path, c.change, c.before, c.after) for c in spec_changes(old, new)]
    assert found == [
        ("items[x]", "removed", "", ""),
        ("items[y].v", "changed", "2", "3"),
        ("items[z]", "added", "", ""),
        ("plain", "changed", "list of 2", "list of 2"),
        ("b", "added", "", "'new'"),
    ]
    assert [c.change for c in spec_changes({"l": [{"id": "a"}, {"id": "b"}]}, {"l": [{"id": "b"}, {"id": "a"}]})] == [
        "order changed"
    ]


# --- starting runs, following jobs, listing runs ----------------------------------------------


def test_an_analysis_started_in_the_browser_is_the_same_job_as_from_the_api(client, researcher, demo_study):
    client.force_login(researcher)
    page = client.post("/researcher/studies/effort-demo/start/analysis/", {"seed": "7", "n_resamples": "300"})
    api = client.post(
        "/api/studies/effort-demo/analyses/", {"seed": 7, "n_resamples": 300}, content_type="application/json"
    )
    browser_job, api_job = Job.objects.order_by("created_at")
    assert page["Location"] == f"/researcher/jobs/{browser_job.pk}/"
    assert api.status_code == 202
    fields = ("kind", "study_id", "params", "created_by_id", "status")
    assert [getattr(browser_job, f) for f in fields] == [getattr(api_job, f) for f in fields]


def test_the_start_forms_carry_the_options_of_the_api(client, researcher, demo_study):
    """The analysis form's pilot choice and the differential-parity form's favourable direction
    reach the job as the API would pass them."""
    client.force_login(researcher)
    page = client.get("/researcher/studies/effort-demo/start/").content.decode()
    assert 'name="include_pilot"' in page and 'name="favourable"' in page
    client.post("/researcher/studies/effort-demo/start/analysis/", {"seed": "1", "n_resamples": "100"})
    client.post(
        "/researcher/studies/effort-demo/start/analysis/", {"seed": "1", "n_resamples": "100", "include_pilot": "true"}
    )
    client.post("/researcher/studies/effort-demo/start/differential-parity/", {"alpha": "0.05", "favourable": "higher"})
    plain, with_pilots, dp = Job.objects.order_by("created_at")
    assert (plain.params["include_pilot"], with_pilots.params["include_pilot"]) == (False, True)
    assert dp.params["favourable"] == "higher"
    response = client.post(
        "/researcher/studies/effort-demo/start/differential-parity/", {"alpha": "0.05", "favourable": "up"}
    )
    assert response.status_code == 400 and "must be" in response.content.decode()


def test_invalid_options_are_shown_and_start_nothing(client, researcher, demo_study):
    client.force_login(researcher)
    response = client.post("/researcher/studies/effort-demo/start/analysis/", {"seed": "1", "n_resamples": "50"})
    assert response.status_code == 400
    assert "Ensure this value is greater than or equal to 100." in response.content.decode()
    response = client.post("/researcher/studies/effort-demo/start/differential-parity/", {"alpha": "0.9"})
    assert "Ensure this value is less than or equal to 0.5." in response.content.decode()
    assert client.post("/researcher/studies/effort-demo/start/audit/", {"condition": "arrests"}).status_code == 400
    assert client.post("/researcher/studies/effort-demo/start/nonsense/", {}).status_code == 404
    assert not Job.objects.exists()


def test_other_researchers_cannot_start_or_see_runs(client, other_researcher, researcher, demo_study):
    owner = Client()
    owner.force_login(researcher)
    job_url = owner.post("/researcher/studies/effort-demo/start/analysis/", {"seed": "1", "n_resamples": "100"})[
        "Location"
    ]
    client.force_login(other_researcher)
    for url in ("/researcher/studies/effort-demo/start/", "/researcher/studies/effort-demo/runs/", job_url):
        assert client.get(url).status_code == 404, url
    assert client.post("/researcher/studies/effort-demo/start/analysis/", {"seed": "1"}).status_code == 404
    assert Job.objects.count() == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_jobs_run_and_their_reports_are_listed(client, researcher, demo_study, tmp_path, no_mixed_models):
    """Jobs started in the browser, their pages and the runs page (the analysis without its mixed models)."""
    simulate_participants("effort-demo", n=8, seed=3)
    client.force_login(researcher)
    analysis_url = client.post("/researcher/studies/effort-demo/start/analysis/", {"seed": "1", "n_resamples": "100"})[
        "Location"
    ]
    queued = client.get(analysis_url).content.decode()
    assert 'data-finished="0"' in queued and '<meta http-equiv="refresh" content="5">' in queued
    subjects = tmp_path / "subjects.csv"
    call_command("generate_demo_audit", condition="arrests", out=str(subjects))
    with subjects.open("rb") as handle:
        audit_url = client.post(
            "/researcher/studies/effort-demo/start/audit/", {"subjects": handle, "condition": "arrests"}
        )["Location"]
    run_jobs()
    done = client.get(analysis_url).content.decode()
    job = Job.objects.get(kind="analysis")
    assert job.status == "succeeded", job.error
    assert f'<a class="button primary" href="{job.result["report_url"]}">Open the report</a>' in done
    assert 'data-finished="1"' in done and "http-equiv" not in done
    assert client.get(job.result["report_url"]).status_code == 200
    audit_job = Job.objects.get(kind="audit")
    assert audit_job.status == "succeeded", audit_job.error
    assert audit_job.params == {
        "condition": "arrests",
        "lipschitz": 1.0,
        "surrogate": "linear",
        "exact_eaif": False,
        "multiple_testing": "holm",
        "shown_model": "study_ai",
        "engine": "pandas",
        "bound": "bernstein",
        "n_pairs": 2_000_000,
    }
    assert "Open the report" in client.get(audit_url).content.decode()
    runs = client.get("/researcher/studies/effort-demo/runs/").content.decode()
    assert job.result["report_url"] in runs and audit_job.result["report_url"] in runs
    assert "results.json" in runs
    for cal in job.result["calibrations"]:
        assert f'<td class="num">{cal["alpha"]:.4f}</td>' in runs
    assert runs.count('class="status succeeded"') == 2
