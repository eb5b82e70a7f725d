"""Adaptive assignment of choose, pair_comparable and triplet blocks (``participation.adaptive``,
``runs.adaptive``, ``analysis.adaptive_design``): validation, the balanced fallback before a fit, the
scores against numpy, decisions reproduced from the stored fits, simultaneous participants (PostgreSQL,
threads), whole studies through the simulator with refits by the job, no scientific library in the web
worker, and by simulation a narrower CI than balanced assignment."""

import dataclasses
import json
import re
import threading

import numpy as np
import pytest
from django.db import connection

from analysis.adaptive_design import CHOICE, COMPARABLE, TRIPLET, Fit, comparable_information, item_score, record
from studies.format2 import MAX_CANDIDATES, MAX_REFIT_EVERY
from studies.study_file import InvalidStudyFile, validate_study
from tests.conftest import ROOT
from tests.tasks.test_choose import SUBJECTS, choice_spec
from tests.tasks.test_triplet import SUBJECTS as METRIC_SUBJECTS
from tests.tasks.test_triplet import triplet_spec

PAIRS = len(SUBJECTS) * (len(SUBJECTS) - 1) // 2  # 10


def adaptive_spec(per_participant: int = 4, **adaptive) -> dict:
    return choice_spec(assignment={"per_participant": per_participant, "adaptive": adaptive})


def metric_spec(task: str, per_participant: int = 4, **adaptive) -> dict:
    """``tests.tasks.test_triplet``'s study (eight defendants, six features) with an adaptive block: its
    16 triplets, or (``pair_comparable``) every one of the 28 pairs of its subjects."""
    assignment = {"assignment": {"per_participant": per_participant, "adaptive": adaptive}}
    if task == "triplet":
        return triplet_spec(**assignment)
    spec = triplet_spec()
    pairs = [{"a": a, "b": b} for i, a in enumerate(METRIC_SUBJECTS) for b in METRIC_SUBJECTS[i + 1 :]]
    spec["slug"] = "comparable-sim"
    spec["blocks"][-1] = {
        "key": "alike",
        "type": "task",
        "task": "pair_comparable",
        "pool": "subjects",
        "pairs": pairs,
        **assignment,
    }
    return spec


def spec_of(task: str, **adaptive) -> dict:
    return adaptive_spec(**adaptive) if task == "choose" else metric_spec(task, **adaptive)


def test_adaptive_options_are_validated_with_path_and_rule():
    block = validate_study(adaptive_spec(refit_every=5))["blocks"][-1]
    assert block["assignment"]["adaptive"] == {"refit_every": 5}
    agree = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    task = next(b for b in agree["blocks"] if b["type"] == "task")
    task["assignment"] = {"per_participant": 2, "adaptive": {}}
    where = f"blocks[{agree['blocks'].index(task)}]"
    problems = {
        "blocks[4].assignment.adaptive: needs per_participant": choice_spec(assignment={"adaptive": {}}),
        "blocks[4].assignment.stratify_by: not with adaptive": choice_spec(
            assignment={"per_participant": 2, "stratify_by": "race", "adaptive": {}}
        ),
        f"{where}.assignment.adaptive: adaptive assignment is available for choose, pair_comparable, triplet "
        "blocks": agree,
        "blocks[4].assignment.adaptive.refit_every": adaptive_spec(refit_every=0),
        "blocks[4].assignment.adaptive": adaptive_spec(every=3),
    }
    for message, bad in problems.items():
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)
    for task in ("triplet", "pair_comparable"):
        block = validate_study(metric_spec(task, refit_every=5, candidates=3))["blocks"][-1]
        assert block["task"] == task and block["assignment"]["adaptive"] == {"refit_every": 5, "candidates": 3}
        with pytest.raises(InvalidStudyFile, match=re.escape("blocks[4].assignment.adaptive.candidates")):
            validate_study(metric_spec(task, candidates=0))


def test_adaptive_options_are_bounded_above():
    """1,000,000,000 candidates was accepted (a decision stored ~55 KB of scored candidates)."""
    largest = validate_study(adaptive_spec(refit_every=MAX_REFIT_EVERY, candidates=MAX_CANDIDATES))["blocks"][-1]
    assert largest["assignment"]["adaptive"] == {"refit_every": MAX_REFIT_EVERY, "candidates": MAX_CANDIDATES}
    problems = {
        f"blocks[4].assignment.adaptive.candidates: must be <= {MAX_CANDIDATES} (got 1000000000)": adaptive_spec(
            candidates=10**9
        ),
        f"blocks[4].assignment.adaptive.candidates: must be <= {MAX_CANDIDATES} (got {MAX_CANDIDATES + 1})": (
            metric_spec("triplet", candidates=MAX_CANDIDATES + 1)
        ),
        f"blocks[4].assignment.adaptive.refit_every: must be <= {MAX_REFIT_EVERY} (got {MAX_REFIT_EVERY + 1})": (
            adaptive_spec(refit_every=MAX_REFIT_EVERY + 1)
        ),
    }
    for message, bad in problems.items():
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)


