"""The parallel kernels' threading layer (fairness.jit): TBB from its pip package, and fork-safe: a process that
ran the exact kernel forks a job child that runs it again and exits cleanly (GNU OpenMP would kill the child)."""

import os
import subprocess
import sys

import pytest

from fairness.jit import numba

SCRIPT = """
import multiprocessing
import numpy as np
from fairness.individual import eaif_details
from fairness.jit import numba

def run():
    return eaif_details(*np.random.default_rng(0).uniform(0, 1, (3, 3000)), alpha=0.5).eaif

def child(queue):
    queue.put(run())

if __name__ == "__main__":
    before = run()
    fork = multiprocessing.get_context("fork")
    queue = fork.Queue()
    process = fork.Process(target=child, args=(queue,))
    process.start()
    process.join(120)
    print(numba.threading_layer(), process.exitcode, abs(queue.get(timeout=10) - before) < 1e-12)
"""


@pytest.mark.skipif(numba is None, reason="numba is not installed")
def test_a_child_forked_after_the_kernel_ran_runs_it_again():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env, cwd=os.getcwd()
    )
    assert out.stdout.split() == ["tbb", "0", "True"], out.stderr[-2000:]
