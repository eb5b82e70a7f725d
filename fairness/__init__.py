"""Fairness metrics (pure: NumPy, pandas, SciPy; no Django).

``fairness.audit(...)`` compares models on a subjects table; see :mod:`fairness.model_audit`.
"""

from fairness.model_audit import audit, read_subjects, write_audit_report

__all__ = ["audit", "read_subjects", "write_audit_report"]
