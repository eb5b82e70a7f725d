"""numba when it is installed, else None (the kernels' NumPy versions run).

Jobs run in processes forked from the worker (runs/worker.py), and a test process forks after running kernels
itself: GNU OpenMP terminates a forked child that uses it ("fork() called from a process already using GNU
OpenMP"), so the parallel kernels use a fork-safe threading layer (TBB when installed, else numba's workqueue),
set here before any parallel launch."""

try:  # pragma: no cover - exercised by whichever branch is installed
    import numba

    numba.config.THREADING_LAYER = "forksafe"  # type: ignore[attr-defined]  # set at run time, not declared
except ImportError:  # pragma: no cover
    numba = None  # type: ignore[assignment]

__all__ = ["numba"]
