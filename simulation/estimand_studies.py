"""Simulated studies of the choose, feature-fairness, in-group and learned-metric tables' intervals, each
registered in ``analysis.coverage.REGISTRY`` against the estimand its report states (imported by
``simulation.coverage_studies``).

* Choices (``analysis.paired_comparison``): subjects with three standard-normal features; rater r's
  weights w_r ~ N((1, -0.5, 0), 0.5^2 I); each choice a random pair, chosen with P = expit(w_r . (x_a - x_b)).
  Raters differ, so the pooled fits estimate population-averaged quantities (attenuated from the mean
  rater's) and Borda points are those of the raters' fitted rankings; each truth is that estimator's value
  on 20,000 simulated raters of the same design (its large-sample limit).
* Rankings (``analysis.paired_comparison.plackett_luce``): the same subjects and raters; each ranking of four
  random subjects a Plackett-Luce draw from the rater's utilities (Gumbel-max); the truth is the pooled fit
  on 20,000 raters.
* Feature judgements (``fairness.feature_fairness.latent_property_model``): raters with a leniency
  N(0, 1) judge features whose eight property ratings are uniform on 1..7; the truth is the pooled fit on
  20,000 raters (population-averaged).
* Rater means (``fairness.task_blocks``): P(rater i answers 1 on subject j) = expit(a_i + b_j + c [j in g]),
  a_i ~ N(0, 0.5), b_j ~ N(0, 0.8); the truths are exact by Gauss-Hermite quadrature over a: on these
  subjects, mean_j E_a expit(.); on subjects like these, E_b E_a expit(.).
* Learned metrics (``fairness.human_metric.fit_metric``): the builder's sizes (40 raters x 12 judgements
  over 30 subjects with two numeric features and one two-valued one; and 80 x 20 with interacting
  features), answers from a true M; the truth is M's feature weights (its diagonal).
"""

from functools import cache, partial

import numpy as np
import pandas as pd
from scipy import special

from analysis.coverage import Procedure, register
from analysis.paired_comparison import ALL_RATERS, bradley_terry, plackett_luce, utility_model
from fairness.feature_fairness import latent_property_model
from fairness.human_metric import Kind, fit_metric
from fairness.rater_groups import ALL
from fairness.task_blocks import Options, Tests, in_group_gaps, in_group_rates

FEATURES = ["x1", "x2", "x3"]
WEIGHTS = np.array([1.0, -0.5, 0.0])
SPREAD = 0.5  # between raters' weights
TRUTH_RATERS = 20_000


def choice_subjects(n_subjects: int) -> pd.DataFrame:
    x = np.random.default_rng(n_subjects).normal(size=(n_subjects, len(FEATURES)))
    return pd.DataFrame(x, index=[f"s{i:02d}" for i in range(n_subjects)], columns=FEATURES)


def choices(rng: np.random.Generator, subjects: pd.DataFrame, *, raters: int, per_rater: int) -> pd.DataFrame:
    """``per_rater`` random pairs per rater (rater, winner, loser), chosen by the rater's own weights."""
    x = subjects.to_numpy()
    w = WEIGHTS + rng.normal(0, SPREAD, (raters, len(WEIGHTS)))
    rater = np.repeat(np.arange(raters), per_rater)
    a = rng.integers(0, len(x), rater.size)
    b = (a + rng.integers(1, len(x), rater.size)) % len(x)
    a_wins = rng.random(rater.size) < special.expit(np.einsum("nk,nk->n", w[rater], x[a] - x[b]))
    ids = subjects.index.to_numpy()
    return pd.DataFrame({"rater": rater, "winner": ids[np.where(a_wins, a, b)], "loser": ids[np.where(a_wins, b, a)]})


