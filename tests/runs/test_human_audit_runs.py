"""``audit_models --metric-from / --utility-from / --features-from``: studies built from the triplet, choice and
feature_fairness templates, run by simulated participants, then a model audit that uses what they said; the
sources' refusals; the same options from the API and the web form."""

import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from participation.simulate import simulate_participants
from studies.services import study_load
from studies.synthetic_defendants import draw_defendants
from tests.studies.test_builder import build
from tests.surveys.test_e2e_browser import browser  # noqa: F401 - the Chromium fixture

GROUPS = ["race", "sex"]


@pytest.fixture
def sources(demo_study, researcher, tmp_path, settings):
    """Three studies of the researcher built from one defendants CSV, each answered by simulated participants,
    and the subjects file of an audit of two models over the same defendants."""
    settings.REPORTS_DIR = tmp_path / "reports"
    defendants = draw_defendants(40, seed=5)
    for template, slug, n in (("triplet", "people-alike", 30), ("choice", "people-choose", 30)):
        spec = build(defendants, template, score_column="ai_score", group_columns=GROUPS, per_participant=20, slug=slug)
        study_load(spec=spec, owner=researcher)
        simulate_participants(slug, n=n, seed=3, decline_rate=0)
    spec = build(defendants, "feature_fairness", score_column="ai_score", group_columns=GROUPS, slug="people-fair")
    study_load(spec=spec, owner=researcher)
    simulate_participants("people-fair", n=30, seed=3, decline_rate=0)
    rng = np.random.default_rng(0)
    subjects = defendants.drop(columns=["ai_label", "ai_score"]).assign(
        x_1=rng.integers(0, 5, 40), x_2=rng.integers(0, 5, 40), x_3=rng.integers(0, 5, 40)
    )
    subjects["score_ai"] = defendants["ai_score"]
    subjects["score_by_priors"] = (subjects["priors"] / subjects["priors"].max()).round(3)
    path = tmp_path / "subjects.csv"
    subjects.to_csv(path, index=False)
    return path


def audit(path, tmp_path, **options) -> str:
    out = tmp_path / "audit"
    call_command("audit_models", study="effort-demo", subjects=str(path), out=str(out), **options)
    return out


