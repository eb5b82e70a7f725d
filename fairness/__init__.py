"""Fairness metrics (pure: NumPy, pandas, SciPy; no Django).

The public API is ``__all__``: ``from fairness import eaif`` imports only the module that defines it,
when it is first used (PEP 562), so that using one metric does not load the others' libraries (numba,
scikit-learn, plotly). ``fairness.model_audit.audit`` compares models on a subjects table. Reports are
rendered by the Django layer (``runs.reports``). Three functions share their module's name and are
imported from it: ``fairness.effort.effort``, ``fairness.differential_parity.differential_parity`` and
``fairness.situation_testing.situation_testing``.
"""

from importlib import import_module
from typing import Any

_PUBLIC = {
    "effort": ("cumulative", "velocities", "accelerations", "average_acceleration", "aggregate"),
    "individual": ("eaif", "eaif_details", "eaif_sampled", "lipschitz_violations"),
    "group": ("effort_aware_parity",),
    "disagreement": ("disagreement_notions",),
    "calibration": ("calibrate_from_disagreement",),
    "human_metric": ("fit_metric",),
    "feature_fairness": ("feature_fairness_shares",),
    "model_audit": ("audit",),
}
_HOME = {name: module for module, names in _PUBLIC.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'fairness' has no attribute {name!r}")
    return getattr(import_module(f"fairness.{_HOME[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
