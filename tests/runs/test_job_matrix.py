"""Every job kind on every study the project ships or builds, answered by simulated participants: the job is
requested through the API as a researcher would and either runs to success on the real worker or is refused
when it is requested (400) with its reason; no job fails inside the worker (issue 32, finding 2: a KeyError
'cohen_d_ci_low' in the analysis of ``tests/studies/format2_example.json``, a KeyError 'condition' in the
differential parity of an adaptive choose study).

The studies: ``studies/bundled/*.json``, ``tests/studies/*.json``, a study of every ``build_study`` template (24
synthetic defendants) and the adaptive launch studies of ``bench/adaptive.py --write-study`` (30 subjects). The
jobs: an analysis, a model audit (of the study itself; a study of judgements an audit reads, choose,
pair_comparable, triplet or feature_fairness, as the source of an audit of the effort demo), differential
parity, a study plan, and situation testing of the AI's labels of the study's subjects (where the pool has
subject groups and a model with labels).

Each study is loaded and answered once, committed, for its five cells, which run one after the other on one
worker (``_answered``): a study's set-up and one flush instead of five restores and five flushes; the learned
metric's rater bootstrap is capped at ``RESAMPLES`` refits here (the jobs' code paths are the same at any count;
the weights' intervals are tested in ``tests/fairness/test_human_metric.py``)."""

import copy
import importlib.util
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.test.utils import setup_databases, teardown_databases
from rest_framework.test import APIClient

from participation.simulate import simulate_participants
from runs.human_source_options import OPTIONS
from runs.models import Job
from studies.builder import TEMPLATES
from studies.services import latest_study, study_load
from studies.synthetic_defendants import draw_defendants
from tests.conftest import DEMO_FILE, ROOT, required, run_jobs
from tests.runs.conftest import alice
from tests.studies.test_builder import build

PARTICIPANTS = 6
RESAMPLES = 10  # the learned metric's rater-bootstrap refits (MAX_METRIC_RESAMPLES, 200 in a report)
# the example rates one pair per condition: with 30 participants its analysis reaches the effect sizes, which the
# two-stage test cannot fit (it was a KeyError 'cohen_d_ci_low' in the report)
MORE_PARTICIPANTS = {"tests/format2_example.json": 30}
# the audit option that reads a study of each task type that yields what one needs (runs.human_source_options)
SOURCE_OPTIONS = {task: name for name, option in OPTIONS.items() for task in option.tasks}
NO_EFFORT = "does not say whether more of its effort feature is good"
NO_PARITY = "differential parity compares participants' answers with the AI's outputs"
NO_PLAN = "plan_study simulates the effort design"


def _shipped(path: str) -> Callable[[], dict]:
    return lambda: json.loads((ROOT / path).read_text())


def _built(template: str) -> Callable[[], dict]:
    def spec() -> dict:
        defendants = draw_defendants(24, seed=5)
        # a true outcome and a second model's labels (hidden), for the templates that compare models' outcomes
        defendants["outcome"] = (defendants["priors"] > defendants["priors"].median()).astype(int)
        defendants["strict"] = (defendants["ai_score"] > 0.4).astype(int)
        return build(
            defendants,
            template,
            score_column="ai_score",
            group_columns=["race", "sex"],
            outcome_column="outcome",
            model_label_columns=["strict"],
            per_participant=None if template == "feature_fairness" else 6,
            slug=f"built-{template.replace('_', '-')}",
        )

    return spec


def _adaptive(task: str) -> Callable[[], dict]:
    def spec() -> dict:
        found = importlib.util.spec_from_file_location("adaptive_bench", ROOT / "bench" / "adaptive.py")
        assert found is not None and found.loader is not None
        bench = importlib.util.module_from_spec(found)
        found.loader.exec_module(bench)
        return bench.adaptive_study_spec(30, task=task)  # what --write-study writes (--subjects 30)

    return spec


STUDIES: dict[str, Callable[[], dict]] = {
    **{
        f"bundled/{path.name}": _shipped(f"studies/bundled/{path.name}")
        for path in sorted(DEMO_FILE.parent.glob("*.json"))
    },
    **{
        f"tests/{path.name}": _shipped(f"tests/studies/{path.name}")
        for path in sorted((ROOT / "tests/studies").glob("*.json"))
    },
    **{f"template/{template}": _built(template) for template in TEMPLATES},
    **{f"adaptive/{task}": _adaptive(task) for task in ("choose", "pair_comparable", "triplet")},
}
# in the order their cells run on one study's rows: the analysis last (an audit reads the latest calibration)
KINDS = ("audit", "differential_parity", "plan", "situation_testing", "analysis")

