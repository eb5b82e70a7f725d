"""Families of tests and their multiple-testing adjustment: every p-value a report prints belongs to one
declared family (the tests that answer one question), and is adjusted within it.

A design report's families (``adjust_tables``): each table of a block with p-value columns (``pvalue`` and
``*_pvalue``) is one family per column (e.g. "do the rater groups differ on any statistic of this block?",
"which subject-group gaps are real?"); a table with ``split`` columns is one family per value of them (the
pairs of rater groups of one statistic). Methods: ``holm`` (Holm 1979, step-down; controls the family-wise
error rate under any dependence, the default), ``bh`` (Benjamini & Hochberg 1995; controls the false
discovery rate for independent or positively dependent tests), ``none`` (raw p-values, declared as such).
The adjusted p-value stands beside the raw one as ``<column>_adjusted``; each row gets a ``test_id``
(``block/table/row``) and ``families`` maps each family's name to its tests' ids (results.json's
``multiple_testing``).
"""

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.correlations import adjust_pvalues

METHODS = {"holm": "holm", "bh": "fdr_bh", "none": None}
ADJUSTED = "_adjusted"


def adjust(pvalues: Sequence[float] | np.ndarray, method: str) -> np.ndarray:
    """``pvalues`` adjusted over one family (``analysis.correlations.adjust_pvalues``: statsmodels
    ``multipletests``); NaN stays NaN and is not counted in the family; ``none`` returns them unchanged."""
    if method not in METHODS:
        raise ValueError(f"multiple testing must be one of {', '.join(METHODS)}, not {method!r}")
    statsmodels_method = METHODS[method]
    if statsmodels_method is None:
        return np.asarray(pvalues, dtype=float).copy()
    return adjust_pvalues(np.asarray(pvalues, dtype=float).tolist(), method=statsmodels_method)


def adjust_tied(pvalues: np.ndarray, method: str) -> np.ndarray:
    """:func:`adjust`'s values (the same floating-point numbers) computed once per distinct p-value: for a
    family of many tests with few distinct p-values (situation testing: one p-value per 2x2 table, some
    hundreds of tables for 450,000 complainants), where sorting every test dominates. With the m values sorted,
    statsmodels' Holm step-down takes the running maximum of p_(i) (m - i + 1) and Benjamini-Hochberg's step-up
    the running minimum from the top of p_(i) m / i (i = 1..m), both capped at 1; within a run of equal
    p-values the first (Holm) or last (BH) place decides, so the run's places are not needed one by one."""
    if method not in METHODS:
        raise ValueError(f"multiple testing must be one of {', '.join(METHODS)}, not {method!r}")
    p = np.asarray(pvalues, dtype=float)
    out = p.copy()
    keep = ~np.isnan(p)
    if method == "none" or not keep.any():
        return out
    values, inverse, counts = np.unique(p[keep], return_inverse=True, return_counts=True)
    m = int(keep.sum())
    ends = np.cumsum(counts)  # each run's last place (1-based)
    if method == "holm":
        adjusted = np.maximum.accumulate(values * (m - (ends - counts)))
    else:
        adjusted = np.minimum.accumulate((values / (ends / float(m)))[::-1])[::-1]
    out[keep] = np.minimum(adjusted, 1.0)[inverse]
    return out


def pvalue_columns(frame: pd.DataFrame) -> list[str]:
    """The p-value columns of a table: ``pvalue`` and ``*_pvalue``."""
    return [c for c in frame.columns if c == "pvalue" or str(c).endswith("_pvalue")]


def adjust_table(
    frame: pd.DataFrame, *, prefix: str, method: str, split: Sequence[str] = ()
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """``frame`` with ``test_id`` (``prefix/row``) and ``<column>_adjusted`` for each p-value column, and its
    families (name -> test ids with a p-value): one per column, or per column and value of ``split``."""
    columns = pvalue_columns(frame)
    if frame.empty or not columns:
        return frame, {}
    frame = frame.reset_index(drop=True).copy()
    ids = [f"{prefix}/{i}" for i in range(len(frame))]
    frame.insert(0, "test_id", ids)
    split = [c for c in split if c in frame.columns]
    parts = frame.groupby(split, dropna=False, sort=False).indices if split else {(): np.arange(len(frame))}
    families: dict[str, list[str]] = {}
    for column in columns:
        p = frame[column].to_numpy(float)
        adjusted = np.full(len(frame), np.nan)
        for key, rows in parts.items():
            adjusted[rows] = adjust(p[rows], method)
            values = [str(v) for v in (key if isinstance(key, tuple) else (key,)) if str(v) not in ("", "nan")]
            name = "/".join([prefix, column, *values])
            families[name] = [ids[i] for i in rows if np.isfinite(p[i])]
        frame.insert(frame.columns.get_loc(column) + 1, column + ADJUSTED, adjusted)
    return frame, {name: tests for name, tests in families.items() if tests}


def adjust_tables(
    tables: Mapping[str, pd.DataFrame], *, prefix: str, method: str, split: Mapping[str, Sequence[str]]
) -> tuple[dict[str, pd.DataFrame], dict[str, list[str]]]:
    """:func:`adjust_table` over every table (``split``: table name -> its split columns)."""
    out: dict[str, pd.DataFrame] = {}
    families: dict[str, list[str]] = {}
    for name, frame in tables.items():
        out[name], found = adjust_table(frame, prefix=f"{prefix}/{name}", method=method, split=split.get(name, ()))
        families |= found
    return out, families
