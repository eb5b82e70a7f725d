"""numba when it is installed, else None (the kernels' NumPy versions run).

Jobs run in processes forked from the worker (runs/worker.py), and a test process forks after running kernels
itself: GNU OpenMP terminates a forked child that uses it ("fork() called from a process already using GNU
OpenMP"), so the parallel kernels use numba's fork-safe threading layer, set here before any parallel launch:
TBB (the ``tbb`` package, pinned in requirements.txt; fork-safe and the fastest layer here, bench/eaif.py),
else numba's workqueue. pip's ``tbb`` puts libtbb.so.12 in ``<prefix>/lib``, off the dynamic loader's path, so
it is loaded here by its full path, after which numba's TBB layer (asking for it by name) finds it.
``NUMBA_THREADING_LAYER`` (bench/eaif.py's comparison) overrides the choice."""

import ctypes
import os
import sys
from pathlib import Path

try:  # pragma: no cover - exercised by whichever branch is installed
    import numba

    for _tbb in Path(sys.prefix, "lib").glob("libtbb.so.12"):
        ctypes.CDLL(str(_tbb), mode=ctypes.RTLD_GLOBAL)
    if "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER = "forksafe"  # type: ignore[attr-defined]  # set at run time, not declared
except ImportError:  # pragma: no cover
    numba = None  # type: ignore[assignment]

__all__ = ["numba"]
