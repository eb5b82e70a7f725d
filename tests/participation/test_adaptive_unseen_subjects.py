"""An adaptive ``choose`` block whose first refit has not seen every subject of its pool: the pairs holding an
unseen subject are scored from that subject's prior (finite, so the decision and its candidates can be stored
on PostgreSQL, which refuses JSON holding Infinity), and every later participant takes the whole study."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from analysis.adaptive_design import CHOICE, PRIOR, UNSEEN_VARIANCE, Fit, item_score
from tests.conftest import ROOT
from tests.participation.test_adaptive import _run_refits

N_SUBJECTS = 60
PER_PARTICIPANT = 10  # 3 participants give 30 answers: one refit (default refit_every 20) on part of the pool


def test_the_prior_of_an_unseen_subject_is_that_of_the_design_fits_virtual_games():
    """A subject whose only games are the design fit's virtual win and loss against the prior subject
    (``fit_for_design``) has the variance ``bradley_terry`` gives it: UNSEEN_VARIANCE (2)."""
    from analysis.paired_comparison import bradley_terry

    games = pd.DataFrame({"winner": ["e", PRIOR], "loser": [PRIOR, "e"], "tie": [0, 0]})
    fit = bradley_terry(games, reference=PRIOR)
    assert fit.strength["e"] == pytest.approx(0.0, abs=1e-9)
    assert fit.covariance.loc["e", "e"] == pytest.approx(UNSEEN_VARIANCE, rel=1e-6)


def test_a_pair_with_an_unseen_subject_scores_the_sherman_morrison_drop_under_its_prior():
    """A subject the fit has not seen is a parameter of its own, strength 0 and variance UNSEEN_VARIANCE,
    independent of the fitted ones: the score is numpy's drop in every SD (the unseen ones' included) on the
    fit's covariance extended by it, one unseen subject or two, with pending information or without; finite
    and above every pair of seen subjects (before: infinite, which no JSON column stores)."""
    rng = np.random.default_rng(7)
    m = rng.normal(size=(4, 4))
    c = np.eye(4) - 1 / 4
    v = c @ (m @ m.T / 4) @ c + 0.05 * c
    strengths = [0.4, -0.2, 0.1, -0.3]
    fit = Fit(1, ["a", "b", "c", "d"], strengths, v.tolist())

    def expected(a: str, b: str, big_w: float) -> float:
        names = ["a", "b", "c", "d", *(s for s in (a, b) if s not in "abcd")]
        extended = np.zeros((len(names), len(names)))
        extended[:4, :4] = v
        for k in range(4, len(names)):
            extended[k, k] = UNSEEN_VARIANCE
        x = np.zeros(len(names))
        x[names.index(a)], x[names.index(b)] = 1.0, -1.0
        s = {n: (strengths[i] if i < 4 else 0.0) for i, n in enumerate(names)}
        p = 1 / (1 + np.exp(-(s[a] - s[b])))
        w = p * (1 - p)

        def update(cov, weight):
            return cov - weight * np.outer(cov @ x, cov @ x) / (1 + weight * x @ cov @ x)

        before = update(extended, big_w)
        sd = np.sqrt(np.diagonal(extended))
        return float(np.sum((np.diagonal(before) - np.diagonal(update(before, w))) / sd))

    for a, b, big_w in (("a", "e", 0.0), ("e", "c", 0.3), ("e", "f", 0.0), ("f", "e", 1.2)):
        score = item_score(CHOICE, fit, {f"{a}~{b}": big_w}, f"{a}~{b}", (a, b))
        assert math.isfinite(score) and score == pytest.approx(expected(a, b, big_w), rel=1e-12)
    seen = [item_score(CHOICE, fit, {}, f"{a}~{b}", (a, b)) for a, b in (("a", "b"), ("a", "c"), ("b", "d"))]
    assert item_score(CHOICE, fit, {}, "a~e", ("a", "e")) > max(seen)


def large_choice_spec() -> dict:
    """The bundled disagreement study with an adaptive choose block (default options) over every pair of
    its first 60 defendants."""
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["slug"] = "choose-sixty"
    pool = spec["pools"][0]
    pool["subjects"] = pool["subjects"][:N_SUBJECTS]
    ids = [s["id"] for s in pool["subjects"]]
    task = {
        "key": "loan",
        "type": "task",
        "task": "choose",
        "pool": "subjects",
        "pairs": [{"a": a, "b": b} for i, a in enumerate(ids) for b in ids[i + 1 :]],
        "decision": "be released before trial",
        "assignment": {"per_participant": PER_PARTICIPANT, "adaptive": {}},
    }
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "task"] + [task]
    return spec


def take_study(client, spec: dict, label: str) -> list[int]:
    """A participant ``label`` takes the whole study in the browser (the task types' bots, ``TaskType.fill``);
    returns the status of every page answer and page view (a 500 is a participant lost)."""
    from participation.models import Participant
    from participation.page_bot import page_answers

    slug = spec["slug"]
    statuses = [client.get(f"/s/{slug}/?participant_label={label}").status_code]
    statuses.append(client.post(f"/s/{slug}/consent/", {"decision": "accept"}).status_code)
    participant = Participant.objects.get(external_id=label)
    while participant.status == Participant.Status.ACTIVE:
        shown = client.get(f"/s/{slug}/page/")
        statuses.append(shown.status_code)
        if shown.status_code != 200:
            break
        statuses.append(client.post(f"/s/{slug}/page/", page_answers(participant.pk)).status_code)
        participant.refresh_from_db()
    return statuses


@pytest.mark.slow
@pytest.mark.django_db
def test_a_refit_that_has_not_seen_every_subject_loses_no_later_participant(
    client, researcher, django_capture_on_commit_callbacks
):
    """Default adaptive options over 60 subjects: 3 participants (30 answers, one refit queued), the refit
    job, then 8 more participants in the browser all complete, their decisions made under the fit with
    finite scores, and the integrity check is clean (before: the first decision under the fit stored
    ``Infinity`` in its candidates, which PostgreSQL refuses, and every new participant got a 500)."""
    from participation.integrity import check_integrity
    from participation.models import AdaptiveDecision, AdaptiveFit, Participant
    from studies.services import study_load

    spec = large_choice_spec()
    study = study_load(spec=spec, owner=researcher).study
    for i in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            take_study(client, spec, f"early{i}")
    assert _run_refits(study)
    fit = AdaptiveFit.objects.get(study=study)
    assert len(fit.parameters) < N_SUBJECTS  # the fit has not seen every subject
    for i in range(8):
        statuses = take_study(client, spec, f"late{i}")
        assert set(statuses) <= {200, 302}, (f"late{i}", statuses)
    assert Participant.objects.filter(study=study, status="completed").count() == 11
    later = AdaptiveDecision.objects.filter(study=study, fit=fit)
    assert later.count() == 8 * PER_PARTICIPANT
    scores = [score for decision in later for _, score in decision.candidates]
    assert all(math.isfinite(score) for score in scores)
    unseen = set(spec["pools"][0]["subjects"][i]["id"] for i in range(N_SUBJECTS)) - set(fit.parameters)
    assert any(set(d.item.split("~")) & unseen for d in later)  # unseen subjects are still asked about
    report = check_integrity(spec["slug"])
    assert report.ok and not report.cannot_go_on, str(report)
