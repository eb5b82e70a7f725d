"""The disagreement notions' gap intervals and "no gap" tests (fairness.disagreement.gap_interval,
_permutation_pvalues): coverage measured by simulation against gaps computed from the generating
probabilities (not by the code), with the true gap 0 and with a real gap."""

import numpy as np
import pytest

from fairness.disagreement import disagreement_notions, gap_interval

LABELS = (0, 1)


def true_gaps(sp: np.ndarray, dr: np.ndarray) -> dict[str, float]:
    """CA, AE, EO (= PE = OMR for two labels) from SP[m, k] = P(yhat = k | m) and DR[m, k] = P(s = 1 | yhat
    = k, m), by the module's definitions: CA = max_k (max_m DR - min_m DR); AE = max_m DR_m - min_m DR_m
    with DR_m = sum_k SP DR; EO_{m,k} = a_{m,k} / (a_{m,k} + b_{m,l}), a = (1 - DR) SP, b = DR SP."""
    a, b = (1 - dr) * sp, dr * sp
    eo = a / (a + b[:, ::-1])
    dr_m = (sp * dr).sum(axis=1)
    spread = lambda f: float(np.max(f.max(axis=0) - f.min(axis=0)))  # noqa: E731
    return {"CA": spread(dr), "AE": float(dr_m.max() - dr_m.min()), "EO": spread(eo)}


def draw(rng, sp, dr, per_group):
    groups, labels, s = [], [], []
    for m in range(len(sp)):
        k = rng.choice(2, size=per_group, p=sp[m])
        groups += [f"g{m}"] * per_group
        labels.append(k)
        s.append((rng.random(per_group) < dr[m, k]).astype(int))
    return np.array(groups), np.concatenate(labels), np.concatenate(s)


SAME = (np.array([[0.6, 0.4]] * 3), np.array([[0.2, 0.3]] * 3))  # three identical groups: every gap 0
DIFFERENT = (np.array([[0.6, 0.4], [0.5, 0.5], [0.6, 0.4]]), np.array([[0.2, 0.3], [0.3, 0.3], [0.25, 0.4]]))


@pytest.mark.parametrize(("sp", "dr"), [SAME, DIFFERENT], ids=["no gap", "a gap"])
def test_gap_intervals_cover_the_true_gap(sp, dr):
    """>= 93% coverage of each notion's true gap, 0 included (the percentile interval of the resampled
    max-min covered 0 in 0 of 100 studies); 100 studies of 3 groups x 200 records."""
    truth = true_gaps(sp, dr)
    rng = np.random.default_rng(7)
    covered = dict.fromkeys(truth, 0)
    for study in range(100):
        g, k, s = draw(rng, sp, dr, 200)
        notions = disagreement_notions(g, k, s, labels=LABELS, n_resamples=300, seed=study)
        for name, value in truth.items():
            low, high = notions.notions[name].ci
            covered[name] += low - 1e-12 <= value <= high + 1e-12
    # a true coverage of 93% falls below 88/100 with probability < 5%
    assert min(covered.values()) >= 88, covered


def test_no_gap_permutation_test_holds_its_size_and_finds_a_gap():
    rng = np.random.default_rng(8)
    rejected = {"no gap": 0, "a gap": 0}
    for name, (sp, dr) in {"no gap": SAME, "a gap": DIFFERENT}.items():
        for study in range(60):
            g, k, s = draw(rng, sp, dr, 200 if name == "no gap" else 1500)
            notions = disagreement_notions(g, k, s, labels=LABELS, n_permutations=199, seed=study)
            rejected[name] += notions.notions["AE"].pvalue < 0.05
    assert rejected["no gap"] <= 7  # size 5%: more than 7 of 60 has probability < 5%
    assert rejected["a gap"] >= 45  # AE's true gap is .07 (DR_m .24, .30, .31)


def test_gap_interval_reaches_zero_and_projects_the_pairs():
    point = np.array([[0.30], [0.32], [0.31]])
    resampled = point + np.random.default_rng(0).normal(0, 0.02, (500, 3, 1))
    (low, high), rows = gap_interval(point, resampled, 0.95)
    assert low == 0.0  # every pair's interval holds 0
    assert high == pytest.approx(max(max(abs(r[4]), abs(r[5])) for r in rows))
    assert [(r[1], r[2]) for r in rows] == [(0, 1), (0, 2), (1, 2)]
    assert rows[0][3] == pytest.approx(-0.02)


def test_signed_differences_table():
    rng = np.random.default_rng(3)
    g, k, s = draw(rng, *DIFFERENT, 300)
    notions = disagreement_notions(g, k, s, labels=LABELS, n_resamples=200)
    table = notions.differences
    assert set(table["notion"]) == {"CA", "AE", "EO", "PE", "OMR"}
    ae = table[table["notion"] == "AE"]
    assert len(ae) == 3 and ae["label"].isna().all()  # AE does not depend on the label
    assert (table["ci_low"] <= table["difference"]).all() and (table["difference"] <= table["ci_high"]).all()
    rates = notions.dr_by_group
    assert ae.iloc[0]["difference"] == pytest.approx(rates["g0"] - rates["g1"])
