"""Fairness metrics (pure: NumPy, pandas, SciPy; no Django).

The public API is ``__all__``: ``from fairness import eaif`` imports only the module that defines it,
when it is first used (PEP 562), so that using one metric does not load the others' libraries (numba,
scikit-learn, plotly). ``fairness.model_audit.audit`` compares models on a subjects table. Reports are
rendered by the Django layer (``runs.reports``). Three functions share their module's name and are
imported from it: ``fairness.effort.effort``, ``fairness.differential_parity.differential_parity`` and
``fairness.situation_testing.situation_testing``.
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
    "model_audit": ("audit",),
}
__all__, __getattr__ = lazy_exports("fairness", _PUBLIC)
