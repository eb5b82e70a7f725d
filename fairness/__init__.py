"""Fairness metrics (pure: NumPy, pandas, SciPy; no Django).

The public API is ``__all__``: ``from fairness import eaif`` imports only the module that defines it,
when it is first used (PEP 562), so that using one metric does not load the others' libraries (numba,
scikit-learn, plotly). It holds effort and its parts (``cumulative`` ... ``aggregate``), effort-aware
individual and group fairness (``eaif``, ``eaif_details``, ``eaif_sampled``, ``effort_aware_parity``),
the notions from yes/no disagreement and the alpha they calibrate (``disagreement_notions``,
``calibrate_from_disagreement``), a metric learned from people and the audit under it (``fit_metric``,
``lipschitz_violations``), feature fairness (``feature_fairness_shares``) and the audit of any models on a
subjects table (``read_subjects``, ``audit``). Reports are rendered by the Django layer (``runs.reports``).
Three functions share their module's name and are imported from it: ``fairness.effort.effort``,
``fairness.differential_parity.differential_parity`` and ``fairness.situation_testing.situation_testing``.
"""

from analysis.lazy_exports import lazy_exports

_PUBLIC = {
    "effort": ("cumulative", "velocities", "accelerations", "average_acceleration", "aggregate"),
    "individual": ("eaif", "eaif_details", "eaif_sampled", "lipschitz_violations"),
    "group": ("effort_aware_parity",),
    "disagreement": ("disagreement_notions",),
    "calibration": ("calibrate_from_disagreement",),
    "human_metric": ("fit_metric",),
    "feature_fairness": ("feature_fairness_shares",),
    "model_audit": ("audit", "read_subjects"),
}
__all__, __getattr__ = lazy_exports("fairness", _PUBLIC)
