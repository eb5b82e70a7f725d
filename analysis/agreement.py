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
import pingouin as pg

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
    three targets or two complete raters."""
    wide = frame.pivot_table(index=target, columns=rater, values=rating, aggfunc="mean").dropna(axis=1)
    if wide.shape[0] < 3 or wide.shape[1] < 2:
        return pd.DataFrame()
    long = wide.stack().rename("rating").reset_index()
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
    """One row per condition, measure and ICC type (``ICC(1,1)``, ``ICC(A,1)``, ``ICC(C,1)`` and their k versions):
    ``icc``, ``F``, ``df1``, ``df2``, ``pvalue``, ``ci_low``, ``ci_high``, ``n_targets``, ``n_raters``."""
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
