"""What the job worker prepares before it forks its jobs (``runs.worker.preload_runners``): the numba kernels its
jobs call (``warm_kernels``: the audit's EaIF and worst pairs and situation testing's neighbour counts, called as
the jobs call them, then find every argument type compiled; a job's forked process compiled or loaded them
again, each time) and plotly's validators (read by each job's first figure before)."""

import numpy as np
import pandas as pd
from plotly.validator_cache import ValidatorCache

from fairness.individual import _numba_row_worst, _numba_sums, eaif_details, worst_pairs
from fairness.neighbour_counts import _count
from fairness.situation_testing import situation_testing
from runs.worker import preload_runners

KERNELS = (_numba_sums, _numba_row_worst, _count)


def test_the_jobs_kernel_calls_find_their_argument_types_compiled_by_the_worker():
    preload_runners()
    compiled = {kernel: list(kernel.signatures) for kernel in KERNELS}
    assert all(compiled.values())
    rng = np.random.default_rng(1)
    n = 60
    frame = pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n), "g": rng.integers(0, 2, n)})
    frame["label"] = (frame["x"] + rng.normal(size=n) > 0).astype(int)
    situation_testing(frame, protected="g", target="label", negative_outcome=1, k=[3, 5])  # as the job calls it
    scores = frame.assign(score_ai=rng.random(n))["score_ai"].to_numpy(float)  # fairness.model_audit.Subjects.scores
    effort, aggregate = rng.random(n), rng.random(n)
    eaif_details(effort, aggregate, scores, alpha=0.5)
    worst_pairs(effort, aggregate, scores, alpha=0.5, k=5)
    assert {kernel: list(kernel.signatures) for kernel in KERNELS} == compiled


def test_plotlys_validators_are_read_before_any_job_is_forked(monkeypatch):
    monkeypatch.setattr(ValidatorCache, "_json_cache", None)
    preload_runners()
    assert ValidatorCache._json_cache
