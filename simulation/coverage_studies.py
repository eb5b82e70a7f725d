"""Simulated studies that measure the coverage and size of the intervals and tests reports print, each
registered in ``analysis.coverage.REGISTRY`` with its estimand (importing this module registers them).

* Crowd majorities (``fairness.error_rates``): a study shaped like Dressel & Farid (2018): blocks of
  subjects, each answered by its own crowd; P(rater i right on subject j) = expit(a_i + b_j), a_i ~ N(0,
  skill_spread), b_j ~ N(difficulty) (subjects of middling difficulty, where a crowd resampled with
  duplicates has a worse majority); outcomes 0/1 at random. The truths are exact: the expected accuracy
  of the majority of ``crowd`` raters drawn from the population (a tie counts as 0), binomial over the
  population's marginal P(right), by Gauss-Hermite quadrature over rater skill.
* Disagreement gaps (``fairness.disagreement``): groups with known SP[m, k] and DR[m, k], the true CA, AE
  and EO from the definitions; three identical groups (every gap 0) and three that differ.
* Family-wise error (``analysis.families``): null agree blocks (three rater groups that do not differ)
  and the family of a block's rater-group tests (T and W of DR and the five notions).
"""

from collections.abc import Callable
from functools import cache, partial

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import binom

from analysis.agreement import ICC_TYPES, rating_icc
from analysis.coverage import Procedure, Reading, Study, register
from analysis.families import adjust
from fairness.disagreement import DisagreementNotions, disagreement_notions
from fairness.error_rates import error_rates
from fairness.group_metrics import group_metrics
from fairness.group_options import MIN_GROUP_SIZE
from fairness.individual import eaif, eaif_sampled
from fairness.rater_group_alpha import GroupAlpha, alpha_by_rater_group
from fairness.rater_group_parity import RaterGroupParity, parity_by_rater_group
from fairness.rater_groups import rater_group_difference_tests
from fairness.task_blocks import rater_group_means

DIFFICULTY = (0.5, 0.6)  # b_j ~ N(0.5, 0.6): subjects of middling difficulty


