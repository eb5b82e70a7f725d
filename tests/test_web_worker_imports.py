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

from tests.conftest import ROOT

HEAVY = ("scipy", "pandas", "statsmodels", "sklearn", "numba", "plotly", "pingouin", "matplotlib")

PROBE = textwrap.dedent(
    f"""
    import json, re, sys
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

    from django.contrib.auth import get_user_model
    from django.test import Client
    from participation.loadclient import HTTPParticipant
    from studies.services import study_load

    user = get_user_model().objects.create_user("light", password="light-pass-123")
    specs = [json.load(open(f"studies/bundled/{{name}}.json")) for name in ("effort_demo", "disagreement_synthetic")]
    for spec in specs:
        study_load(spec=spec, owner=user)
    slugs = [spec["slug"] for spec in specs]
    loaded("loading the studies")

    pages = 0
    for slug, spec in zip(slugs, specs):
        checks = {{c["key"]: c["correct"] for c in spec.get("attention_checks", {{}}).get("items", [])}}
        checks.update({{b["key"]: b["correct"] for b in spec.get("blocks", []) if b["type"] == "attention"}})
        for n in range(2):
            client = Client()
            person = HTTPParticipant(0, f"light-{{slug}}-{{n}}", checks, slug=slug, seed=n)
            assert client.get(f"/s/{{slug}}/?PROLIFIC_PID=light{{n}}&STUDY_ID=s&SESSION_ID=x{{n}}").status_code == 200
            response = client.post(f"/s/{{slug}}/consent/", {{"decision": "accept"}})
            path = response["Location"]
            while "/page/" in path:
                html = client.get(path).content.decode()
                key = re.search(r'name="page_key" value="([^"]+)"', html).group(1)
                response = client.post(path, person.answer(key, html))
                assert response.status_code in (200, 302), (key, response.status_code)
                pages += 1
                if response.status_code == 302:
                    path = response["Location"]
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


def test_serving_pages_dashboard_and_api_reads_imports_no_scientific_library(tmp_path):
    env = web_worker_env(tmp_path)
    run = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-2000:]
    assert int(run.stdout.split()[-1]) > 80  # every page of two participants of each study was served
