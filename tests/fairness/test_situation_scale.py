"""Situation testing at scale: the neighbour lists and per-complainant results on the LSAC law-school data and on
synthetic rows (100,000 with many ties) equal an independent brute force for a random sample of the complainants
(Eq. 4 against every member, ordered by distance and, at equal distance, by the larger row id), and the Dask path
gives the single-machine numbers."""

import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness import law_school
from fairness.counterfactual import fit_linear_scm
from fairness.situation_testing import situation_testing
from tests.conftest import REFERENCE_DATA

LAW_SCHOOL = REFERENCE_DATA / "counterfactual_situation_testing" / "clean_LawSchool.csv"
K = [15, 30, 50, 100, 250]


def brute_force(centre, centre_cats, space, space_cats, ids, k):
    """The k nearest ids to one centre: Eq. 4 (mean over features of |x1 - x2| / range and 1[x1 != x2]) to every
    member, ordered by (distance, larger id first)."""
    total = np.zeros(len(space))
    for j in range(space.shape[1]):
        total += np.abs(centre[j] - space[:, j])
    for j in range(space_cats.shape[1]):
        total += centre_cats[j] != space_cats[:, j]
    distance = total / (space.shape[1] + space_cats.shape[1])
    return ids[np.lexsort((-ids, distance))[:k]]


def expected(data, cf, protected, value, features, kmax, rows):
    """Paper mode by brute force for the complainants at positions ``rows``: control (the k nearest protected
    others), test (the k nearest non-protected to x_c) and counterfactual test (to x_c^CF) lists."""
    continuous = [c for c in features if pd.api.types.is_numeric_dtype(data[c])]
    categorical = [c for c in features if c not in continuous]
    span = np.ptp(data[continuous].to_numpy(float), axis=0)
    span = np.where(span > 0, span, 1.0)
    x, x_cf = data[continuous].to_numpy(float) / span, cf[continuous].to_numpy(float) / span
    # each category as an integer code (equal codes, equal values) for both tables
    coded = [pd.factorize(pd.concat([data[c], cf[c]]).astype(str))[0] for c in categorical]
    cats = np.column_stack(coded)[: len(data)] if coded else np.empty((len(data), 0), int)
    cats_cf = np.column_stack(coded)[len(data) :] if coded else np.empty((len(data), 0), int)
    ids = np.arange(len(data))
    is_protected = (data[protected] == value).to_numpy()
    complainants = ids[is_protected][rows]
    lists = {"control": [], "test": [], "test_cf": []}
    protected_space, other_space = ((x[m], cats[m], ids[m]) for m in (is_protected, ~is_protected))  # gathered once
    for c in complainants:  # the protected's k + 1 nearest without c: c's k nearest protected others
        near = brute_force(x[c], cats[c], *protected_space, kmax + 1)
        lists["control"].append(near[near != c][:kmax])
        lists["test"].append(brute_force(x[c], cats[c], *other_space, kmax))
        lists["test_cf"].append(brute_force(x_cf[c], cats_cf[c], *other_space, kmax))
    return complainants, {name: np.array(found) for name, found in lists.items()}


def check(result, data, cf, protected, value, features, rows, alpha=0.05):
    """The result's lists and per-complainant shares, deltas, widths and flags for ``rows`` equal the brute force."""
    kmax = max(K)
    complainants, lists = expected(data, cf, protected, value, features, kmax, rows)
    assert np.array_equal(result.complainants[rows], complainants)
    negative, negative_cf = (data["Y"] == 0).to_numpy(), (cf["Y"] == 0).to_numpy()
    z = stats.norm.ppf(1 - alpha)
    own = np.asarray(complainants)[:, None]
    for k in K:
        control, test, test_cf = (lists[name][:, :k] for name in ("control", "test", "test_cf"))
        groups = {
            "ST": (control, test, negative[control], negative[test]),
            "CSTwo": (control, test_cf, negative[control], negative[test_cf]),
            "CSTwi": (
                np.hstack([own, control]),
                test_cf,
                negative[np.hstack([own, control])],
                np.hstack([negative_cf[own], negative[test_cf]]),
            ),
        }
        frame = result.individuals[result.individuals["k"] == k].iloc[rows]
        for method, (c_ids, t_ids, c_neg, t_neg) in groups.items():
            found = result.neighbours[(method, k)]
            assert np.array_equal(found["control"][rows], c_ids), (method, k)
            assert np.array_equal(found["test"][rows], t_ids), (method, k)
            p_c, p_t = c_neg.mean(axis=1), t_neg.mean(axis=1)
            size = c_neg.shape[1]
            w = z * np.sqrt(p_c * (1 - p_c) / size + p_t * (1 - p_t) / size)
            np.testing.assert_allclose(frame[f"{method}_p_c"], p_c, rtol=0, atol=1e-12)
            np.testing.assert_allclose(frame[f"{method}_p_t"], p_t, rtol=0, atol=1e-12)
            np.testing.assert_allclose(frame[f"{method}_delta"], p_c - p_t, rtol=0, atol=1e-12)
            np.testing.assert_allclose(frame[f"{method}_w"], w, rtol=0, atol=1e-12)
            assert np.array_equal(frame[method], p_c - p_t > 0), (method, k)
        assert np.array_equal(frame["CF"], negative[complainants] & ~negative_cf[complainants])


def run(data, cf, protected, value, features, **options):
    return situation_testing(
        data,
        protected=protected,
        target="Y",
        negative_outcome=0,
        k=K,
        counterfactuals=cf,
        protected_value=value,
        features=features,
        **options,
    )


