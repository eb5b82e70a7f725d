"""The docs' notebook code (docs/how-to/use-from-a-notebook.md), run as written against a live server
with a real token (and 100 bootstrap resamples instead of 2000): it pages through every export table (pages of 50 rows
here) and runs an analysis job to the end."""

import re
import time

import pandas as pd
import pytest

from accounts.services import api_token_create
from participation.simulate import simulate_participants
from research.api.pagination import ApiPagination
from research.export import export_tables, table_records
from tests.conftest import ROOT, run_jobs

pytestmark = pytest.mark.django_db(transaction=True)


def notebook_code() -> str:
    page = (ROOT / "docs" / "how-to" / "use-from-a-notebook.md").read_text()
    return re.search(r"```python\n(.*?)```", page, re.S).group(1)


def test_docs_notebook_snippet_runs(live_server, demo_study, researcher, monkeypatch):
    simulate_participants("effort-demo", n=12, seed=9)
    _, key = api_token_create(user=researcher, name="notebook")
    code = notebook_code()
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
