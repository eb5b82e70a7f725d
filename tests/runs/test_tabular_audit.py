"""``audit_models`` on tabular data with no effort columns anywhere: a choice study built from ProPublica's COMPAS
file (chosen features), answered by simulated participants, then an audit of two models (COMPAS's decile score
and a label-only rule) with ``--groups`` and ``--outcome-column``: group metrics in Fairlearn's vocabulary against
values computed here with pandas, the stakeholders' utility section, no effort-aware section and each part's
reason; the sensitive columns are never guessed; bad columns are refused by name."""

import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from participation.simulate import simulate_participants
from studies.builder import build_study
from studies.services import study_load
from tests.runs import db_snapshot
from tests.runs.conftest import alice
from tests.studies.test_builder_features import FEATURES, compas_csv

SLUG = "compas-choose"


def _answered_study(owner, folder):
    """The choice study of the COMPAS file's defendants, answered by 12 simulated participants; the file."""
    path = compas_csv(folder)
    spec = build_study(
        "choice",
        path,
        "id",
        score_column="ai_score",
        group_columns=["race", "sex"],
        outcome_column="two_year_recid",
        feature_columns=FEATURES,
        per_participant=20,
        slug=SLUG,
    )
    study_load(spec=spec, owner=owner)
    simulate_participants(SLUG, n=12, seed=3, decline_rate=0)
    return path


@pytest.fixture(scope="module")
def _answered(django_db_setup, django_db_blocker, tmp_path_factory):
    folder = tmp_path_factory.mktemp("compas")
    return db_snapshot.take(alice, lambda owner: _answered_study(owner, folder), blocker=django_db_blocker)


@pytest.fixture
def compas_audit(_answered, researcher, tmp_path, settings):
    """The choice study (loaded, 12 simulated participants: simulated once per process, ``tests.runs.db_snapshot``)
    and the subjects file of the audit: the same 60 defendants with their shown features, race, sex, the truth and
    two models."""
    settings.REPORTS_DIR = tmp_path / "reports"
    snapshot, path = _answered
    db_snapshot.restore(snapshot)
    table = pd.read_csv(path)
    subjects = table[["id", "race", "sex", *FEATURES, "two_year_recid"]].assign(
        score_compas=table["ai_score"], label_priors=(table["priors_count"] > 3).astype(int)
    )
    out = tmp_path / "audit_subjects.csv"
    subjects.to_csv(out, index=False)
    return out


def run(subjects, tmp_path, name="audit", **options):
    out = tmp_path / name
    call_command("audit_models", study=SLUG, subjects=str(subjects), out=str(out), **options)
    return out


@pytest.mark.django_db
def test_a_tabular_audit_of_two_models_with_what_people_said(compas_audit, tmp_path):
    options = {"groups": ["race"], "outcome_column": "two_year_recid", "utility_from": f"{SLUG}:choices"}
    out = run(compas_audit, tmp_path, resamples=50, **options)  # intervals read for holding the value only
    results = json.loads((out / "results.json").read_text())
    metrics = pd.DataFrame(results["group_metrics"])
    assert set(metrics["model"]) == {"compas", "priors"} and set(metrics["group_column"]) == {"race"}
    # COMPAS's false positive rate per race and their ratio, computed here from the file
    table = pd.read_csv(compas_audit)
    label, truth = (table["score_compas"] >= 0.5).astype(int), table["two_year_recid"]
    negatives = table[truth == 0]
    fpr = (label[truth == 0] == 1).groupby(negatives["race"]).mean()
    rows = metrics[(metrics["model"] == "compas") & (metrics["metric"] == "false_positive_rate")].set_index("quantity")
    for race, value in fpr.items():
        assert rows.loc[race, "value"] == pytest.approx(value)
        assert rows.loc[race, "ci_low"] <= value <= rows.loc[race, "ci_high"]
    assert rows.loc["ratio", "value"] == pytest.approx(fpr.min() / fpr.max())
    assert rows.loc["difference", "value"] == pytest.approx(fpr.max() - fpr.min())
    priors = metrics[(metrics["model"] == "priors") & (metrics["quantity"] == "overall")].set_index("metric")
    assert priors.loc["selection_rate", "value"] == pytest.approx((table["priors_count"] > 3).mean())
    utility = pd.read_csv(out / "utility_agreement.csv")
    assert set(utility["model"]) == {"compas", "priors"}
    sections = results["sections"]
    assert sections["effort"].startswith("No effort-aware sections: the subjects carry no effort series")
    assert "by race (named with --groups)" in sections["group_metrics"]
    assert results["eaif"] == [] and not (out / "eaif.csv").exists()
    html = (out / "report.html").read_text()
    assert "Group metrics (Fairlearn&#x27;s vocabulary)" in html or "Group metrics (Fairlearn's vocabulary)" in html
    assert "Agreement with the stakeholders" in html and "Effort-aware individual fairness" not in html
    assert "EaIF per model" not in html and "Traditional (effort-unaware)" not in html