def test_the_score_matches_the_sherman_morrison_update():
    """The score is the drop in the variances after one more choice of the pair, each divided by its
    standard deviation, computed here with numpy from V - w V x x'V / (1 + w x'Vx), applied once for the
    pending information W and once more for w."""
    rng = np.random.default_rng(0)
    m = rng.normal(size=(4, 4))
    v = m @ m.T
    c = np.eye(4) - 1 / 4
    v = c @ v @ c
    fit = Fit(1, ["a", "b", "c", "d"], [0.3, -0.1, 0.5, -0.7], v.tolist())
    x = np.array([1.0, 0.0, -1.0, 0.0])
    p = 1 / (1 + np.exp(-(0.3 - 0.5)))
    w, big_w = p * (1 - p), 0.4

    def update(cov, weight):
        return cov - weight * np.outer(cov @ x, cov @ x) / (1 + weight * x @ cov @ x)

    after_pending = update(v, big_w)
    expected = np.sum((np.diagonal(after_pending) - np.diagonal(update(after_pending, w))) / np.sqrt(np.diagonal(v)))
    assert item_score(CHOICE, fit, {"a~c": big_w}, "a~c", ("a", "c")) == pytest.approx(expected, rel=1e-12)


def test_a_score_memoised_under_its_fit_equals_a_fresh_one_bit_for_bit():
    """``item_terms`` keeps each item's fit-only terms on the fit: scoring again, with pending information,
    gives exactly the number a fresh copy of the fit gives (the stored decisions' replay compares them with
    ==), for the choice and the metric designs; ``record`` adds the same w."""
    rng = np.random.default_rng(3)
    names = ["a", "b", "c", "d"]
    m = rng.normal(size=(4, 4))
    choice = Fit(1, names, [0.3, -0.1, 0.5, -0.7], (m @ m.T).tolist())
    metric = _random_fit(rng, 3, names)
    for design, fit, subjects in (
        (CHOICE, choice, ("a", "c")),
        (COMPARABLE, metric, ("a", "d")),
        (TRIPLET, metric, ("b", "a", "d")),
    ):
        first = item_score(design, fit, {}, "i", subjects)
        assert fit.terms[(design.name, *subjects)] is not None
        for pending in ({}, {"i": 0.37}, {"i": 2.5}):
            fresh = dataclasses.replace(fit)  # the same numbers, nothing memoised
            assert item_score(design, fit, pending, "i", subjects) == item_score(design, fresh, pending, "i", subjects)
        assert item_score(design, fit, {}, "i", subjects) == first
        counts: dict = {}
        mine, theirs = {"i": 0.1}, {"i": 0.1}
        record(design, "i", subjects, fit, counts, mine)
        record(design, "i", subjects, dataclasses.replace(fit), counts, theirs)
        assert mine == theirs and mine["i"] > 0.1 and counts == {}  # no counts under a fit


@pytest.fixture
def adaptive_study(researcher):
    from studies.services import study_load

    return study_load(spec=adaptive_spec(refit_every=10), owner=researcher).study


def _run_refits(study) -> list:
    """Run the queued refit jobs as the worker would (in this process)."""
    from runs.execution import execute_job
    from runs.models import Job

    return [execute_job(str(job.pk)) for job in Job.objects.filter(kind="adaptive_refit", status="queued", study=study)]


@pytest.mark.django_db
def test_before_a_fit_the_pairs_are_balanced_and_slots_carry_no_item(adaptive_study, monkeypatch):
    """One stripe (``STRIPES`` = 1): the block's pairs within one assignment of each other."""
    from participation.models import AdaptiveDecision, Participant
    from participation.simulate import simulate_participants

    monkeypatch.setattr("participation.adaptive.STRIPES", 1)
    simulate_participants("choose-loan", n=5, seed=1, decline_rate=0)
    participant = Participant.objects.filter(study=adaptive_study).first()
    slots = [page for page in participant.plan if page.get("block") == "loan"]
    assert [page["key"] for page in slots] == [f"loan/#{i}" for i in range(4)] and "item" not in slots[0]
    decisions = list(AdaptiveDecision.objects.filter(study=adaptive_study))
    assert len(decisions) == 20 and all(d.fit_id is None for d in decisions)
    counts = np.bincount(np.unique([d.item for d in decisions], return_inverse=True)[1])
    assert len(counts) == PAIRS and counts.max() - counts.min() <= 1
    for p in Participant.objects.filter(study=adaptive_study):  # no pair twice for one participant
        items = [d.item for d in decisions if d.participant_id == p.pk]
        assert len(set(items)) == 4


