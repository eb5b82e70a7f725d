from dataclasses import dataclass
from functools import partial
from io import StringIO

import pytest
from django.core.management import call_command

from analysis.pipeline import run_pipeline
from participation.models import Participant
from runs import analysis_runs
from runs.analysis_runs import analysis_run_create
from runs.models import AnalysisRun, Calibration
from studies.models import Study
from tests.runs.conftest import no_mixed_models  # noqa: F401 - the fixture
from tests.surveys.helpers import SharedStudy, shared_demo_study

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Analysed:
    shared: SharedStudy
    run: AnalysisRun  # completed participants only (the default), report in shared.folder / "a"
    unfinished: set[str]  # the pseudonyms of the two participants left active
    # shared.folder / "b": the command's report with --include-incomplete, the second Calibration version


@pytest.fixture(scope="module")
def analysed(django_db_setup, django_db_blocker, tmp_path_factory):
    """16 simulated participants, two left unfinished, analysed twice (by default; by the command with
    --include-incomplete): each analysis runs the whole pipeline (about 10 CPU seconds), so the tests below read
    these two runs rather than making their own."""

    def few_respondents(spec: dict) -> None:
        spec["bonus"]["honesty"]["min_respondents"] = 2  # 16 participants: a handful per BTS question

    folder = tmp_path_factory.mktemp("analysed")
    with shared_demo_study(django_db_blocker, folder, n=16, seed=5, edit=few_respondents) as shared:
        unfinished = list(Participant.objects.filter(status="completed").order_by("pk")[:2])
        Participant.objects.filter(pk__in=[p.pk for p in unfinished]).update(status="active")
        run = analysis_run_create(slug="effort-demo", out_dir=folder / "a", seed=1, n_resamples=20)
        with pytest.MonkeyPatch.context() as patch:  # run b is read for its participants and versions only
            patch.setattr(analysis_runs, "run_pipeline", partial(run_pipeline, mixed_models=False))  # no_mixed_models
            call_command(
                "analyze_study",
                "effort-demo",
                out=str(folder / "b"),
                resamples=20,
                include_incomplete=True,
                stdout=StringIO(),
            )
        yield Analysed(shared, run, {str(p.pseudonym) for p in unfinished})


@pytest.mark.slow
def test_analysis_run_writes_report_and_versions_calibrations(analysed):
    run, out = analysed.run, analysed.shared.folder / "a"
    assert {p.name for p in out.iterdir()} >= {
        "report.html",
        "results.json",
        "table2.csv",
        "table5.csv",
    }
    html = (out / "report.html").read_text()
    assert "cdn" not in html.lower() and "report-assets/vendor/plotly.min.js" in html
    assert (out / "report-assets" / "vendor" / "plotly.min.js").exists()  # opens from disk
    assert sorted(run.calibrations.values_list("condition__key", flat=True)) == ["arrests", "income"]
    # the second analysis (the command's) stored the next version
    assert sorted(Calibration.objects.filter(condition__key="arrests").values_list("version", flat=True)) == [1, 2]
    assert run.calibrations.get(condition__key="arrests").version == 1
    assert run.results["calibrations"][0]["alpha"] == pytest.approx(
        run.calibrations.get(condition__key=run.results["calibrations"][0]["condition"]).alpha
    )


def test_too_few_participants_is_a_clear_error(demo_spec, researcher, tmp_path):
    from studies.services import study_load

    study_load(spec=demo_spec | {"slug": "no-one-yet"}, owner=researcher)
    with pytest.raises(ValueError, match="too few participants"):
        analysis_run_create(slug="no-one-yet", out_dir=tmp_path, seed=1, n_resamples=10)


@pytest.mark.slow
def test_dashboard_links_the_latest_report_and_the_headline_family_is_named(
    client, analysed, other_researcher, settings
):
    settings.STORAGES = analysed.shared.storages  # where the shared runs' files are stored
    run = analysed.run
    family = run.results["multiple_testing"]["effort"]  # beside the task blocks' families (analysis.families)
    assert family["method"] == "holm" and family["family"] == "headline"
    assert run.results["multiple_testing"]["method"] == "holm" and "families" in run.results["multiple_testing"]
    rows = run.results["participant_level"]
    in_family = [r for r in rows if r["in_family"]]
    assert in_family and all(r["family"] == "headline" and r["pvalue_holm"] >= r["pvalue"] for r in in_family)
    assert {r["method"] for r in rows} == {
        "participant bootstrap (percentile CI, centred p)",
        "cluster-robust Wald (CR1, by participant)",
    }
    table2 = run.results["table2"]
    assert {r["inference"] for r in table2} == {"descriptive (pairs treated as independent)"}

    client.force_login(analysed.shared.owner)
    body = client.get("/researcher/studies/effort-demo/").content.decode()
    assert "/researcher/studies/effort-demo/report/report.html" in body and "alpha" in body
    # Issue 23 item 8: alpha is printed with its estimand on the dashboard and the runs page
    assert '<th scope="col">Estimand</th>' in body and "for these 12 stimulus pairs (participants resampled" in body
    runs = client.get("/researcher/studies/effort-demo/runs/").content.decode()
    assert "for these 12 stimulus pairs (participants resampled" in runs
    assert client.get("/researcher/studies/effort-demo/report/report.html").status_code == 200
    assert client.get("/researcher/studies/effort-demo/report/table2.csv").status_code == 200
    assert client.get("/researcher/studies/effort-demo/report/plotly.min.js").status_code == 404
    assert client.get("/researcher/studies/effort-demo/report/..%2Fsecret").status_code == 404
    client.force_login(other_researcher)
    assert client.get("/researcher/studies/effort-demo/report/report.html").status_code == 404