@pytest.mark.django_db
def test_without_groups_nothing_is_guessed(compas_audit, tmp_path):
    """The file's race, sex and feature columns have few values each: none becomes a group unless named."""
    out = run(compas_audit, tmp_path, resamples=2)  # no interval read
    results = json.loads((out / "results.json").read_text())
    metrics = pd.DataFrame(results["group_metrics"])
    assert set(metrics["group_column"]) == {""} and set(metrics["quantity"]) == {"overall"}
    assert set(metrics["metric"]) == {"selection_rate"}  # no truth named: no error rates
    assert "no sensitive column was named (--groups)" in results["sections"]["group_metrics"]
    assert "need the truth (--outcome-column)" in results["sections"]["group_metrics"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "edit", "message"),
    [
        ({"groups": ["ethnicity"]}, None, "--groups: 'ethnicity' is not a column of the subjects file"),
        ({"groups": ["score_compas"]}, None, "--groups: 'score_compas' is the id, a model or the truth"),
        ({"outcome_column": "recid"}, None, "--outcome-column: 'recid' is not a column of the subjects file"),
        ({}, lambda t: t.assign(label_priors=2), "column 'label_priors' must be 0 or 1; rows [0, 1, 2, 3, 4]"),
        ({}, lambda t: t.assign(x_1=1, x_2=2), "an effort series needs at least 3 effort columns"),
        ({}, lambda t: t.drop(columns=["score_compas", "label_priors"]), "score_<model> or label_<model>"),
    ],
)
def test_bad_columns_are_refused_by_name(compas_audit, tmp_path, options, edit, message):
    if edit is not None:
        edit(pd.read_csv(compas_audit)).to_csv(compas_audit, index=False)
    with pytest.raises(CommandError) as caught:
        run(compas_audit, tmp_path, **options)
    assert message in str(caught.value)


def test_labels_and_scores_stand_in_for_each_other():
    from fairness.model_audit import read_subjects

    frame = pd.DataFrame({"id": [1, 2, 3], "score_a": [0.2, 0.5, 0.9], "label_b": [1, 0, 1]})
    subjects = read_subjects(frame)
    assert subjects.models == ["a", "b"] and subjects.group_columns == [] and subjects.series_columns == []
    assert subjects.labels("a").tolist() == [0, 1, 1] and subjects.scores("b").tolist() == [1.0, 0.0, 1.0]
    assert np.array_equal(subjects.scores("a"), [0.2, 0.5, 0.9])


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_form_lists_the_files_columns_and_the_report_renders(compas_audit, tmp_path, browser, live_server):  # noqa: F811
    """The audit form lists the chosen file's columns (not the id, the models' or effort columns) for the
    sensitive and truth selects; the tabular report's group-metrics sections render without horizontal scroll,
    at 1280 and 390 px (``REPORT_SCREENSHOTS=DIR`` keeps the screenshots)."""
    import os
    from pathlib import Path

    from django.urls import reverse

    from runs.models import AuditRun
    from tests.surveys.test_report_browser import open_as_alice

    run(compas_audit, tmp_path, groups=["race", "sex"], outcome_column="two_year_recid", resamples=5)  # drawn
    report = reverse("researcher:audit-file", args=[AuditRun.objects.latest("pk").pk, "report.html"])
    shots = os.environ.get("REPORT_SCREENSHOTS")
    for width, height in ((1280, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        open_as_alice(page, live_server, f"/researcher/studies/{SLUG}/start/")
        page.set_input_files("#audit-subjects", str(compas_audit))
        page.locator("#audit-groups option").first.wait_for(state="attached")
        listed = page.locator("#audit-groups option").all_inner_texts()
        assert listed == ["race", "sex", *FEATURES, "two_year_recid"]
        page.select_option("#audit-groups", ["race", "sex"])
        page.select_option("#audit-outcome", "two_year_recid")
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.locator("#audit").screenshot(path=str(Path(shots) / f"tabular-audit-form-{width}.png"))
        page.goto(f"{live_server.url}{report}")
        heading = page.get_by_role("heading", name="Group metrics by race (bars: value; whiskers: 95% CI)")
        section = page.locator("section", has=heading).first
        section.locator(".main-svg").first.wait_for(timeout=20000)
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        if shots:
            page.screenshot(path=str(Path(shots) / f"tabular-audit-report-{width}.png"), full_page=True)
        context.close()
