"""Inter-rater agreement on the Likert ratings: intraclass correlations (Shrout & Fleiss 1979; named
as McGraw & Wong 1996 do, ICC(A,1) = Shrout & Fleiss's ICC(2,1)) via ``pingouin.intraclass_corr``
(its CIs are rounded to 2 decimals).

Targets are the stimuli (rated pairs of one condition), raters the participants, ratings one Likert
measure (d_E, d_S or d); one analysis per condition, because each condition has its own stimuli
and participants. ICC(A,1) (two-way, absolute agreement, one rater) says how far one
participant's rating of a pair can stand for another's; ICC(A,k) is the reliability of the mean over
all k participants. ICC needs a complete targets x raters table: only participants who rated every
stimulus of the condition are used (``n_raters`` says how many).
"""

import pandas as pd

ICC_TYPES = {
    "ICC(1,1)": "one-way random effects, single rater (Shrout & Fleiss ICC(1,1))",
    "ICC(A,1)": "two-way, absolute agreement, single rater (Shrout & Fleiss ICC(2,1))",
    "ICC(C,1)": "two-way, consistency, single rater (Shrout & Fleiss ICC(3,1))",
    "ICC(1,k)": "one-way random effects, mean of k raters (Shrout & Fleiss ICC(1,k))",
    "ICC(A,k)": "two-way, absolute agreement, mean of k raters (Shrout & Fleiss ICC(2,k))",
    "ICC(C,k)": "two-way, consistency, mean of k raters (Shrout & Fleiss ICC(3,k))",
}
LIKERT_MEASURES = {"d_traj": "trajectory d_E", "d_aggr": "aggregate d_S", "d_overall": "overall d"}


def rating_icc(frame: pd.DataFrame, *, target: str, rater: str, rating: str) -> pd.DataFrame:
    """The six ICCs of one targets x raters table of ``rating`` (long format; raters who did not rate
    every target are dropped): one row per type with ``type``, ``description``, ``icc``, ``F``, ``df1``,
    ``df2``, ``pvalue``, ``ci_low``, ``ci_high``, ``n_targets``, ``n_raters``; empty with fewer than
    three targets or two complete raters. Computed by ``pingouin.intraclass_corr`` (Shrout & Fleiss 1979;
    McGraw & Wong 1996).

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per rating (long format).
    target, rater, rating : str
        The columns of what was rated, who rated it and the rating.

    Returns
    -------
    pandas.DataFrame
        One row per ICC type (``ICC(1,1)``, ``ICC(A,1)``, ``ICC(C,1)`` and their k versions).

    Examples
    --------
    Shrout & Fleiss's (1979, Table 2) six targets rated by four judges; their published ICC(1,1),
    ICC(2,1) and ICC(3,1) are 0.17, 0.29 and 0.71:

    >>> import pandas as pd
    >>> table = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> long = pd.DataFrame([(t, j, table[t][j]) for t in range(6) for j in range(4)],
    ...                     columns=["target", "judge", "rating"])
    >>> icc = rating_icc(long, target="target", rater="judge", rating="rating")
    >>> icc.set_index("type")["icc"].round(2).to_dict()
    {'ICC(1,1)': 0.17, 'ICC(A,1)': 0.29, 'ICC(C,1)': 0.71, 'ICC(1,k)': 0.44, 'ICC(A,k)': 0.62, 'ICC(C,k)': 0.91}
    """
    wide = frame.pivot_table(index=target, columns=rater, values=rating, aggfunc="mean").dropna(axis=1)
    if wide.shape[0] < 3 or wide.shape[1] < 2:
        return pd.DataFrame()
    long = wide.stack().rename("rating").reset_index()
    import pingouin as pg  # here, not at the top: pingouin loads matplotlib and xarray (0.5 CPU-s a process)

    table = pg.intraclass_corr(data=long, targets=target, raters=rater, ratings="rating")
    return pd.DataFrame(
        [
            {
                "type": res.Type,
                "description": ICC_TYPES[res.Type],
                "icc": float(res.ICC),
                "F": float(res.F),
                "df1": int(res.df1),
                "df2": int(res.df2),
                "pvalue": float(res.pval),
                "ci_low": float(res.CI95[0]),
                "ci_high": float(res.CI95[1]),
                "n_targets": wide.shape[0],
                "n_raters": wide.shape[1],
            }
            for res in table.itertuples(index=False)
        ]
    )


def likert_icc(pairs: pd.DataFrame, *, stimulus: str = "stimulus", participant: str = "participant_id") -> pd.DataFrame:
    """How much participants agree on each Likert distance: :func:`rating_icc` of each measure (``d_traj``,
    ``d_aggr``, ``d_overall``) over the stimulus pairs, per condition.

    Parameters
    ----------
    pairs : pandas.DataFrame
        The pairs export: ``condition``, the ``stimulus`` and ``participant`` columns and the three measures.
    stimulus, participant : str
        The columns of the rated pair and of who rated it.

    Returns
    -------
    pandas.DataFrame
        One row per condition, measure and ICC type (``ICC(1,1)``, ``ICC(A,1)``, ``ICC(C,1)`` and their k
        versions): ``icc``, ``F``, ``df1``, ``df2``, ``pvalue``, ``ci_low``, ``ci_high``, ``n_targets``,
        ``n_raters``; empty when no condition has three stimuli rated by two participants.

    Examples
    --------
    Shrout & Fleiss's (1979) judges as four participants rating six stimulus pairs, the same on every
    measure: each measure's ICC(C,1) is their published 0.71:

    >>> import pandas as pd
    >>> table = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> pairs = pd.DataFrame([(f"s{t}", p, table[t][p]) for t in range(6) for p in range(4)],
    ...                      columns=["stimulus", "participant_id", "d_traj"])
    >>> pairs = pairs.assign(condition="arrests", d_aggr=pairs["d_traj"], d_overall=pairs["d_traj"])
    >>> icc = likert_icc(pairs)
    >>> icc[icc["type"] == "ICC(C,1)"].set_index("measure")["icc"].round(2).to_dict()
    {'trajectory d_E': 0.71, 'aggregate d_S': 0.71, 'overall d': 0.71}
    """
    tables = [
        rating_icc(frame, target=stimulus, rater=participant, rating=measure).assign(condition=condition, measure=label)
        for condition, frame in pairs.groupby("condition", sort=False)
        for measure, label in LIKERT_MEASURES.items()
    ]
    tables = [t for t in tables if len(t)]
    if not tables:
        return pd.DataFrame()
    out = pd.concat(tables, ignore_index=True)
    return out[["condition", "measure", *[c for c in out.columns if c not in ("condition", "measure")]]]
