"""Bonus lists in Prolific's bulk-bonus format. The only export that carries raw Prolific ids."""

import pandas as pd

from analysis.bts import (
    MIN_RESPONDENTS,
    RATIONALE_TIE_COLUMNS,
    TIE_WARNING_RATIO,
    BonusRule,
    honesty_scores,
    participant_bts,
    rationale_detail,
    top_bonus,
)
from participation.models import Participant
from research.export import export_tables
from studies.services import latest_study
from tasks import bts_positives

KINDS = ("honesty", "rationale")


def bonus_table(
    slug: str,
    kind: str,
    *,
    amount: float | None = None,
    top_fraction: float | None = None,
    min_respondents: int | None = None,
) -> pd.DataFrame:
    """Winners of the honesty (BTS) or rationale bonus among completed, non-excluded participants,
    with their raw external ids: columns participant_id (Prolific id), amount, score.

    Honesty scores: format 1, the Likert pairs' BTS (``analysis.bts.participant_bts``); format 2, the
    mean BTS over every question with a ``bts`` follow-up the participant answered, each question scored
    over the eligible participants who answered it (``analysis.bts.honesty_scores``; each block's positive
    answer from its task type, ``tasks.bts_positives``). Format 2 studies have no rationale bonus (their
    tasks ask for no rationale). A question answered by fewer than
    ``min_respondents`` eligible participants (the argument, else the study's
    ``bonus.honesty.min_respondents``, else ``analysis.bts.MIN_RESPONDENTS`` = 10) counts in no honesty score.

    Only participants whose status is ``completed`` and who are not excluded by the attention checks
    are eligible (someone who stopped half-way is scored on nobody's list, and is not counted in the
    fraction either). ``frame.attrs`` carries ``eligible`` (how many), ``target`` (ceil(fraction x
    eligible)), ``tie_warning`` (a sentence when ties at the cut-off pay more than
    ``TIE_WARNING_RATIO`` x target, else ""), and for honesty ``left_out`` (question -> respondents) and
    ``min_respondents``."""
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
    if min_respondents is None:
        min_respondents = configured.get("min_respondents", MIN_RESPONDENTS)
    tables = export_tables(slug)
    people = tables.participants
    eligible_ids = set(people.loc[(people["status"] == "completed") & (people["excluded"] != 1), "participant_id"])
    if study.spec.get("format", 1) == 2:
        if kind != "honesty":
            raise ValueError("format 2 studies have no rationale bonus: their tasks ask for no rationale")
        answers = tables.answers[tables.answers["participant_id"].isin(eligible_ids)]
        scores = honesty_scores(answers, bts_positives(study.spec), min_respondents=min_respondents)
        tie_columns: tuple[str, ...] = ()
    else:
        pairs = tables.pairs
        answered = pairs[pairs["participant_id"].isin(eligible_ids)].dropna(subset=["d_overall", "fair_score"])
        if kind == "honesty":
            # BTS compares each answer with everyone's answers: score on the eligible participants only
            scores = participant_bts(
                answered, similar_max=study.spec["likert"]["similar_max"], min_respondents=min_respondents
            )
            tie_columns = ()
        else:
            scores = rationale_detail(answered).rename(columns={"rationale_words": "score"})
            tie_columns = RATIONALE_TIE_COLUMNS
    left_out = {"left_out": scores.attrs.get("left_out", {}), "min_respondents": min_respondents}
    if kind == "honesty" and scores.empty:
        raise ValueError(
            f"no honesty scores: no question with a BTS follow-up was answered by at least {min_respondents} "
            f"eligible participants ({len(left_out['left_out'])} left out; lower it with --min-respondents)"
        )
    scores = scores.rename(columns={"total": "score"})
    winners = top_bonus(scores, score_column="score", rule=rule, tie_columns=tie_columns)
    raw = dict(Participant.objects.filter(study__slug=slug).values_list("pseudonym", "external_id"))
    raw = {str(k): v for k, v in raw.items()}
    scored = winners.merge(scores[["participant_id", "score"]], on="participant_id")
    result = scored.assign(participant_id=scored["participant_id"].map(raw))
    target = rule.target(len(scores))
    result.attrs = {
        "eligible": len(scores),
        "target": target,
        "tie_warning": "",
        **(left_out if kind == "honesty" else {}),
    }
    if len(result) > TIE_WARNING_RATIO * target:
        result.attrs["tie_warning"] = (
            f"ties at the cut-off: {len(result)} of {len(scores)} eligible participants get the {kind} bonus, "
            f"not {target} ({rule.top_fraction:g} of them)"
        )
    return result
