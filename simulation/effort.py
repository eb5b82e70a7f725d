"""The generative model behind ``simulate_participants`` (pure; no Django).

For a pair (K, X), the *true* distances in [0, 1] are
  trajectory:  t = |tanh((slope_X - slope_K) / trend_scale)|   (least-squares slopes per year)
  aggregate:   g = min(1, 1.6 * |total_X - total_K| / max(total_K, total_X))
A participant rates each on the study's Likert scale (points P):
  d_E = round(1 + (P - 1) * clip(t + N(0, rating_noise)))  and likewise d_S from g,
  d   = clip(round((a0 + u0_i) + (a1 + u1_i) d_S + (a2 + u2_i) d_E + v_p + N(0, overall_noise)), 1, P)
                                                                                  (paper Eq. 5)
so the regression of d on d_S and d_E recovers a1 and a2 (default 0.32 and 0.61, the paper's SHED
values rounded) as the *mean* weights; alpha = a2 / (a1 + a2) is the ratio of the mean weights, not
the mean of participants' ratios. Between-participant and between-stimulus variation
(:class:`RandomEffects`, drawn by :func:`draw_random_effects`): participant i's intercept
u0_i ~ N(0, participant_intercept_sd^2) and slopes u1_i, u2_i ~ N(0, participant_slope_sd^2)
(independent), and each pair p = (set, X) of a condition a stimulus effect v_p ~ N(0, stimulus_sd^2)
shared by every participant who rates it. How the defaults were derived is in ``GenerativeModel``.
The BTS prediction of the percentage answering 'similar' is the share
Phi((similar_max + 0.5 - E[d]) / overall_noise), E[d] with the participant's own random effects,
shifted by +/- ``projection`` points towards the participant's own answer (people overestimate their
own answer's frequency), plus noise. ``simulate_pairs`` (planning) draws the random effects;
``simulate_participants`` (demo data through the database) does not yet.
For the output space the participant fixes K's score (accepts the AI's with probability
``accept_k``, else adds N(0, 0.08)), then gives X the score K +/- D with
  D = max(0, b0 + b1 * d_S + b2 * d_E + N(0, output_noise))                          (paper Eq. 6)
in the direction of the AI's own ordering of K and X. A yes/no disagreement with the AI's label is
drawn with probability ``disagree_base`` plus ``disagree_gap`` times the distance between the AI's
score and the participant's effort-aware score (AI score shifted against the subject's trend).
Inattentive participants (share ``inattentive``) answer attention checks at random.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from scipy.special import ndtr

from fairness.effort import trend_slope
from simulation.effort_design import EFFORT_MEASURES, EffortCondition, effort_conditions
from simulation.effort_model import GenerativeModel
from simulation.raters import PairTruth, pair_truth

Number = TypeVar("Number", int, float)


@dataclass(frozen=True)
class RandomEffects:
    """One participant's deviations from the mean intercept and weights of Eq. 5, and the stimulus
    effects of the pairs of their condition (by (set key, comparison subject))."""

    intercept: float = 0.0
    slope_aggregate: float = 0.0
    slope_trajectory: float = 0.0
    stimuli: dict[tuple[str, str], float] = field(default_factory=dict)


def draw_stimulus_effects(model: GenerativeModel, conditions: list[EffortCondition], rng: np.random.Generator) -> dict:
    """v_p ~ N(0, stimulus_sd^2) for every pair of every condition's effort design (file order):
    {condition: {(set, X): v_p}}."""
    return {
        cond.key: {(sset.key, x): float(rng.normal(0, model.stimulus_sd)) for sset in cond.sets for _, x in sset.pairs}
        for cond in conditions
    }


def draw_random_effects(model: GenerativeModel, stimuli: dict, rng: np.random.Generator) -> RandomEffects:
    """One participant's u0, u1 (on d_S), u2 (on d_E), with their condition's stimulus effects."""
    u0 = rng.normal(0, model.participant_intercept_sd)
    u1, u2 = rng.normal(0, model.participant_slope_sd, size=2)
    return RandomEffects(float(u0), float(u1), float(u2), stimuli)


def _clip(value: Number, low: Number, high: Number) -> Number:
    """``value`` clipped to [low, high]: np.clip's result on one number, without its array overhead (it was
    most of a simulated participant's time)."""
    return min(max(value, low), high)


