"""Study statistics (pure: NumPy, pandas, SciPy, statsmodels; no Django)."""
