"""Exact EaIF on a Dask cluster: the pair matrix in tiles, each a task running the exact kernel.

The n subjects are cut into blocks of ``tile`` subjects; the tile (a, b) with a <= b holds the pairs of
block a with block b (a diagonal tile: the pairs i < j within its block), so every pair i < j lies in
exactly one of the T (T + 1) / 2 tiles. Each tile task returns (sum of max(0, D - d), violating pairs,
pairs) by :func:`fairness.individual.pair_sums`; the partial sums are added in a tree of tasks (fan-in 8),
and EaIF = 1 - sum / n_pairs as in :func:`fairness.individual.eaif_details` (Eq. 13).

The blocks are tasks holding their arrays (not scattered data), so when a worker dies Dask recomputes the
blocks and tiles it held on the workers left (its own retry: ``distributed.scheduler.allowed-failures``).
Without a client or scheduler address a ``distributed.LocalCluster`` of this machine is started and closed;
``scheduler="tcp://HOST:PORT"`` (or the environment variable ``DASK_SCHEDULER_ADDRESS``) uses a running
cluster unchanged. Dask is imported inside the functions only: importing this module loads no Dask.
"""

import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np

from fairness.individual import EaIFResult, _inputs, pair_sums


def _fresh_offload_executor() -> None:
    """In a child forked from a process that had used Dask (the job worker's children; a test process): replace
    ``distributed.utils._offload_executor``, a one-thread pool made at import whose thread the child did not
    inherit, so that the child's own client does not wait forever on work queued to it (distributed 2026.8)."""
    utils = sys.modules.get("distributed.utils")
    if utils is not None:
        utils._offload_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="Dask-Offload")  # type: ignore[attr-defined]


os.register_at_fork(after_in_child=_fresh_offload_executor)

TILE = 20_000  # subjects per block: a tile holds up to 4e8 pairs, about a second of the kernel
FAN_IN = 8


def _block(effort: np.ndarray, aggregate: np.ndarray, risk: np.ndarray) -> np.ndarray:
    return np.stack([effort, aggregate, risk])


def _tile(block_i: np.ndarray, block_j: np.ndarray | None, alpha: float) -> tuple[float, int, int]:
    """(sum, violations, pairs) of one tile; ``block_j`` None: the diagonal tile of ``block_i``."""
    total, violations = pair_sums(block_i, block_j, alpha=alpha)
    m = block_i.shape[1]
    pairs = m * (m - 1) // 2 if block_j is None else m * block_j.shape[1]
    return float(total), int(violations), pairs


def _add(*parts: tuple[float, int, int]) -> tuple[float, int, int]:
    return (
        float(sum(p[0] for p in parts)),
        int(sum(p[1] for p in parts)),
        int(sum(p[2] for p in parts)),
    )


@contextmanager
def dask_client(client: Any = None, scheduler: str | None = None, local_workers: int = 2) -> Iterator[Any]:
    """A Dask client: ``client`` itself (left open), else one to ``scheduler`` ("tcp://HOST:PORT", default the
    environment variable DASK_SCHEDULER_ADDRESS; the cluster is left running), else one to a LocalCluster of
    ``local_workers`` single-threaded worker processes of this machine, closed with the client."""
    if client is not None:
        yield client
        return
    from distributed import Client, LocalCluster

    address = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")
    with ExitStack() as stack:
        if address:
            yield stack.enter_context(Client(address))
            return
        cluster = stack.enter_context(
            LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        )
        yield stack.enter_context(Client(cluster))


def eaif_dask(
    effort,
    aggregate,
    risk,
    *,
    alpha: float,
    client: Any = None,
    scheduler: str | None = None,
    tile: int = TILE,
    local_workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> EaIFResult:
    """The exact EaIF (Eq. 13, as :func:`fairness.individual.eaif_details`) computed on a Dask cluster.

    Parameters
    ----------
    effort, aggregate, risk, alpha
        As in :func:`fairness.individual.eaif_details`.
    client : distributed.Client, optional
        A client to use (left open).
    scheduler : str, optional
        A running cluster's scheduler address, "tcp://HOST:PORT" (default: ``DASK_SCHEDULER_ADDRESS``; neither:
        a LocalCluster of this machine, closed at the end).
    tile : int
        Subjects per block; tiles are block x block (at least 2).
    local_workers : int
        Worker processes of the LocalCluster started when no client or scheduler is given.
    progress : callable, optional
        Called as ``progress(tiles_done, tiles)`` as each tile finishes.

    Returns
    -------
    EaIFResult
        ``eaif``, ``violation_share``, ``n_pairs``, ``alpha``: equal to ``eaif_details`` up to the order of
        floating-point additions.
    """
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    if tile < 2:
        raise ValueError(f"tile must be at least 2 subjects (got {tile})")
    from distributed import as_completed

    starts = range(0, e.size, tile)
    with dask_client(client, scheduler, local_workers) as dask:
        blocks = [dask.submit(_block, e[a : a + tile], s[a : a + tile], r[a : a + tile]) for a in starts]
        tiles = [
            dask.submit(_tile, blocks[a], None if a == b else blocks[b], float(alpha))
            for a in range(len(blocks))
            for b in range(a, len(blocks))
        ]
        level = tiles
        while len(level) > 1:
            level = [dask.submit(_add, *level[k : k + FAN_IN]) for k in range(0, len(level), FAN_IN)]
        for done, _ in enumerate(as_completed(tiles), start=1):
            if progress is not None:
                progress(done, len(tiles))
        total, violations, n_pairs = level[0].result()
    if n_pairs != e.size * (e.size - 1) // 2:  # every pair in exactly one tile
        raise RuntimeError(f"the tiles covered {n_pairs} pairs, not n (n - 1) / 2")
    return EaIFResult(1.0 - total / n_pairs, violations / n_pairs, n_pairs, float(alpha))