@pytest.mark.slow
@pytest.mark.django_db
def test_a_study_runs_adaptively_with_refits_and_every_decision_is_reproduced(
    adaptive_study, django_capture_on_commit_callbacks
):
    """Participants through the simulator; every 10 answers a refit job is queued (run here between
    batches, as a worker would): later participants are decided by the fits, and the integrity check
    replays every decision from the stored fits."""
    from participation.integrity import check_integrity
    from participation.models import AdaptiveDecision, AdaptiveFit, AdaptiveState, AdaptiveStripe, Answer
    from participation.simulate import simulate_participants
    from research.export import export_tables

    for batch in range(4):
        with django_capture_on_commit_callbacks(execute=True):
            simulate_participants("choose-loan", n=10, seed=10 + batch, decline_rate=0)
        assert _run_refits(adaptive_study)
    fits = list(AdaptiveFit.objects.filter(study=adaptive_study))
    assert fits and len(fits[-1].parameters) == len(SUBJECTS) and fits[-1].vectors == {}
    assert sum(fits[-1].estimate) == pytest.approx(0, abs=1e-9)  # centred
    state = AdaptiveState.objects.get(study=adaptive_study)
    assert state.answers == 160 and state.fit_id == fits[-1].pk
    assert sum(AdaptiveStripe.objects.filter(study=adaptive_study).values_list("decisions", flat=True)) == 160
    decided = AdaptiveDecision.objects.filter(study=adaptive_study, fit__isnull=False)
    assert decided.count() > 0 and all(len(d.candidates) > 0 for d in decided)
    # the balanced fallback's counts are kept only until the block's first fit (nothing reads them after)
    counted = [
        sum(c.values()) for c in AdaptiveStripe.objects.filter(study=adaptive_study).values_list("counts", flat=True)
    ]
    assert sum(counted) == AdaptiveDecision.objects.filter(study=adaptive_study, fit__isnull=True).count() < 160
    # the answers are stored under the decided pair
    first = AdaptiveDecision.objects.filter(study=adaptive_study).first()
    answer = Answer.objects.get(participant_id=first.participant_id, page=f"loan/#{first.slot}", measure="choice")
    assert answer.subject_key == first.item
    assignments = export_tables("choose-loan").assignments
    assert (
        len(assignments) == 160 and assignments["fit_version"].notna().any() and assignments["fit_version"].isna().any()
    )
    assert set(assignments["item"]) <= {f"{a}~{b}" for i, a in enumerate(SUBJECTS) for b in SUBJECTS[i + 1 :]}
    report = check_integrity("choose-loan")
    assert report.ok and not report.adaptive_not_reproduced, str(report)
    # a stored decision changed by hand is caught
    AdaptiveDecision.objects.filter(pk=decided.last().pk).update(candidates=[["D031~D076", 0.0]])
    assert check_integrity("choose-loan").adaptive_not_reproduced


@pytest.mark.django_db
def test_a_participant_sees_the_decided_pair_on_their_page(client, adaptive_study):
    from participation.models import AdaptiveDecision
    from tests.tasks import reach_task_page

    participant, page = reach_task_page(client, adaptive_study.spec, "choose")
    html = client.get("/s/choose-loan/page/").content.decode()
    decision = AdaptiveDecision.objects.get(participant=participant, slot=0)
    assert page["key"] == "loan/#0" and 'value="loan/#0"' in html
    a, b = decision.item.split("~")
    names = {s["id"]: s for s in adaptive_study.spec["pools"][0]["subjects"]}
    assert a in names and b in names
    client.post("/s/choose-loan/page/", {"page_key": "loan/#0", "choice": "a", "sure": "3", "prediction": "50"})
    assert AdaptiveDecision.objects.filter(participant=participant).count() == 2  # the next one decided on saving


ANSWER = {"choice": "a", "sure": "3", "prediction": "50"}


@pytest.mark.django_db
def test_slot_pages_of_one_item_share_one_cached_render_and_each_shows_its_own_key(client, adaptive_study):
    """The blank page is cached with the page key as a slot: every slot page served equals a fresh render
    of its decided page, and two slots showing the same item are rendered once (before: once per slot and
    item, 40 x 435 renders for the launch study, more than the cache holds)."""
    from participation.adaptive import decided_page
    from participation.models import AdaptiveDecision
    from participation.pages import condition_index
    from participation.rendering import _blank_page, resume_html
    from tests.surveys.helpers import participant_session
    from tests.surveys.test_page_delivery import TOKEN, fresh_render
    from tests.tasks import reach_task_page

    participant, _ = reach_task_page(client, adaptive_study.spec, "choose")
    index = condition_index(adaptive_study.spec, adaptive_study.spec_hash, participant.condition.key)
    for slot in range(4):
        served = TOKEN.sub("T", client.get("/s/choose-loan/page/").content.decode())
        decisions = {(d.block, d.slot): d.item for d in AdaptiveDecision.objects.filter(participant=participant)}
        position = len(participant.plan) - 4 + slot
        page = decided_page(participant.plan[position], decisions)
        assert page is not None and f'value="loan/#{slot}"' in served
        resume = resume_html(participant_session(client)["resume:choose-loan"])
        assert served == TOKEN.sub("T", fresh_render(page, index, position, len(participant.plan), resume))
        client.post("/s/choose-loan/page/", {"page_key": page["key"], **ANSWER})
    first = {"key": "loan/#0", "kind": "choose", "block": "loan", "slot": 0, "position": 0, "item": page["item"]}
    third = first | {"key": "loan/#2", "slot": 2, "position": 2}
    assert _blank_page(first, index, adaptive_study.spec_hash) is _blank_page(third, index, adaptive_study.spec_hash)


