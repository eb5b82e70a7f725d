from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness.situation_testing import SituationTestingError, intersectional_attribute, situation_testing
from tests.conftest import REFERENCE_DATA

CST = REFERENCE_DATA / "counterfactual_situation_testing"


@pytest.fixture(scope="module")
def loan():
    if not CST.exists():
        pytest.skip("reference data not present")
    data = pd.read_csv(CST / "LoanApplication_v2.csv", sep="|")[
        ["AnnualSalary", "AccountBalance", "Gender", "LoanApproval"]
    ]
    return data, pd.read_csv(CST / "cf_LoanApplication_v2.csv", sep="|")


@pytest.fixture(scope="module")
def loan_reference(loan):
    """One reference-mode run (negative discrimination, k = 15..250) shared by the tests below."""
    data, cf = loan
    return situation_testing(
        data,
        protected="Gender",
        target="LoanApproval",
        negative_outcome=-1,
        k=[15, 30, 50, 100, 250],
        counterfactuals=cf,
        mode="reference",
    )


@pytest.mark.parametrize(
    ("discrimination", "published"),
    [("negative", "res_LoanApplication.csv"), ("positive", "res_LoanApplication_positive.csv")],
)
def test_reproduces_the_authors_loan_counts_exactly(loan, discrimination, published):
    """../shared/test-vectors.md and the authors' results files: counts of ST, CST without/with,
    CF and their significant versions for k = 15..250, alpha = .05, tau = 0."""
    data, cf = loan
    expected = pd.read_csv(CST / published, sep="|", nrows=5)
    result = situation_testing(
        data,
        protected="Gender",
        target="LoanApproval",
        negative_outcome=-1,
        k=[15, 30, 50, 100, 250],
        counterfactuals=cf,
        mode="reference",
        discrimination=discrimination,
    )
    got = result.counts.set_index("k")
    for column in ["ST", "CSTwo", "CSTwi", "CF", "ST_sig", "CSTwo_sig", "CSTwi_sig", "CF_sig"]:
        assert got[column].tolist() == expected[column].astype(int).tolist(), column


def test_published_st_anchor_values(loan_reference):
    result = loan_reference
    assert result.counts["ST"].tolist() == [55, 65, 84, 107, 204]
    assert result.counts["ST_sig"].tolist() == [44, 57, 65, 85, 148]


def brute_force_st(data, protected, target, negative, k):
    """Direct per-complainant loop over the paper's definitions (Gower distance, ties by larger id)."""
    x = data.drop(columns=[protected, target]).to_numpy(float)
    x = x / np.ptp(x, axis=0)
    prot = data[protected].to_numpy() == 1
    y = data[target].to_numpy() == negative
    out = {}
    for c in np.flatnonzero(prot):
        ctr = [i for i in _nearest_loop(x, prot, c, k + 1) if i != c]
        tst = _nearest_loop(x, ~prot, c, k)
        out[c] = y[ctr].mean() - y[tst].mean()
    return out


def _nearest_loop(x, mask, c, k):
    candidates = [(float(np.abs(x[i] - x[c]).mean()), -int(i)) for i in np.flatnonzero(mask)]
    return [-neg for _, neg in sorted(candidates)[:k]]


def test_vectorised_st_matches_a_direct_loop():
    rng = np.random.default_rng(0)
    n = 300
    data = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n).astype(float), "g": rng.integers(0, 2, n)})
    data["y"] = np.where(data["a"] + 0.5 * data["g"] + rng.normal(0, 1, n) > 0.5, 0, 1)
    result = situation_testing(data, protected="g", target="y", negative_outcome=0, k=10)
    expected = brute_force_st(data, "g", "y", 0, 10)
    got = result.individuals.set_index("complainant")["ST_delta"]
    for c, value in expected.items():
        assert got[c] == pytest.approx(value)


