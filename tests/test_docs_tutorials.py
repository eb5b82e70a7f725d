"""The tutorials' commands, run as written (docs/tutorials/*.md, every ``sh`` block, in order) in a fresh
folder on the test database, so that the tutorials cannot rot. ``make demo`` serves forever: its recipe is
checked (``make -n``) and what it runs before serving, ``demo_setup``, is run; ``make test`` is checked, not
run (it is this suite). The audit tutorial (which loads and simulates the demo study itself, on a fresh database),
the demo and the first study's opening commands (build, load, simulate) run once for the four tutorials that
start from them: ``demo_setup`` then finds the demo study simulated, analysed and audited, as it does when run
again, and adds nothing (its fresh path runs the same commands as the audit tutorial)."""

import re
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import chdir
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from tests.conftest import ROOT

pytestmark = pytest.mark.django_db
TUTORIALS = ROOT / "docs" / "tutorials"
MANAGE = ".venv/bin/python manage.py "


def tutorial_commands(name: str) -> list[str]:
    """Every command of the tutorial's ``sh`` blocks, continuation lines joined, comments dropped."""
    text = (TUTORIALS / f"{name}.md").read_text()
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line:
                commands.append(line)
    return commands


def tutorial_python(name: str) -> list[str]:
    """The tutorial's ``python`` blocks (a researcher's own preparation of their data)."""
    return re.findall(r"```python\n(.*?)```", (TUTORIALS / f"{name}.md").read_text(), re.S)


def run(command: str) -> None:
    if command.startswith(MANAGE):
        call_command(*shlex.split(command.removeprefix(MANAGE)))
    elif command in ("make demo", "make test"):
        recipe = subprocess.run(["make", "-n", "-C", str(ROOT), command.split()[1]], capture_output=True, text=True)
        assert recipe.returncode == 0, recipe.stderr
        if command == "make demo":
            assert "manage.py demo_setup" in recipe.stdout and "runserver 127.0.0.1:8000" in recipe.stdout
            call_command("demo_setup")
    else:
        raise AssertionError(f"a tutorial command the test cannot run: {command}")


def reports_settings(folder: Path) -> dict:
    """The settings that put reports and stored files in ``folder / "reports"``."""
    from django.conf import settings

    location = {**settings.STORAGES["default"], "OPTIONS": {"location": str(folder / "reports")}}
    return {"REPORTS_DIR": folder / "reports", "STORAGES": {**settings.STORAGES, "default": location}}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Iterator[Path]:
    """A fresh working folder with the repository's ``studies/`` (the tutorials' CSV and demo file)."""
    (tmp_path / "studies").symlink_to(ROOT / "studies")
    monkeypatch.chdir(tmp_path)
    get_user_model().objects.create_user("researcher", password="researcher-pass-123")
    with override_settings(**reports_settings(tmp_path)):
        yield tmp_path


FIRST_STEPS = 3  # the first study's build, load and simulate commands, which the Prolific tutorial repeats


@pytest.fixture(scope="class")
def after_the_demo(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Path]:
    """A working folder where the audit tutorial's and the demo tutorial's commands and the first study's first
    steps have run, made outside any test's transaction (each test's own changes are rolled back) and removed
    after the class."""
    from core.caching import clear_process_caches
    from participation.models import Participant
    from studies.models import Study

    shared = tmp_path_factory.mktemp("tutorials")
    (shared / "studies").symlink_to(ROOT / "studies")
    slugs = ("effort-demo", "my-first-study")
    with django_db_blocker.unblock(), override_settings(**reports_settings(shared)), chdir(shared):
        user = get_user_model().objects.create_user("researcher", password="researcher-pass-123")
        try:
            for command in [
                *tutorial_commands("audit"),
                *tutorial_commands("demo"),
                *tutorial_commands("first-study")[:FIRST_STEPS],
            ]:
                run(command)
            yield shared
        finally:
            Participant.objects.filter(study__slug__in=slugs).delete()
            Study.objects.filter(slug__in=slugs).delete()
            user.delete()
            clear_process_caches()


def test_tutorials_have_commands_and_only_runnable_ones():
    for name in ("demo", "first-study", "prolific", "audit", "own-model"):
        commands = tutorial_commands(name)
        assert commands, name
        assert all(c.startswith(MANAGE) or c in ("make demo", "make test") for c in commands), name