def _adaptive_statements(client, page_key: str) -> list[str]:
    """The SQL statements on the adaptive tables while the slot page ``page_key`` is saved."""
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = client.post("/s/choose-loan/page/", {"page_key": page_key, **ANSWER})
    assert response.status_code == 200
    return [q["sql"] for q in queries if "participation_adaptive" in q["sql"]]


@pytest.mark.django_db
def test_a_slot_page_reads_its_decisions_at_most_once_and_makes_one_decision(client, adaptive_study):
    """Saving a slot page costs a fixed number of statements on the adaptive tables, however many decisions
    the block has: at most one read of the participant's decided slots (none when this process decided the
    page), the decision of the next slot (lock the stripe, update it, store the decision) and the answer's
    count. (Before: the decided slots were read twice, and the answer counted in two statements.) On
    PostgreSQL the stripe's update and the decision's insert go to the database as one query."""
    from participation.adaptive import _GIVEN
    from participation.models import AdaptiveDecision
    from tests.tasks import reach_task_page

    participant, page = reach_task_page(client, adaptive_study.spec, "choose")
    _GIVEN.clear()  # the page was decided by another web worker process: this one reads the decisions
    together = connection.vendor == "postgresql"  # participation.sql.execute_together
    cold = _adaptive_statements(client, page["key"])
    assert len(cold) == 5 - together, cold
    assert sum(sql.startswith("SELECT") and "adaptivedecision" in sql for sql in cold) == 1
    assert sum(sql.startswith("UPDATE") and "INSERT" in sql for sql in cold) == together
    warm = _adaptive_statements(client, "loan/#1")  # decided by this process on saving loan/#0
    assert len(warm) == 4 - together, warm
    assert not any(sql.startswith("SELECT") and "adaptivedecision" in sql for sql in warm), warm
    assert list(AdaptiveDecision.objects.filter(participant=participant).values_list("slot", flat=True)) == [0, 1, 2]


@pytest.mark.django_db(transaction=True)
def test_a_slot_page_does_not_wait_for_a_refit(client, researcher, monkeypatch):
    """A refit held in its fit (the job worker's ``adaptive_refit``, in a thread here) does not hold up a
    participant's slot pages: the page is saved and the next slot decided while the refit still runs."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL only")
    from participation.models import AdaptiveDecision, AdaptiveState
    from runs.adaptive import adaptive_refit
    from studies.services import study_load
    from tests.tasks import reach_task_page

    study = study_load(spec=adaptive_spec(refit_every=10), owner=researcher).study
    participant, page = reach_task_page(client, study.spec, "choose")
    fitting, release = threading.Event(), threading.Event()

    def held_fit(rows, pool):
        fitting.set()
        release.wait(30)
        raise ValueError("held")

    monkeypatch.setattr("analysis.adaptive_design.choice_fit", held_fit)
    client.post("/s/choose-loan/page/", {"page_key": page["key"], **ANSWER})  # an answer for the refit to fit
    refit = threading.Thread(target=lambda: (adaptive_refit(study_id=study.pk, block="loan"), connection.close()))
    refit.start()
    try:
        assert fitting.wait(30)
        response = client.post("/s/choose-loan/page/", {"page_key": "loan/#1", **ANSWER})
        assert response.status_code == 200 and 'value="loan/#2"' in response.content.decode()
        assert refit.is_alive() and AdaptiveDecision.objects.filter(participant=participant).count() == 3
    finally:
        release.set()
        refit.join(30)
    assert AdaptiveState.objects.get(study=study).answers == 2


SLUGS = {
    "choose": ("choose-loan", "loan"),
    "pair_comparable": ("comparable-sim", "alike"),
    "triplet": ("triplet-sim", "alike"),
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "task,stripes,with_fit",
    [("choose", 1, False), ("choose", 4, False), ("pair_comparable", 4, True), ("triplet", 1, True)],
)
def test_simultaneous_participants_are_decided_one_after_the_other(researcher, monkeypatch, task, stripes, with_fit):
    """Threads (PostgreSQL) reach their first adaptive page at once: their stripe's lock orders them, so each
    stripe's sequence has no gap or duplicate, and with one stripe and no fit the balanced fallback gives
    each item once; with a fit (metric designs, after a refit by the job) every decision is replayed."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL only")
    monkeypatch.setattr("participation.adaptive.STRIPES", stripes)
    from participation.adaptive import adaptive_replay, block_items, slot_item
    from participation.models import AdaptiveDecision, AdaptiveStripe
    from participation.services import participant_arrive, participant_consent
    from participation.simulate import simulate_participants
    from studies.content import study_content
    from studies.services import study_load

    slug, key = SLUGS[task]
    study = study_load(spec=spec_of(task, refit_every=10), owner=researcher).study
    block = block_items(study.spec, study_content(study.spec, study.spec_hash), key)
    before = 0
    if with_fit:
        simulate_participants(slug, n=5, seed=3, decline_rate=0)  # transaction=True: the refit job is queued
        assert _run_refits(study)
        before = AdaptiveDecision.objects.filter(study=study).count()
    ids = []
    for i in range(min(len(block.items), 12)):
        participant, _ = participant_arrive(study_slug=slug, external_id=f"t{i}", seed=i)
        ids.append(participant_consent(participant_id=participant.pk, accept=True).pk)
    barrier, errors = threading.Barrier(len(ids)), []

    def reach(pk: int) -> None:
        try:
            barrier.wait()
            slot_item(participant_id=pk, study_id=study.pk, slot=0, block=block)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=reach, args=(pk,)) for pk in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    decisions = AdaptiveDecision.objects.filter(study=study)
    for stripe in range(stripes):
        sequences = sorted(decisions.filter(stripe=stripe).values_list("sequence", flat=True))
        assert sequences == list(range(len(sequences)))
        assert AdaptiveStripe.objects.get(study=study, stripe=stripe).decisions == len(sequences)
    mine = decisions.filter(participant_id__in=ids)
    assert decisions.count() == before + len(ids) and mine.count() == len(ids)
    if with_fit:
        assert all(d.fit_id is not None for d in mine)
    elif stripes == 1:
        assert len(set(mine.values_list("item", flat=True))) == len(ids)  # each item once
    assert not adaptive_replay(study_id=study.pk, block=block)


