"""Effort-aware group fairness, EaGF (effort-aware fairness paper, Eq. 14, Figure 3, Tables 6 and 8).

Subjects are put in effort bins [e0, e0 + width) (width 0.1 by default; effort 1.0 joins the last
bin). Within a bin, a group (race, sex, age group or any column) counts only with at least
``min_size`` members (10 by default). The within-bin parity is
    min over counted groups of mean risk / max over counted groups of mean risk,
(1 = parity), defined when at least two groups count. The traditional, effort-unaware demographic
parity applies the same ratio to the whole population (Tables 6 and 8).
Results use Fairlearn's vocabulary: ``overall`` (effort-unaware parity), ``by_group`` (mean risk per
group), ``by_bin`` (parity per bin) and ``ratio()``.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike


def parity_ratio(risk: ArrayLike, groups: ArrayLike, *, min_size: int = 10) -> float:
    """Lowest group mean risk / highest group mean risk over groups with >= min_size members
    (NaN when fewer than two groups qualify or the highest mean is 0)."""
    frame = pd.DataFrame({"risk": np.asarray(risk, dtype=float), "group": np.asarray(groups)})
    stats = frame.groupby("group")["risk"].agg(["mean", "size"])
    stats = stats[stats["size"] >= min_size]
    if len(stats) < 2 or stats["mean"].max() <= 0:
        return float("nan")
    return float(stats["mean"].min() / stats["mean"].max())


@dataclass(frozen=True)
class GroupParity:
    overall: float
    by_group: pd.DataFrame  # group, n, mean_risk (whole population)
    by_bin: pd.DataFrame  # bin_low, bin_high, n, n_groups, parity
    by_bin_group: pd.DataFrame  # bin_low, group, n, mean_risk
    width: float
    min_size: int

    def ratio(self) -> float:
        """Effort-unaware demographic parity (Fairlearn's ``ratio()`` of the mean risk by group)."""
        return self.overall


def effort_bins(effort: ArrayLike, width: float = 0.1) -> np.ndarray:
    """Lower edge of each subject's bin. Efforts lie in [0, 1]; 1.0 joins the last bin [0.9, 1.0]."""
    e = np.asarray(effort, dtype=float)
    if width <= 0:
        raise ValueError("bin width must be positive")
    last = np.ceil(1 / width - 1e-9) - 1
    idx = np.minimum(np.floor(e / width + 1e-9), last)
    return np.round(idx * width, 10)


def effort_aware_parity(effort, risk, groups, *, width: float = 0.1, min_size: int = 10) -> GroupParity:
    """EaGF of one model for one group column (Eq. 14 per bin) and its effort-unaware parity.

    Parity is the lowest group mean risk over the highest (groups of at least ``min_size``), over the
    whole population (``overall``) and among subjects of similar effort (``by_bin``, bins of ``width``).

    Parameters
    ----------
    effort : array of n floats
        Each subject's effort E.
    risk : array of n floats
        The model's risk scores (no NaN).
    groups : array of n
        Each subject's group.
    width : float
        The effort bins' width.
    min_size : int
        The fewest members a group needs in a bin to count.

    Returns
    -------
    GroupParity
        ``overall`` (also ``ratio()``), ``by_group``, ``by_bin``, ``by_bin_group``.

    Examples
    --------
    Group a's mean risk is 0.4 and b's 0.35 overall (parity 0.875); among low-effort subjects they are
    0.3 and 0.2 (parity 2/3); among high-effort ones equal (parity 1):

    >>> result = effort_aware_parity([0.05] * 4 + [0.55] * 4, [0.2, 0.4, 0.2, 0.2] + [0.5] * 4,
    ...                               ["a", "a", "b", "b"] * 2, width=0.5, min_size=1)
    >>> round(result.overall, 4), result.by_bin["parity"].round(4).tolist()
    (0.875, [0.6667, 1.0])
    """
    e = np.asarray(effort, dtype=float)
    r = np.asarray(risk, dtype=float)
    g = np.asarray(groups)
    if not (e.size == r.size == g.size):
        raise ValueError("effort, risk and groups must have equal lengths")
    missing = np.flatnonzero(np.isnan(r))
    if missing.size:
        raise ValueError(
            f"risk scores contain {missing.size} NaN value(s) (first at position(s) {missing[:5].tolist()}); "
            "parity would silently drop them from the group means: drop or impute those subjects first"
        )
    frame = pd.DataFrame({"bin_low": effort_bins(e, width), "group": g, "risk": r})
    by_group = frame.groupby("group", as_index=False).agg(n=("risk", "size"), mean_risk=("risk", "mean"))
    cells = frame.groupby(["bin_low", "group"], as_index=False).agg(n=("risk", "size"), mean_risk=("risk", "mean"))
    rows = []
    for low, part in frame.groupby("bin_low"):
        counted = cells[(cells["bin_low"] == low) & (cells["n"] >= min_size)]
        rows.append(
            {
                "bin_low": low,
                "bin_high": round(low + width, 10),
                "n": len(part),
                "n_groups": len(counted),
                "parity": parity_ratio(part["risk"], part["group"], min_size=min_size),
            }
        )
    return GroupParity(
        overall=parity_ratio(r, g, min_size=min_size),
        by_group=by_group,
        by_bin=pd.DataFrame(rows),
        by_bin_group=cells,
        width=width,
        min_size=min_size,
    )


def parity_table(
    effort, risks: Mapping[str, Sequence[float]], groups: Mapping[str, Sequence], **kwargs
) -> pd.DataFrame:
    """Effort-unaware parity per model (rows) and group column (columns), like Tables 6 and 8."""
    return pd.DataFrame(
        {
            col: {model: effort_aware_parity(effort, r, g, **kwargs).overall for model, r in risks.items()}
            for col, g in groups.items()
        }
    )


def parity_figure(results: Mapping[str, GroupParity], *, group_name: str) -> go.Figure:
    """Parity per effort bin for each model, like the paper's Figure 3."""
    fig = go.Figure()
    for model, res in results.items():
        bins = res.by_bin.dropna(subset=["parity"])
        fig.add_trace(go.Scatter(x=bins["bin_low"] + res.width / 2, y=bins["parity"], mode="lines+markers", name=model))
    fig.update_layout(
        title=f"Effort-aware {group_name} parity (groups with >= {next(iter(results.values())).min_size} "
        "members per bin)",
        xaxis_title="effort (bin centre)",
        yaxis_title="parity (min / max mean risk)",
        yaxis_range=[0, 1.05],
    )
    return fig