def synthetic(n, *, discrete, seed=0):
    """Law-school-like rows: group (protected 1, 45%), region (3 levels), score and grade (rounded when
    ``discrete``: many exact ties); the counterfactual raises a protected row's score by 1.5 and grade by 0.1
    (rounded likewise); Y = 1 when 0.4 score + 6 grade >= 31.5."""
    rng = np.random.default_rng(seed)
    group = (rng.random(n) < 0.45).astype(int)
    data = pd.DataFrame(
        {
            "group": group,
            "region": rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2]),
            "score": np.clip(32 - 1.5 * group + rng.normal(0, 5, n), 10, 48),
            "grade": np.clip(3.2 - 0.1 * group + rng.normal(0, 0.4, n), 0, 4),
        }
    )
    cf = data.assign(score=data["score"] + 1.5 * group, grade=data["grade"] + 0.1 * group, group=0)
    if discrete:
        data, cf = data.round({"score": 0, "grade": 1}), cf.round({"score": 0, "grade": 1})
    decide = lambda frame: (0.4 * frame["score"] + 6 * frame["grade"] >= 31.5).astype(int)  # noqa: E731
    return data.assign(Y=decide(data)), cf.assign(Y=decide(cf))


@pytest.mark.slow
@pytest.mark.skipif(not LAW_SCHOOL.exists(), reason="reference data not present")
@pytest.mark.parametrize(
    ("protected", "value", "do", "features"),
    [
        ("sex", "Female", {"sex": "Male"}, law_school.FEATURES),
        ("race_nonwhite", "NonWhite", {"race_nonwhite": "White"}, ["sex", *law_school.FEATURES]),
    ],
)
def test_law_school_lists_and_results_equal_a_brute_force(protected, value, do, features):
    data = law_school.load(LAW_SCHOOL)
    cf = fit_linear_scm(data, law_school.DAG).counterfactuals(data, do)
    cf["Y"] = law_school.admit(cf)
    result = run(data, cf, protected, value, features)
    # every complainant is searched against all 21,790 rows; the brute force checks the first and last
    # complainants and 300 drawn at random (about 1 CPU-s instead of 30 for all of them)
    drawn = np.random.default_rng(0).choice(np.arange(1, len(result.complainants) - 1), 300, replace=False)
    rows = np.sort(np.concatenate([[0, len(result.complainants) - 1], drawn]))
    check(result, data, cf, protected, value, features, rows)


@pytest.mark.parametrize(
    ("discrete", "n"),
    # rounded rows at 100,000 (the scale; many exact ties, so few distinct centres to search); continuous rows
    # at 20,000, still on the grid search (9,000 complainants x 11,000 members, above TREE_MIN_PAIRS), whose
    # lists equal a direct loop for any size (test_nearest_neighbours) as the LSAC data's are above
    [pytest.param(True, 100_000, marks=pytest.mark.slow, id="ties"), pytest.param(False, 20_000, id="continuous")],
)
def test_synthetic_rows_equal_a_brute_force(discrete, n):
    data, cf = synthetic(n, discrete=discrete)
    result = run(data, cf, "group", 1, ["score", "grade", "region"])
    rows = np.sort(np.random.default_rng(1).choice(len(result.complainants), 150, replace=False))
    check(result, data, cf, "group", 1, ["score", "grade", "region"], rows)


@pytest.mark.slow  # on the suite's shared Dask cluster (13 CPU-seconds to start: tests/conftest.py)
def test_dask_partitions_the_complainants_and_gives_the_single_machine_numbers(dask_cluster):
    from distributed import Client

    from fairness.situation_dask import DaskNeighbours

    data, cf = synthetic(12_000, discrete=False, seed=2)  # about 5,400 complainants: 4 chunks of 1,500
    alone = run(data, cf, "group", 1, ["score", "grade", "region"])
    with Client(dask_cluster) as client:
        neighbours = DaskNeighbours(client, chunk=1_500)
        spread = run(data, cf, "group", 1, ["score", "grade", "region"], cache=neighbours)
        workers = client.run(lambda: 1)
    assert len(workers) == 2
    assert neighbours.tasks == 3 * -(-len(alone.complainants) // 1_500) >= 3 * 4  # three searches, chunked complainants
    pd.testing.assert_frame_equal(spread.individuals, alone.individuals)
    pd.testing.assert_frame_equal(spread.counts, alone.counts)
    for key, groups in alone.neighbours.items():
        for group in ("control", "test"):
            assert np.array_equal(spread.neighbours[key][group], groups[group]), (key, group)


def test_dask_chunk_must_hold_a_complainant():
    from fairness.situation_dask import DaskNeighbours

    with pytest.raises(ValueError, match="chunk must be at least 1"):
        DaskNeighbours(client=None, chunk=0)


@pytest.mark.slow  # the command's searches run on the suite's shared Dask cluster (tests/conftest.py)
def test_command_engine_dask_writes_the_local_results(tmp_path, dask_cluster):
    import json

    from django.core.management import call_command

    data, cf = synthetic(3_000, discrete=True, seed=4)
    data.to_csv(tmp_path / "data.csv", index=False)
    cf.to_csv(tmp_path / "cf.csv", index=False)
    results = {}
    for engine in ("local", "dask"):
        call_command(
            "situation_testing",
            str(tmp_path / "data.csv"),
            protected="group",
            protected_value="1",
            target="Y",
            negative="0",
            features=["score", "grade", "region"],
            k=[15, 50],
            counterfactuals=str(tmp_path / "cf.csv"),
            engine=engine,
            scheduler=dask_cluster.scheduler_address if engine == "dask" else None,
            out=str(tmp_path / engine),
            stdout=io.StringIO(),
        )
        results[engine] = json.loads((tmp_path / engine / "results.json").read_text())
    assert results["dask"] == results["local"]