def test_without_counterfactuals_only_st_and_groups_are_inspectable():
    rng = np.random.default_rng(1)
    data = pd.DataFrame({"a": rng.normal(size=200), "g": np.repeat([0, 1], 100), "y": rng.integers(0, 2, 200)})
    result = situation_testing(data, protected="g", target="y", negative_outcome=0, k=[5, 10])
    assert list(result.counts.columns) == ["k", "ST", "ST_sig", "ST_sig_exact", "ST_sig_adjusted"]
    groups = result.groups_of(100, 5, "ST")
    assert len(groups["control"]) == 5 and len(groups["test"]) == 5
    assert (data.loc[groups["control"], "g"] == 1).all() and (data.loc[groups["test"], "g"] == 0).all()
    assert 100 not in groups["control"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"protected": "nope"}, "missing column"),
        ({"protected_value": 7}, "no row has g = 7"),
        ({"mode": "fast"}, "mode must be"),
        ({"k": 0}, "k must be at least 1"),
    ],
)
def test_bad_inputs(kwargs, message):
    data = pd.DataFrame({"a": [1.0, 2, 3, 4], "g": [0, 1, 0, 1], "y": [0, 1, 1, 0]})
    params = {"protected": "g", "target": "y", "negative_outcome": 0, "k": 1, **kwargs}
    with pytest.raises(SituationTestingError, match=message):
        situation_testing(data, **params)


def test_intersectional_attribute():
    frame = pd.DataFrame({"sex": ["Female", "Female", "Male"], "race": ["NonWhite", "White", "NonWhite"]})
    assert intersectional_attribute(frame, ["sex", "race"], ["Female", "NonWhite"]).tolist() == [1, 0, 0]


@pytest.mark.parametrize(
    ("complainant", "p_c", "p_t", "significant", "cf"),
    [
        (44, 1.00, 0.00, True, True),
        (55, 0.81, 0.00, True, True),
        (150, 1.00, 0.94, False, True),
        (203, 1.00, 0.87, False, True),
        (218, 0.56, 0.00, True, True),
        (5, 0.06, 0.00, False, False),
        (147, 0.50, 0.00, True, False),
        (435, 0.38, 0.00, True, False),
        (1958, 0.13, 0.00, False, False),
        (2926, 0.75, 0.00, True, False),
    ],
)
def test_paper_tables_4_and_5_individual_cases(loan_reference, complainant, p_c, p_t, significant, cf):
    """CST paper, Tables 4-5 (loan data, k = 15, CST with centres): p_c, p_t, significance, CF."""
    individuals = loan_reference.individuals
    result = SimpleNamespace(individuals=individuals[individuals["k"] == 15])
    row = result.individuals.set_index("complainant").loc[complainant]
    assert (row["CSTwi_p_c"], row["CSTwi_p_t"]) == pytest.approx((p_c, p_t), abs=0.0101)  # printed to 2 decimals
    assert bool(row["CSTwi_sig"]) is significant and bool(row["CF"]) is cf


