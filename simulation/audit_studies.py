"""Simulated studies of the model audit's intervals from what people said, each registered in
``analysis.coverage.REGISTRY`` against the estimand the audit states (imported by
``simulation.coverage_studies``).

* Utility agreement (``fairness.human_audit.utility_agreement``): 30 subjects with three standard-normal
  features, a fixed model's scores; rater r's weights w_r ~ N((1, -0.5, 0), 0.5^2 I). The truth is Spearman's
  rho between the scores and the utility of the population's mean weights, x . (1, -0.5, 0).
* Feature importance (``fairness.human_audit.unfair_feature_reliance``): raters rate four features 1..7, each
  rating drawn from the feature's own distribution; the truth is u_j I_j, u_j = P(rating < 5) (exact) and I_j
  the surrogate's permutation importance (fixed: the subjects and scores do not change between studies).
* Disagreement calibration (``fairness.calibration.calibrate_from_disagreement``): 200 audit subjects, 30
  judged by every participant; P(participant i disagrees on subject j) = expit(a_i + c + k z_j), a_i ~ N(0,
  0.8^2), z_j the standardised EaIF violation of subject j at alpha 0.6. The truth is the estimator applied to
  the population's rates E_a expit(.) (Gauss-Hermite): the alpha whose violations rank-correlate best with them.
* Lipschitz share under the human metric (``fairness.human_audit.lipschitz_table``): the learned-metric
  studies' judgements (``simulation.estimand_studies.metric_judgements``, M = diag(2, 0.5, 1)) and a fixed
  model's scores of their 30 subjects; the truth is the share of violating pairs under the true M.
"""

from functools import cache, partial

import numpy as np
import pandas as pd

from analysis.coverage import Procedure, register
from fairness.calibration import alpha_from_rates, calibrate_from_disagreement, feedback_matrices
from fairness.feature_fairness import feature_fairness_shares
from fairness.human_audit import lipschitz_table, unfair_feature_reliance, utility_agreement
from fairness.human_metric import Kind, fit_metric
from simulation.coverage_studies import population_p
from simulation.estimand_studies import DIAGONAL_M, KINDS, metric_judgements

WEIGHTS = np.array([1.0, -0.5, 0.0])  # the rater population's mean utility weights
SPREAD = 0.5  # between raters' weights


@cache
def _utility_subjects() -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """30 subjects' features, a model's scores (a utility unlike the raters' mean, plus noise) and the truth."""
    rng = np.random.default_rng(30)
    features = pd.DataFrame(rng.normal(size=(30, 3)), columns=["x1", "x2", "x3"], index=[f"s{i}" for i in range(30)])
    scores = pd.DataFrame({"model": features.to_numpy() @ [1.0, 0.3, 0.6] + rng.normal(0, 0.5, 30)}, features.index)
    truth = float(scores["model"].rank().corr((features @ WEIGHTS).rank()))
    return features, scores, truth


def utility_covers(rng: np.random.Generator, *, raters: int) -> bool:
    features, scores, truth = _utility_subjects()
    weights = pd.DataFrame(rng.normal(WEIGHTS, SPREAD, (raters, 3)), columns=features.columns)
    result = utility_agreement(scores, weights, features, n_resamples=400, seed=int(rng.integers(1 << 31)))
    row = result.table.iloc[0]
    return bool(row["ci_low"] <= truth <= row["ci_high"])


# each feature's P(rating = 1..7)
RATINGS = {
    "age": (0.25, 0.2, 0.15, 0.1, 0.1, 0.1, 0.1),
    "income": (0.05, 0.05, 0.1, 0.2, 0.2, 0.2, 0.2),
    "zip": (0.1, 0.1, 0.1, 0.2, 0.2, 0.15, 0.15),
    "priors": (0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.3),
}


@cache
def _judged_subjects() -> tuple[pd.DataFrame, pd.DataFrame]:
    """100 subjects with the judged features and a model's scores relying on all of them."""
    rng = np.random.default_rng(100)
    subjects = pd.DataFrame(rng.normal(size=(100, len(RATINGS))), columns=list(RATINGS))
    scores = pd.DataFrame({"model": subjects.to_numpy() @ [0.5, 1.0, 0.3, 0.8] + rng.normal(0, 0.3, 100)})
    return subjects, scores


def importance_covers(rng: np.random.Generator, *, raters: int) -> bool:
    """Does a random feature's weighted interval hold u_j I_j (all raters' row)?"""
    subjects, scores = _judged_subjects()
    answers = pd.DataFrame(
        [
            {"participant_id": r, "rater_group": "", "feature": f, "value": 1 + rng.choice(7, p=p)}
            for r in range(raters)
            for f, p in RATINGS.items()
        ]
    )
    shares, _ = feature_fairness_shares(answers, n_resamples=400, n_permutations=1, seed=int(rng.integers(1 << 31)))
    table = unfair_feature_reliance(
        scores, subjects, shares[shares["rater_group"] == shares["rater_group"].iloc[0]], n_repeats=2
    ).features
    row = table.iloc[int(rng.integers(len(table)))]
    truth = sum(RATINGS[row["feature"]][:4]) * row["importance"]
    return bool(row["ci_weighted_low"] - 1e-12 <= truth <= row["ci_weighted_high"] + 1e-12)


CALIBRATION_SKILL = 0.8  # sd of the participants' disagreement propensity on the logit