@cache
def _choice_truths(n_subjects: int, per_rater: int) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Borda points, pooled weights and Bradley-Terry strengths on TRUTH_RATERS raters (their limits)."""
    subjects = choice_subjects(n_subjects)
    frame = choices(np.random.default_rng(1), subjects, raters=TRUTH_RATERS, per_rater=per_rater)
    fit = utility_model(frame, subjects, FEATURES, n_resamples=0)
    borda = fit.borda.set_index("subject")["borda"]
    weights = fit.weights.set_index("feature")["weight"]
    return borda, weights, bradley_terry(frame).strength


def borda_covers(rng: np.random.Generator, *, raters: int) -> bool:
    """The BCa interval of a random subject's mean Borda points holds their fitted-ranking truth."""
    subjects = choice_subjects(10)
    truth = _choice_truths(10, 20)[0]
    fit = utility_model(
        choices(rng, subjects, raters=raters, per_rater=20),
        subjects,
        FEATURES,
        n_resamples=1000,
        seed=int(rng.integers(1 << 31)),
    )
    borda = fit.borda[fit.borda["rater_group"] == ALL_RATERS].set_index("subject")
    row = borda.loc[rng.choice(truth.index)]
    return bool(row["ci_low"] <= truth[row.name] <= row["ci_high"])


def weight_covers(rng: np.random.Generator) -> bool:
    """The rater-clustered t interval of a random feature's pooled weight holds its population average."""
    subjects = choice_subjects(20)
    truth = _choice_truths(20, 20)[1]
    fit = utility_model(choices(rng, subjects, raters=60, per_rater=20), subjects, FEATURES, n_resamples=0)
    row = fit.weights.set_index("feature").loc[rng.choice(FEATURES)]
    return bool(row["ci_low"] <= truth[row.name] <= row["ci_high"])


def strength_covers(rng: np.random.Generator) -> bool:
    """The rater-clustered interval of a random non-reference subject's s_i - s_reference holds it."""
    subjects = choice_subjects(8)
    truth = _choice_truths(8, 20)[2]
    fit = bradley_terry(choices(rng, subjects, raters=40, per_rater=20), cluster="rater")
    subject = rng.choice(truth.index[1:])
    interval = fit.confidence_interval()
    return bool(interval.low[subject] <= truth[subject] <= interval.high[subject])


def rankings(rng: np.random.Generator, subjects: pd.DataFrame, *, raters: int, per_rater: int, size: int = 4):
    """``per_rater`` rankings of ``size`` random subjects per rater (ranking, item, rank, rater), each a
    Plackett-Luce draw (Gumbel-max) from the rater's own utilities w_r . x."""
    x, ids = subjects.to_numpy(), subjects.index.to_numpy()
    w = WEIGHTS + rng.normal(0, SPREAD, (raters, len(WEIGHTS)))
    n = raters * per_rater
    shown = np.argsort(rng.random((n, len(x))), axis=1)[:, :size]
    rater = np.repeat(np.arange(raters), per_rater)
    utility = np.einsum("nsk,nk->ns", x[shown], w[rater]) + rng.gumbel(size=shown.shape)
    order = np.take_along_axis(shown, np.argsort(-utility, axis=1), axis=1)
    return pd.DataFrame(
        {
            "ranking": np.repeat(np.arange(n), size),
            "item": ids[order.ravel()],
            "rank": np.tile(np.arange(1, size + 1), n),
            "rater": np.repeat(rater, size),
        }
    )


@cache
def _ranking_truth(n_subjects: int, per_rater: int) -> pd.Series:
    """Plackett-Luce strengths on TRUTH_RATERS raters (the pooled fit's limit)."""
    subjects = choice_subjects(n_subjects)
    return plackett_luce(
        rankings(np.random.default_rng(1), subjects, raters=TRUTH_RATERS, per_rater=per_rater)
    ).strength


def ranking_strength_covers(rng: np.random.Generator) -> bool:
    """The rater-clustered interval of a random non-reference subject's Plackett-Luce s_i - s_reference holds it."""
    subjects = choice_subjects(8)
    truth = _ranking_truth(8, 10)
    fit = plackett_luce(rankings(rng, subjects, raters=40, per_rater=10), cluster="rater")
    subject = rng.choice(truth.index[1:])
    interval = fit.confidence_interval()
    return bool(interval.low[subject] <= truth[subject] <= interval.high[subject])