EFFORT = {"bundled/effort_demo.json"}  # studies with an effort design (conditions that say what is desirable)
PARITY = {  # studies with fair_score or agree blocks
    "bundled/effort_demo.json",
    "bundled/disagreement_synthetic.json",
    "tests/format2_example.json",
    "tests/translated_study.json",
    "template/disagreement",
}


def refusal(study: str, kind: str, task_blocks: set[str]) -> str:
    """The reason the request must be refused with, or "" when the job must succeed."""
    if kind == "audit" and study not in EFFORT and not task_blocks & set(SOURCE_OPTIONS):
        return NO_EFFORT
    if kind == "differential_parity" and study not in PARITY:
        return NO_PARITY
    if kind == "plan" and study == "tests/format2_example.json":
        return "needs at least 3 distinct pairs per condition"  # one rated pair per condition
    if kind == "plan" and study not in EFFORT:
        return NO_PLAN
    return ""


def situation_testing_applies(spec: dict) -> bool:
    """Situation testing of the AI's labels compares subjects across a group: the pool has a subject group
    with two values or more."""
    subjects = spec["pools"][0]["subjects"]
    groups = {column for s in subjects for column in s.get("groups", {})}
    return any(len({str(s.get("groups", {}).get(c)) for s in subjects}) > 1 for c in groups)


def _require_postgres() -> None:
    if connection.vendor != "postgresql":
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires PostgreSQL")
        pytest.skip("the job matrix runs on PostgreSQL (CI): set DATABASE_URL")


def _csv(frame: pd.DataFrame) -> io.BytesIO:
    upload = io.BytesIO(frame.to_csv(index=False).encode())
    upload.name = "subjects.csv"
    return upload


def _pool_frame(spec: dict) -> pd.DataFrame:
    """The study's first pool, one row per subject: id, its features and groups, x_0... (its series, else three
    drawn values), score_ai and ai_label (the AI's output, else 0.5 and 0)."""
    rng = np.random.default_rng(0)
    rows = []
    for s in spec["pools"][0]["subjects"]:
        ai = s.get("models", {}).get("ai", {})
        series = s.get("series") or rng.integers(0, 5, 3).tolist()
        rows.append(
            {
                "id": s["id"],
                **s.get("features", {}),
                **s.get("groups", {}),
                **{f"x_{t}": v for t, v in enumerate(series)},
                "score_ai": ai.get("score", 0.5),
                "ai_label": ai.get("label", 0),
                **({"outcome": s["outcome"]} if "outcome" in s else {}),
            }
        )
    frame = pd.DataFrame(rows)
    return frame if "race" in frame else frame.assign(race="Black")  # the audit's inertia reads race


def _request(api: APIClient, kind: str, study, researcher):
    """POST the job's request as the API documents it, with small sizes."""
    slug, spec = study.slug, study.spec
    if kind == "analysis":
        return api.post(f"/api/studies/{slug}/analyses/", {"seed": 2, "n_resamples": 100}, format="json")
    if kind == "differential_parity":
        return api.post(f"/api/studies/{slug}/differential-parity/", {}, format="json")
    if kind == "plan":
        return api.post(f"/api/studies/{slug}/plans/", {"n": 4, "studies": 1, "resamples": 100}, format="json")
    frame = _pool_frame(spec)
    if kind == "audit":
        task = next((b["task"] for b in spec["blocks"] if b.get("task") in SOURCE_OPTIONS), None)
        if task is None:
            return api.post(f"/api/studies/{slug}/audits/", {"subjects": _csv(frame)}, format="multipart")
        study_load(spec=json.loads(DEMO_FILE.read_text()), owner=researcher)  # the audited effort study
        body = {"subjects": _csv(frame), SOURCE_OPTIONS[task]: slug}
        if "outcome" in frame:  # the true outcomes (what the trade-off features are computed against)
            body["outcome_column"] = "outcome"
        return api.post("/api/studies/effort-demo/audits/", body, format="multipart")
    group = next(c for c in frame if c in spec["pools"][0]["subjects"][0].get("groups", {}) and frame[c].nunique() > 1)
    body = {
        "data": _csv(frame.drop(columns=["id", "score_ai"]).select_dtypes(include="number").assign(g=frame[group])),
        "protected": "g",
        "protected_value": str(frame[group].iloc[0]),
        "target": "ai_label",
        "negative": "1",
        "k": [3],
    }
    return api.post("/api/situation-testing/", body, format="multipart")


@dataclass
class Answered:
    """A study loaded by the researcher and taken by simulated participants, its rows committed."""

    name: str
    researcher: Any
    study: Any


