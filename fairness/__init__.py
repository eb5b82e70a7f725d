"""Fairness metrics (pure: NumPy, pandas, SciPy; no Django).

Import the module you need (``fairness.model_audit.audit`` compares models on a subjects table;
``fairness.effort``, ``fairness.disagreement``, ...): this package imports none of them itself, so
that using one metric does not load the others' libraries (numba, scikit-learn, plotly).
Reports are rendered by the Django layer (``runs.reports``).
"""
