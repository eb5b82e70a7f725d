"""The three source studies of the human audits, simulated once per process (``tests.runs.db_snapshot``)."""

import json
from functools import partial

import numpy as np
import pytest
from django.contrib.auth import get_user_model

from participation.simulate import simulate_participants
from studies.services import study_load
from studies.synthetic_defendants import draw_defendants
from tests.conftest import DEMO_FILE
from tests.runs import db_snapshot
from tests.studies.test_builder import build

GROUPS = ["race", "sex"]


def alice():
    """The ``researcher`` fixture's user, for a snapshot's set-up."""
    return get_user_model().objects.create_user("alice", password="alice-pass-123")


def researcher_and_demo():
    """What a test has before the snapshot's rows: alice (``researcher``) and her effort demo (``demo_study``)."""
    user = alice()
    study_load(spec=json.loads(DEMO_FILE.read_text()), owner=user)
    return user


def _simulated_sources(researcher):
    """Three studies of the researcher built from one defendants CSV, each answered by simulated participants,
    and the subjects of an audit of two models over the same defendants."""
    defendants = draw_defendants(40, seed=5)
    for template, slug, n in (("triplet", "people-alike", 30), ("choice", "people-choose", 30)):
        spec = build(defendants, template, score_column="ai_score", group_columns=GROUPS, per_participant=20, slug=slug)
        study_load(spec=spec, owner=researcher)
        simulate_participants(slug, n=n, seed=3, decline_rate=0)
    spec = build(defendants, "feature_fairness", score_column="ai_score", group_columns=GROUPS, slug="people-fair")
    study_load(spec=spec, owner=researcher)
    simulate_participants("people-fair", n=30, seed=3, decline_rate=0)
    rng = np.random.default_rng(0)
    subjects = defendants.drop(columns=["ai_label", "ai_score"]).assign(
        x_1=rng.integers(0, 5, 40), x_2=rng.integers(0, 5, 40), x_3=rng.integers(0, 5, 40)
    )
    subjects["score_ai"] = defendants["ai_score"]
    subjects["score_by_priors"] = (subjects["priors"] / subjects["priors"].max()).round(3)
    return subjects


@pytest.fixture(scope="package")
def _sources_snapshot(django_db_setup, django_db_blocker):
    return db_snapshot.take(researcher_and_demo, _simulated_sources, blocker=django_db_blocker)


@pytest.fixture
def sources(_sources_snapshot, demo_study, researcher, tmp_path, settings):
    """The three source studies, answered (as simulated once per process), and the subjects file of the audit."""
    settings.REPORTS_DIR = tmp_path / "reports"
    snapshot, subjects = _sources_snapshot
    db_snapshot.restore(snapshot)
    path = tmp_path / "subjects.csv"
    subjects.to_csv(path, index=False)
    return path


@pytest.fixture(scope="package")
def _answered_demo_snapshot(django_db_setup, django_db_blocker):
    return db_snapshot.take(
        researcher_and_demo, lambda _: simulate_participants("effort-demo", n=12, seed=9), blocker=django_db_blocker
    )


@pytest.fixture
def answered_demo(_answered_demo_snapshot, demo_study, researcher):
    """The effort demo (``demo_study``) taken by 12 simulated participants (seed 9), simulated once per process."""
    db_snapshot.restore(_answered_demo_snapshot[0])
    return demo_study


@pytest.fixture
def no_mixed_models(monkeypatch):
    """Analysis runs (and jobs forked from this process) without the effort pipeline's crossed mixed models
    (``run_pipeline(mixed_models=False)``: about two thirds of an effort analysis's CPU), for tests of a run's
    life cycle, files, versions or calibrations, not of its mixed-model table (``tests/analysis/test_pipeline.py``,
    ``test_job_matrix.py``)."""
    from analysis.pipeline import run_pipeline
    from runs import analysis_runs

    monkeypatch.setattr(analysis_runs, "run_pipeline", partial(run_pipeline, mixed_models=False))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``make test`` (``--dist loadgroup``) the tests of the three source studies (``sources``) run on one
    worker, which simulates them once: a package-scoped set-up is otherwise built on every worker that runs one."""
    for item in items:
        if item.nodeid.startswith("tests/runs/") and "sources" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("tests/runs/conftest.py::sources"))


ANSWERED_24 = "tests/runs/conftest.py::answered_24"


@pytest.fixture(scope="package")
def _answered_24_snapshot(django_db_setup, django_db_blocker) -> db_snapshot.Snapshot:
    simulate = partial(simulate_participants, "effort-demo", n=24, seed=5)
    return db_snapshot.take(researcher_and_demo, lambda _: simulate(), blocker=django_db_blocker)[0]


@pytest.fixture
def answered_24(_answered_24_snapshot, demo_study):
    """The effort demo (``demo_study``) taken by 24 simulated participants (seed 5), simulated once per process:
    enough to flag some for answer quality and analyse the rest. Its tests share a worker under ``make test``:
    mark them ``xdist_group(ANSWERED_24)``."""
    db_snapshot.restore(_answered_24_snapshot)
    return demo_study