class SimulatedParticipant:
    """Draws one participant's answers; all randomness from the given Generator."""

    def __init__(
        self,
        model: GenerativeModel,
        spec: dict,
        condition: dict,
        rng: np.random.Generator,
        effects: RandomEffects | None = None,
        truths: dict[tuple[str, str], PairTruth] | None = None,
    ):
        """``truths``: a memo of the condition's true pair distances (:func:`pair_truth`, deterministic), which
        participants of one condition may share; by default the participant's own."""
        self.m, self.spec, self.cond, self.rng = model, spec, condition, rng
        self.effects = effects or RandomEffects()
        self.truths = {} if truths is None else truths
        self.points = spec["likert"]["points"]
        self.similar_max = spec["likert"]["similar_max"]
        self.subjects = {s["id"]: s for s in condition["subjects"]}
        self.attentive = rng.random() >= model.inattentive
        self.ratings: dict[tuple[str, str], tuple[int, int]] = {}

    def _likert(self, truth: float, noise: float) -> int:
        """``truth`` rated with ``noise`` (a standard normal draw, scaled by rating_noise)."""
        value = _clip(truth + self.m.rating_noise * noise, 0.0, 1.0)
        return int(round(1 + (self.points - 1) * value))

    def _overall_mean(self, set_key: str, x: str, d_s: int, d_e: int) -> float:
        """E[d] of Eq. 5 for this participant and pair, with their random effects."""
        e, m = self.effects, self.m
        return (
            m.a0
            + e.intercept
            + (m.a1 + e.slope_aggregate) * d_s
            + (m.a2 + e.slope_trajectory) * d_e
            + e.stimuli.get((set_key, x), 0.0)
        )

    def likert_page(self, set_key: str, k: str, x: str, measure: str) -> dict:
        if (k, x) not in self.truths:
            self.truths[(k, x)] = pair_truth(self.subjects[k]["series"], self.subjects[x]["series"], self.m.trend_scale)
        # every page of a pair draws its two rating noises (the stream depends on it); the pair's first keeps them
        noise_e, noise_s = self.rng.standard_normal(2).tolist()
        if (set_key, x) not in self.ratings:
            truth = self.truths[(k, x)]
            self.ratings[(set_key, x)] = (
                self._likert(truth.trajectory, noise_e),
                self._likert(truth.aggregate, noise_s),
            )
        d_e, d_s = self.ratings[(set_key, x)]
        data: dict = {}
        if measure == "trajectory":
            data["rating"] = d_e
        elif measure == "aggregate":
            data["rating"] = d_s
        else:
            mean = self._overall_mean(set_key, x, d_s, d_e)
            rating = _clip(round(mean + self.rng.normal(0, self.m.overall_noise)), 1, self.points)
            data["rating"] = rating
            if self.spec["rationale_factors"]:
                draws = self.rng.random(3).tolist()
                factors = [
                    name
                    for name, p, u in (
                        ("trajectory", self.m.factor_trajectory, draws[0]),
                        ("aggregate", self.m.factor_aggregate, draws[1]),
                        ("other", self.m.factor_other, draws[2]),
                    )
                    if u < p
                ]
                data["factors"] = factors
                if "other" in factors:
                    data["factor_text"] = "How recent the changes were."
        if measure in self.spec["bts"]["questions"]:
            mean = self._overall_mean(set_key, x, d_s, d_e)
            share = 100 * float(ndtr((self.similar_max + 0.5 - mean) / self.m.overall_noise))
            own_similar = data["rating"] <= self.similar_max
            guess = share + (self.m.projection if own_similar else -self.m.projection)
            data["prediction"] = _clip(round(guess + self.rng.normal(0, self.m.prediction_noise)), 0, 100)
        return data

    def output_page(self, set_key: str, k: str, comparisons: list[str]) -> dict:
        ai_k = self.subjects[k]["risk_score"]
        data: dict = {}
        if self.rng.random() < self.m.accept_k:
            data["k_decision"], k_score = "accept", ai_k
        else:
            k_score = _clip(ai_k + self.rng.normal(0, 0.08), 0.0, 1.0)
            data["k_decision"], data["k_score"] = "correct", f"{100 * k_score:.1f}"
            k_score = round(100 * k_score, 1) / 100
        for x in comparisons:
            d_e, d_s = self.ratings.get((set_key, x), (1, 1))
            gap = max(0.0, self.m.b0 + self.m.b1 * d_s + self.m.b2 * d_e + self.rng.normal(0, self.m.output_noise))
            direction = np.sign(self.subjects[x]["risk_score"] - ai_k) or self.rng.choice([-1.0, 1.0])
            score = _clip(float(k_score + direction * gap), 0.0, 1.0)
            data[f"score_{x}"] = f"{100 * score:.1f}"
            data[f"rationale_{x}"] = "Their records differ mostly in the trend over the years."
        return data

    def disagreement_page(self, prompts: dict[str, str]) -> dict:
        data = {}
        for key, subject_id in prompts.items():
            subject = self.subjects[subject_id]
            slope = np.tanh(trend_slope(subject["series"]) / self.m.trend_scale)
            # effort-aware view: a rising desirable feature (or falling undesirable one) lowers risk
            sign = -1.0 if self.cond["desirable"] else 1.0
            human = np.clip(subject["risk_score"] + sign * self.m.effort_shift * slope, 0, 1)
            p = np.clip(
                self.m.disagree_base
                + self.m.disagree_gap * abs(human - subject["risk_score"])
                + (0.3 if (human >= 0.5) != bool(subject["label"]) else 0.0),
                0,
                1,
            )
            data[f"agree_{key}"] = 0 if self.rng.random() < p else 1
        return data

    def attention_page(self, check: Mapping[str, Any]) -> dict:
        if self.attentive:
            return {"choice": check["correct"]}
        return {"choice": str(self.rng.choice(check["options"]))}


