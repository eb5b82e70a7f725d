"""Adaptive assignment of choose blocks (``participation.adaptive``, ``runs.adaptive``,
``analysis.adaptive_design``): validation, the balanced fallback before a fit, decisions reproduced from
the stored fits, simultaneous participants (PostgreSQL, threads), a whole study through the simulator with
refits by the job, and by simulation a narrower CI than balanced assignment."""

import json
import re
import threading

import numpy as np
import pytest
from django.db import connection

from analysis.adaptive_design import Fit, pair_score
from studies.study_file import InvalidStudyFile, validate_study
from tests.conftest import ROOT
from tests.tasks.test_choose import SUBJECTS, choice_spec

PAIRS = len(SUBJECTS) * (len(SUBJECTS) - 1) // 2  # 10


def adaptive_spec(per_participant: int = 4, **adaptive) -> dict:
    return choice_spec(assignment={"per_participant": per_participant, "adaptive": adaptive})


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
        f"{where}.assignment.adaptive: adaptive assignment is available for choose blocks": agree,
        "blocks[4].assignment.adaptive.refit_every": adaptive_spec(refit_every=0),
        "blocks[4].assignment.adaptive": adaptive_spec(every=3),
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
    assert pair_score(fit, {"a~c": big_w}, "a~c", "a", "c") == pytest.approx(expected, rel=1e-12)
    assert pair_score(fit, {}, "a~e", "a", "e") == float("inf")  # a subject without a choice yet: first


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
    assert fits and len(fits[-1].subjects) == len(SUBJECTS)
    assert sum(fits[-1].strength) == pytest.approx(0, abs=1e-9)  # centred
    state = AdaptiveState.objects.get(study=adaptive_study)
    assert state.answers == 160 and state.fit_id == fits[-1].pk
    assert sum(AdaptiveStripe.objects.filter(study=adaptive_study).values_list("decisions", flat=True)) == 160
    decided = AdaptiveDecision.objects.filter(study=adaptive_study, fit__isnull=False)
    assert decided.count() > 0 and all(len(d.candidates) > 0 for d in decided)
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


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("stripes", [1, 4])
def test_simultaneous_participants_are_decided_one_after_the_other(researcher, monkeypatch, stripes):
    """Threads (PostgreSQL) reach their first adaptive page at once: their stripe's lock orders them, so each
    stripe's sequence has no gap or duplicate, and with one stripe the balanced fallback gives each pair once."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL only")
    monkeypatch.setattr("participation.adaptive.STRIPES", stripes)
    from participation.adaptive import adaptive_replay, block_items, slot_item
    from participation.models import AdaptiveDecision, AdaptiveStripe
    from participation.services import participant_arrive, participant_consent
    from studies.content import study_content
    from studies.services import study_load

    study = study_load(spec=adaptive_spec(), owner=researcher).study
    block = block_items(study.spec, study_content(study.spec, study.spec_hash), "loan")
    ids = []
    for i in range(PAIRS):
        participant, _ = participant_arrive(study_slug="choose-loan", external_id=f"t{i}", seed=i)
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
        assert sequences == list(range(sum(pk % stripes == stripe for pk in ids)))
        assert AdaptiveStripe.objects.get(study=study, stripe=stripe).decisions == len(sequences)
    assert decisions.count() == PAIRS
    if stripes == 1:
        assert sorted(decisions.values_list("item", flat=True)) == sorted(block.pairs)  # each pair once
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