@pytest.mark.django_db
def test_an_audit_uses_the_metric_the_utilities_and_the_feature_judgements_people_gave(sources, tmp_path):
    out = audit(
        sources,
        tmp_path,
        metric_from="people-alike",
        utility_from="people-choose:choices",
        features_from="people-fair",
        by=["role"],
    )
    results = json.loads((out / "results.json").read_text())["human"]
    assert set(results["sources"]) == {"--metric-from", "--utility-from", "--features-from"}
    lipschitz = pd.read_csv(out / "human_metric_lipschitz.csv")
    assert list(lipschitz["model"]) == ["ai", "by_priors"] and lipschitz["n_pairs"].eq(40 * 39 // 2).all()
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
    for title in (
        "Individual fairness under the human metric",
        "Worst pairs under the human metric",
        "Agreement with the stakeholders&#x27; utility",
        "Reliance on features judged unfair",
        "Permutation importance and feature-fairness judgements",
    ):
        assert title in html


@pytest.mark.django_db
@pytest.mark.parametrize(
    "options, message",
    [
        ({"metric_from": "nobody-study"}, "--metric-from 'nobody-study': no study 'nobody-study' among the researcher"),
        ({"metric_from": "people-choose"}, "no block of type pair_comparable or triplet"),
        ({"utility_from": "people-choose:other"}, "no block 'other' of type choose"),
        ({"features_from": "people-alike"}, "no block of type feature_fairness"),
        ({"metric_from": "people-alike", "by": ["nothing"]}, "'nothing' is not a questionnaire question"),
    ],
)
def test_sources_the_audit_cannot_use_are_refused_with_the_reason(sources, tmp_path, options, message):
    with pytest.raises(CommandError, match=message):
        audit(sources, tmp_path, **options)


@pytest.mark.django_db
def test_a_pool_feature_missing_from_the_audited_subjects_is_named(sources, tmp_path, other_researcher):
    pd.read_csv(sources).drop(columns=["charge"]).to_csv(tmp_path / "fewer.csv", index=False)
    with pytest.raises(CommandError, match="the block's pool features charge are not columns of the audited subjects"):
        audit(tmp_path / "fewer.csv", tmp_path, metric_from="people-alike")
    other = build(draw_defendants(10, seed=1), "triplet", group_columns=GROUPS, slug="bobs-alike")
    study_load(spec=other, owner=other_researcher)
    with pytest.raises(CommandError, match="no study 'bobs-alike' among the researcher's studies"):
        audit(sources, tmp_path, metric_from="bobs-alike")


@pytest.mark.django_db(transaction=True)  # the job worker commits
def test_the_api_and_the_web_form_take_the_same_options(sources, researcher, other_researcher, client):
    from rest_framework.test import APIClient

    from tests.conftest import run_jobs

    api = APIClient()
    api.force_authenticate(researcher)
    with sources.open("rb") as fh:
        response = api.post(
            "/api/studies/effort-demo/audits/",
            {"subjects": fh, "utility_from": "people-choose", "by": ["role"]},
            format="multipart",
        )
    assert response.status_code == 202, response.content
    run_jobs()
    job = api.get(response["Location"]).json()
    assert job["status"] == "succeeded", job["error"]
    assert {row["model"] for row in job["result"]["results"]["human"]["utility_agreement"]} == {"ai", "by_priors"}
    client.force_login(researcher)
    page = client.get("/researcher/studies/effort-demo/start/").content.decode()
    assert '<option value="people-choose:choices">people-choose: choices (choose)</option>' in page
    assert 'name="metric_from"' in page and 'name="utility_from"' in page and 'name="features_from"' in page
    # another researcher's job cannot read this researcher's study, even when it names it
    bobs = build(draw_defendants(10, seed=2), "triplet", group_columns=GROUPS, slug="bobs-own")
    study_load(spec=bobs, owner=other_researcher)
    with sources.open("rb") as fh:
        refused = api.post(
            "/api/studies/effort-demo/audits/", {"subjects": fh, "metric_from": "bobs-own"}, format="multipart"
        )
    run_jobs()
    failed = api.get(refused["Location"]).json()
    assert failed["status"] == "failed" and "no study 'bobs-own' among the researcher's studies" in failed["error"]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_human_sections_render_in_chromium_at_desktop_and_phone_width(sources, tmp_path, browser, live_server):  # noqa: F811
    """The audit report with the three sources: every human section shown, no horizontal scroll at 390 px
    (``REPORT_SCREENSHOTS=DIR`` keeps the screenshots)."""
    import os
    from pathlib import Path

    audit(sources, tmp_path, metric_from="people-alike", utility_from="people-choose", features_from="people-fair")
    shots = os.environ.get("REPORT_SCREENSHOTS")
    for width, height in ((1280, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/?next=/researcher/studies/effort-demo/audit/report.html")
        page.fill("#id_username", "alice")
        page.fill("#id_password", "alice-pass-123")
        with page.expect_navigation():
            page.get_by_role("button", name="Log in").click()
        for title in ("Individual fairness under the human metric", "Reliance on features judged unfair"):
            assert page.get_by_role("heading", name=title).is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            section = page.locator(
                "section", has=page.get_by_role("heading", name="Individual fairness under the human metric")
            )
            section.first.scroll_into_view_if_needed()
            page.screenshot(path=str(Path(shots) / f"human-audit-{width}.png"), full_page=width > 1000)
        page.goto(f"{live_server.url}/researcher/studies/effort-demo/start/")
        page.select_option("#audit-utility_from", "people-choose:choices")
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        if shots:
            page.locator("#audit").screenshot(path=str(Path(shots) / f"audit-form-{width}.png"))
        context.close()