@dataclass
class Cells:
    """The study of the running cells, made by the first of its cells (a study's cells run one after the other, on
    one worker): one set-up and one flush per study, where a transactional test each would restore it and flush
    the database; the cells' jobs' rows stay while the study's next cells run (the analysis runs last: an audit
    reads a study's latest calibration). The database is flushed when the module ends."""

    blocker: Any
    current: Answered | None = None
    set_up: Any = None  # the test database set up here (django.test.utils.setup_databases), if this did

    def study(self, name: str) -> Answered:
        """The researcher and the study ``name`` loaded by her and taken by simulated participants (seed 1)."""
        if self.current is not None and self.current.name == name:
            return self.current
        if self.current is None:
            self._test_database()
        else:
            _flush()
        with transaction.atomic():  # one commit, not one per simulated page
            researcher = alice()
            study = study_load(spec=STUDIES[name](), owner=researcher).study
            simulate_participants(study.slug, n=MORE_PARTICIPANTS.get(name, PARTICIPANTS), seed=1, decline_rate=0)
        # the spec as loaded: PostgreSQL's jsonb does not keep the order of its keys, which picks the situation
        # test's group column (the first of a subject's groups with two values)
        spec = copy.deepcopy(study.spec)
        study = latest_study(study.slug)
        study.spec = spec
        self.current = Answered(name, researcher, study)
        return self.current

    def _test_database(self) -> None:
        """pytest-django sets up the test database for a session holding a test marked ``django_db``; these cells
        are not (their rows are committed across cells): a session of them alone sets it up here."""
        if connection.settings_dict["NAME"] != connection.creation._get_test_db_name():
            self.set_up = setup_databases(verbosity=0, interactive=False, aliases={DEFAULT_DB_ALIAS})

    def close(self) -> None:
        with self.blocker.unblock():
            if self.current is not None:
                _flush()
            if self.set_up is not None:
                teardown_databases(self.set_up, verbosity=0)


@pytest.fixture(scope="module")
def _cells(django_db_setup, django_db_blocker) -> Iterator[Cells]:
    cells = Cells(django_db_blocker)
    yield cells
    cells.close()


def _flush() -> None:
    """Empty the test database, as a transactional test's teardown does."""
    call_command("flush", verbosity=0, interactive=False)


# the cells that take 2 CPU-s or more (bench/suite_cpu.py): slow, out of ``make test-fast``. A study's first cell
# (its audit) carries the study's set-up (loading and simulating) too; the audits of judgement studies and the
# example's differential parity take less since the worker compiles the numba kernels and loads plotly's validators
# before forking its jobs (runs.worker.preload_runners)
SLOW = {
    ("bundled/effort_demo.json", "analysis"),
    ("bundled/effort_demo.json", "audit"),
    ("bundled/disagreement_synthetic.json", "audit"),
    ("tests/format2_example.json", "audit"),
    *((f"template/{name}", "audit") for name in ("choice", "comparable", "feature_fairness", "tradeoff", "triplet")),
    *((f"adaptive/{task}", "audit") for task in ("choose", "pair_comparable", "triplet")),
}
CASES = [
    pytest.param(name, kind, marks=[pytest.mark.slow] if (name, kind) in SLOW else [])
    for name in STUDIES
    for kind in KINDS
]


@pytest.mark.postgres
@pytest.mark.parametrize(("name", "kind"), CASES)
def test_a_job_succeeds_or_is_refused_when_requested(name, kind, _cells, django_db_blocker, monkeypatch):
    _require_postgres()
    with django_db_blocker.unblock():
        answered = _cells.study(name)
        researcher, study = answered.researcher, answered.study
        for module in ("fairness.human_metric", "runs.human_sources"):  # the worker forks this process: it sees them
            monkeypatch.setattr(f"{module}.MAX_METRIC_RESAMPLES", RESAMPLES)
        api = APIClient()
        api.force_authenticate(researcher)
        if kind == "situation_testing" and not situation_testing_applies(study.spec):
            assert name == "tests/translated_study.json"  # its pool's subjects have no groups
            return
        jobs_before = set(Job.objects.values_list("pk", flat=True))
        response = _request(api, kind, study, researcher)
        reason = refusal(name, kind, {b["task"] for b in study.spec["blocks"] if b["type"] == "task"})
        if reason:
            assert response.status_code == 400, response.content
            assert reason in response.content.decode()
            new = Job.objects.exclude(pk__in=jobs_before).exclude(kind=Job.Kind.ADAPTIVE_REFIT)
            assert not new.exists()  # nothing queued
            return
        assert response.status_code == 202, response.content
        run_jobs()
        job = Job.objects.get(pk=response.json()["id"])
        if job.status == Job.Status.QUEUED:  # its process died (the machine's memory) and it was queued again once
            run_jobs()
            job.refresh_from_db()
        assert job.status == Job.Status.SUCCEEDED, f"{job.status}: {job.error}\n{job.log}"
        assert job.result
