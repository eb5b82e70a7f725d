"""Wording that follows the study's design: the analysis report and the analysis form of a choice study
say nothing of the effort study (its Calibration, Eq. 5, trajectories); a study whose pair_distance blocks
miss a measure is told why it has no effort analysis; the effort study keeps its wording."""

import json
import os
import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.test import Client

from runs.analysis_runs import NO_EFFORT_BLOCK, NO_PAIR_DISTANCE
from runs.models import AnalysisRun, Calibration
from tests.tasks.test_choose import choice_spec

pytestmark = pytest.mark.django_db
EFFORT_WORDS = re.compile(r"Eq\. 5|Calibration stored|calibration of alpha|trajector|pair_distance|Likert", re.I)
QUIET = {"stdout": open(os.devnull, "w")}


def _analyse(slug: str, out: Path, **options) -> str:
    call_command("simulate_participants", slug, n=8, seed=3, **QUIET)
    call_command("analyze_study", slug, out=str(out), resamples=50, **options, **QUIET)
    return (out / "report.html").read_text()


def test_a_choice_studys_report_has_no_effort_wording(researcher, tmp_path, settings):
    from studies.services import study_load

    settings.REPORTS_DIR = tmp_path / "reports"
    study_load(spec=choice_spec(), owner=researcher)
    html = _analyse("choose-loan", tmp_path / "out")
    assert "Bradley-Terry strengths" in html  # the choice block's own sections are there
    assert EFFORT_WORDS.findall(html) == [] and "Calibration" not in html
    assert AnalysisRun.objects.get().results["effort"] == {"note": NO_PAIR_DISTANCE}
    assert not Calibration.objects.exists()


def test_pair_distance_blocks_without_every_measure_say_why_there_is_no_calibration(researcher, tmp_path, settings):
    from studies.services import study_load

    settings.REPORTS_DIR = tmp_path / "reports"
    spec = json.loads((Path(django_settings.BASE_DIR) / "tests" / "studies" / "format2_example.json").read_text())
    block = next(b for b in spec["blocks"] if b.get("task") == "pair_distance")
    block["measures"] = ["overall"]  # not trajectory and aggregate: Eq. 5 cannot be fitted
    study = study_load(spec=spec, owner=researcher).study
    html = _analyse(study.slug, tmp_path / "out")
    assert NO_EFFORT_BLOCK in html.replace("&#x27;", "'")
    assert AnalysisRun.objects.get().results["effort"] == {"note": NO_EFFORT_BLOCK}


def _start_page(user, slug: str) -> str:
    client = Client()
    client.force_login(user)
    return client.get(f"/researcher/studies/{slug}/start/").content.decode()


def _analysis_hint(user, slug: str) -> str:
    body = _start_page(user, slug)
    return re.search(r'<section class="card" id="analysis".*?</form>', body, re.S).group(0)


def test_the_analysis_form_names_what_a_choice_study_estimates(researcher):
    from studies.services import study_load

    study_load(spec=choice_spec(), owner=researcher)
    form = _analysis_hint(researcher, "choose-loan")
    assert "<code>loan</code> (choose): Bradley-Terry strengths of the subjects by rater group" in form
    assert EFFORT_WORDS.findall(form) == [] and "alpha" not in form
    assert 'id="no-parity"' in _start_page(researcher, "choose-loan")  # no fair scores or yes/no labels to compare


def test_the_analysis_form_of_the_effort_study_names_its_calibration(demo_study, researcher):
    form = _analysis_hint(researcher, "effort-demo")
    assert "a new Calibration of alpha per condition" in form
    page = _start_page(researcher, "effort-demo")
    assert 'id="no-parity"' not in page and 'id="dp-alpha"' in page