def test_the_design_fit_is_finite_from_the_first_answers_and_tends_to_the_plain_fit():
    """One virtual win and loss per subject (``fit_for_design``): finite where ``bradley_terry`` refuses
    (a subject never chosen), centred, and with many answers within a few hundredths of the plain fit."""
    import pandas as pd

    from analysis.adaptive_design import centred, fit_for_design
    from analysis.paired_comparison import bradley_terry

    subjects, strength, covariance = fit_for_design(pd.DataFrame({"winner": ["a", "a"], "loser": ["b", "c"]}))
    assert subjects == ["a", "b", "c"] and strength[0] > 0 and sum(strength) == pytest.approx(0, abs=1e-12)
    assert np.allclose(np.sum(covariance, axis=0), 0, atol=1e-9)  # the covariance of centred strengths
    rng = np.random.default_rng(3)
    truth = {"a": 0.8, "b": 0.0, "c": -0.5, "d": -1.0}
    rows = []
    for _ in range(4000):
        x, y = rng.choice(list(truth), 2, replace=False)
        x_wins = rng.random() < 1 / (1 + np.exp(truth[y] - truth[x]))
        rows.append((x, y) if x_wins else (y, x))
    comparisons = pd.DataFrame(rows, columns=["winner", "loser"])
    plain = bradley_terry(comparisons)
    _, expected, _ = centred(plain.strength, plain.covariance)
    assert np.allclose(fit_for_design(comparisons)[1], expected, atol=0.02)


@pytest.mark.slow
def test_by_simulation_adaptive_assignment_reaches_a_narrower_ci_than_balanced():
    """Simulated raters (``simulation.adaptive``): after the same number of judgements, the adaptive
    design's mean 95% CI width of the strengths is narrower than the balanced design's, seed after seed
    (``bench/adaptive.py`` gives the judgements each needs)."""
    from simulation.adaptive import simulate_elicitation

    for seed in (1, 2):
        runs = {
            design: simulate_elicitation(
                design, n_subjects=20, spread=2.0, judgements=1500, step=1500, refit_every=20, seed=seed
            )
            for design in ("balanced", "adaptive")
        }
        assert runs["adaptive"].mean_ci_width[-1] < 0.97 * runs["balanced"].mean_ci_width[-1], runs


def _random_fit(rng, k: int, subjects: list[str]) -> Fit:
    m = rng.normal(size=(k, k))
    v = m @ m.T / k + 0.1 * np.eye(k)
    vectors = {s: rng.random(k).tolist() for s in subjects}
    return Fit(1, [f"f{i}" for i in range(k)], rng.uniform(0.2, 3.0, k).tolist(), v.tolist(), vectors)


