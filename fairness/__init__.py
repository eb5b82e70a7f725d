"""Fairness metrics (pure: NumPy, pandas, SciPy; no Django)."""
