"""The learned metric limits BLAS to one thread once per fit, not once per bootstrap refit (entering
``threadpool_limits`` scans the process's libraries: it cost more than the refits), with the same numbers."""

import numpy as np
import pandas as pd

from fairness import human_metric
from fairness.human_metric import fit_metric


def _judgements() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)
    people = pd.DataFrame(
        {"age": rng.integers(18, 70, 12), "priors": rng.integers(0, 8, 12)}, index=list("abcdefghijkl")
    )
    a, b = rng.choice(people.index, 120), rng.choice(people.index, 120)
    close = (abs(people.loc[a, "age"].to_numpy() - people.loc[b, "age"].to_numpy()) < 12).astype(int)
    answer = np.where(rng.random(120) < 0.85, close, 1 - close)
    return people, pd.DataFrame({"rater": np.repeat(np.arange(12), 10), "a": a, "b": b, "answer": answer})


def test_the_metric_limits_threads_once_per_fit_with_the_numbers_of_limiting_every_refit(monkeypatch):
    people, said = _judgements()
    limits, fit = human_metric.threadpool_limits, human_metric._fit
    entered = []

    def counted(*args, **kwargs):
        entered.append(args)
        return limits(*args, **kwargs)

    monkeypatch.setattr(human_metric, "threadpool_limits", counted)
    metric = fit_metric(said, people, ["age", "priors"], n_resamples=40, seed=2)
    assert len(entered) == 2  # the fit and the bootstrap

    def limited(*args):  # as before: a limit entered around every fit and refit
        with counted(1):
            return fit(*args)

    monkeypatch.setattr(human_metric, "_fit", limited)
    entered.clear()
    before = fit_metric(said, people, ["age", "priors"], n_resamples=40, seed=2)
    assert len(entered) > 2 * 2  # also around the fit and every refit by L-BFGS (the others take Newton steps)
    pd.testing.assert_frame_equal(metric.matrix, before.matrix, check_exact=True)
    np.testing.assert_array_equal(np.array(metric.draws), np.array(before.draws))
    for field in ("feature_weights", "ci_low", "ci_high", "ci_bootstrap_low", "ci_bootstrap_high"):
        pd.testing.assert_series_equal(getattr(metric, field), getattr(before, field), check_exact=True)
    assert metric.log_likelihood == before.log_likelihood
