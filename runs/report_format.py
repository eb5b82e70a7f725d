"""Numbers as a paper prints them (APA style, the convention of the papers' tables): p-values with
three decimals or ``< .001``, estimates with three decimals (small ones with two significant digits),
confidence intervals as ``[lo, hi]`` at their estimate's precision, significance stars with a legend.

Plain functions, registered as template filters in ``surveys/templatetags/report_format.py`` and used
by ``runs.reports.base.table_context`` for table cells.
"""

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

DECIMALS = 3
MAX_DECIMALS = 6
STAR_LEVELS = (0.001, 0.01, 0.05)  # the papers' Table 2-3 levels: *** p < .001, ** p < .01, * p < .05


def _pandas_missing(value: Any) -> bool:
    """``value`` is pandas' NA or NaT (without importing pandas: such a value exists only once it is loaded,
    and the template filters built on this module are loaded by every web worker)."""
    pd = sys.modules.get("pandas")
    return pd is not None and (value is pd.NA or value is pd.NaT)


def _number(value: Any) -> float | None:
    """``value`` as a float, or None when missing (None, NA, NaN) or not a number."""
    if value is None or _pandas_missing(value) or isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        v = float(value)
        return None if math.isnan(v) else v
    return None


def decimals_for(value: Any) -> int:
    """Decimals that show ``value`` sensibly: 3, or enough for two significant digits when |value| < 0.1
    (0.0486 -> 3 decimals, 0.0070 -> 4), at most 6."""
    v = _number(value)
    if v is None or v == 0 or math.isinf(v) or abs(v) >= 0.1:
        return DECIMALS
    return min(MAX_DECIMALS, max(DECIMALS, 1 - math.floor(math.log10(abs(v)))))


def format_estimate(value: Any, decimals: int | None = None) -> str:
    """An estimate with ``decimals`` (default :func:`decimals_for`); huge or tiny values in 3 significant
    digits; integers as they are; missing values empty."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return str(value)
    v = _number(value)
    if v is None:
        return (
            ""
            if value is None or _pandas_missing(value) or (isinstance(value, float) and math.isnan(value))
            else str(value)
        )
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if abs(v) >= 1e6 or (v != 0 and abs(v) < 10**-MAX_DECIMALS):
        return f"{v:.3g}"
    return f"{v:.{decimals_for(v) if decimals is None else decimals}f}"


def format_pvalue(value: Any) -> str:
    """A p-value with three decimals, ``< .001`` below 0.001; missing values empty."""
    v = _number(value)
    if v is None:
        return ""
    return "< .001" if v < 0.001 else f"{v:.3f}"


def format_ci(low: Any, high: Any, estimate: Any = None, *, decimals: int | None = None) -> str:
    """A confidence interval ``[lo, hi]`` at ``decimals``, else at the precision of its estimate, else of
    its bounds."""
    lo, hi = _number(low), _number(high)
    if lo is None and hi is None:
        return ""
    if decimals is None and _number(estimate) is not None:
        decimals = decimals_for(estimate)
    elif decimals is None:
        decimals = max(decimals_for(lo), decimals_for(hi))
    return f"[{format_estimate(lo, decimals)}, {format_estimate(hi, decimals)}]"


def stars(pvalue: Any, levels: Sequence[float] = STAR_LEVELS) -> str:
    """'***', '**', '*' or '' (one star per level the p-value is below)."""
    v = _number(pvalue)
    return "" if v is None else "*" * sum(v < level for level in levels)


def stars_legend(levels: Sequence[float] = STAR_LEVELS) -> str:
    """The legend of :func:`stars`: ``*** p < .001, ** p < .01, * p < .05`` (most stars first)."""
    ordered = sorted(levels)
    return ", ".join(f"{'*' * (len(ordered) - i)} p < {_level(level)}" for i, level in enumerate(ordered))


def _level(level: float) -> str:
    return f"{level:g}".removeprefix("0")
