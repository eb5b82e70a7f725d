"""Web workers stay light: serving participant pages, the dashboard and API reads imports no scientific
library (they are for job workers and commands; ``bench/web_worker.py`` measures the memory this saves).

Checked in a fresh interpreter (this test process has loaded everything already): it starts as a
gunicorn worker does (``config.wsgi``, with the warm-up), takes participants through the effort demo and
a format 2 study page by page, reads the dashboard and the API, and lists the heavy modules loaded.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

HEAVY = ("scipy", "pandas", "statsmodels", "sklearn", "numba", "plotly", "pingouin", "matplotlib")

PROBE = textwrap.dedent(
    f"""
    import json, sys
    HEAVY = {HEAVY!r}

    def loaded(stage):
        found = [m for m in HEAVY if m in sys.modules]
        if found:
            sys.exit(f"{{stage}} imported {{', '.join(found)}}")

    import django
    django.setup()
    from django.core.management import call_command
    call_command("migrate", verbosity=0)
    import config.wsgi  # noqa: F401  (what a gunicorn worker imports, warm-up included)
    loaded("start-up")

    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context
    from django.contrib.auth import get_user_model
    from django.test import Client
    from participation.models import Participant
    from participation.page_bot import page_answers
    from studies.services import study_load

    # The bot (participation.page_bot: the task types' fill, which may simulate with the scientific stack)
    # answers in a process of its own on the same database: this one serves the pages, as a web worker.
    bot = ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=django.setup)

    user = get_user_model().objects.create_user("light", password="light-pass-123")
    specs = [json.load(open(f"studies/bundled/{{name}}.json")) for name in ("effort_demo", "disagreement_synthetic")]
    for spec in specs:
        study_load(spec=spec, owner=user)
    slugs = [spec["slug"] for spec in specs]
    loaded("loading the studies")

    pages = 0
    for slug in slugs:
        for n in range(2):
            client = Client()
            assert client.get(f"/s/{{slug}}/?PROLIFIC_PID=light{{n}}&STUDY_ID=s&SESSION_ID=x{{n}}").status_code == 200
            response = client.post(f"/s/{{slug}}/consent/", {{"decision": "accept"}})
            path = response["Location"]
            participant = Participant.objects.get(study__slug=slug, external_id=f"light{{n}}").pk
            while "/page/" in path:
                client.get(path)
                data = bot.submit(page_answers, participant, seed=n).result()
                response = client.post(path, data)
                assert response.status_code in (200, 302), (data["page_key"], response.status_code)
                pages += 1
                if response.status_code == 302:
                    path = response["Location"]
    bot.shutdown()
    loaded(f"{{pages}} participant pages")

    researcher = Client()
    researcher.force_login(user)
    for slug in slugs:
        for path in (
            "/researcher/",
            f"/researcher/studies/{{slug}}/",
            f"/researcher/studies/{{slug}}/runs/",
            f"/researcher/studies/{{slug}}/start/",
            "/api/studies/",
            f"/api/studies/{{slug}}/",
            f"/api/studies/{{slug}}/export/",
            f"/api/studies/{{slug}}/analyses/",
            "/api/jobs/",
        ):
            assert researcher.get(path).status_code == 200, path
    loaded("the dashboard and API reads")
    print(pages)
    """
)


def web_worker_env(tmp_path) -> dict[str, str]:
    """The environment of a fresh interpreter started as a web worker, on its own SQLite file in ``tmp_path``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "PYTHONPATH")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        SQLITE_PATH=str(tmp_path / "light.sqlite3"),
        REPORTS_DIR=str(tmp_path / "reports"),
        PYTHONPATH=str(ROOT),
        DJANGO_ALLOWED_HOSTS="testserver",
    )
    return env


@pytest.mark.slow
def test_serving_pages_dashboard_and_api_reads_imports_no_scientific_library(tmp_path):
    env = web_worker_env(tmp_path)
    run = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-2000:]
    assert int(run.stdout.split()[-1]) > 80  # every page of two participants of each study was served