@pytest.mark.slow
def test_completed_participants_by_default_and_the_report_counts_the_dropped(analysed):
    sample = analysed.run.results["sample"]
    assert sample["dropped"]["not completed (active)"] == 2 and sample["include_incomplete"] is False
    html = (analysed.shared.folder / "a" / "report.html").read_text()
    assert "not completed (active) 2" in html
    assert html.index("Headline: participant-level tests") < html.index("Table 2: Spearman correlations (descriptive")
    assert "Family for multiple testing" in html and "Mixed models with crossed random effects" in html
    analysed_ids = {row["participant_id"] for row in _csv_rows(analysed.shared.folder / "a" / "bts_scores.csv")}
    assert analysed_ids and not analysed_ids & analysed.unfinished

    out = analysed.shared.folder / "b"  # the command's run with --include-incomplete
    wider = (out / "results.json").read_text()
    assert '"include_incomplete": true' in wider and "not completed (active)" not in wider
    analysed_ids = {row["participant_id"] for row in _csv_rows(out / "bts_scores.csv")}
    assert analysed.unfinished <= analysed_ids


def _csv_rows(path):
    import csv

    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
@pytest.mark.usefixtures("no_mixed_models")
def test_generalise_from_the_study_file_and_the_command(analysed, tmp_path):
    """analysis.generalise = "stimuli" in the study file makes the calibration's CI the two-way bootstrap's
    (stored with generalise "stimuli"); --generalise none overrides it; the report states each estimand.
    (20 resamples and no mixed models: the claims are which interval and estimand are stored and printed, not
    their width, and the mixed models' table is not read.)"""
    import json

    study = Study.objects.get(pk=analysed.shared.study.pk)  # its own copy: the change is rolled back after the test
    study.spec["analysis"] = {"generalise": "stimuli"}
    study.save(update_fields=["spec"])
    run = analysis_run_create(slug="effort-demo", out_dir=tmp_path / "a", seed=1, n_resamples=20)
    for record in run.results["calibrations"]:
        cal = run.calibrations.get(condition__key=record["condition"])
        assert cal.estimand == cal.estimand_text == record["estimand"]  # stored, printed with alpha everywhere
        assert cal.generalise == "stimuli" and record["generalise"] == "stimuli"
        assert [cal.ci_low, cal.ci_high] == pytest.approx(record["ci_stimuli"])
        assert record["ci_stimuli"] != record["ci_participants"] and record["n_stimuli"] == 12
        assert record["estimand"].startswith("for a population of stimulus pairs like these 12")
    html = (tmp_path / "a" / "report.html").read_text()
    assert "95% CI, generalising over stimuli" in html and "95% CI, these stimuli" in html
    assert "Estimand, arrests: for these 12 stimulus pairs" in html  # the participant-level rows' estimand
    assert "Estimand, arrests: for a population of stimulus pairs like these 12" in html  # the family's RQ1-RQ2
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    levels = results["participant_level"]
    two_way = [row for row in levels if row["method"].startswith("two-way bootstrap")]
    assert {(row["model"], row["hypothesis"]) for row in two_way if row["outcome"] == "d"} == {
        (c, h) for c in ("arrests", "income") for h in ("r_traj = r_aggr", "a2 = a1", "a1 = a2 = 0")
    }
    assert all(row["in_family"] and row["estimand"].startswith("for a population of stimulus") for row in two_way)
    assert {row["estimand"][:27] for row in levels if row not in two_way} == {"for these 12 stimulus pairs"} | (
        {"for these 24 stimulus pairs"} if any(row["model"].startswith("moderation") for row in levels) else set()
    )
    assert results["multiple_testing"]["effort"]["definition"].startswith("headline tests generalising over stimuli")

    out = StringIO()
    call_command("analyze_study", "effort-demo", out=str(tmp_path / "b"), resamples=20, generalise="none", stdout=out)
    assert "(for these 12 stimulus pairs (participants resampled" in out.getvalue()
    latest = Calibration.objects.filter(condition__key="arrests").order_by("-version").first()
    assert latest.estimand.startswith("for these 12 stimulus pairs")
    records = json.loads((tmp_path / "b" / "results.json").read_text())["calibrations"]
    record = next(r for r in records if r["condition"] == "arrests")
    assert latest.generalise == "" and [latest.ci_low, latest.ci_high] == pytest.approx(record["ci_participants"])
