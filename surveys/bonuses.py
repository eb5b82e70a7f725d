"""Bonus lists in Prolific's bulk-bonus format. The only export that carries raw Prolific ids."""

import pandas as pd

from analysis.bts import BonusRule, bulk_bonus_csv, participant_bts, rationale_detail, top_bonus
from surveys.export import export_tables
from surveys.models import Participant
from surveys.services import latest_study

KINDS = ("honesty", "rationale")


def bonus_table(
    slug: str, kind: str, *, amount: float | None = None, top_fraction: float | None = None
) -> pd.DataFrame:
    """Winners of the honesty (BTS) or rationale bonus among completed, non-excluded participants,
    with their raw external ids: columns participant_id (Prolific id), amount, score."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    study = latest_study(slug)
    configured = study.spec.get("bonus", {}).get(kind, {})
    rule = BonusRule(
        amount=amount if amount is not None else configured.get("amount", 0.0),
        top_fraction=top_fraction if top_fraction is not None else configured.get("top_fraction", 0.1),
    )
    if rule.amount <= 0:
        raise ValueError(f"the study defines no {kind} bonus amount; pass one explicitly")
    pairs = export_tables(slug).pairs
    eligible = pairs[(pairs["excluded"] != 1)].dropna(subset=["d_overall", "fair_score"])
    if kind == "honesty":
        scores = participant_bts(eligible, similar_max=study.spec["likert"]["similar_max"]).rename(
            columns={"total": "score"}
        )
    else:
        scores = rationale_detail(eligible).rename(columns={"rationale_words": "score"})
    winners = top_bonus(scores, score_column="score", rule=rule)
    raw = dict(Participant.objects.filter(study__slug=slug).values_list("pseudonym", "external_id"))
    raw = {str(k): v for k, v in raw.items()}
    scored = winners.merge(scores[["participant_id", "score"]], on="participant_id")
    return scored.assign(participant_id=scored["participant_id"].map(raw))


def bonus_csv(slug: str, kind: str, **rule) -> str:
    return bulk_bonus_csv(bonus_table(slug, kind, **rule))
