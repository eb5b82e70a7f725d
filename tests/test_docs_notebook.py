"""The docs' notebook code (docs/how-to/use-from-a-notebook.md), run as written: on the demo study's exported
CSV files in a Python without Django, and against a live server with a real token (and 100 bootstrap resamples
instead of 2000): it pages through every export table (pages of 50 rows here) and runs an analysis job to the end."""

import json
import os
import re
import subprocess
import sys
import time

import pandas as pd
import pytest
from django.core.management import call_command

from accounts.services import api_token_create
from analysis.effort_weight import alpha_estimate
from participation.simulate import simulate_participants
from research.api.pagination import ApiPagination
from research.export import export_tables, table_records
from tests.conftest import ROOT, run_jobs

pytestmark = pytest.mark.slow


def notebook_code(section: int) -> str:
    """The page's ``section``-th Python block: 0 on CSV files, 1 through the API."""
    page = (ROOT / "docs" / "how-to" / "use-from-a-notebook.md").read_text()
    return re.findall(r"```python\n(.*?)```", page, re.S)[section]


@pytest.mark.django_db  # the snippet's process reads the exported files, not the database
def test_docs_csv_snippet_runs_without_django(demo_study, tmp_path):
    """The exported pairs give the alphas the platform computes from its own tables, and the audit's
    selection rates are the subjects file's label means by group."""
    simulate_participants("effort-demo", n=12, seed=9)
    call_command("export_responses", "effort-demo", "--format", "csv", "--out", str(tmp_path / "exports"))
    code = notebook_code(0)
    assert code.count('"exports/pairs.csv"') == 1
    code = code.replace('"exports/pairs.csv"', repr(str(tmp_path / "exports" / "pairs.csv")))
    code += (
        "\nimport json, sys\n"
        "print(json.dumps({'django': 'django' in sys.modules, 'alphas': alphas.to_dict('records'),"
        " 'rates': rates.to_dict('records')}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["django"] is False
    pairs = export_tables("effort-demo").pairs
    expected = {c: alpha_estimate(frame).statistic for c, frame in pairs.groupby("condition")}
    assert {row["condition"]: row["alpha"] for row in out["alphas"]} == pytest.approx(expected, rel=1e-9)
    subjects = pd.read_csv(ROOT / "studies" / "bundled" / "synthetic_defendants.csv")
    for column in ("race", "sex"):
        by_group = subjects.groupby(column)["ai_label"].mean().to_dict()
        got = {r["quantity"]: r["value"] for r in out["rates"] if r["group_column"] == column}
        assert {g: got[g] for g in by_group} == pytest.approx(by_group)
        assert got["difference"] == pytest.approx(max(by_group.values()) - min(by_group.values()))


@pytest.mark.django_db(transaction=True)  # the live server's threads and the job worker read the data
def test_docs_notebook_snippet_runs(live_server, demo_study, researcher, monkeypatch):
    simulate_participants("effort-demo", n=12, seed=9)
    _, key = api_token_create(user=researcher, name="notebook")
    code = notebook_code(1)
    for placeholder, value in (
        ('"http://127.0.0.1:8000"', repr(live_server.url)),
        ('"Token hcf_..."', repr(f"Token {key}")),
        ('"n_resamples": 2000', '"n_resamples": 100'),  # the same job, faster
    ):
        assert code.count(placeholder) == 1, placeholder
        code = code.replace(placeholder, value)
    monkeypatch.setattr(ApiPagination, "max_limit", 50)  # the page asks for 1000 a page: get 50, follow next
    requested: list[str] = []
    real_sleep = time.sleep

    def worker_instead_of_waiting(seconds: float) -> None:
        """The snippet sleeps while the job is queued: run the queued jobs then (a worker's turn)."""
        if requested:
            return real_sleep(seconds)
        requested.append("ran")
        run_jobs()

    monkeypatch.setattr(time, "sleep", worker_instead_of_waiting)
    namespace: dict = {}
    exec(compile(code, "docs/how-to/use-from-a-notebook.md", "exec"), namespace)  # noqa: S102 - our own docs

    expected = export_tables("effort-demo")
    assert list(namespace["tables"]) == [name for name, _ in expected.items()]  # the study's own tables
    for name, frame in namespace["tables"].items():
        # as the snippet builds them: JSON records into a frame (blank numbers become NaN)
        pd.testing.assert_frame_equal(frame, pd.DataFrame(table_records(getattr(expected, name))), obj=name)
    assert len(namespace["tables"]["pairs"]) == 12 * 12 > 50  # several pages were followed
    assert requested == ["ran"]
    calibrations = namespace["calibrations"]
    assert set(calibrations["condition"]) == {"arrests", "income"}
    assert namespace["report_url"].startswith(live_server.url + "/researcher/runs/analysis/")