PROPERTIES = [f"p{i}" for i in range(8)]
PROPERTY_EFFECTS = np.array([0.4, 0.3, -0.3, 0.2, 0.0, -0.2, 0.1, 0.0])


def property_judgements(rng: np.random.Generator, *, raters: int, features: int = 8) -> pd.DataFrame:
    """One row per rater and feature: participant_id, value (7 = fair, 1 = not) and the property ratings."""
    ratings = rng.integers(1, 8, (raters * features, len(PROPERTIES)))
    leniency = np.repeat(rng.normal(0, 1, raters), features)
    fair = rng.random(len(ratings)) < special.expit(0.2 + (ratings - 4) @ PROPERTY_EFFECTS + leniency)
    frame = pd.DataFrame(ratings, columns=PROPERTIES)
    return frame.assign(participant_id=np.repeat(np.arange(raters), features), value=np.where(fair, 7, 1))


@cache
def _property_truth() -> pd.Series:
    frame = property_judgements(np.random.default_rng(1), raters=TRUTH_RATERS)
    return latent_property_model(frame, PROPERTIES).statistic


def property_covers(rng: np.random.Generator) -> bool:
    """The CR1 t interval of a random term of the latent-property model holds its population average."""
    model = latent_property_model(property_judgements(rng, raters=60), PROPERTIES)
    term = str(rng.choice(["intercept", *PROPERTIES]))
    low, high = (side[term] for side in model.confidence_interval())
    return bool(low <= _property_truth()[term] <= high)


NODES, NODE_WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
RATER_SD, SUBJECT_SD, IN_GROUP_SHIFT = 0.5, 0.8, 0.3


def _rater_mean(b: np.ndarray) -> np.ndarray:
    """E_a expit(a + b), a ~ N(0, RATER_SD^2), per element of b."""
    return (special.expit(np.add.outer(RATER_SD * NODES, b)) * (NODE_WEIGHTS / NODE_WEIGHTS.sum())[:, None]).sum(0)


@cache
def _population_rate() -> float:
    """E_b E_a expit(a + b), b ~ N(IN_GROUP_SHIFT, SUBJECT_SD^2): the in-group rate on subjects like these (200,000
    subjects drawn once)."""
    b = np.random.default_rng(0).normal(0, SUBJECT_SD, 200_000) + IN_GROUP_SHIFT
    return float(_rater_mean(b).mean())


def rater_study(
    rng: np.random.Generator, *, blocks: int, per_block: int, raters: int
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Answers (participant_id, rater_group, subject, value), subjects (subject, group:g) and each subject's
    logit shift b_j + c [j in g]; each block of subjects answered by its own ``raters``."""
    n = blocks * per_block
    in_g = np.arange(n) % 2 == 0
    shift = rng.normal(0, SUBJECT_SD, n) + IN_GROUP_SHIFT * in_g
    a = rng.normal(0, RATER_SD, (blocks, raters, 1))
    answer = rng.random((blocks, raters, per_block)) < special.expit(a + shift.reshape(blocks, 1, per_block))
    block, rater, item = np.indices(answer.shape).reshape(3, -1)
    answers = pd.DataFrame(
        {
            "participant_id": [f"{x}-{i}" for x, i in zip(block, rater, strict=True)],
            "rater_group": np.array(["u", "v"])[rater % 2],
            "subject": block * per_block + item,
            "value": answer.ravel().astype(float),
        }
    )
    subjects = pd.DataFrame({"subject": np.arange(n), "group:g": np.where(in_g, "in", "out")})
    return answers, subjects, shift


def rate_covers(rng: np.random.Generator, *, blocks: int, population: bool) -> bool:
    """The in-group rate of subject group "in" (all raters): the raters' t interval (these subjects) or the
    blocks' (``population``: subjects like these) holds its truth."""
    answers, subjects, shift = rater_study(rng, blocks=blocks, per_block=20, raters=15 if blocks > 1 else 60)
    table = in_group_rates(answers, subjects, "value")
    row = table[(table["subject_group"] == "in") & (table["rater_group"] == ALL)].iloc[0]
    if population:
        return bool(row["ci_blocks_low"] <= _population_rate() <= row["ci_blocks_high"])
    return bool(row["ci_low"] <= _rater_mean(shift[::2]).mean() <= row["ci_high"])


def gap_covers(rng: np.random.Generator) -> bool:
    """The t interval over raters of the mean in-group gap (all raters) holds E_a[mean_g - mean_rest]."""
    answers, subjects, shift = rater_study(rng, blocks=1, per_block=40, raters=60)
    options = Options(n_resamples=0, n_permutations=19, seed=0)
    table = in_group_gaps(answers, subjects, "value", options, Tests())
    row = table[table["rater_group"] == ALL].iloc[0]
    truth = _rater_mean(shift[::2]).mean() - _rater_mean(shift[1::2]).mean()
    return bool(row["ci_low"] <= truth <= row["ci_high"])


DIAGONAL_M = np.diag([2.0, 0.5, 1.0])  # over the scaled columns u (numeric), v (numeric), w (two values)
FULL_M = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 1.0]])  # features that interact