@cache
def _calibration_population() -> tuple[np.ndarray, np.ndarray, np.ndarray, dict, np.ndarray, float]:
    """200 subjects (effort, aggregate, risk), the 30 judged ones' subject index, their population
    disagreement rates and the true alpha (the estimator on those rates)."""
    rng = np.random.default_rng(200)
    e, s = rng.gamma(2.0, 0.1, size=200), rng.gamma(2.0, 0.1, size=200)
    r = np.clip(0.6 * e + 0.4 * s + rng.normal(0, 0.1, size=200), 0, 1)
    index = {f"s{i}": i for i in range(30)}
    frame = pd.DataFrame({"participant": "p", "subject": list(index), "disagreement": 0})
    data = feedback_matrices(e, s, r, frame, subject_index=index)
    v = data.violations[np.argmin(np.abs(data.grid - 0.6))]
    logit = -0.5 + (v - v.mean()) / v.std()
    rates = population_p(logit, CALIBRATION_SKILL)
    truth = float(alpha_from_rates(data.violations, rates[None, :], data.grid)[0])
    return e, s, r, index, logit, truth


def calibration_covers(rng: np.random.Generator, *, participants: int) -> bool:
    e, s, r, index, logit, truth = _calibration_population()
    p = 1 / (1 + np.exp(-(rng.normal(0, CALIBRATION_SKILL, (participants, 1)) + logit)))
    said = rng.random(p.shape) < p
    person, subject = np.indices(said.shape).reshape(2, -1)
    feedback = pd.DataFrame(
        {"participant": person, "subject": np.array(list(index))[subject], "disagreement": said.ravel().astype(int)}
    )
    result = calibrate_from_disagreement(
        e, s, r, feedback, subject_index=index, n_resamples=400, seed=int(rng.integers(1 << 31))
    )
    return bool(result.ci[0] - 1e-9 <= truth <= result.ci[1] + 1e-9)


class _TrueMetric:
    """The metric the simulated answers come from: ``DIAGONAL_M`` over u, v and [w == "b"] as they are."""

    matrix, draws = DIAGONAL_M, ()

    def scaled(self, subjects: pd.DataFrame) -> np.ndarray:
        return np.column_stack([subjects["u"], subjects["v"], subjects["w"] == "b"]).astype(float)


LIPSCHITZ_L = 1.0


@cache
def _lipschitz_truth() -> tuple[pd.DataFrame, float]:
    """A model's scores of :func:`metric_judgements`' 30 subjects and the share of their pairs violating
    |s_i - s_j| <= L d_M under the true metric."""
    _, subjects = metric_judgements(np.random.default_rng(0), kind="triplet", raters=1, per_rater=1)
    scores = pd.DataFrame({"model": 1.2 * subjects["u"] + 0.8 * (subjects["w"] == "b")}, index=subjects.index)
    table, _ = lipschitz_table(scores, subjects, _TrueMetric(), L=LIPSCHITZ_L)
    return scores, float(table["statistic"].iloc[0])


def lipschitz_covers(rng: np.random.Generator, *, kind: Kind) -> bool:
    scores, truth = _lipschitz_truth()
    judgements, subjects = metric_judgements(rng, kind=kind)
    metric = fit_metric(
        judgements, subjects, ["u", "v", "w"], kind=kind, n_resamples=100, seed=int(rng.integers(1 << 31))
    )
    table, _ = lipschitz_table(scores, subjects, metric, L=LIPSCHITZ_L)
    return bool(table["ci_low"].iloc[0] <= truth <= table["ci_high"].iloc[0])


def _coverage(key: str, function: str, estimand: str, simulate, studies: tuple[int, int], scenario: str) -> None:
    register(Procedure(key, function, estimand, "coverage", 0.95, 0.88, simulate, *studies, scenario))


_coverage(
    "utility agreement",
    "fairness.human_audit.utility_agreement (ci: raters resampled)",
    "Spearman's rho between the model's scores and the utility of the rater population's mean weights (the "
    "weights as given: in the audit each rater's ridge-fitted ones), on these subjects",
    partial(utility_covers, raters=40),
    (60, 600),
    f"30 subjects, 40 raters, weights N((1, -0.5, 0), 0.5^2 I) (true rho {_utility_subjects()[2]:.3f})",
)
_coverage(
    "feature importance, weighted",
    "fairness.human_audit.unfair_feature_reliance (ci_weighted)",
    "u_j I_j: the share of the rater population judging feature j unfair to use times the surrogate's "
    "permutation importance of j (fixed: the subjects and scores are given)",
    partial(importance_covers, raters=40),
    (30, 400),
    "40 raters x 4 features rated 1..7, 100 subjects, linear surrogate",
)
_coverage(
    "disagreement calibration",
    "fairness.calibration.calibrate_from_disagreement (ci: participants resampled)",
    "the alpha whose EaIF violations rank-correlate best with the participant population's disagreement rates, "
    "on these judged subjects",
    partial(calibration_covers, participants=40),
    (60, 600),
    "200 subjects, 30 judged by 40 participants, rates expit(a_i - 0.5 + z_j), z_j the violation at alpha 0.6 "
    f"(true alpha {_calibration_population()[-1]:.3f})",
)
for kind in KINDS:
    _coverage(
        f"human-metric Lipschitz share, {kind}",
        "fairness.human_audit.lipschitz_table (ci: the metric's bootstrap refits)",
        "the share of these subjects' pairs whose scores differ by more than L times their distance under the "
        "metric the raters' answers come from",
        partial(lipschitz_covers, kind=kind),
        (20, 300),
        f"30 subjects, 40 raters x 12 {kind} judgements, M = diag(2, 0.5, 1), L = 1 (true share "
        f"{_lipschitz_truth()[1]:.3f})",
    )
