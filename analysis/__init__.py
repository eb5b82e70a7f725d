"""Study statistics (pure: NumPy, pandas, SciPy, statsmodels; no Django).

The public API is ``__all__``: ``from analysis import correlation`` imports only the module that
defines it, when it is first used (PEP 562), so that using one function does not load the others'
libraries. It holds the Bayesian Truth Serum (``bts_scores``, ``robust_bts_scores``, ``honesty_scores``),
correlation tests and multiple-testing adjustment, the effort weight alpha and the distance regressions
(``alpha_estimate``, ``fit_ols``, ``distance_regression``, ``moderation_regression``), paired comparisons
(``bradley_terry``, ``utility_model``) and rater agreement (``rating_icc``, ``likert_icc``). Other modules
stay importable by their full name. Design planning, which simulates studies, is ``simulation.planning``
(the simulation imports the analysis, never the reverse).
"""

from analysis.lazy_exports import lazy_exports

_PUBLIC = {
    "bts": ("bts_scores", "robust_bts_scores", "honesty_scores"),
    "correlations": ("correlation", "compare_correlations", "bonferroni", "holm", "adjust_pvalues"),
    "paired_comparison": ("bradley_terry", "utility_model"),
    "effort_weight": ("alpha_estimate",),
    "agreement": ("rating_icc", "likert_icc"),
    "regression": ("fit_ols", "distance_regression", "moderation_regression"),
}
__all__, __getattr__ = lazy_exports("analysis", _PUBLIC)
