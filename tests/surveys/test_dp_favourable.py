"""Differential parity's ``favourable`` option through the relative_fairness command, the API run and
the job runner: the tests and their statistics stay, the words and the favoured group follow it."""

import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from fairness.study_parity import table_definitions
from participation.simulate import simulate_participants
from runs.models import Job
from tests.conftest import run_jobs
from tests.runs import db_snapshot
from tests.runs.conftest import researcher_and_demo

pytestmark = pytest.mark.django_db


def group_words(row):
    return (
        f"subjects whose {row['attribute']} is {row['group']}",
        f"subjects whose {row['attribute']} is not {row['group']}",
    )


def assert_follows(rows, favourable):
    """Every verdict states ``favourable`` and names the favoured group it implies; returns the number of
    rows with evidence (whose favoured group depends on the option)."""
    outcome = "risk scores" if rows[0]["comparison"].startswith("fair score") else "risk labels"
    decided = 0
    for row in rows:
        assert row["favourable"] == f"{favourable} {outcome}"
        if row["direction"] is None:
            assert row["favoured_group"] is None and row["verdict"].startswith("No evidence")
            continue
        decided += 1
        group, rest = group_words(row)
        assert row["favoured_group"] == (group if row["direction"] == favourable else rest)
        assert f"With {favourable} {outcome} being favourable" in row["verdict"]
        assert row["verdict"].endswith(
            f"favoured {row['favoured_group']} over {rest if row['favoured_group'] == group else group}."
        )
    return decided


@pytest.fixture(scope="module")
def _answered_snapshot(django_db_setup, django_db_blocker):
    return db_snapshot.take(
        researcher_and_demo, lambda _: simulate_participants("effort-demo", n=20, seed=3), blocker=django_db_blocker
    )


@pytest.fixture
def answered(_answered_snapshot, demo_study):
    """The demo study taken by 20 simulated participants (seed 3), simulated once per module."""
    db_snapshot.restore(_answered_snapshot[0])
    return demo_study


@pytest.mark.slow
def test_command_passes_favourable_through(answered, tmp_path):
    results = {}
    for favourable in ("lower", "higher"):
        out = tmp_path / favourable
        call_command("relative_fairness", "effort-demo", "--favourable", favourable, out=str(out))
        results[favourable] = json.loads((out / "results.json").read_text())
        html = (out / "report.html").read_text()
        assert f"{favourable.capitalize()} risk scores are favourable" in html
    call_command("relative_fairness", "effort-demo", out=str(tmp_path / "default"))
    assert json.loads((tmp_path / "default" / "results.json").read_text()) == results["lower"]  # the default
    decided = 0
    for table in ("fair_scores_vs_ai", "disagreements"):
        low, high = results["lower"][table], results["higher"][table]
        assert [(r["DPT"], r["pvalue"], r["direction"]) for r in low] == [
            (r["DPT"], r["pvalue"], r["direction"]) for r in high
        ]
        decided += assert_follows(low, "lower")
        assert assert_follows(high, "higher") == sum(r["direction"] is not None for r in low)
        for a, b in zip(low, high, strict=True):
            if a["direction"] is not None:  # the same evidence, the other group favoured
                assert a["favoured_group"] != b["favoured_group"]
    assert decided > 0  # the simulated answers do give evidence somewhere, so the words did change


@pytest.mark.parametrize("how", ["option", "keyword"])
def test_command_refuses_a_bad_favourable_value(demo_study, tmp_path, how):  # checked before any answer is read
    out = tmp_path / "dp"
    message = r'--favourable must be "higher" or "lower" \(which risk scores and labels are good for the subject\), got'
    args = ["--favourable", "up"] if how == "option" else []
    kwargs = {} if how == "option" else {"favourable": "up"}
    with pytest.raises(CommandError, match=message + " 'up'"):
        call_command("relative_fairness", "effort-demo", *args, out=str(out), **kwargs)
    assert not out.exists()


def test_api_refuses_a_bad_favourable_value(demo_study, researcher):  # checked before any answer is read
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post("/api/studies/effort-demo/differential-parity/", {"favourable": "up"}, format="json")
    assert response.status_code == 400
    body = response.json()
    expected = 'must be "higher" or "lower" (which risk scores and labels are good for the subject), not \'up\''
    assert body["fields"] == {"favourable": [expected]} and body["detail"] == f"favourable: {expected}"
    assert not Job.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_api_run_passes_favourable_to_the_job(answered, researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post("/api/studies/effort-demo/differential-parity/", {"favourable": "higher"}, format="json")
    assert response.status_code == 202
    assert Job.objects.get().params["favourable"] == "higher"
    run_jobs()
    job = client.get(response["Location"]).json()
    assert job["status"] == "succeeded", job["error"]
    tables = client.get("/api/studies/effort-demo/differential-parity/").json()
    assert tables == job["result"]["tables"]
    assert sum(assert_follows(tables[t], "higher") for t in ("fair_scores_vs_ai", "disagreements")) > 0
    client.force_login(researcher)
    html = b"".join(client.get(job["result"]["report_url"]).streaming_content).decode()
    assert "Higher risk scores are favourable, so DPT &gt; 0 means participants favoured the group" in html


def test_table_definitions_follow_favourable():
    lower, higher = table_definitions("lower"), table_definitions("higher")
    assert "Lower risk scores are favourable, so DPT > 0 means participants disfavoured" in lower["fair_scores_vs_ai"]
    assert "Higher risk scores are favourable, so DPT > 0 means participants favoured" in higher["fair_scores_vs_ai"]
    assert "(unfavourable for the group, since a low-risk label is favourable)" in lower["disagreements"]
    assert "(favourable for the group, since a high-risk label is favourable)" in higher["disagreements"]
    with pytest.raises(ValueError, match='favourable must be "higher" or "lower"'):
        table_definitions("up")
