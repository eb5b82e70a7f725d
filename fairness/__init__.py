"""Fairness metrics (pure: NumPy, pandas, SciPy; no Django).

``fairness.audit(...)`` compares models on a subjects table; see :mod:`fairness.model_audit`.
Reports are rendered by the Django layer (``runs.reports``).
"""

from fairness.model_audit import SubjectsFileError, audit, read_subjects

__all__ = ["SubjectsFileError", "audit", "read_subjects"]
