"""One BLAS thread around small dense work (fits whose matrices are at most a few hundred wide): threads only
contend there, and OpenBLAS's threaded Cholesky of a 1,000 x 1,000 matrix took 1.3 s instead of 13 ms on a
busy 2-core machine (bench/paired_comparison.py).

``threadpoolctl.threadpool_limits`` finds the loaded BLAS libraries anew on every call (about 1 ms: it reads
the process's memory map); one ``ThreadpoolController`` made on first use keeps them, and limiting through
it costs about 50 us, which matters to simulations that fit thousands of small models."""

from contextlib import AbstractContextManager
from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController


@cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context manager limiting the BLAS libraries loaded when first called to one thread."""
    return _controller().limit(limits=1, user_api="blas")
