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
Risk scores and labels are unfavourable when high, so both tables default to ``favourable="lower"``
(``favourable="higher"`` when the outcome's high values are good for the subject); the verdicts name
R0, R1, the group and the direction in words (``table_definitions(favourable)`` define them for the
report; ``TABLE_DEFINITIONS`` is the default's).
Answers from one participant or about one subject are not independent; the tests treat items as
independent, as the paper does for its per-item differences (documented limitation).
"""

import pandas as pd

from fairness.differential_parity import differential_parity

NAMES = ("participants", "the AI")
FAVOURABLE = ("higher", "lower")


def table_definitions(favourable: str = "lower") -> dict[str, str]:
    """The report's definition of R0, R1, A and the sign of DPT for each table, saying which values
    are favourable (``favourable``: "lower" or "higher" risk scores and labels)."""
    if favourable not in FAVOURABLE:
        raise ValueError(f'favourable must be "higher" or "lower" (got {favourable!r})')
    good = "lower" if favourable == "lower" else "higher"
    means = "disfavoured" if favourable == "lower" else "favoured"
    label = "a low-risk" if favourable == "lower" else "a high-risk"
    effect = "unfavourable" if favourable == "lower" else "favourable"
    return {
        "fair_scores_vs_ai": (
            "R0 = the fair risk score a participant gave a comparison subject; R1 = the AI's risk score for that "
            "subject; items are the (participant, subject) answers of one condition. A = 1 for the subjects whose "
            "attribute has the row's value (the group), A = 0 for the other subjects of the condition. DPT > 0: "
            "participants gave the group higher risk scores than the AI did, relative to the other subjects. "
            f"{good.capitalize()} risk scores are favourable, so DPT > 0 means participants {means} the group "
            "compared with the AI; the verdict says it in words, favoured_group names the group participants "
            "favoured."
        ),
        "disagreements": (
            "R0 = the label a participant's yes/no answer implies (1 = high risk, 0 = low risk); R1 = the AI's "
            "label for that subject; the per-item difference is -1, 0 or +1. A = 1 for the subjects whose "
            "attribute has the row's value, A = 0 for the other subjects of the condition. DPT > 0: participants "
            "labelled the group high risk more often than the AI did, relative to the other subjects "
            f"({effect} for the group, since {label} label is favourable)."
        ),
    }


TABLE_DEFINITIONS = table_definitions("lower")


def subject_table(spec: dict) -> pd.DataFrame:
    """One row per subject of the study: condition, subject, ai_score, ai_label, demographics, series.
    Format 2 (e.g. a converted format 1 file): per condition, the subjects of the pools its ``fair_score``
    blocks draw from, with the block's ``model``'s score and label and the subjects' ``groups``; no rows (and
    those four columns) when no ``fair_score`` block asks about a subject."""
    rows = []
    for cond, s, ai, demographics in _subjects(spec):
        rows.append(
            {
                "condition": cond,
                "subject": s["id"],
                "ai_score": ai["score"],
                "ai_label": ai["label"],
                **{k: str(v) for k, v in demographics.items()},
                **{f"x{t}": v for t, v in enumerate(s.get("series", []))},
            }
        )
    return pd.DataFrame(rows, columns=None if rows else ["condition", "subject", "ai_score", "ai_label"])


def _subjects(spec: dict):
    """(condition key, subject, its AI's ``score`` and ``label``, its demographics) for every subject of
    :func:`subject_table`, each once per condition."""
    if spec.get("format", 1) == 1:
        for cond in spec["conditions"]:
            for s in cond["subjects"]:
                yield cond["key"], s, {"score": s["risk_score"], "label": s["label"]}, s.get("demographics", {})
        return
    pools = {pool["key"]: pool for pool in spec["pools"]}
    for cond in spec["conditions"]:
        seen: set[str] = set()
        for block in spec["blocks"]:
            if block.get("task") != "fair_score" or cond["key"] not in block.get("conditions", [cond["key"]]):
                continue  # a block without ``conditions`` is in every condition
            for s in pools[block["pool"]]["subjects"]:
                if s["id"] not in seen:
                    seen.add(s["id"])
                    yield cond["key"], s, s["models"][block["model"]], s.get("groups", {})


def _one_vs_rest(
    frame: pd.DataFrame, r0: str, r1: str, attribute: str, alpha: float, label: str, *, favourable: str, outcome: str
) -> list[dict]:
    out = []
    for value in sorted(frame[attribute].dropna().unique(), key=str):
        a = (frame[attribute] == value).astype(int)
        if min(a.sum(), (1 - a).sum()) < 2:
            continue
        groups = (f"subjects whose {attribute} is not {value}", f"subjects whose {attribute} is {value}")
        res = differential_parity(
            frame[r0], frame[r1], a, alpha=alpha, favourable=favourable, names=NAMES, groups=groups, outcome=outcome
        )
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
                "favourable": f"{favourable} {outcome}",
                "direction": res.direction,
                "favoured_group": res.favoured_group,
                "verdict": res.verdict,
            }
        )
    return out


def fair_scores_vs_ai(
    pairs: pd.DataFrame,
    subjects: pd.DataFrame,
    *,
    attributes=("race", "sex"),
    alpha: float = 0.05,
    favourable: str = "lower",
):
    """Per condition and attribute value: participants' fair scores (R0) against the AI's (R1).
    ``favourable="lower"``: a lower risk score is good for the subject."""
    items = pairs.dropna(subset=["fair_score"]).merge(
        subjects, left_on=["condition", "comparison"], right_on=["condition", "subject"], how="left"
    )
    rows = []
    for cond, part in items.groupby("condition"):
        for attribute in attributes:
            if attribute in part:
                rows += [
                    {"condition": cond, **r}
                    for r in _one_vs_rest(
                        part,
                        "fair_score",
                        "ai_score",
                        attribute,
                        alpha,
                        "fair score - AI score",
                        favourable=favourable,
                        outcome="risk scores",
                    )
                ]
    return pd.DataFrame(rows), items.assign(difference=items["fair_score"] - items["ai_score"])


def disagreement_parity(
    disagreements: pd.DataFrame, *, attributes=("race", "sex"), alpha: float = 0.05, favourable: str = "lower"
) -> pd.DataFrame:
    """Signed differences participant label - model label (1 = high risk), by the subject's demographics.
    ``favourable="lower"``: a low-risk label is good for the subject."""
    rows = []
    for cond, part in disagreements.groupby("condition"):
        for attribute in attributes:
            column = f"demo_{attribute}"
            if column in part:
                renamed = part.rename(columns={column: attribute})
                rows += [
                    {"condition": cond, **r}
                    for r in _one_vs_rest(
                        renamed,
                        "participant_label",
                        "model_label",
                        attribute,
                        alpha,
                        "participant label - model label",
                        favourable=favourable,
                        outcome="risk labels",
                    )
                ]
    return pd.DataFrame(rows)