def test_the_metric_scores_match_numpy():
    """COMPARABLE and TRIPLET: the score is the drop in the weights' variances (each over its SD) from
    numpy's inverse of V^-1 + W x x' to that of V^-1 + (W + w) x x', with x the squared differences and w
    the link's Fisher information computed here: p (1 - p) (triplet), pi'^2 / (pi (1 - pi)) with
    pi = 2 expit(-t) (comparable)."""
    rng = np.random.default_rng(4)
    fit = _random_fit(rng, 5, ["a", "b", "c"])
    vec = {s: np.array(v) for s, v in fit.vectors.items()}
    m, v = np.array(fit.estimate), np.array(fit.covariance)

    def expected(x: np.ndarray, w: float, big_w: float) -> float:
        inverse = np.linalg.inv(v)
        before = np.linalg.inv(inverse + big_w * np.outer(x, x))
        after = np.linalg.inv(inverse + (big_w + w) * np.outer(x, x))
        return float(np.sum((np.diagonal(before) - np.diagonal(after)) / np.sqrt(np.diagonal(v))))

    x = (vec["a"] - vec["b"]) ** 2
    t = x @ m
    pi = 2 / (1 + np.exp(t))
    slope = -2 * np.exp(t) / (1 + np.exp(t)) ** 2
    w = slope**2 / (pi * (1 - pi))
    assert COMPARABLE.information(fit, ("a", "b")) == pytest.approx(w, rel=1e-12)
    assert item_score(COMPARABLE, fit, {"a~b": 0.7}, "a~b", ("a", "b")) == pytest.approx(expected(x, w, 0.7), rel=1e-9)
    x = (vec["a"] - vec["c"]) ** 2 - (vec["a"] - vec["b"]) ** 2
    p = 1 / (1 + np.exp(-(x @ m)))
    assert TRIPLET.information(fit, ("a", "b", "c")) == pytest.approx(p * (1 - p), rel=1e-12)
    score = item_score(TRIPLET, fit, {}, "a~b~c", ("a", "b", "c"))
    assert score == pytest.approx(expected(x, p * (1 - p), 0.0), rel=1e-9)
    with pytest.raises(KeyError):  # the fit holds every subject of the pool: no vector is a bug, not a score
        item_score(TRIPLET, fit, {}, "a~b~z", ("a", "b", "z"))


def test_the_comparable_information_is_the_expected_curvature_of_the_log_likelihood():
    """w(t) = E[-d^2 log L / dt^2] for P(alike) = 2 expit(-t), by finite differences over both answers;
    bounded near t = 0 (identical subjects: t floored at MIN_PREDICTOR) and 0 far away."""
    from analysis.adaptive_design import MIN_PREDICTOR

    for t in (0.02, 0.05, 0.5, 2.0, 8.0):
        h = 1e-4 * max(t, 1e-2)
        pi = 2 / (1 + np.exp(t))

        def ll(u: float, alike: bool) -> float:
            p = 2 / (1 + np.exp(u))
            return float(np.log(p) if alike else np.log(1 - p))

        curvature = [-(ll(t + h, y) - 2 * ll(t, y) + ll(t - h, y)) / h**2 for y in (True, False)]
        assert comparable_information(t) == pytest.approx(pi * curvature[0] + (1 - pi) * curvature[1], rel=1e-4)
    assert comparable_information(0.0) == comparable_information(MIN_PREDICTOR) == pytest.approx(50, rel=0.01)
    assert comparable_information(800.0) == 0.0


