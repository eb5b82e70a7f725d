"""Differential parity on what a study collected (pure; works on the export tables and the study file).

* Fair scores vs the AI: R0 = a participant's "fair" risk score for a comparison subject, R1 = the
  AI's score for that subject; items are the (participant, subject) answers. Per condition and
  demographic attribute, each value is tested against the rest (A = 1 for the value).
* Disagreements: R0 = the label the participant's yes/no answer implies, R1 = the model's label;
  the per-item difference is -1, 0 or +1.
The study's conditions (e.g. arrests and income) are not compared with each other: they are different
tasks on different feature units, while differential parity, bridged or not, compares two decision
sets for the same task on data from the same distribution (paper, Section 1 and problem statement of
Section 2.3). ``fairness.differential_parity.bridged_differential_parity`` remains for same-task
decision sets on different items.
Answers from one participant or about one subject are not independent; the tests treat items as
independent, as the paper does for its per-item differences (documented limitation).
"""

import pandas as pd

from fairness.differential_parity import differential_parity


def subject_table(spec: dict) -> pd.DataFrame:
    """One row per subject of the study: condition, subject, ai_score, ai_label, demographics, series."""
    rows = []
    for cond in spec["conditions"]:
        for s in cond["subjects"]:
            rows.append(
                {
                    "condition": cond["key"],
                    "subject": s["id"],
                    "ai_score": s["risk_score"],
                    "ai_label": s["label"],
                    **{k: str(v) for k, v in s.get("demographics", {}).items()},
                    **{f"x{t}": v for t, v in enumerate(s["series"])},
                }
            )
    return pd.DataFrame(rows)


def _one_vs_rest(frame: pd.DataFrame, r0: str, r1: str, attribute: str, alpha: float, label: str) -> list[dict]:
    out = []
    for value in sorted(frame[attribute].dropna().unique(), key=str):
        a = (frame[attribute] == value).astype(int)
        if min(a.sum(), (1 - a).sum()) < 2:
            continue
        res = differential_parity(frame[r0], frame[r1], a, alpha=alpha)
        out.append(
            {
                "comparison": label,
                "attribute": attribute,
                "group": value,
                "n_group": res.n[1],
                "n_rest": res.n[0],
                "mean_diff_group": res.mean_difference[1],
                "mean_diff_rest": res.mean_difference[0],
                "DPT": res.statistic,
                "df": res.df,
                "pvalue": res.pvalue,
                "DPD": res.effect_size,
                "effect": res.effect_label,
                "verdict": res.verdict.replace("A = 1", f"{attribute} = {value}").replace(
                    "A = 0", f"{attribute} != {value}"
                ),
            }
        )
    return out


def fair_scores_vs_ai(pairs: pd.DataFrame, subjects: pd.DataFrame, *, attributes=("race", "sex"), alpha: float = 0.05):
    """Per condition and attribute value: participants' fair scores (R0) against the AI's (R1)."""
    items = pairs.dropna(subset=["fair_score"]).merge(
        subjects, left_on=["condition", "comparison"], right_on=["condition", "subject"], how="left"
    )
    rows = []
    for cond, part in items.groupby("condition"):
        for attribute in attributes:
            if attribute in part:
                rows += [
                    {"condition": cond, **r}
                    for r in _one_vs_rest(part, "fair_score", "ai_score", attribute, alpha, "fair score - AI score")
                ]
    return pd.DataFrame(rows), items.assign(difference=items["fair_score"] - items["ai_score"])


def disagreement_parity(
    disagreements: pd.DataFrame, *, attributes=("race", "sex"), alpha: float = 0.05
) -> pd.DataFrame:
    """Signed differences participant label - model label, by the subject's demographics."""
    rows = []
    for cond, part in disagreements.groupby("condition"):
        for attribute in attributes:
            column = f"demo_{attribute}"
            if column in part:
                renamed = part.rename(columns={column: attribute})
                rows += [
                    {"condition": cond, **r}
                    for r in _one_vs_rest(
                        renamed, "participant_label", "model_label", attribute, alpha, "participant label - model label"
                    )
                ]
    return pd.DataFrame(rows)