def metric_judgements(
    rng: np.random.Generator, *, kind: str, matrix: np.ndarray = DIAGONAL_M, raters: int = 40, per_rater: int = 12
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``raters`` x ``per_rater`` judgements over 30 subjects from ``matrix`` (module doc) and the subjects
    (u, v on [0, 1], w = "a" / "b")."""
    subjects = pd.DataFrame(
        {"u": np.linspace(0, 1, 30), "v": np.random.default_rng(3).random(30), "w": np.tile(["a", "b"], 15)},
        index=[f"s{i}" for i in range(30)],
    )
    x = subjects[["u", "v"]].to_numpy()
    x = np.column_stack([x, subjects["w"] == "b"]).astype(float)
    n = raters * per_rater
    rater = np.repeat(np.arange(raters), per_rater)
    ids = subjects.index.to_numpy()
    ends = np.array([rng.choice(30, 3, replace=False) for _ in range(n)])

    def d2(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        delta = x[i] - x[j]
        return np.einsum("nk,kl,nl->n", delta, matrix, delta)

    if kind == "comparable":
        p = 2 * special.expit(-d2(ends[:, 0], ends[:, 1]))
        frame = pd.DataFrame({"rater": rater, "a": ids[ends[:, 0]], "b": ids[ends[:, 1]]})
    else:
        p = special.expit(d2(ends[:, 0], ends[:, 2]) - d2(ends[:, 0], ends[:, 1]))
        frame = pd.DataFrame({"rater": rater, "anchor": ids[ends[:, 0]], "b": ids[ends[:, 1]], "c": ids[ends[:, 2]]})
    return frame.assign(answer=(rng.random(n) < np.clip(p, 0, 1)).astype(int)), subjects


def metric_covers(rng: np.random.Generator, *, kind: Kind, matrix: np.ndarray, raters: int, per_rater: int) -> bool:
    """The full-M Wald interval of a random feature's weight holds M's diagonal entry (u: M_uu, v: M_vv, w:
    M_ww: a difference in that feature alone)."""
    judgements, subjects = metric_judgements(rng, kind=kind, matrix=matrix, raters=raters, per_rater=per_rater)
    fit = fit_metric(judgements, subjects, ["u", "v", "w"], kind=kind, n_resamples=0)
    feature = int(rng.integers(3))
    name = ["u", "v", "w"][feature]
    return bool(fit.ci_low[name] <= matrix[feature, feature] <= fit.ci_high[name])


def _coverage(key: str, function: str, estimand: str, simulate, reduced: int, full: int, scenario: str) -> None:
    register(Procedure(key, function, estimand, "coverage", 0.95, 0.85, simulate, reduced, full, scenario))


_coverage(
    "Borda points of the fitted rankings",
    "analysis.paired_comparison.utility_model (borda)",
    "a subject's mean Borda points in the ridge-fitted (penalty 1) rankings of raters from the population, each "
    "fitted from this many choices (not the Borda points of their true preferences)",
    partial(borda_covers, raters=100),
    40,
    400,
    "10 subjects, 100 raters x 20 choices, weights N((1, -0.5, 0), 0.5^2 I)",
)
_coverage(
    "utility weights, population-averaged",
    "analysis.paired_comparison.utility_model (weights)",
    "the population-averaged weight: the pooled logit's limit over the rater population",
    weight_covers,
    60,
    500,
    "20 subjects, 60 raters x 20 choices, weights N((1, -0.5, 0), 0.5^2 I)",
)
_coverage(
    "strengths, rater-clustered",
    "analysis.paired_comparison.bradley_terry (cluster='rater')",
    "s_i - s_reference, population-averaged (the pooled fit's limit over the rater population)",
    strength_covers,
    60,
    500,
    "8 subjects, 40 raters x 20 choices from feature utilities, weights N((1, -0.5, 0), 0.5^2 I)",
)
_coverage(
    "Plackett-Luce strengths, rater-clustered",
    "analysis.paired_comparison.plackett_luce (cluster='rater')",
    "s_i - s_reference, population-averaged (the pooled Plackett-Luce fit's limit over the rater population)",
    ranking_strength_covers,
    60,
    500,
    "8 subjects, 40 raters x 10 rankings of 4 from feature utilities, weights N((1, -0.5, 0), 0.5^2 I)",
)
_coverage(
    "latent-property model, population-averaged",
    "fairness.feature_fairness.latent_property_model",
    "the population-averaged log-odds per property point (the pooled logit's limit over raters)",
    property_covers,
    60,
    500,
    "60 raters x 8 features, rater leniency N(0, 1)",
)
_coverage(
    "in-group rate, these subjects",
    "fairness.task_blocks.in_group_rates (ci)",
    "the rater population's mean answer on these subjects of the group",
    partial(rate_covers, blocks=1, population=False),
    60,
    1000,
    "1 block of 20 subjects, 60 raters, rater sd 0.5 and subject sd 0.8 on the logit",
)
_coverage(
    "in-group rate over blocks, subjects like these",
    "fairness.task_blocks.in_group_rates (ci_blocks)",
    "the rater population's mean answer on a population of subjects like these",
    partial(rate_covers, blocks=20, population=True),
    60,
    1000,
    "20 blocks of 20 subjects, 15 raters per block, rater sd 0.5 and subject sd 0.8 on the logit",
)
_coverage(
    "in-group gap, these subjects",
    "fairness.task_blocks.in_group_gaps (ci)",
    "the rater population's mean gap (group minus rest) on these subjects",
    gap_covers,
    60,
    1000,
    "1 block of 40 subjects, 60 raters, rater sd 0.5 and subject sd 0.8 on the logit",
)
METRIC_SCENARIOS = {
    "builder's size": (DIAGONAL_M, 40, 12, "40 raters x 12 judgements, 30 subjects, M = diag(2, 0.5, 1)"),
    "interacting features": (FULL_M, 80, 20, "80 raters x 20 judgements, 30 subjects, M with off-diagonal 0.6, 0.3"),
}
KINDS: tuple[Kind, ...] = ("comparable", "triplet")
for kind in KINDS:
    for name, (matrix, raters, per_rater, scenario) in METRIC_SCENARIOS.items():
        _coverage(
            f"learned metric weights, {kind}, {name}",
            f"fairness.human_metric.fit_metric (kind='{kind}', ci: full-M Wald)",
            "a feature's weight: the squared distance the true M gives a difference in that feature alone",
            partial(metric_covers, kind=kind, matrix=matrix, raters=raters, per_rater=per_rater),
            60,
            1000,
            scenario,
        )
