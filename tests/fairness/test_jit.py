"""The parallel kernels' threading layer (fairness.jit): TBB from its pip package, and fork-safe: a process that
ran the exact kernel forks a job child that runs it again and exits cleanly (GNU OpenMP would kill the child)."""

import os
import subprocess
import sys

import pytest

from fairness.jit import numba

FORKED = """
import multiprocessing
import numpy as np
from fairness.individual import eaif_details
from fairness.distributed import eaif_dask
from fairness.jit import numba

def run():
    return {run}

def child(queue):
    queue.put(run())

if __name__ == "__main__":
    before = run()
    fork = multiprocessing.get_context("fork")
    queue = fork.Queue()
    process = fork.Process(target=child, args=(queue,))
    process.start()
    process.join(240)
    if process.exitcode is None:
        process.kill()
    same = process.exitcode == 0 and abs(queue.get(timeout=10) - before) < 1e-12
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel ran in this process (the Dask run's kernels ran in its workers)
        layer = "none"
    print(layer, process.exitcode, same)
"""


def forked_run(run: str, env=None) -> list[str]:
    """Run the expression ``run`` in a process, then in a child forked from it: the threading layer, the child's
    exit code and whether it got the parent's value (``FORKED``)."""
    out = subprocess.run(
        [sys.executable, "-c", FORKED.replace("{run}", run)],
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
        cwd=os.getcwd(),
    )
    assert out.stdout, out.stderr[-2000:]
    return out.stdout.split()


@pytest.mark.skipif(numba is None, reason="numba is not installed")
def test_a_child_forked_after_the_kernel_ran_runs_it_again():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    run = "eaif_details(*np.random.default_rng(0).uniform(0, 1, (3, 3000)), alpha=0.5).eaif"
    assert forked_run(run, env) == ["tbb", "0", "True"]
