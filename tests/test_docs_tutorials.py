"""The four tutorials' commands, run as written (docs/tutorials/*.md, every ``sh`` block, in order) in a
fresh folder on the test database, so that the tutorials cannot rot. ``make demo`` serves forever: its
recipe is checked (``make -n``) and what it runs before serving, ``demo_setup``, is run with 30 simulated
participants instead of 150; ``make test`` is checked, not run (it is this suite)."""

import re
import shlex
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

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
            call_command("demo_setup", participants=30)
    else:
        raise AssertionError(f"a tutorial command the test cannot run: {command}")


@pytest.fixture
def folder(tmp_path: Path, settings, monkeypatch) -> Path:
    """A fresh working folder with the repository's ``studies/`` (the tutorials' CSV and demo file)."""
    (tmp_path / "studies").symlink_to(ROOT / "studies")
    settings.REPORTS_DIR = tmp_path / "reports"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path / "reports")}},
    }
    monkeypatch.chdir(tmp_path)
    get_user_model().objects.create_user("researcher", password="researcher-pass-123")
    return tmp_path


def test_tutorials_have_commands_and_only_runnable_ones():
    for name in ("demo", "first-study", "prolific", "audit", "own-model"):
        commands = tutorial_commands(name)
        assert commands, name
        assert all(c.startswith(MANAGE) or c in ("make demo", "make test") for c in commands), name


def test_demo_tutorial(folder):
    assert tutorial_commands("demo") == ["make demo", "make test"]
    for command in tutorial_commands("demo"):
        run(command)
    from runs.models import AnalysisRun, AuditRun

    assert AnalysisRun.objects.filter(study__slug="effort-demo").exists()
    assert AuditRun.objects.filter(study__slug="effort-demo").exists()


def test_first_study_tutorial(folder):
    for command in tutorial_commands("first-study"):
        run(command)
    assert (folder / "my_study.json").exists()
    assert (folder / "reports" / "my-first-study" / "report.html").exists()
    assert (folder / "exports" / "codebook.md").exists()
    assert (folder / "exports" / "disagreements.csv").exists()


def test_prolific_tutorial(folder, settings):
    """After the demo (the tutorial's premise: its bonus step uses the demo study). Prolific's API is the local
    fake server; once the study is published, the demo's simulated participants take part there too."""
    from participation.models import Participant
    from tests.prolific_fake import fake_prolific

    call_command("load_study", str(ROOT / "studies" / "bundled" / "effort_demo.json"), owner="researcher")
    call_command("simulate_participants", "effort-demo", n=30, seed=1)
    with fake_prolific("tutorial-token") as prolific:
        settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = "tutorial-token", prolific.url
        for command in tutorial_commands("prolific"):
            run(command)
            if "prolific_publish" in command:
                [study_id] = prolific.studies
                for pid in Participant.objects.filter(study__slug="effort-demo").values_list("external_id", flat=True):
                    prolific.add_submission(study_id, pid, status="AWAITING REVIEW")
    assert (folder / "submissions.csv").read_text().startswith("PROLIFIC_PID,SESSION_ID,action,reason")
    bonuses = (folder / "bonuses.csv").read_text().splitlines()
    assert bonuses and all(line.endswith(",0.50") for line in bonuses)
    statuses = [s["status"] for s in prolific.submissions.values()]
    assert "APPROVED" in statuses and "REJECTED" not in statuses
    assert list(prolific.payments.values()) == [1]


def test_audit_tutorial(folder):
    for command in tutorial_commands("audit"):
        run(command)
    assert (folder / "reports" / "audit" / "report.html").exists()
    assert any((folder / "reports" / "relative").iterdir())


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
