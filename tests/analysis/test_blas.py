"""analysis.blas.one_blas_thread: BLAS limited to one thread inside, the previous limits restored after."""

import numpy as np  # noqa: F401 - loads the BLAS library the controller sees
from threadpoolctl import threadpool_info, threadpool_limits

from analysis.blas import _controller, one_blas_thread


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_one_blas_thread_inside_and_the_previous_limits_after():
    with threadpool_limits(limits=2, user_api="blas"):  # the suite may run with one thread already
        before = _blas_threads()
        assert before and max(before) == 2
        with one_blas_thread():
            assert _blas_threads() == [1] * len(before)
        assert _blas_threads() == before
    assert _controller() is _controller()  # the libraries are found once per process
