"""Exact EaIF on Dask (fairness.distributed): the tiles cover every pair once and give the single-machine exact
value; a worker killed mid-run loses nothing; Dask is loaded only when asked for. Each test starts and stops its
own local cluster (the killed worker's must not be a shared one)."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from fairness.distributed import eaif_dask
from fairness.individual import eaif_details, pair_sums
from tests.fairness.test_jit import forked_run


def population(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.beta(2, 5, n)


@pytest.mark.slow  # compiles the kernel: 6 CPU-seconds
def test_cross_tile_kernel_is_the_numpy_sum():
    e, s, r = population(300, seed=3)
    a, b = np.stack([e[:120], s[:120], r[:120]]), np.stack([e[120:], s[120:], r[120:]])
    fast, slow = pair_sums(a, b, alpha=0.3, backend="numba"), pair_sums(a, b, alpha=0.3, backend="numpy")
    assert fast[1] == slow[1] > 0
    assert fast[0] == pytest.approx(slow[0], rel=1e-12)
    # the two halves' own pairs plus the cross pairs are all pairs
    whole = eaif_details(e, s, r, alpha=0.3)
    total = fast[0] + pair_sums(a, alpha=0.3)[0] + pair_sums(b, alpha=0.3)[0]
    assert 1 - total / whole.n_pairs == pytest.approx(whole.eaif, rel=1e-12)


@pytest.mark.slow  # starts a Dask cluster of its own (one worker process)
def test_local_cluster_gives_the_exact_value_at_20000():
    e, s, r = population(20_000)
    seen = []
    result = eaif_dask(
        e, s, r, alpha=0.6577, tile=6_000, local_workers=1, progress=lambda done, total: seen.append((done, total))
    )
    exact = eaif_details(e, s, r, alpha=0.6577)
    assert result.n_pairs == exact.n_pairs == 20_000 * 19_999 // 2
    assert result.eaif == pytest.approx(exact.eaif, rel=1e-9)
    assert result.violation_share == exact.violation_share
    assert seen == [(k, 10) for k in range(1, 11)]  # 4 blocks: 4 diagonal + 6 off-diagonal tiles


@pytest.mark.serial  # kills a worker process of a cluster of its own, whose replacement the nanny starts
def test_an_existing_cluster_by_address_survives_a_killed_worker():
    from distributed import Client, LocalCluster

    e, s, r = population(6_000, seed=1)
    exact = eaif_details(e, s, r, alpha=0.4)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with Client(cluster) as watcher:
            pids = watcher.run(os.getpid)
            killed = []

            def kill_one(done, total):  # as the first tile finishes, one worker process dies
                if not killed:
                    pid = next(iter(pids.values()))
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)

            result = eaif_dask(e, s, r, alpha=0.4, scheduler=cluster.scheduler_address, tile=300, progress=kill_one)
            assert killed and killed[0] not in watcher.run(os.getpid).values()
            assert result.eaif == pytest.approx(exact.eaif, rel=1e-9)
            assert result.violation_share == exact.violation_share
            assert watcher.scheduler_info()["workers"]  # the cluster is left running


def test_bad_tile_is_refused_before_any_cluster_starts():
    with pytest.raises(ValueError, match="tile must be at least 2"):
        eaif_dask([0, 1], [0, 0], [0, 1], alpha=0.5, tile=1)


@pytest.mark.slow  # a fresh interpreter imports the science stack: 3 CPU-seconds
def test_importing_the_module_loads_no_dask():
    code = (
        "import sys, fairness.distributed\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=os.getcwd())
    assert out.stdout.strip() == "[]"


@pytest.mark.slow  # starts a Dask cluster of its own twice (threads): in a process and in its forked child
def test_a_job_forked_after_dask_ran_runs_it_again():
    """The job worker forks each job: a child of a process that had used Dask gets a working client (without
    the at-fork reset it waited forever on distributed's offload thread, which it did not inherit). The clusters
    run their worker in the process's threads: the reset is the client's, and a worker process would import the
    science stack (3 CPU-s) twice more; without the reset this child still hangs (checked by hand)."""
    cluster = "__import__('distributed').Client(processes=False, n_workers=1, threads_per_worker=1, "
    cluster += "dashboard_address=':0')"
    sample = "np.random.default_rng(0).uniform(0, 1, (3, 500))"
    run = f"(lambda client: eaif_dask(*{sample}, alpha=0.5, tile=200, client=client).eaif)({cluster})"
    assert forked_run(run)[1:] == ["0", "True"]