@pytest.mark.parametrize("kind", ["comparable", "triplet"])
def test_the_metric_design_fit_recovers_the_weights_and_its_intervals_cover(kind):
    """``metric_for_design`` on simulated judgements under a diagonal metric: the weights within their
    95% Wald intervals (prior 0) in at least 90% of 4 weights x 25 simulations, centred on the truth."""
    import pandas as pd

    from fairness.human_metric import COLUMNS, metric_for_design

    rng = np.random.default_rng(11)
    subjects = pd.DataFrame(rng.random((20, 4)), index=[f"s{i}" for i in range(20)], columns=list("wxyz"))
    subjects.iloc[0], subjects.iloc[1] = 0.0, 1.0  # each feature's range is [0, 1]: scaled = raw
    truth = np.array([0.5, 1.5, 3.0, 6.0])
    x = subjects.to_numpy()
    covered, estimates = [], []
    for _ in range(25):
        ends = [rng.choice(20, 3 if kind == "triplet" else 2, replace=False) for _ in range(1500)]
        if kind == "comparable":
            t = np.array([truth @ (x[a] - x[b]) ** 2 for a, b in ends])
            answer = rng.random(len(t)) < 2 / (1 + np.exp(t))
        else:
            t = np.array([truth @ ((x[a] - x[c]) ** 2 - (x[a] - x[b]) ** 2) for a, b, c in ends])
            answer = rng.random(len(t)) < 1 / (1 + np.exp(-t))
        rows = [(i // 10, *(f"s{j}" for j in e), int(y)) for i, (e, y) in enumerate(zip(ends, answer, strict=True))]
        judgements = pd.DataFrame(rows, columns=list(COLUMNS[kind]))
        columns, m, cov, vectors = metric_for_design(judgements, subjects, list("wxyz"), kind=kind, prior=0.0)
        assert columns == list("wxyz") and np.allclose(vectors["s5"], x[5])
        half = 1.959964 * np.sqrt(np.diagonal(cov))
        covered += list(np.abs(np.array(m) - truth) <= half)
        estimates.append(m)
    assert np.mean(covered) >= 0.90, np.mean(covered)
    assert np.allclose(np.mean(estimates, axis=0), truth, rtol=0.15)


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("task", ["pair_comparable", "triplet"])
def test_a_metric_study_runs_adaptively_and_every_decision_is_reproduced(
    researcher, django_capture_on_commit_callbacks, task
):
    """As for choose: refits by the job store the metric's per-column weights, their covariance and the
    subjects' scaled vectors; later decisions use them, the answers are stored under the decided item,
    and the integrity check replays every decision (and catches one changed by hand)."""
    from participation.integrity import check_integrity
    from participation.models import AdaptiveDecision, AdaptiveFit, Answer
    from participation.simulate import simulate_participants
    from research.export import export_tables
    from studies.services import study_load

    slug, key = SLUGS[task]
    study = study_load(spec=metric_spec(task, refit_every=10), owner=researcher).study
    for batch in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            simulate_participants(slug, n=8, seed=20 + batch, decline_rate=0)
        assert _run_refits(study)
    fit = AdaptiveFit.objects.filter(study=study).last()
    k = len(fit.parameters)
    assert k >= 6 and len(fit.estimate) == k and np.array(fit.covariance).shape == (k, k)
    assert set(fit.vectors) == set(METRIC_SUBJECTS) and all(len(v) == k for v in fit.vectors.values())
    assert min(fit.estimate) >= 0 and np.all(np.linalg.eigvalsh(np.array(fit.covariance)) > 0)
    decided = AdaptiveDecision.objects.filter(study=study, fit__isnull=False)
    assert decided.count() > 0
    measure = "closer" if task == "triplet" else "comparable"
    first = decided.first()
    answer = Answer.objects.get(participant_id=first.participant_id, page=f"{key}/#{first.slot}", measure=measure)
    assert answer.subject_key == first.item and len(first.item.split("~")) == (3 if task == "triplet" else 2)
    assert len(export_tables(slug).assignments) == 96
    report = check_integrity(slug)
    assert report.ok and not report.adaptive_not_reproduced, str(report)
    AdaptiveDecision.objects.filter(pk=decided.last().pk).update(candidates=[[first.item, 0.0]])
    assert check_integrity(slug).adaptive_not_reproduced


LIGHT_PROBE = """
import json
import sys
import django
django.setup()
from django.apps import apps
from django.conf import settings
from django.core.management import call_command
settings.MIGRATION_MODULES = {app.label: None for app in apps.get_app_configs()}  # tables from the models
call_command("migrate", run_syncdb=True, verbosity=0)
import config.wsgi  # noqa: F401
from django.contrib.auth import get_user_model
from django.test import Client
from participation.models import AdaptiveFit, AdaptiveState, Participant
from studies.services import study_load

user = get_user_model().objects.create_user("light", password="light-pass-123")
for number, path in enumerate(sys.argv[1:-1]):
    study = study_load(spec=json.load(open(path)), owner=user).study
    ids = [s["id"] for s in study.spec["pools"][0]["subjects"]]
    fit = AdaptiveFit.objects.create(
        study=study, block="alike", version=1, n_answers=1, parameters=["u", "v"], estimate=[1.0, 2.0],
        covariance=[[1.0, 0.2], [0.2, 0.5]], vectors={s: [i / 8, (i % 3) / 2] for i, s in enumerate(ids)},
    )
    AdaptiveState.objects.create(study=study, block="alike", fit=fit)
    client = Client()
    slug = study.slug
    client.get(f"/s/{slug}/?participant_label=light-{number}")
    client.post(f"/s/{slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id=f"light-{number}")
    first = next(i for i, page in enumerate(participant.plan) if page.get("block") == "alike")
    Participant.objects.filter(pk=participant.pk).update(position=first)
    html = client.get(f"/s/{slug}/page/").content.decode()
    assert 'value="alike/#0"' in html, html[-2000:]
    assert participant.adaptive_decisions.get().fit_id == fit.pk
    print("decided:", study.spec["blocks"][-1]["task"])
heavy = [m for m in sys.argv[-1].split(",") if m in sys.modules]
print("heavy:", ",".join(heavy))
"""


@pytest.mark.slow
def test_a_metric_decision_in_the_web_worker_imports_no_scientific_library(tmp_path):
    """A participant page of an adaptive metric block (pair_comparable, then triplet) with a stored fit, in
    one fresh interpreter started as a web worker: the decision is scored with plain Python
    (``tests/test_web_worker_imports.py``)."""
    import subprocess
    import sys

    from tests.test_web_worker_imports import HEAVY, web_worker_env

    env = web_worker_env(tmp_path)
    specs = []
    for task in ("pair_comparable", "triplet"):
        specs.append(tmp_path / f"{task}.json")
        specs[-1].write_text(json.dumps(metric_spec(task)))
    run = subprocess.run(
        [sys.executable, "-c", LIGHT_PROBE, *map(str, specs), ",".join(HEAVY)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split("\n")[:2] == ["decided: pair_comparable", "decided: triplet"], run.stdout
    assert run.stdout.split()[-1] == "heavy:", run.stdout


@pytest.mark.slow
def test_by_simulation_adaptive_metric_elicitation_reaches_a_narrower_ci_than_balanced():
    """Simulated raters under a diagonal metric (``simulation.adaptive``): after the same number of
    judgements, the adaptive design's mean 95% CI width of the weights is narrower than the balanced
    design's (``bench/adaptive.py --task`` gives the judgements each needs)."""
    from simulation.adaptive import simulate_elicitation

    for task in ("pair_comparable", "triplet"):
        runs = {
            design: simulate_elicitation(
                design, task=task, n_subjects=12, spread=1.0, judgements=800, step=800, refit_every=20, seed=1
            )
            for design in ("balanced", "adaptive")
        }
        assert runs["adaptive"].mean_ci_width[-1] < 0.9 * runs["balanced"].mean_ci_width[-1], runs


@pytest.mark.django_db
def test_a_metric_refit_the_pool_cannot_give_leaves_the_block_balanced(researcher, django_capture_on_commit_callbacks):
    """Subjects that differ in no feature give no metric: the refit job says why and stores no fit."""
    from participation.models import AdaptiveFit, AdaptiveState
    from participation.simulate import simulate_participants
    from studies.services import study_load

    spec = metric_spec("pair_comparable", refit_every=5)
    subjects = spec["pools"][0]["subjects"]
    for subject in subjects:
        subject["features"] = dict(subjects[0]["features"])
    study = study_load(spec=spec, owner=researcher).study
    with django_capture_on_commit_callbacks(execute=True):
        simulate_participants("comparable-sim", n=3, seed=1, decline_rate=0)
    from runs.models import Job

    assert _run_refits(study) == ["succeeded"] * len(Job.objects.filter(kind="adaptive_refit", study=study))
    results = list(Job.objects.filter(kind="adaptive_refit", study=study).values_list("result", flat=True))
    assert results and "differ in no feature" in results[0]["problem"] and results[0]["fit"] is None
    assert not AdaptiveFit.objects.filter(study=study).exists()
    assert AdaptiveState.objects.get(study=study).fit_id is None


def test_simulated_raters_may_disagree_on_the_metric():
    """``rater_spread``: each rater answers by their own weights (the same for all their items); without
    it every rater answers by the one metric, and the truth drawn from the seed is the same either way."""
    from simulation.adaptive import simulation_task

    grid = np.linspace(0.01, 0.99, 50)

    def shares(rater_spread: float) -> list[float]:
        """Per rater (0, 1, 0 again) the share of "alike" over every pair and the grid of uniform draws."""
        sim = simulation_task("pair_comparable", np.random.default_rng(0), 10, 1.0, 4, rater_spread)
        return [
            float(np.mean([sim.answer(rater, ends, u) for ends in sim.items.values() for u in grid]))
            for rater in (0, 1, 0)
        ]

    same, differ = shares(0.0), shares(0.5)
    assert same[0] == same[1] == same[2] and differ[0] == differ[2] != differ[1]


def test_design_intervals_are_scored_against_the_truth():
    """``against_truth``: mean Wald width 2 z sd, squared error summed, the share of intervals holding the
    truth (by hand: sd 0.5 and 1; errors 0.5 and 2.5, the second beyond 1.96 sd)."""
    from simulation.adaptive import against_truth

    width, error, covered = against_truth([1.0, 2.0], [[0.25, 0.0], [0.0, 1.0]], [1.5, -0.5])
    assert width == pytest.approx(1.959963984540054 * 1.5)
    assert error == pytest.approx(0.25 + 6.25)
    assert covered == 0.5


def test_simulated_elicitation_records_the_squared_error_and_the_coverage():
    """Both designs record, beside the CI width, the squared error against the drawn truth (falling as
    judgements accumulate) and the design intervals' coverage (a share)."""
    from simulation.adaptive import simulate_elicitation

    run = simulate_elicitation("balanced", task="pair_comparable", n_subjects=12, judgements=800, step=200, seed=1)
    errors = [e for e in run.squared_error if np.isfinite(e)]
    assert len(run.squared_error) == len(run.coverage) == len(run.judgements) == 4
    assert errors[-1] < errors[0] and all(0 <= c <= 1 for c in run.coverage if np.isfinite(c))


def test_a_non_diagonal_true_metric_changes_the_answers_not_the_truth():
    """``off_diagonal`` rho: M = D^1/2 ((1 - rho) I + rho J) D^1/2; the same seed draws the same weights (the
    truth, diag M), the answers differ; a rho that leaves M indefinite is refused."""
    from simulation.adaptive import simulation_task

    grid = np.linspace(0.01, 0.99, 50)

    def shares(rho: float) -> list[float]:
        sim = simulation_task("pair_comparable", np.random.default_rng(0), 8, 1.0, 3, 0.0, rho)
        return [float(np.mean([sim.answer(0, ends, u) for u in grid])) for ends in sim.items.values()]

    diagonal, correlated = shares(0.0), shares(0.5)
    assert diagonal != correlated and len(diagonal) == len(correlated) == 28
    with pytest.raises(ValueError, match="positive definite"):
        simulation_task("triplet", np.random.default_rng(0), 6, 1.0, 3, 0.0, -0.6)
