"""Bonus lists in Prolific's bulk-bonus format. The only export that carries raw Prolific ids."""

import pandas as pd

from analysis.bts import (
    MIN_RESPONDENTS,
    RATIONALE_TIE_COLUMNS,
    TIE_WARNING_RATIO,
    BonusRule,
    honesty_scores,
    rationale_detail,
    top_bonus,
)
from participation.models import Participant
from research.export import export_tables
from studies.services import latest_study
from tasks import bts_positives

KINDS = ("honesty", "rationale")
RATIONALE_MEASURE = "rationale"  # the measure of the rationale a fair-score page asks with each fair score


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

    Honesty scores: the mean BTS over every question with a ``bts`` follow-up the participant answered,
    each question scored over the eligible participants who answered it (``analysis.bts.honesty_scores``;
    each block's positive answer from its task type, ``tasks.bts_positives``; for a study converted from
    format 1, format 1's Likert pairs' BTS, ``analysis.bts.participant_bts``). Rationale scores: the rationales in
    the answers table (measure ``rationale``: the one a fair-score page asks with each fair score) of
    the eligible participants, ranked by ``analysis.bts.rationale_detail``. A question answered by fewer than
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
    answers = tables.answers[tables.answers["participant_id"].isin(eligible_ids)]
    tie_columns: tuple[str, ...] = ()
    if kind == "rationale":
        rationales = answers.loc[answers["measure"] == RATIONALE_MEASURE, ["participant_id", "text"]]
        if rationales.empty:
            raise ValueError(
                "no rationale scores: no eligible participant wrote a rationale (fair_score blocks ask for one)"
            )
        scores = rationale_detail(rationales.rename(columns={"text": "rationale"}))
        scores = scores.rename(columns={"rationale_words": "score"})
        tie_columns = RATIONALE_TIE_COLUMNS
    else:  # BTS compares each answer with everyone's answers: scored on the eligible participants only
        scores = honesty_scores(answers, bts_positives(study.spec), min_respondents=min_respondents)
    left_out = {"left_out": scores.attrs.get("left_out", {}), "min_respondents": min_respondents}
    if kind == "honesty" and scores.empty:
        raise ValueError(
            f"no honesty scores: no question with a BTS follow-up was answered by at least {min_respondents} "
            f"eligible participants ({len(left_out['left_out'])} left out; lower it with --min-respondents)"
        )
    scores = scores.rename(columns={"total": "score"})
    winners = top_bonus(scores, score_column="score", rule=rule, tie_columns=tie_columns)
    pseudonyms = Participant.objects.filter(study__slug=slug).values_list("pseudonym", "external_id")
    raw = {str(pseudonym): external for pseudonym, external in pseudonyms}
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