def simulate_pairs(
    spec: dict, n: int, *, seed: int, model: GenerativeModel | None = None, stimulus_copies: int = 1
) -> pd.DataFrame:
    """A pairs table like the export's, drawn from the generative model without a database (for planning
    and benchmarks), for the effort design of the validated format 2 file ``spec``
    (``simulation.effort_design.effort_conditions``; ValueError without one). Participants alternate between
    its conditions; nobody is excluded. A participant's pages are those of format 1's plan: the sets in an
    order drawn from the plan's stream ``default_rng(s)`` (s drawn from the answers' stream after the
    participant's attentiveness), then per set its pairs in a drawn order, each rated on trajectory,
    aggregate and overall, then the fair scores of the set's pairs that a fair_score block asks (one page
    per reference; blank without one). A study converted from format 1 therefore gives the table its
    format 1 file gave (tested against the tables stored before the conversion).

    ``stimulus_copies`` m > 1 stands for a study with m times as many stimulus pairs of the same
    design: each pair has m versions with the same true distances and their own stimulus effects
    v_p, and a condition's k-th participant rates version k mod m (still 12 pairs each); the ``set``
    column then reads ``<set>~<version>`` so that every version is a stimulus of its own.

    The random effects (stimulus effects drawn afresh for each call, i.e. each simulated study) come
    from their own stream, ``default_rng([seed, 1])``: the answers' stream is the same whatever their
    SDs, so with all three SDs 0 the table is exactly the one of the model without random effects,
    and settings that differ only in the SDs are compared on common random numbers."""

    model = model or GenerativeModel()
    conditions = effort_conditions(spec)
    rng = np.random.default_rng(seed)
    effects_rng = np.random.default_rng([seed, 1])
    if stimulus_copies < 1:
        raise ValueError(f"stimulus_copies must be at least 1, got {stimulus_copies}")
    stimuli = [draw_stimulus_effects(model, conditions, effects_rng) for _ in range(stimulus_copies)]
    truths: dict[str, dict] = {cond.key: {} for cond in conditions}  # each condition's pair truths, computed once
    rows = []
    for i in range(n):
        cond = conditions[i % len(conditions)]
        version = (i // len(conditions)) % stimulus_copies
        effects = draw_random_effects(model, stimuli[version][cond.key], effects_rng)
        person = SimulatedParticipant(
            model, cond.scale, {"subjects": cond.subjects, "desirable": cond.desirable}, rng, effects, truths[cond.key]
        )
        plan_rng = np.random.default_rng(int(rng.integers(2**62)))
        for sset in [cond.sets[j] for j in plan_rng.permutation(len(cond.sets))]:
            shown = [sset.pairs[j] for j in plan_rng.permutation(len(sset.pairs))]
            ratings = {(k, x): {m: person.likert_page(sset.key, k, x, m) for m in EFFORT_MEASURES} for k, x in shown}
            scores = {}
            for k in dict.fromkeys(a for a, b in shown if b in sset.fair_scores.get(a, ())):
                out = person.output_page(sset.key, k, [b for a, b in shown if a == k and b in sset.fair_scores[k]])
                k_score = (
                    person.subjects[k]["risk_score"] if out["k_decision"] == "accept" else float(out["k_score"]) / 100
                )
                scores[k] = (out, k_score)
            rows += [
                _pair_row(
                    f"sim-{i}", cond, sset.key if stimulus_copies == 1 else f"{sset.key}~{version}", pair, r, scores
                )
                for pair, r in ratings.items()
            ]
    return pd.DataFrame(rows, columns=SIMULATED_PAIRS_COLUMNS)


SIMULATED_PAIRS_COLUMNS = [
    "participant_id",
    "condition",
    "desirable",
    "set",
    "comparison",
    "d_traj",
    "d_aggr",
    "d_overall",
    "overall_similar",
    "prediction_similar",
    "factor_trajectory",
    "factor_aggregate",
    "factor_other",
    "k_score",
    "fair_score",
    "output_distance",
    "rationale",
    "excluded",
]


def _pair_row(participant: str, cond: EffortCondition, set_key: str, pair: tuple, ratings: dict, scores: dict) -> dict:
    """One row of the simulated pairs table: the pair's ratings and, when asked, its fair score."""
    (k, x), overall = pair, ratings["overall"]
    out, k_score = scores.get(k, ({}, np.nan))
    fair = float(out[f"score_{x}"]) / 100 if f"score_{x}" in out else np.nan
    factors = overall.get("factors", [])
    return {
        "participant_id": participant,
        "condition": cond.key,
        "desirable": int(cond.desirable),
        "set": set_key,
        "comparison": x,
        "d_traj": ratings["trajectory"]["rating"],
        "d_aggr": ratings["aggregate"]["rating"],
        "d_overall": overall["rating"],
        "overall_similar": float(overall["rating"] <= cond.scale["likert"]["similar_max"]),
        "prediction_similar": overall.get("prediction", np.nan),
        "factor_trajectory": int("trajectory" in factors),
        "factor_aggregate": int("aggregate" in factors),
        "factor_other": int("other" in factors),
        "k_score": k_score,
        "fair_score": fair,
        "output_distance": abs(k_score - fair),
        "rationale": out.get(f"rationale_{x}", ""),
        "excluded": 0,
    }
