"""Study statistics (pure: NumPy, pandas, SciPy, statsmodels; no Django).

The public API is ``__all__``: ``from analysis import correlation`` imports only the module that
defines it, when it is first used (PEP 562), so that using one function does not load the others'
libraries. Other modules stay importable by their full name.
"""

from importlib import import_module
from typing import Any

_PUBLIC = {
    "bts": ("bts_scores", "robust_bts_scores", "honesty_scores"),
    "correlations": ("correlation", "compare_correlations", "bonferroni", "holm", "adjust_pvalues"),
    "paired_comparison": ("bradley_terry", "utility_model"),
    "planning": ("plan_study", "alpha_estimate"),
    "agreement": ("rating_icc", "likert_icc"),
    "regression": ("fit_ols", "distance_regression", "moderation_regression"),
}
_HOME = {name: module for module, names in _PUBLIC.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'analysis' has no attribute {name!r}")
    return getattr(import_module(f"analysis.{_HOME[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