@pytest.mark.parametrize(
    ("column", "values"),
    [("f", [np.nan, np.inf, -np.inf]), ("y", [np.nan, np.nan, np.nan]), ("c", [None, None, None])],
)
def test_missing_or_infinite_values_are_a_specific_error(column, values):
    data = pd.DataFrame(
        {"g": [i % 2 for i in range(30)], "y": [float(i // 2 % 2) for i in range(30)], "f": np.arange(30.0)}
    )
    data["c"] = ["a", "b", "c"] * 10
    for row, value in zip((17, 20, 25), values, strict=True):
        data.loc[row, column] = value
    message = f"column {column!r} has 3 missing or infinite values (first at row 17)"
    with pytest.raises(SituationTestingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        situation_testing(data, protected="g", target="y", negative_outcome=0, k=3)
    cf = data.copy()
    clean = data.fillna({"f": 0.0, "y": 0.0, "c": "a"}).replace([np.inf, -np.inf], 0.0)
    with pytest.raises(SituationTestingError, match="^counterfactual data: column"):
        situation_testing(clean, protected="g", target="y", negative_outcome=0, k=3, counterfactuals=cf)
    situation_testing(clean, protected="g", target="y", negative_outcome=0, k=3, counterfactuals=clean)


@pytest.fixture(scope="module")
def law_intersectional():
    """The law-school intersectional tables (female_nonwhite, do(Male, White)), paper's b()."""
    from fairness import law_school
    from fairness.counterfactual import fit_linear_scm

    if not CST.exists():
        pytest.skip("reference data not present")
    data = law_school.load(CST / "clean_LawSchool.csv")
    return law_school.intersectional_data(data, fit_linear_scm(data, law_school.DAG))


def brute_force_cst_with_centres(data, cf, protected, target, negative, features, ks, alpha):
    """CST with the complainant, paper mode, one complainant at a time: the control group is c and
    its k nearest protected others; the test group is x_c^CF (with its counterfactual decision) and
    the k nearest non-protected rows to x_c^CF, each with its *factual* decision; ties: larger id.
    Returns {k: (flagged, significant, {complainant: factual negatives of the k test members})}."""
    x = data[features].to_numpy(float)
    span = np.ptp(x, axis=0)
    x, x_cf = x / span, cf[features].to_numpy(float) / span
    prot = data[protected].to_numpy() == 1
    y, y_cf = data[target].to_numpy() == negative, cf[target].to_numpy() == negative
    ids = np.arange(len(data))
    z = stats.norm.ppf(1 - alpha)
    out = {k: [0, 0, {}] for k in ks}
    for c in ids[prot]:
        ctr = ids[prot & (ids != c)]
        d_ctr = sum(np.abs(x[ctr, j] - x[c, j]) for j in range(len(features))) / len(features)
        ctr = ctr[np.lexsort((-ctr, d_ctr))]
        tst = ids[~prot]
        d_tst = sum(np.abs(x[tst, j] - x_cf[c, j]) for j in range(len(features))) / len(features)
        tst = tst[np.lexsort((-tst, d_tst))]
        for k in ks:
            p_c = (y[c] + y[ctr[:k]].sum()) / (k + 1)
            p_t = (y_cf[c] + y[tst[:k]].sum()) / (k + 1)
            w = z * np.sqrt((p_c * (1 - p_c) + p_t * (1 - p_t)) / (k + 1))
            out[k][0] += p_c - p_t > 0
            out[k][1] += p_c - p_t - w > 0
            out[k][2][c] = y[tst[:k]]
    return out


@pytest.mark.slow
def test_intersectional_cst_with_centres_keeps_the_test_groups_factual_labels(law_intersectional):
    """do(Male, White) also changes white women and non-white men (non-protected here), and some of
    them change decision; their counterfactual decisions must not enter the test groups. A seeded
    half of the rows (SCM fitted on all) against a per-complainant re-implementation."""
    rows = np.sort(np.random.default_rng(5).choice(len(law_intersectional[0]), 10_000, replace=False))
    data, cf = (frame.iloc[rows].reset_index(drop=True) for frame in law_intersectional)
    changed = (data["Y"] != cf["Y"]).to_numpy() & (data["female_nonwhite"] == 0).to_numpy()
    assert changed.sum() > 50  # the case the test guards against does occur
    result = situation_testing(
        data,
        protected="female_nonwhite",
        target="Y",
        negative_outcome=0,
        k=[15, 50],
        counterfactuals=cf,
        features=["LSAT", "UGPA"],
    )
    expected = brute_force_cst_with_centres(data, cf, "female_nonwhite", "Y", 0, ["LSAT", "UGPA"], [15, 50], 0.05)
    y, y_cf = data["Y"].to_numpy() == 0, cf["Y"].to_numpy() == 0
    for k, (flagged, significant, labels) in expected.items():
        row = result.counts.set_index("k").loc[k]
        assert (row["CSTwi"], row["CSTwi_sig"]) == (flagged, significant)
        per = result.individuals[result.individuals["k"] == k].set_index("complainant")["CSTwi_p_t"]
        found = result.neighbours[("CSTwi", k)]["test"]
        for c, members, factual in zip(result.complainants, found, labels.values(), strict=True):
            assert np.array_equal(y[members], factual)
            assert per[c] == pytest.approx((factual.sum() + y_cf[c]) / (k + 1))


@pytest.mark.parametrize(("discrimination", "tau"), [("negative", -0.05), ("positive", 0.05)])
def test_reference_mode_does_not_clip_the_wald_bound(loan, discrimination, tau):
    """The authors' rule compares delta_p - w (negative) or delta_p + w (positive), rounded, with tau;
    clipping the bound at 0 would call every case with tau between the bound and 0 significant."""
    data, cf = loan
    result = situation_testing(
        data,
        protected="Gender",
        target="LoanApproval",
        negative_outcome=-1,
        k=[15, 50],
        counterfactuals=cf,
        mode="reference",
        tau=tau,
        discrimination=discrimination,
    )
    rows, differs = result.individuals, 0
    for method in ("ST", "CSTwo", "CSTwi"):
        delta, w = rows[f"{method}_delta"].round(3), rows[f"{method}_w"]
        if discrimination == "negative":
            bound, flagged = (rows[f"{method}_delta"] - w).round(3), delta > tau
            expected, clipped = flagged & (bound > tau), flagged & (bound.clip(lower=0) > tau)
        else:
            bound, flagged = (rows[f"{method}_delta"] + w).round(3), delta < tau
            expected, clipped = flagged & (bound < tau), flagged & (bound.clip(upper=0) < tau)
        assert rows[f"{method}_sig"].tolist() == expected.tolist(), method
        differs += int((expected != clipped).sum())
    assert differs > 0  # the cases where clipping would differ exist


def test_paper_mode_excludes_the_complainant_before_taking_the_k_nearest():
    """Six protected rows with identical features: for the one with the smallest id the k + 1
    nearest (ties: larger id first) do not include it, yet its control group has exactly k members
    (k + 1 with the complainant in CST with the complainant)."""
    data = pd.DataFrame(
        {
            "a": [1.0] * 6 + [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "g": [1] * 6 + [0] * 6,
            "y": [0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1],
        }
    )
    cf = data.assign(a=data["a"] + 1.0, g=0)
    result = situation_testing(data, protected="g", target="y", negative_outcome=0, k=[2, 3], counterfactuals=cf)
    for k in (2, 3):
        for c in range(6):
            for method in ("ST", "CSTwo"):
                control = result.groups_of(c, k, method)["control"]
                assert len(control) == k and c not in control
            assert len(result.groups_of(c, k, "CSTwi")["control"]) == k + 1
        row = result.individuals[(result.individuals["k"] == k)].set_index("complainant").loc[0]
        assert row["ST_p_c"] == 0.0 and row["CSTwi_p_c"] == pytest.approx(1 / (k + 1))  # c's own y = 0


def _small(n=40):
    rng = np.random.default_rng(2)
    return pd.DataFrame({"a": rng.normal(size=n), "g": np.tile([0, 1], n // 2), "y": rng.integers(0, 2, n)})


def _run_small(data, **kwargs):
    params = {"protected": "g", "target": "y", "negative_outcome": 0, "k": 3, **kwargs}
    return situation_testing(data, **params)


def test_a_decision_that_is_not_binary_is_refused():
    data = _small().assign(y=lambda f: np.arange(len(f)) % 3)
    with pytest.raises(SituationTestingError, match=r"decision 'y' is not binary: 3 distinct values"):
        _run_small(data)
    cf = _small().assign(y=lambda f: np.where(f["y"] == 1, 2, f["y"]))
    with pytest.raises(SituationTestingError, match="not binary"):
        _run_small(_small(), counterfactuals=cf)


def test_a_negative_value_that_does_not_occur_is_refused():
    with pytest.raises(SituationTestingError, match=r"the negative decision -1 does not occur in 'y' \(values: 0, 1\)"):
        _run_small(_small(), negative_outcome=-1)


@pytest.mark.parametrize("alpha", [0, 1, -0.05, 5, float("nan")])
def test_alpha_outside_zero_one_is_refused(alpha):
    with pytest.raises(SituationTestingError, match="alpha must be between 0 and 1"):
        _run_small(_small(), alpha=alpha)


def test_k_larger_than_a_search_space_is_refused_with_the_sizes():
    data = _small().assign(g=[1] * 8 + [0] * 32)
    message = r"k = 8 is larger than a search space: 7 protected individuals besides the complainant"
    with pytest.raises(SituationTestingError, match=message + r" \(control group\), 32 non-protected"):
        _run_small(data, k=[3, 8])
    assert _run_small(data, k=[3, 7]).counts["k"].tolist() == [3, 7]


@pytest.mark.parametrize("column", ["g", "y"])
def test_the_protected_attribute_or_the_decision_cannot_be_a_feature(column):
    with pytest.raises(SituationTestingError, match=rf"\['{column}'\] cannot be a feature"):
        _run_small(_small(), features=["a", column])


def test_without_counterfactual_outcomes_cf_and_cst_with_the_complainant_are_omitted():
    data = _small()
    cf = data.drop(columns="y").assign(a=data["a"] + 0.5, g=0)
    result = _run_small(data, counterfactuals=cf, counterfactual_outcomes=False)
    assert list(result.counts.columns) == [
        "k",
        "ST",
        "CSTwo",
        "ST_sig",
        "CSTwo_sig",
        "ST_sig_exact",
        "CSTwo_sig_exact",
        "ST_sig_adjusted",
        "CSTwo_sig_adjusted",
    ]
    with pytest.raises(SituationTestingError, match="lacks column"):
        _run_small(data, counterfactuals=cf)


def test_neighbour_cache_reuses_the_searches_of_a_run_at_another_alpha():
    from fairness.situation_testing import NeighbourCache

    data = _small(60)
    cf = data.assign(a=data["a"] + 0.3, g=0, y=1 - data["y"])
    cache = NeighbourCache()
    params = {"counterfactuals": cf, "k": [3, 10]}
    first = _run_small(data, cache=cache, **params)
    assert (cache.hits, cache.misses) == (0, 3)  # control, test (ST), test around the counterfactuals
    halved = _run_small(data, cache=cache, alpha=0.025, **params)
    assert (cache.hits, cache.misses) == (3, 3)
    pd.testing.assert_frame_equal(halved.individuals, _run_small(data, alpha=0.025, **params).individuals)
    pd.testing.assert_frame_equal(first.individuals, _run_small(data, **params).individuals)
    _run_small(data, cache=cache, counterfactuals=cf, k=[3])  # a smaller k reads the first columns
    _run_small(data.assign(a=data["a"] ** 3), cache=cache, **params)  # other data: new searches
    assert (cache.hits, cache.misses) == (6, 6)


def test_law_school_run_does_not_repeat_the_searches_of_the_bonferroni_runs(monkeypatch, tmp_path):
    import fairness.situation_testing as st
    from fairness import law_school

    if not CST.exists():
        pytest.skip("reference data not present")
    sample = tmp_path / "law.csv"
    pd.read_csv(CST / "clean_LawSchool.csv", sep="|").sample(n=3000, random_state=1).to_csv(
        sample, sep="|", index=False
    )
    calls = []
    search = st._knn
    monkeypatch.setattr(st, "_knn", lambda *args: calls.append(args[-1]) or search(*args))
    results = law_school.run(sample, k=[15, 30])
    assert len(calls) == 9  # 3 searches x (gender, race, intersectional); the alpha / 2 runs reuse them
    assert list(results.multiple["k"]) == [15, 30]


def test_reference_rule_on_a_hand_computed_case():
    """p_c = p_t = 0.5, k = 15, tau = -0.05: delta_p = 0 and the Wald half-width
    w = 1.645 sqrt(2 x 0.25 / 15) = 0.3003 (by hand). The authors' rule flags the case (0 > tau) but
    does not call it significant (0 - 0.300 < tau); a bound clipped at 0 would have (0 > tau)."""
    from fairness.situation_testing import _decide

    w = 1.645 * (2 * 0.25 / 15) ** 0.5
    assert round(w, 4) == 0.3003
    flagged, significant = _decide(np.array([0.0]), np.array([w]), -0.05, "negative", "reference")
    assert flagged.tolist() == [True] and significant.tolist() == [False]
    flagged, significant = _decide(np.array([0.0]), np.array([w]), 0.05, "positive", "reference")
    assert flagged.tolist() == [True] and significant.tolist() == [False]


def test_nearest_keeps_the_larger_ids_among_ties_at_the_kth_distance():
    """_nearest against a full sort by (distance, -id), on distances with many ties (rows with more, as many
    and fewer ties at the k-th distance than places left)."""
    from fairness.situation_testing import _nearest

    rng = np.random.default_rng(5)
    dist = rng.integers(0, 4, (60, 40)).astype(float)
    ids = rng.permutation(100)[:40]
    for k in (1, 5, 17, 39, 40):
        expected = np.array([ids[np.lexsort((-ids, row))][:k] for row in dist])
        np.testing.assert_array_equal(_nearest(dist, ids, k), expected)
