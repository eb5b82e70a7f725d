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

from functools import partial

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import binom

from analysis.coverage import Procedure, register
from analysis.families import adjust
from fairness.disagreement import disagreement_notions
from fairness.error_rates import error_rates
from fairness.rater_groups import rater_group_difference_tests

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


def majority_accuracy(b: np.ndarray, y: np.ndarray, *, crowd: int, skill_spread: float) -> float:
    """The expected accuracy of the majority of ``crowd`` raters from the population on subjects (b, y)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    p = (expit(np.add.outer(skill_spread * nodes, b)) * (weights / weights.sum())[:, None]).sum(0)
    k = np.arange(crowd + 1)[:, None]
    pmf = binom.pmf(k, crowd, p)
    return float(((pmf * (2 * k > crowd)).sum(0) + (pmf * (2 * k == crowd)).sum(0) * (y == 0)).mean())


def _population_accuracy(crowd: int, skill_spread: float) -> float:
    rng = np.random.default_rng(0)
    b = rng.normal(*DIFFICULTY, 200_000)
    return majority_accuracy(b, rng.integers(0, 2, len(b)), crowd=crowd, skill_spread=skill_spread)


def majority_covers(
    rng: np.random.Generator, *, blocks: int, per_block: int, crowd: int, skill_spread: float, population: bool
) -> bool:
    answers, subjects, b = crowd_study(rng, blocks=blocks, per_block=per_block, raters=crowd, skill_spread=skill_spread)
    table = error_rates(answers, subjects, n_resamples=200, seed=int(rng.integers(1 << 31)), rater_group=None)
    row = table[(table["source"] == "majority") & (table["subject_attribute"] == "")].iloc[0]
    truth = (
        _population_accuracy(crowd, skill_spread)
        if population
        else majority_accuracy(b, subjects["outcome"].to_numpy(), crowd=crowd, skill_spread=skill_spread)
    )
    return bool(row["accuracy_low"] <= truth <= row["accuracy_high"])


SAME = (np.array([[0.6, 0.4]] * 3), np.array([[0.2, 0.3]] * 3))  # three identical groups: every gap 0
DIFFERENT = (np.array([[0.6, 0.4], [0.5, 0.5], [0.6, 0.4]]), np.array([[0.2, 0.3], [0.3, 0.3], [0.25, 0.4]]))


def true_gaps(sp: np.ndarray, dr: np.ndarray) -> dict[str, float]:
    """CA, AE, EO (= PE = OMR for two labels) from SP[m, k] = P(yhat = k | m) and DR[m, k] = P(s = 1 | yhat
    = k, m): CA = max_k (max_m DR - min_m DR); AE = max_m DR_m - min_m DR_m, DR_m = sum_k SP DR; EO_{m,k} =
    a_{m,k} / (a_{m,k} + b_{m,l}), a = (1 - DR) SP, b = DR SP."""
    a, b = (1 - dr) * sp, dr * sp
    eo = a / (a + b[:, ::-1])
    dr_m = (sp * dr).sum(axis=1)

    def spread(f: np.ndarray) -> float:
        return float(np.max(f.max(axis=0) - f.min(axis=0)))

    return {"CA": spread(dr), "AE": float(dr_m.max() - dr_m.min()), "EO": spread(eo)}


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


def gap_covers(rng: np.random.Generator, *, notion: str, scenario: tuple[np.ndarray, np.ndarray]) -> bool:
    g, k, s = disagreement_records(rng, *scenario, 200)
    notions = disagreement_notions(g, k, s, labels=(0, 1), n_resamples=300, seed=int(rng.integers(1 << 31)))
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


MAJORITY = "fairness.error_rates.error_rates (majority rows)"
for blocks, per_block in ((20, 25), (1, 200)):
    for population in (False, True):
        register(
            Procedure(
                key=f"majority accuracy, {blocks} block{'s' * (blocks > 1)}, "
                + ("subjects like these" if population else "these subjects"),
                function=MAJORITY,
                estimand="the expected accuracy of the majority of a crowd of this size drawn from the rater "
                + (
                    "population, on a population of subjects like these"
                    if population
                    else "population, on these subjects"
                ),
                kind="coverage",
                nominal=0.95,
                bound=0.84,
                simulate=partial(
                    majority_covers,
                    blocks=blocks,
                    per_block=per_block,
                    crowd=20,
                    skill_spread=0.3,
                    population=population,
                ),
                reduced=50,
                full=400,
                scenario=f"{blocks} x {per_block} subjects, 20 raters per block, rater skill sd 0.3",
            )
        )
for notion in ("CA", "AE", "EO"):
    for name, scenario in (("no gap", SAME), ("a gap", DIFFERENT)):
        register(
            Procedure(
                key=f"{notion} gap, {name}",
                function="fairness.disagreement.disagreement_notions (ci)",
                estimand=f"{notion}: the largest difference between subject groups' population rates (0 when equal)",
                kind="coverage",
                nominal=0.95,
                bound=0.86,
                simulate=partial(gap_covers, notion=notion, scenario=scenario),
                reduced=60,
                full=1000,
                scenario=f"3 groups x 200 records, {name} (true {notion} = {true_gaps(*scenario)[notion]:.3f})",
            )
        )
register(
    Procedure(
        key="no-gap permutation test",
        function="fairness.disagreement.disagreement_notions (pvalue)",
        estimand="H0: the subject groups are exchangeable (no gap); size at 5%",
        kind="size",
        nominal=0.05,
        bound=0.13,
        simulate=no_gap_rejects,
        reduced=60,
        full=1000,
        scenario="3 identical groups x 200 records, AE",
    )
)
register(
    Procedure(
        key="block family, Holm",
        function="analysis.families.adjust",
        estimand="the family-wise error rate of a block's rater-group tests in a null study",
        kind="size",
        nominal=0.05,
        bound=0.13,
        simulate=partial(block_family_rejects, method="holm"),
        reduced=60,
        full=500,
        scenario="36 raters in 3 groups that do not differ, 12 tests",
    )
)

import simulation.estimand_studies  # noqa: E402, F401 - the choose, in-group and metric tables' procedures
