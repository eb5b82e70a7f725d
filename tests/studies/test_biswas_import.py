"""The Biswas et al. (COMPASS 2020) TurkPrime release imported as a completed study (``import_crowd_study
biswas``), and its in-group analysis: respondents' race x defendants' race, computed by the platform from
its own rows, equals the same computation on the release directly."""

from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from fairness.datasets import load_biswas
from fairness.rater_groups import ALL
from participation.imports import crowd_study_import
from participation.models import Answer, Participant
from runs.design_analysis import study_analysis
from tests.conftest import REFERENCE_DATA

BISWAS = REFERENCE_DATA / "biswas_turkprime"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not BISWAS.exists(), reason="reference data not present")]


@pytest.fixture(scope="module")
def imported(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        result = crowd_study_import(source="biswas", path=BISWAS)
        yield result
        Participant.objects.filter(study=result.study).delete()
        result.study.delete()


@pytest.mark.django_db
def test_import_stores_every_respondent_and_answer(imported):
    assert imported.action == "imported" and imported.participants == 988
    answers = Answer.objects.filter(participant__study=imported.study)
    assert answers.filter(measure="agree").count() == 19_760
    assert answers.filter(measure="questionnaire").count() == 988 * 7 - 19  # 19 respondents without an age
    person = Participant.objects.get(study=imported.study, external_id="251-v1")  # the file's first row
    stored = dict(person.answers.filter(measure="questionnaire").values_list("question", "text"))
    assert stored["about_you/race"] == "Caucasian" and stored["about_you/political_views"] == "Very conservative"
    assert stored["about_you/education"] == "secondary or post-secondary non-tertiary"
    first = person.answers.get(question="predict/3350/agree")  # decision 0, COMPAS decile 1 (label 0)
    assert first.number == 1
    assert Participant.objects.filter(study=imported.study, external_id="124-v15-2").exists()


@pytest.mark.django_db
def test_second_import_changes_nothing(imported):
    before = Answer.objects.filter(participant__study=imported.study).count()
    out = StringIO()
    call_command("import_crowd_study", "biswas", "--path", str(BISWAS), stdout=out)
    assert "already imported (988 participants" in out.getvalue()
    assert Answer.objects.filter(participant__study=imported.study).count() == before


@pytest.mark.django_db
def test_in_group_analysis_equals_the_release(imported):
    """Per respondent: share predicting recidivism for African-American minus Caucasian defendants; mean per
    respondent race. From the release: African-American respondents -0.030, Caucasian +0.029 (Biswas et al.'s
    in-group pattern: each group predicts less recidivism for its own race)."""
    result = study_analysis("biswas", imported.study.spec, by=["race"], n_resamples=50, n_permutations=50)
    block = next(b for b in result.blocks if b.block == "predict")
    table = block.tables["in_group"].query("measure == 'predicted' and subject_attribute == 'race'")
    platform = table.set_index("rater_group")["gap"]
    release = load_biswas(BISWAS)
    per_person = release.pivot_table(index="respondent", columns="def_race", values="resp_decision", aggfunc="mean")
    gaps = (per_person["African-American"] - per_person["Caucasian"]).dropna()
    race = release.groupby("respondent")["resp_race"].first()
    expected = gaps.groupby(race).mean()
    assert platform["African-American"] == pytest.approx(expected["African-American"], abs=1e-12)
    assert platform["Caucasian"] == pytest.approx(expected["Caucasian"], abs=1e-12)
    assert platform[ALL] == pytest.approx(gaps.mean(), abs=1e-12)
    assert expected["African-American"] < 0 < expected["Caucasian"]
    tests = block.tables["tests"].query("measure == 'in-group: predicted'")
    assert set(tests["subject_attribute"]) == {"age", "race", "sex"}  # age in years binned at its quartiles
    test = tests.query("subject_attribute == 'race'").iloc[0]
    assert test["difference"] == pytest.approx(expected["Caucasian"] - expected["African-American"])
    assert 0 < test["pvalue"] <= 1 and np.isfinite(table["ci_low"]).all()
