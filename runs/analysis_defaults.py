"""The defaults of a study analysis (``analyze_study``, the web form, a registered plan), in one place that
imports no scientific library. ``min_group_size`` and ``min_subject_group`` are the science's own
(``fairness.group_options``; a test keeps them equal)."""

from typing import Any

ANALYSIS_DEFAULTS: dict[str, Any] = {
    "seed": 1,
    "n_resamples": 2000,
    "include_incomplete": False,
    "include_pilot": False,
    "multiple_testing": "holm",
    "min_group_size": 10,
    "min_subject_group": 10,
    "pool_small": False,
}
