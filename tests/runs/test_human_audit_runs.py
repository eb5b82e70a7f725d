"""``audit_models --metric-from / --utility-from / --features-from``: studies built from the triplet, choice and
feature_fairness templates, run by simulated participants, then a model audit that uses what they said; the
sources' refusals; the same options from the API and the web form."""

import json
import re

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from studies.services import study_load
from studies.synthetic_defendants import draw_defendants
from tests.analysis.test_coverage_registry import assert_audit_intervals_are_registered
from tests.runs.audit_inputs import queued_audits_resampled
from tests.runs.conftest import GROUPS
from tests.studies.test_builder import build
from tests.surveys.test_report_browser import open_as_alice


def audit(path, tmp_path, **options) -> str:
    out = tmp_path / "audit"
    call_command("audit_models", study="effort-demo", subjects=str(path), out=str(out), **options)
    return out


@pytest.mark.slow
@pytest.mark.django_db
def test_an_audit_uses_the_metric_the_utilities_and_the_feature_judgements_people_gave(sources, tmp_path):
    out = audit(
        sources,
        tmp_path,
        metric_from="people-alike",
        utility_from="people-choose:choices",
        features_from="people-fair",
        by=["role"],
        lipschitz=2.0,
        resamples=10,  # the intervals are checked for order and for holding the statistic, not for coverage
    )
    results = json.loads((out / "results.json").read_text())["human"]
    assert set(results["sources"]) == {"--metric-from", "--utility-from", "--features-from"}
    lipschitz = pd.read_csv(out / "human_metric_lipschitz.csv")
    assert list(lipschitz["model"]) == ["ai", "by_priors"] and lipschitz["n_pairs"].eq(40 * 39 // 2).all()
    assert lipschitz["L"].eq(2.0).all()
    assert (lipschitz["ci_low"] <= lipschitz["ci_high"]).all() and lipschitz["statistic"].between(0, 1).all()
    assert {"id_i", "id_j", "excess", "model"} <= set(pd.read_csv(out / "human_metric_worst_pairs.csv").columns)
    utility = pd.read_csv(out / "utility_agreement.csv")
    assert set(utility["model"]) == {"ai", "by_priors"} and utility["statistic"].between(-1, 1).all()
    assert utility["rater_group"].nunique() > 1  # all participants and each role
    # the simulated raters choose by the AI's risk scores whom to "consider lower risk": the AI ranks the subjects
    # as the stakeholders' utility does, reversed (rho near -1); a model of priors alone much less so
    by_model = utility[utility["rater_group"] == "all participants"].set_index("model")
    assert by_model.loc["ai", "statistic"] < -0.7 < by_model.loc["by_priors", "statistic"]
    assert (by_model["ci_low"] <= by_model["statistic"]).all() and (by_model["statistic"] <= by_model["ci_high"]).all()
    reliance = pd.read_csv(out / "unfair_feature_reliance.csv")
    assert set(reliance["model"]) == {"ai", "by_priors"} and reliance["surrogate_r2"].between(0, 1.0 + 1e-9).all()
    importance = pd.read_csv(out / "feature_importance.csv")
    priors_only = importance[(importance["model"] == "by_priors") & (importance["feature"] != "priors")]
    assert priors_only["importance"].abs().max() < 1e-9  # a model that ignores a feature does not rely on it
    html = (out / "report.html").read_text()
    assert "L = 2: a pair violates when its scores differ by more than 2 score units per unit of human-metric" in html
    assert_audit_intervals_are_registered(out)
    for title in (
        "Individual fairness under the human metric",
        "Worst pairs under the human metric",
        "Agreement with the stakeholders&#x27; utility",
        "Reliance on features judged unfair",
        "Permutation importance and feature-fairness judgements",
    ):
        assert title in html


def test_the_form_and_the_command_offer_the_surrogates_the_audit_fits():
    from fairness.human_audit import SURROGATES as FITTED
    from runs.human_source_options import SURROGATES

    assert tuple(SURROGATES) == FITTED


@pytest.mark.slow
@pytest.mark.django_db
def test_a_forest_surrogate_is_named_in_the_tables_and_the_report(sources, tmp_path):
    """``--surrogate forest``: the reliance table names it and the report says its R^2 is out of bag; a model of
    priors alone relies on priors under the forest too (the other features get a tenth of its importance at most:
    the forest's splits in small nodes may still use them)."""
    out = audit(sources, tmp_path, features_from="people-fair", surrogate="forest", resamples=2)  # no interval read
    reliance = pd.read_csv(out / "unfair_feature_reliance.csv")
    assert reliance["surrogate"].eq("forest").all() and reliance["surrogate_r2"].le(1).all()
    assert reliance.set_index("model").loc["by_priors", "surrogate_r2"] > 0.5  # 40 subjects, 5 a leaf
    importance = pd.read_csv(out / "feature_importance.csv")
    by_priors = importance[importance["model"] == "by_priors"].groupby("feature")["importance"].first()
    assert by_priors.drop("priors").max() < 0.1 * by_priors["priors"]
    assert (
        "R^2 is out of bag (each subject predicted by the trees that did not see it)"
        in (out / "report.html").read_text()
    )


# each refusal: the options, the field that names it (API, form, SourceErrors.errors) and its message
REFUSED = [
    ({"metric_from": "nobody-study"}, "metric_from", "--metric-from 'nobody-study': no study 'nobody-study' among the"),
    ({"metric_from": "bobs-alike"}, "metric_from", "no study 'bobs-alike' among the researcher's studies"),
    ({"utility_from": "people-choose:other"}, "utility_from", "no task block 'other' in study 'people-choose'"),
    (
        {"features_from": "people-alike"},
        "features_from",
        "study 'people-alike' has no block that yields feature-fairness shares; its task blocks: triplets (triplet); "
        "--features-from needs a block that yields feature-fairness shares (feature_fairness)",
    ),
    (
        {"metric_from": "people-choose:choices"},
        "metric_from",
        "block 'choices' of study 'people-choose' is of type choose, which does not yield a learned fair metric; "
        "--metric-from needs a block that yields a learned fair metric (pair_comparable, triplet)",
    ),
    (
        {"metric_from": "nobody-answered"},
        "metric_from",
        "--metric-from nobody-answered:triplets: no completed participant's answers",
    ),
    ({"metric_from": "people-alike", "subjects": "fewer"}, "metric_from", "the block's pool features charge are not"),
    ({"features_from": "people-fair", "subjects": "fewer"}, "features_from", "the block's judged features charge are"),
    ({"metric_from": "people-alike", "by": ["nothing"]}, "by", "--by 'nothing' is not a questionnaire question"),
    ({"by": ["role"]}, "by", "--by splits the raters of the sources into groups: name a source"),
    ({"lipschitz": 0.0}, "lipschitz", "--lipschitz must be a finite number > 0"),
    ({"metric_from": "people-alike", "lipschitz": -1.0}, "lipschitz", "--lipschitz must be a finite number > 0"),
    ({"surrogate": "tree"}, "surrogate", "--surrogate must be linear or forest, not 'tree'"),
    ({"features_from": "people-fair", "surrogate": "tree"}, "surrogate", "--surrogate must be linear or forest"),
]


@pytest.mark.slow
@pytest.mark.django_db
def test_sources_the_audit_cannot_use_are_refused_before_anything_is_queued(
    sources, tmp_path, researcher, other_researcher, client
):
    """One check (``runs.human_sources.check_sources``) for the command (CommandError), the API (400 with the
    field's error) and the audit form (the error under its field): nothing is queued, run or stored."""
    from django.utils.html import escape
    from rest_framework.test import APIClient

    from runs.models import AuditRun, Job

    study_load(
        spec=build(draw_defendants(10, seed=1), "triplet", group_columns=GROUPS, slug="bobs-alike"),
        owner=other_researcher,
    )
    study_load(
        spec=build(draw_defendants(10, seed=2), "triplet", group_columns=GROUPS, slug="nobody-answered"),
        owner=researcher,
    )
    files = {"all": sources, "fewer": tmp_path / "fewer.csv"}
    pd.read_csv(sources).drop(columns=["charge"]).to_csv(files["fewer"], index=False)
    api = APIClient()
    api.force_authenticate(researcher)
    client.force_login(researcher)
    for options, field, message in REFUSED:
        options = dict(options)
        path = files[options.pop("subjects", "all")]
        with pytest.raises(CommandError, match=re.escape(message)):
            audit(path, tmp_path, **options)
        form = {k: " ".join(v) if k == "by" else v for k, v in options.items()}
        with path.open("rb") as fh:
            response = api.post("/api/studies/effort-demo/audits/", {"subjects": fh, **options}, format="multipart")
        assert response.status_code == 400, (options, response.content)
        assert any(message in error for error in response.json()["fields"][field]), (options, response.json())
        with path.open("rb") as fh:
            page = client.post("/researcher/studies/effort-demo/start/audit/", {"subjects": fh, **form})
        assert page.status_code == 400, options
        html = page.content.decode()
        own = html[html.index(f'id="audit-{field}"') :]
        assert escape(message) in own[: own.index("</div>")], (options, field)  # under its own field
        assert Job.objects.count() == 0 and AuditRun.objects.count() == 0, options


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)  # the job worker commits
def test_the_api_and_the_web_form_take_the_same_options(sources, demo_study, researcher, other_researcher, client):
    from django.core.files import File
    from rest_framework.test import APIClient

    from runs.models import Job
    from runs.services import job_create
    from tests.conftest import run_jobs

    api = APIClient()
    api.force_authenticate(researcher)
    with sources.open("rb") as fh:
        response = api.post(
            "/api/studies/effort-demo/audits/",
            {"subjects": fh, "utility_from": "people-choose", "by": ["role"], "surrogate": "forest"},
            format="multipart",
        )
    assert response.status_code == 202, response.content
    assert Job.objects.get().params["surrogate"] == "forest"  # the job's audit_run_create gets it
    queued_audits_resampled(2)  # the options reach the job's audit whatever its bootstrap
    run_jobs()
    job = api.get(response["Location"]).json()
    assert job["status"] == "succeeded", job["error"]
    assert {row["model"] for row in job["result"]["results"]["human"]["utility_agreement"]} == {"ai", "by_priors"}
    client.force_login(researcher)
    page = client.get("/researcher/studies/effort-demo/start/").content.decode()
    assert '<option value="people-choose:choices">people-choose: choices (choose)</option>' in page
    assert 'name="metric_from"' in page and 'name="utility_from"' in page and 'name="features_from"' in page
    assert '<option value="forest">Random forest' in page
    # another researcher's study is refused when the request is made, and again by the job (a job queued before
    # the source became unusable, here one queued without the request's check)
    bobs = build(draw_defendants(10, seed=2), "triplet", group_columns=GROUPS, slug="bobs-own")
    study_load(spec=bobs, owner=other_researcher)
    with sources.open("rb") as fh:
        refused = api.post(
            "/api/studies/effort-demo/audits/", {"subjects": fh, "metric_from": "bobs-own"}, format="multipart"
        )
    assert refused.status_code == 400 and "no study 'bobs-own' among" in refused.json()["fields"]["metric_from"][0]
    with sources.open("rb") as fh:
        job = job_create(
            kind=Job.Kind.AUDIT,
            user=researcher,
            study=demo_study,
            params={"metric_from": "bobs-own"},
            uploads={"subjects": File(fh, name="subjects.csv")},
        )
    run_jobs()
    job.refresh_from_db()
    assert job.status == "failed" and "no study 'bobs-own' among the researcher's studies" in job.error


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_human_sections_render_in_chromium_at_desktop_and_phone_width(sources, tmp_path, browser, live_server):  # noqa: F811
    """The audit report with the three sources: every human section shown, no horizontal scroll at 390 px
    (``REPORT_SCREENSHOTS=DIR`` keeps the screenshots)."""
    import os
    from pathlib import Path

    sources_of = {"metric_from": "people-alike", "utility_from": "people-choose", "features_from": "people-fair"}
    audit(sources, tmp_path, resamples=2, **sources_of)  # the sections drawn, whatever the intervals' resamples
    shots = os.environ.get("REPORT_SCREENSHOTS")
    for width, height in ((1280, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        open_as_alice(page, live_server, "/researcher/studies/effort-demo/audit/report.html")
        for title, shot in (
            ("Individual fairness under the human metric", "lipschitz"),
            ("Agreement with the stakeholders' utility", "utility"),
            ("Reliance on features judged unfair", "reliance"),
        ):
            section = page.locator("section", has=page.get_by_role("heading", name=title, exact=True)).first
            section.locator(".main-svg").first.wait_for(timeout=20000)  # its figure is drawn
            if shots:
                Path(shots).mkdir(parents=True, exist_ok=True)
                section.scroll_into_view_if_needed()
                section.screenshot(path=str(Path(shots) / f"human-audit-{shot}-{width}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        page.goto(f"{live_server.url}/researcher/studies/effort-demo/start/")
        page.select_option("#audit-utility_from", "people-choose:choices")
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        if shots:
            page.locator("#audit").screenshot(path=str(Path(shots) / f"audit-form-{width}.png"))
        context.close()