@pytest.mark.slow
class TestAfterTheDemo:
    """The tutorials that start from the demo study (the audit tutorial; the Prolific tutorial's premise: its
    bonus step uses the demo study) and from the first study's opening steps."""

    def test_audit_tutorial(self, after_the_demo):
        assert (after_the_demo / "reports" / "audit" / "report.html").exists()
        assert any((after_the_demo / "reports" / "relative").iterdir())

    def test_demo_tutorial(self, after_the_demo):
        """``demo_setup`` after the audit tutorial keeps its analysis and audit (one of each) and its participants."""
        from participation.models import Participant
        from runs.models import AnalysisRun, AuditRun

        assert tutorial_commands("demo") == ["make demo", "make test"]
        assert AnalysisRun.objects.filter(study__slug="effort-demo").count() == 1
        assert AuditRun.objects.filter(study__slug="effort-demo").count() == 1
        assert Participant.objects.filter(study__slug="effort-demo", simulated=True).count() == 60

    def test_first_study_tutorial(self, after_the_demo):
        for command in tutorial_commands("first-study")[FIRST_STEPS:]:
            run(command)
        assert (after_the_demo / "my_study.json").exists()
        assert (after_the_demo / "reports" / "my-first-study" / "report.html").exists()
        assert (after_the_demo / "exports" / "codebook.md").exists()
        assert (after_the_demo / "exports" / "disagreements.csv").exists()

    def test_prolific_tutorial(self, after_the_demo, settings):
        """Prolific's API is the local fake server; once the study is published, the demo's simulated
        participants take part there too."""
        from participation.models import Participant
        from tests.prolific_fake import fake_prolific

        commands = tutorial_commands("prolific")
        assert commands[:FIRST_STEPS] == tutorial_commands("first-study")[:FIRST_STEPS]
        with fake_prolific("tutorial-token") as prolific:
            settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = "tutorial-token", prolific.url
            for command in commands[FIRST_STEPS:]:
                run(command)
                if "prolific_publish" in command:
                    [study_id] = prolific.studies
                    people = Participant.objects.filter(study__slug="effort-demo")
                    for pid in people.values_list("external_id", flat=True):
                        prolific.add_submission(study_id, pid, status="AWAITING REVIEW")
        assert (after_the_demo / "submissions.csv").read_text().startswith("PROLIFIC_PID,SESSION_ID,action,reason")
        bonuses = (after_the_demo / "bonuses.csv").read_text().splitlines()
        assert bonuses and all(line.endswith(",0.50") for line in bonuses)
        statuses = [s["status"] for s in prolific.submissions.values()]
        assert "APPROVED" in statuses and "REJECTED" not in statuses
        assert list(prolific.payments.values()) == [1]


@pytest.mark.slow
def test_own_model_tutorial(folder):
    """ProPublica's COMPAS file (the reference data, where the tutorial downloads it) to two studies, their
    design check, draft, pilot, live and closed, the analysis and a tabular audit of two models with the
    human-calibrated sections, no effort column anywhere; the report's assets are beside it on disk."""
    import json

    import pandas as pd

    from participation.models import Participant
    from studies.models import Study, StudyStatusChange
    from tests.conftest import REFERENCE_DATA

    (folder / "compas-scores-two-years.csv").symlink_to(
        REFERENCE_DATA / "propublica_compas" / "compas-scores-two-years.csv"
    )
    (preparation,) = tutorial_python("own-model")
    exec(compile(preparation, "own-model.md", "exec"), {})
    subjects = pd.read_csv(folder / "defendants.csv")
    assert len(subjects) == 40 and not [c for c in subjects.columns if c.startswith("x_")]
    for command in tutorial_commands("own-model"):
        run(command)
    spec = json.loads((folder / "compas_choose.json").read_text())
    (pool,) = spec["pools"]
    assert set(pool["subjects"][0]["features"]) == {"age", "priors_count", "juv_fel_count", "charge"}
    assert "score_logistic" not in json.dumps(spec)
    assert set(Study.objects.filter(slug__startswith="compas-").values_list("status", flat=True)) == {"closed"}
    changes = StudyStatusChange.objects.filter(study__slug="compas-choose").order_by("pk")
    assert [c.new_status for c in changes][-3:] == ["pilot", "live", "closed"]
    pilots = Participant.objects.filter(study__slug="compas-choose", pilot=True)
    assert pilots.count() == 3
    analysis = json.loads((folder / "reports" / "compas-choose" / "results.json").read_text())
    assert 150 < analysis["sample"]["included"] <= 180 and analysis["multiple_testing"]["method"] == "holm"
    strengths = pd.read_csv(folder / "reports" / "compas-choose" / "choices_strengths.csv")
    assert len(set(strengths["rater_group"]) - {"all participants"}) >= 3  # the design check's advice, followed
    audit = folder / "reports" / "compas-audit"
    results = json.loads((audit / "results.json").read_text())
    metrics = pd.DataFrame(results["group_metrics"])
    assert set(metrics["model"]) == {"compas", "logistic"} and set(metrics["group_column"]) == {"race", "sex"}
    assert results["human"]["human_metric_lipschitz"] and results["human"]["utility_agreement"]
    assert results["sections"]["effort"].startswith("No effort-aware sections") and results["eaif"] == []
    html = (audit / "report.html").read_text()
    assets = re.findall(r'(?:src|href)="(report-assets/[^"]+)"', html)
    assert assets and all((audit / asset).is_file() for asset in assets)