def crowd_study(
    rng: np.random.Generator, *, blocks: int, per_block: int, raters: int, skill_spread: float
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Answers (participant_id, subject, predicted), subjects (subject, outcome, model_label) and b."""
    b = rng.normal(*DIFFICULTY, blocks * per_block)
    y = rng.integers(0, 2, blocks * per_block)
    skill = rng.normal(0, skill_spread, (blocks, raters, 1))
    right = rng.random((blocks, raters, per_block)) < expit(skill + b.reshape(blocks, 1, per_block))
    block, rater, item = np.indices(right.shape).reshape(3, -1)
    subject = block * per_block + item
    answers = pd.DataFrame(
        {
            "participant_id": [f"{x}-{i}" for x, i in zip(block, rater, strict=True)],
            "subject": subject,
            "predicted": np.where(right.ravel(), y[subject], 1 - y[subject]),
        }
    )
    return answers, pd.DataFrame({"subject": np.arange(len(b)), "outcome": y, "model_label": 0}), b


def population_p(b: np.ndarray, skill_spread: float) -> np.ndarray:
    """E_a expit(a + b_j), a ~ N(0, skill_spread^2): a random rater's P(right) (or P(yes)) on each subject,
    by Gauss-Hermite quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    return (expit(np.add.outer(skill_spread * nodes, b)) * (weights / weights.sum())[:, None]).sum(0)


def majority_accuracy(b: np.ndarray, y: np.ndarray, *, crowd: int, skill_spread: float) -> float:
    """The expected accuracy of the majority of ``crowd`` raters from the population on subjects (b, y)."""
    p = population_p(b, skill_spread)
    k = np.arange(crowd + 1)[:, None]
    pmf = binom.pmf(k, crowd, p)
    return float(((pmf * (2 * k > crowd)).sum(0) + (pmf * (2 * k == crowd)).sum(0) * (y == 0)).mean())


@cache
def _population_accuracy(crowd: int, skill_spread: float) -> float:
    rng = np.random.default_rng(0)
    b = rng.normal(*DIFFICULTY, 200_000)
    return majority_accuracy(b, rng.integers(0, 2, len(b)), crowd=crowd, skill_spread=skill_spread)


def majority_study(
    rng: np.random.Generator, *, blocks: int, per_block: int, crowd: int, skill_spread: float
) -> tuple[float, float, float]:
    """The majority's accuracy interval of one crowd study and its truth on these subjects."""
    answers, subjects, b = crowd_study(rng, blocks=blocks, per_block=per_block, raters=crowd, skill_spread=skill_spread)
    table = error_rates(answers, subjects, n_resamples=200, seed=int(rng.integers(1 << 31)), rater_group=None)
    row = table[(table["source"] == "majority") & (table["subject_attribute"] == "")].iloc[0]
    these = majority_accuracy(b, subjects["outcome"].to_numpy(), crowd=crowd, skill_spread=skill_spread)
    return row["accuracy_low"], row["accuracy_high"], these


def majority_covers(study: tuple[float, float, float], *, crowd: int, skill_spread: float, population: bool) -> bool:
    """Does the interval hold the majority's accuracy on subjects like these (``population``) or on these?"""
    low, high, these = study
    truth = _population_accuracy(crowd, skill_spread) if population else these
    return bool(low <= truth <= high)


SAME = (np.array([[0.6, 0.4]] * 3), np.array([[0.2, 0.3]] * 3))  # three identical groups: every gap 0
DIFFERENT = (np.array([[0.6, 0.4], [0.5, 0.5], [0.6, 0.4]]), np.array([[0.2, 0.3], [0.3, 0.3], [0.25, 0.4]]))
SCENARIOS = {"no gap": SAME, "a gap": DIFFERENT}


def true_cells(sp: np.ndarray, dr: np.ndarray) -> dict[str, np.ndarray]:
    """The population's f_{m,k} of CA, AE, EO (= PE = OMR for two labels) from SP[m, k] = P(yhat = k | m)
    and DR[m, k] = P(s = 1 | yhat = k, m): CA: DR; AE: DR_m = sum_k SP DR (one column); EO_{m,k} =
    a_{m,k} / (a_{m,k} + b_{m,l}), a = (1 - DR) SP, b = DR SP."""
    a, b = (1 - dr) * sp, dr * sp
    return {"CA": dr, "AE": (sp * dr).sum(axis=1, keepdims=True), "EO": a / (a + b[:, ::-1])}


def true_gaps(sp: np.ndarray, dr: np.ndarray) -> dict[str, float]:
    """Each notion's gap max_k (max_m f_{m,k} - min_m f_{m,k}) (:func:`true_cells`)."""
    return {name: float(np.max(f.max(axis=0) - f.min(axis=0))) for name, f in true_cells(sp, dr).items()}


def disagreement_records(
    rng: np.random.Generator, sp: np.ndarray, dr: np.ndarray, per_group: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Groups, model labels and disagreements of ``per_group`` independent records per group."""
    groups, labels, s = [], [], []
    for m in range(len(sp)):
        k = rng.choice(2, size=per_group, p=sp[m])
        groups += [f"g{m}"] * per_group
        labels.append(k)
        s.append((rng.random(per_group) < dr[m, k]).astype(int))
    return np.array(groups), np.concatenate(labels), np.concatenate(s)


def notions_study(rng: np.random.Generator, *, scenario: tuple[np.ndarray, np.ndarray]) -> DisagreementNotions:
    """The disagreement notions (with bootstrap intervals) of 200 records per group of ``scenario``."""
    g, k, s = disagreement_records(rng, *scenario, 200)
    return disagreement_notions(g, k, s, labels=(0, 1), n_resamples=300, seed=int(rng.integers(1 << 31)))


def gap_covers(notions: DisagreementNotions, *, notion: str, scenario: tuple[np.ndarray, np.ndarray]) -> bool:
    ci = notions.notions[notion].ci
    assert ci is not None  # n_resamples > 0 and two labels: every notion has one
    low, high = ci
    return bool(low - 1e-12 <= true_gaps(*scenario)[notion] <= high + 1e-12)


def no_gap_rejects(rng: np.random.Generator) -> bool:
    g, k, s = disagreement_records(rng, *SAME, 200)
    notions = disagreement_notions(g, k, s, labels=(0, 1), n_permutations=199, seed=int(rng.integers(1 << 31)))
    pvalue = notions.notions["AE"].pvalue
    assert pvalue is not None  # n_permutations > 0
    return bool(pvalue < 0.05)


def null_block(rng: np.random.Generator, n_raters: int = 36) -> pd.DataFrame:
    """One agree block of a null study: raters in three rater groups that do not differ, each answering 24
    subjects of two subject groups; disagreement depends on the rater and the subject, never the group."""
    skill = rng.normal(0, 0.5, (n_raters, 1))
    j = np.arange(24)
    s = rng.random((n_raters, 24)) < expit(-1 + skill + 0.4 * (j % 3))
    rater, item = np.indices(s.shape).reshape(2, -1)
    return pd.DataFrame(
        {
            "participant": [f"r{r}" for r in rater],
            "rater_group": np.array(["a", "b", "c"])[rater % 3],
            "group": np.array(["x", "y"])[item % 2],
            "model_label": (item % 4 < 2).astype(int),
            "disagreement": s.ravel().astype(int),
        }
    )


def block_family_rejects(rng: np.random.Generator, *, method: str) -> bool:
    """Whether any test of a null block's family is significant at 5% after ``method``'s adjustment (999
    permutations: with 199 the smallest p, 1/200, could never pass Holm's .05/12)."""
    tests = rater_group_difference_tests(
        null_block(rng), rater_group="rater_group", n_permutations=999, seed=int(rng.integers(1 << 31))
    )
    p = np.array([value for t in tests.values() for value in (t.pvalue, t.weighted_pvalue)], float)
    return bool(np.nanmin(adjust(p, method)) < 0.05)


def differences_cover(notions: DisagreementNotions, *, notion: str, scenario: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether every signed difference f_{m,k} - f_{m',k} of ``notion`` lies in its simultaneous interval
    (the notion_differences rows of one study)."""
    rows = notions.differences[notions.differences["notion"] == notion]
    f = true_cells(*scenario)[notion]
    column = rows["label"].fillna(0).astype(int).to_numpy() if f.shape[1] > 1 else np.zeros(len(rows), int)
    m, other = (rows[c].str.removeprefix("g").astype(int).to_numpy() for c in ("group", "other_group"))
    truth = f[m, column] - f[other, column]
    return bool(len(rows) and np.all((rows["ci_low"] - 1e-12 <= truth) & (truth <= rows["ci_high"] + 1e-12)))


def rated_answers(
    rng: np.random.Generator, *, raters: int, subjects: int, skill_spread: float, points: int, groups: int = 1
) -> tuple[pd.DataFrame, float]:
    """Every rater answers every subject: P(yes) = expit(a_i + b_j), a_i ~ N(0, skill_spread^2), b_j ~
    N(DIFFICULTY); with ``points`` 2 a yes/no answer (1 = yes), else a rating 1 + Binomial(points - 1,
    P(yes)) on 1..points. Raters fall in ``groups`` rater groups that do not differ. Returns the answers
    (participant_id, rater_group, subject, value) and the population's mean answer on these subjects,
    (points - 1) mean_j E_a expit(a + b_j) (+ 1 for ratings)."""
    b = rng.normal(*DIFFICULTY, subjects)
    p = expit(rng.normal(0, skill_spread, (raters, 1)) + b)
    value = rng.binomial(points - 1, p) + (points > 2)
    rater, subject = np.indices(p.shape).reshape(2, -1)
    answers = pd.DataFrame(
        {
            "participant_id": [f"r{i}" for i in rater],
            "rater_group": np.array([f"g{i}" for i in range(groups)])[rater % groups],
            "subject": subject,
            "value": value.ravel().astype(float),
        }
    )
    return answers, float((points - 1) * population_p(b, skill_spread).mean() + (points > 2))


def group_mean_covers(rng: np.random.Generator, *, raters: int, points: int) -> bool:
    answers, truth = rated_answers(rng, raters=raters, subjects=20, skill_spread=0.8, points=points)
    table, _ = rater_group_means(answers, "value", n_resamples=400, n_permutations=0, seed=int(rng.integers(1 << 31)))
    row = table.iloc[0]
    return bool(row["ci_low"] <= truth <= row["ci_high"])


def pairwise_family_rejects(rng: np.random.Generator) -> bool:
    """Whether any Holm-adjusted pairwise p of three rater groups that do not differ is below .05."""
    answers, _ = rated_answers(rng, raters=36, subjects=20, skill_spread=0.8, points=2, groups=3)
    _, test = rater_group_means(answers, "value", n_resamples=0, n_permutations=199, seed=int(rng.integers(1 << 31)))
    return bool(min(row["pvalue_holm"] for row in test.pairwise_rows()) < 0.05)


ICC_VARIANCES = (1.0, 0.5, 1.0)  # subjects, raters, residual


def icc_study(rng: np.random.Generator, *, subjects: int, raters: int, subject_sd: float) -> pd.DataFrame:
    """rating_ij = s_j + r_i + e_ij, s ~ N(0, subject_sd^2), r ~ N(0, .5), e ~ N(0, 1) (two-way random)."""
    _, rater_var, residual = ICC_VARIANCES
    rating = (
        rng.normal(0, subject_sd, (1, subjects))
        + rng.normal(0, np.sqrt(rater_var), (raters, 1))
        + rng.normal(0, np.sqrt(residual), (raters, subjects))
    )
    rater, subject = np.indices(rating.shape).reshape(2, -1)
    return pd.DataFrame({"participant_id": rater, "subject": subject, "value": rating.ravel()})


ICC_RATERS = 6


def true_icc(kind: str) -> float:
    """The ICC of ``kind`` in :func:`icc_study`'s model: var_s over var_s plus the error variance of one rating
    (ICC(1,1), ICC(A,1): var_r + var_e, the raters' effects counted as error; ICC(C,1): var_e, consistency
    ignores them), the error divided by k for the mean of k raters (ICC(*,k)) (McGraw & Wong 1996)."""
    subject_var, rater_var, residual = ICC_VARIANCES
    error = residual if kind.startswith("ICC(C") else rater_var + residual
    return subject_var / (subject_var + error / (ICC_RATERS if kind.endswith("k)") else 1))


def icc_table(rng: np.random.Generator, *, subject_sd: float) -> pd.DataFrame:
    """Every ICC type's row (indexed by type) of one :func:`icc_study` of 20 subjects."""
    ratings = icc_study(rng, subjects=20, raters=ICC_RATERS, subject_sd=subject_sd)
    return rating_icc(ratings, target="subject", rater="participant_id", rating="value").set_index("type")


def icc_covers(table: pd.DataFrame, *, kind: str) -> bool:
    row = table.loc[kind]
    return bool(row["ci_low"] <= true_icc(kind) <= row["ci_high"])


def icc_test_rejects(table: pd.DataFrame, *, kind: str) -> bool:
    return bool(table.loc[kind, "pvalue"] < 0.05)


PARITY_BIAS = {"a": 0.0, "b": 0.3}  # each rater group's mean extra rating of A = 1 subjects (0: as the AI)


def parity_study(rng: np.random.Generator, bias: dict[str, float], *, per_group: int, subjects: int) -> pd.DataFrame:
    """Every rater rates every subject: value = t_x + b_i A_x + u_i + e, t_x ~ N(0.5, 0.15^2) the AI's
    value, b_i ~ N(bias[group], 0.1^2), u_i ~ N(0, 0.1^2), e ~ N(0, 0.1^2); A alternates over subjects. Group
    g's gap against the AI (on any subjects) is bias[g]; a's against b's is bias[a] - bias[b]."""
    a = np.arange(subjects) % 2
    ai = rng.normal(0.5, 0.15, subjects)
    names = np.repeat(list(bias), per_group)
    slope = rng.normal([bias[g] for g in names], 0.1)[:, None]
    value = ai + slope * a + rng.normal(0, 0.1, (len(names), 1)) + rng.normal(0, 0.1, (len(names), subjects))
    rater, subject = np.indices(value.shape).reshape(2, -1)
    return pd.DataFrame(
        {
            "rater": rater,
            "role": names[rater],
            "subject": subject,
            "sensitive": a[subject],
            "ai": ai[subject],
            "value": value.ravel(),
        }
    )


def parity_result(
    rng: np.random.Generator, bias: dict[str, float], *, n_resamples: int, n_permutations: int
) -> RaterGroupParity:
    return parity_by_rater_group(
        parity_study(rng, bias, per_group=20, subjects=40),
        "role",
        ai="ai",
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        seed=int(rng.integers(1 << 31)),
    )


def parity_gaps(rng: np.random.Generator) -> RaterGroupParity:
    """One study's gap intervals (the tests are not measured here: 9 permutations)."""
    return parity_result(rng, PARITY_BIAS, n_resamples=400, n_permutations=9)


def parity_gap_covers(result: RaterGroupParity, *, between: bool) -> bool:
    """The gap CI of rater groups a against b (truth bias[a] - bias[b]) or of b against the AI (bias[b])."""
    comparison = result.between_groups[("a", "b")] if between else result.by_group["b"]
    low, high = comparison.gap_confidence_interval
    truth = PARITY_BIAS["a"] - PARITY_BIAS["b"] if between else PARITY_BIAS["b"]
    return bool(low <= truth <= high)


def parity_test_rejects(rng: np.random.Generator, *, between: bool) -> bool:
    """Whether the rater-level test of a true null rejects at 5%: two groups alike (permutation test between
    them) or a group whose raters rate as the AI does (jackknife t against the AI)."""
    bias = {"a": 0.2, "b": 0.2} if between else {"a": 0.0, "b": 0.0}
    result = parity_result(rng, bias, n_resamples=0, n_permutations=199)
    comparison = result.between_groups[("a", "b")] if between else result.by_group["a"]
    return bool(comparison.pvalue < 0.05)


ALPHA_WEIGHTS = (1.0, 0.6, 0.9)  # a0, a1 (aggregate d_S), a2 (trajectory d_E): alpha = a2 / (a1 + a2) = 0.6


def alpha_study(rng: np.random.Generator, *, participants: int, pairs: int, stimulus_sd: float):
    """One condition's pairs: each participant rates every pair, d = a0 + a1 d_S + a2 d_E + (c_i + p_x) +
    e, d_S and d_E uniform on 1..7 per pair, participant slopes (c_i ~ N(0, 0.15^2) added to a1 and a2 each),
    pair effects p_x ~ N(0, stimulus_sd^2), e ~ N(0, 0.5^2). Returns the pairs frame and alpha for these pairs
    (the least-squares fit of infinitely many participants on them: the pairs' mean d regressed on their
    distances) and for pairs like these (a2 / (a1 + a2))."""
    a0, a1, a2 = ALPHA_WEIGHTS
    d_s, d_e = rng.integers(1, 8, (2, pairs)).astype(float)
    effect = rng.normal(0, stimulus_sd, pairs)
    slopes = rng.normal(0, 0.15, (participants, 2))
    d = (
        a0
        + (a1 + slopes[:, :1]) * d_s
        + (a2 + slopes[:, 1:]) * d_e
        + effect
        + rng.normal(0, 0.5, (participants, pairs))
    )
    person, pair = np.indices(d.shape).reshape(2, -1)
    frame = pd.DataFrame(
        {
            "participant_id": person,
            "rater_group": "g",
            "stimulus": pair,
            "d_aggr": d_s[pair],
            "d_traj": d_e[pair],
            "d_overall": d.ravel(),
        }
    )
    x = np.column_stack([np.ones(pairs), d_s, d_e])
    beta = np.linalg.lstsq(x, x @ np.array(ALPHA_WEIGHTS) + effect, rcond=None)[0]
    return frame, float(beta[2] / (beta[1] + beta[2])), a2 / (a1 + a2)


def alpha_intervals(rng: np.random.Generator) -> tuple[GroupAlpha, float, float]:
    """One study's overall alpha (both intervals) and its truths for these pairs and for pairs like these."""
    frame, these, like_these = alpha_study(rng, participants=40, pairs=12, stimulus_sd=0.3)
    result = alpha_by_rater_group(
        frame, "rater_group", n_resamples=400, n_permutations=0, seed=int(rng.integers(1 << 31)), generalise="stimuli"
    )
    return result.overall, these, like_these


def alpha_covers(study: tuple[GroupAlpha, float, float], *, generalise: bool) -> bool:
    """ci_participants against alpha for these pairs, or ci_stimuli against alpha for pairs like these."""
    overall, these, like_these = study
    low, high = overall.ci_stimuli if generalise else overall.ci_participants
    return bool(low <= (like_these if generalise else these) <= high)


GROUP_SIZES = (200, 150, 100)
# P(yhat = 1 | y = 1) and P(yhat = 1 | y = 0) per group, P(y = 1) = 0.4: every group alike, or not
CLASSIFIERS = {"no gap": ((0.6, 0.2), (0.6, 0.2), (0.6, 0.2)), "a gap": ((0.6, 0.2), (0.7, 0.3), (0.8, 0.3))}


def true_group_metric(classifier: tuple[tuple[float, float], ...], metric: str, quantity: str) -> float:
    """selection rate 0.4 h + 0.6 f, accuracy 0.4 h + 0.6 (1 - f) per group (h, f: P(yhat = 1) when y = 1,
    0); overall weighted by GROUP_SIZES."""
    values = np.array([0.4 * h + 0.6 * (f if metric == "selection_rate" else 1 - f) for h, f in classifier])
    if quantity == "overall":
        return float(np.average(values, weights=GROUP_SIZES))
    return float(values.max() - values.min() if quantity == "difference" else values.min() / values.max())


def group_metric_intervals(rng: np.random.Generator, *, scenario: str) -> pd.DataFrame:
    """One study's group-metric intervals (indexed by metric and quantity) of ``scenario``'s classifier."""
    classifier = CLASSIFIERS[scenario]
    groups = np.repeat(["a", "b", "c"], GROUP_SIZES)
    high, low = (np.repeat([c[i] for c in classifier], GROUP_SIZES) for i in (0, 1))
    y = (rng.random(len(groups)) < 0.4).astype(int)
    yhat = (rng.random(len(groups)) < np.where(y == 1, high, low)).astype(int)
    rows = group_metrics(yhat, y_true=y, sensitive_features=groups, n_resamples=300, seed=int(rng.integers(1 << 31)))
    return rows.intervals.set_index(["metric", "quantity"])


def group_metric_covers(intervals: pd.DataFrame, *, metric: str, quantity: str, scenario: str) -> bool:
    row = intervals.loc[(metric, quantity)]
    truth = true_group_metric(CLASSIFIERS[scenario], metric, quantity)
    return bool(row["ci_low"] - 1e-12 <= truth <= row["ci_high"] + 1e-12)


def group_metric_reading(*, metric: str, quantity: str, scenario: str) -> Reading:
    return Reading(
        GROUP_METRIC_STUDIES[scenario],
        partial(group_metric_covers, metric=metric, quantity=quantity, scenario=scenario),
    )


def covers(key: str, function: str, estimand: str, simulate, scenario: str, *, bound: float, studies: tuple[int, int]):
    """Register an interval: nominal 95%, ``bound`` its floor, ``studies`` (reduced, full)."""
    register(Procedure(key, function, estimand, "coverage", 0.95, bound, simulate, *studies, scenario))


def sized(
    key: str,
    function: str,
    estimand: str,
    simulate,
    scenario: str,
    *,
    bound: float,
    studies: tuple[int, int],
    contrast: tuple[str, Callable[[np.random.Generator], bool]] | None = None,
):
    """Register a test at 5%: ``bound`` its largest acceptable size, ``studies`` (reduced, full)."""
    register(Procedure(key, function, estimand, "size", 0.05, bound, simulate, *studies, scenario, contrast))


MAJORITY = "fairness.error_rates.error_rates (majority rows)"
for blocks, per_block in ((20, 25), (1, 200)):
    crowds = Study(partial(majority_study, blocks=blocks, per_block=per_block, crowd=20, skill_spread=0.3))
    for population in (False, True):
        covers(
            f"majority accuracy, {blocks} block{'s' * (blocks > 1)}, "
            + ("subjects like these" if population else "these subjects"),
            MAJORITY,
            "the expected accuracy of the majority of a crowd of this size drawn from the rater population, on "
            + ("a population of subjects like these" if population else "these subjects"),
            Reading(crowds, partial(majority_covers, crowd=20, skill_spread=0.3, population=population)),
            f"{blocks} x {per_block} subjects, 20 raters per block, rater skill sd 0.3",
            bound=0.84,
            studies=(50, 400),
        )
NOTIONS_FUNCTION = "fairness.disagreement.disagreement_notions"
NOTIONS_STUDIES = {name: Study(partial(notions_study, scenario=scenario)) for name, scenario in SCENARIOS.items()}
for notion in ("CA", "AE", "EO"):
    for name, scenario in SCENARIOS.items():
        for label, simulate, estimand, what, full in (
            (
                "gap",
                gap_covers,
                "the largest difference between subject groups' population rates (0 when equal)",
                f"true {notion} = {true_gaps(*scenario)[notion]:.3f}",
                1000,
            ),
            (
                "signed differences",
                differences_cover,
                "f(group) - f(other group) in the population, for every pair of groups and label at once",
                "covered when every pair's interval holds",
                500,
            ),
        ):
            covers(
                f"{notion} {label}, {name}",
                f"{NOTIONS_FUNCTION} ({'ci' if label == 'gap' else 'differences'})",
                f"{notion}: {estimand}",
                Reading(NOTIONS_STUDIES[name], partial(simulate, notion=notion, scenario=scenario)),
                f"3 groups x 200 records, {name} ({what})",
                bound=0.86,
                studies=(60, full),
            )
sized(
    "no-gap permutation test",
    f"{NOTIONS_FUNCTION} (pvalue)",
    "H0: the subject groups are exchangeable (no gap); size at 5%",
    no_gap_rejects,
    "3 identical groups x 200 records, AE",
    bound=0.13,
    studies=(60, 1000),
)
sized(
    "block family, Holm",
    "analysis.families.adjust",
    "the family-wise error rate of a block's rater-group tests in a null study",
    partial(block_family_rejects, method="holm"),
    "36 raters in 3 groups that do not differ, 12 tests",
    bound=0.13,
    studies=(60, 500),
    contrast=("unadjusted, some test of the family is significant at 5%", partial(block_family_rejects, method="none")),
)
for points, answers in ((2, "yes/no answers"), (7, "7-point ratings")):
    covers(
        f"rater-group mean, {answers}",
        "fairness.task_blocks.rater_group_means (ci)",
        "the mean answer of a rater drawn from the group's population, on these subjects",
        partial(group_mean_covers, raters=MIN_GROUP_SIZE, points=points),
        f"{MIN_GROUP_SIZE} raters (the smallest compared group) x 20 subjects, {answers}, rater effect sd 0.8 on "
        "the logit",
        bound=0.88,
        studies=(80, 1000),
    )
sized(
    "pairwise family, Holm",
    "fairness.rater_groups.compare_groups (pairwise, pvalue_holm)",
    "the family-wise error rate of the Holm-adjusted tests of every pair of rater groups, in a null study",
    pairwise_family_rejects,
    "36 raters in 3 groups that do not differ, yes/no answers, 3 pairs",
    bound=0.13,
    studies=(80, 1000),
)
ICC_SCENARIO = f"20 subjects x {ICC_RATERS} raters, variances: subjects 1, raters 0.5, residual 1"
ICC_STUDY, ICC_NULL_STUDY = (Study(partial(icc_table, subject_sd=sd)) for sd in (np.sqrt(ICC_VARIANCES[0]), 0.0))
for kind in ICC_TYPES:
    covers(
        kind,
        "analysis.agreement.rating_icc (ci)",
        f"{kind} of the two-way random-effects model the ratings come from",
        Reading(ICC_STUDY, partial(icc_covers, kind=kind)),
        f"{ICC_SCENARIO} (true {kind} = {true_icc(kind):.3f})",
        bound=0.88,
        studies=(60, 300),
    )
for kind, model in (("ICC(1,1)", "one-way"), ("ICC(A,1)", "two-way")):
    sized(
        f"ICC F test, {model}",
        f"analysis.agreement.rating_icc (pvalue of {kind} and its k version)",
        "H0: the subjects do not differ (ICC = 0); size at 5%",
        Reading(ICC_NULL_STUDY, partial(icc_test_rejects, kind=kind)),
        f"{ICC_SCENARIO}, but no subject variance",
        bound=0.12,
        studies=(60, 300),
    )
PARITY = "fairness.rater_group_parity.parity_by_rater_group"
PARITY_GAPS = Study(parity_gaps)
for between, name in ((True, "rater group against rater group"), (False, "rater group against the AI")):
    covers(
        f"parity gap, {name}",
        f"{PARITY} (gap ci)",
        "the gap m1 - m0 of decision makers whose decisions are the mean ratings of the rater groups' "
        "populations, on these subjects",
        Reading(PARITY_GAPS, partial(parity_gap_covers, between=between)),
        "20 raters per group x 40 subjects, true gaps 0 and 0.3",
        bound=0.86,
        studies=(60, 600),
    )
    sized(
        f"parity test, {name}",
        f"{PARITY} (pvalue: " + ("permutation of raters)" if between else "rater jackknife t)"),
        "H0: "
        + ("the two rater groups' raters are exchangeable" if between else "the group's gap against the AI is 0")
        + "; size at 5%",
        partial(parity_test_rejects, between=between),
        "20 raters per group x 40 subjects, no gap",
        bound=0.12,
        studies=(60, 600),
    )
ALPHA_INTERVALS = Study(alpha_intervals)
for generalise, estimand in ((False, "for these pairs"), (True, "for pairs like these")):
    covers(
        f"alpha, {estimand}",
        "fairness.rater_group_alpha.alpha_by_rater_group ("
        + ("ci_stimuli: two-way bootstrap" if generalise else "ci_participants: participants resampled")
        + ")",
        f"alpha = a2 / (a1 + a2) of the rater population's ratings, {estimand}",
        Reading(ALPHA_INTERVALS, partial(alpha_covers, generalise=generalise)),
        "40 participants x 12 pairs, participant slopes sd 0.15, pair effects sd 0.3",
        bound=0.86,
        studies=(60, 400),
    )
GROUP_METRIC = "fairness.group_metrics.group_metrics (audit_models' group metrics)"
GROUPS_SCENARIO = "3 groups of 200, 150 and 100 subjects, P(y = 1) = 0.4"
GROUP_METRIC_STUDIES = {name: Study(partial(group_metric_intervals, scenario=name)) for name in CLASSIFIERS}
covers(
    "group metric, overall accuracy",
    GROUP_METRIC,
    "the classifier's accuracy in the population the subjects come from, the groups weighted as in the file",
    group_metric_reading(metric="accuracy", quantity="overall", scenario="a gap"),
    GROUPS_SCENARIO,
    bound=0.88,
    studies=(60, 600),
)
GAP_ESTIMANDS = {
    "difference": "the largest minus the smallest selection rate of the groups' populations (0 when equal)",
    "ratio": "the smallest over the largest selection rate of the groups' populations (1 when equal)",
}
for quantity, estimand in GAP_ESTIMANDS.items():
    for alike in CLASSIFIERS:
        truth = true_group_metric(CLASSIFIERS[alike], "selection_rate", quantity)
        covers(
            f"group metric {quantity}, {alike}",
            GROUP_METRIC,
            estimand,
            group_metric_reading(metric="selection_rate", quantity=quantity, scenario=alike),
            f"{GROUPS_SCENARIO}, {alike} (true {quantity} {truth:.3f})",
            bound=0.88,
            studies=(60, 600),
        )


@cache
def _eaif_population() -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """3,000 subjects with effort, aggregate and a risk in [0, 1], and their exact EaIF (alpha 0.6)."""
    rng = np.random.default_rng(3000)
    e, s = rng.gamma(2.0, 0.1, size=3000), rng.gamma(2.0, 0.1, size=3000)
    r = np.clip(0.6 * e + 0.4 * s + rng.normal(0, 0.1, size=3000), 0, 1)
    return e, s, r, eaif(e, s, r, alpha=0.6)


def eaif_sampled_covers(rng: np.random.Generator, *, bound: str) -> bool:
    """One sampled EaIF of :func:`_eaif_population` (20,000 pairs, a fresh seed): does its interval hold the exact
    value?"""
    e, s, r, exact = _eaif_population()
    est = eaif_sampled(e, s, r, alpha=0.6, n_pairs=20_000, seed=int(rng.integers(2**31)), bound=bound)
    return est.ci[0] <= exact <= est.ci[1]


for eaif_bound in ("bernstein", "hoeffding"):
    covers(
        f"sampled EaIF, {eaif_bound} bound",
        "fairness.individual.eaif_sampled (audit_models above its exact limit)",
        "the exact EaIF of these subjects over all their pairs (the sampling of pairs is the only randomness)",
        partial(eaif_sampled_covers, bound=eaif_bound),
        "3,000 subjects, 20,000 uniform pairs per study, alpha 0.6",
        bound=0.93,
        studies=(60, 400),
    )

import simulation.audit_studies  # noqa: E402, F401 - the audit's human tables' procedures
import simulation.estimand_studies  # noqa: E402, F401 - the choose, in-group and metric tables' procedures
import simulation.situation_testing_studies  # noqa: E402, F401 - situation testing's exact test
import simulation.tradeoff_studies  # noqa: E402, F401 - the trade-off weights and model scores
