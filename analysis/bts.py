"""Bayesian Truth Serum (Prelec 2004) and robust BTS (Witkowski & Parkes 2012).

For one question with m options, respondent r answers x_r (one option) and predicts the share of
each option among the others, y_r (a probability vector). With xbar_k the observed share of option k
and log ybar_k the mean over respondents of log y_rk (the log geometric mean of predictions),

    information_r = sum_k x_rk * log(xbar_k / ybar_k)
    prediction_r  = sum_k xbar_k * log(y_rk / xbar_k)
    total_r       = information_r + alpha * prediction_r

Conventions (documented choices):
* an option nobody chose (xbar_k = 0) contributes 0 to every score (the test vector's convention);
* predictions of exactly 0 or 1 (0% / 100%) are clipped to [EPS, 1 - EPS] with EPS = 0.001 and
  each row renormalised, so that log y stays finite; a respondent who predicts 0% for an answer
  that occurred gets a large but finite penalty;
* with alpha = 1 the scores sum to zero over respondents (a property tested in the suite).

The study's binarised variant (Appendix E): a Likert answer is "similar" when <= similar_max, and
the prediction "p% similar" is the vector (p/100, 1 - p/100).

Per-participant honesty scores (:func:`participant_bts`, :func:`honesty_scores`) leave
out every question answered by fewer than ``min_respondents`` (default ``MIN_RESPONDENTS`` = 10)
respondents: xbar and ybar are the sample's shares, and BTS is only truthful as the number of
respondents grows (Prelec 2004's large-population assumption); over 3-5 answers one respondent moves
xbar by 20-33 points and the scores are mostly noise. The result's ``attrs`` name the questions left
out (``left_out``: question -> respondents) and the ``min_respondents`` used.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

EPS = 1e-3
MIN_RESPONDENTS = 10  # fewest respondents a question needs to count in honesty scores and bonuses (module doc)


def _clip_predictions(predictions: np.ndarray) -> np.ndarray:
    clipped = np.clip(predictions, EPS, 1 - EPS)
    return clipped / clipped.sum(axis=1, keepdims=True)


def bts_scores(answers: ArrayLike, predictions, alpha: float = 1.0) -> pd.DataFrame:
    """Prelec's BTS for one question: one row per respondent with information, prediction, total.

    With xbar_k the share of respondents choosing option k and log ybar_k the mean log predicted share
    (Prelec 2004, Science 306): information_r = log(xbar_{x_r} / ybar_{x_r}), prediction_r =
    sum_k xbar_k log(y_rk / xbar_k), total = information + ``alpha`` * prediction.

    Parameters
    ----------
    answers : array of int
        Each respondent's chosen option index, 0..m-1 (at least two respondents).
    predictions : n x m array
        Each respondent's predicted frequencies of the options (rows sum to 1; percentages summing to
        100 are accepted and rescaled).
    alpha : float
        The weight of the prediction score.

    Returns
    -------
    pandas.DataFrame
        One row per respondent: ``information``, ``prediction``, ``total``.

    Raises
    ------
    ValueError
        For mismatched shapes, fewer than two respondents, an option index out of range, negative
        predictions or rows that sum to neither 1 nor 100.

    Examples
    --------
    Two of three choose option 0 and everyone predicts 50/50: option 0 is "surprisingly common", so its
    choosers get log((2/3) / (1/2)) = 0.2877 and the other log((1/3) / (1/2)) = -0.4055:

    >>> scores = bts_scores([0, 0, 1], [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]])
    >>> scores["information"].round(4).tolist()
    [0.2877, 0.2877, -0.4055]
    """
    y = np.asarray(predictions, dtype=float)
    x_idx = np.asarray(answers, dtype=int)
    if y.ndim != 2 or y.shape[0] != x_idx.shape[0]:
        raise ValueError(f"predictions must be n x m with n = {x_idx.shape[0]} answers, got shape {y.shape}")
    n, m = y.shape
    if n < 2:
        raise ValueError("BTS needs at least two respondents")
    if np.any((x_idx < 0) | (x_idx >= m)):
        raise ValueError(f"answers must be option indices in 0..{m - 1}")
    if np.any(y < 0):
        raise ValueError("predicted frequencies cannot be negative")
    row_sums = y.sum(axis=1, keepdims=True)
    if np.all(np.abs(row_sums - 100) < 1e-6):
        y = y / 100
    elif not np.allclose(row_sums, 1, atol=1e-6):
        raise ValueError("each respondent's predicted frequencies must sum to 1 (or to 100%)")
    y = _clip_predictions(y)
    x = np.zeros((n, m))
    x[np.arange(n), x_idx] = 1.0
    xbar = x.mean(axis=0)
    log_ybar = np.log(y).mean(axis=0)
    chosen = xbar > 0
    log_ratio = np.where(chosen, np.log(np.where(chosen, xbar, 1.0)) - log_ybar, 0.0)
    information = x @ log_ratio
    prediction = (
        np.where(chosen, xbar, 0.0) * np.where(chosen, np.log(y) - np.log(np.where(chosen, xbar, 1.0)), 0.0)
    ).sum(axis=1)
    return pd.DataFrame(
        {"information": information, "prediction": prediction, "total": information + alpha * prediction}
    )


def binarise(
    likert: Sequence[int], percent_similar: Sequence[float], similar_max: int
) -> tuple[np.ndarray, np.ndarray]:
    """Map Likert answers to options 0 = similar (<= similar_max) / 1 = different and predictions
    'p% similar' to (p/100, 1 - p/100)."""
    answers = (np.asarray(likert) > similar_max).astype(int)
    p = np.asarray(percent_similar, dtype=float) / 100.0
    if np.any((p < 0) | (p > 1)):
        raise ValueError("percent predictions must lie in [0, 100]")
    return answers, np.column_stack([p, 1 - p])


def robust_bts_scores(answers: Sequence[int], predictions: Sequence[float]) -> pd.DataFrame:
    """Robust BTS for binary questions (Witkowski & Parkes 2012), truthful for n >= 3.

    Respondent i reports x_i in {0, 1} and y_i, the predicted share of 1s. With reference j = i+1
    and peer k = i+2 (mod n; a documented deterministic choice), the shadow prediction is
    y'_i = y_j + delta if x_i = 1 else y_j - delta, delta = min(y_j, 1 - y_j), and
    score_i = R(y'_i, x_k) + R(y_i, x_k) with the quadratic rule R(y, 1) = 2y - y^2, R(y, 0) = 1 - y^2.
    Scores lie in [0, 2].

    Parameters
    ----------
    answers : sequence of int
        Each respondent's answer, 0 or 1 (at least three respondents).
    predictions : sequence of float
        Each respondent's predicted share of 1s, in [0, 1].

    Returns
    -------
    pandas.DataFrame
        One row per respondent: ``information`` R(y'_i, x_k), ``prediction`` R(y_i, x_k), ``total``.

    Examples
    --------
    Respondent 0 answers 1 and predicts 0.6; its reference (respondent 1) predicted 0.3, so
    delta = 0.3 and the shadow prediction is 0.6; its peer (respondent 2) answered 1, so both
    parts are R(0.6, 1) = 1.2 - 0.36 = 0.84:

    >>> robust_bts_scores([1, 0, 1], [0.6, 0.3, 0.5]).round(4).loc[0].tolist()
    [0.84, 0.84, 1.68]
    """
    x = np.asarray(answers, dtype=int)
    y = np.asarray(predictions, dtype=float)
    n = x.size
    if n < 3:
        raise ValueError("robust BTS needs at least three respondents")
    if not set(np.unique(x)) <= {0, 1}:
        raise ValueError("robust BTS answers must be 0 or 1")
    if np.any((y < 0) | (y > 1)):
        raise ValueError("robust BTS predictions must lie in [0, 1]")
    idx = np.arange(n)
    y_ref = y[(idx + 1) % n]
    x_peer = x[(idx + 2) % n]
    delta = np.minimum(y_ref, 1 - y_ref)
    shadow = np.where(x == 1, y_ref + delta, y_ref - delta)

    def quadratic(p, outcome):
        return np.where(outcome == 1, 2 * p - p**2, 1 - p**2)

    information = quadratic(shadow, x_peer)
    prediction = quadratic(y, x_peer)
    return pd.DataFrame({"information": information, "prediction": prediction, "total": information + prediction})


@dataclass(frozen=True)
class BonusRule:
    amount: float
    top_fraction: float = 0.1

    def __post_init__(self):
        if not 0 < self.top_fraction <= 1:
            raise ValueError(f"top_fraction must be in (0, 1], got {self.top_fraction}")

    def target(self, n_eligible: int) -> int:
        """How many participants the fraction asks for: ceil(top_fraction * n), at least one."""
        return max(1, int(np.ceil(self.top_fraction * n_eligible))) if n_eligible else 0


# A bonus list longer than this multiple of its target count (ties at the cut-off) is reported.
TIE_WARNING_RATIO = 1.5


def participant_bts(
    pairs: pd.DataFrame,
    *,
    similar_max: int,
    alpha: float = 1.0,
    question: Sequence[str] = ("condition", "set", "comparison"),
    min_respondents: int = MIN_RESPONDENTS,
) -> pd.DataFrame:
    """Binarised BTS per question (each pair's overall-distance question, within a condition),
    averaged per participant: columns participant_id, n_questions, information, prediction, total.

    Uses the export's ``d_overall`` and ``prediction_similar`` columns; rows missing either are skipped.
    The mean (not the sum) keeps participants with a missing answer comparable. Questions with fewer
    than ``min_respondents`` respondents are left out and named in ``attrs["left_out"]`` (module doc).
    """
    usable = pairs.dropna(subset=["d_overall", "prediction_similar"])
    scored, left_out = [], {}
    for key, group in usable.groupby(list(question), sort=False):
        if len(group) < min_respondents:
            left_out["/".join(map(str, key))] = len(group)
            continue
        answers, preds = binarise(group["d_overall"].to_numpy(), group["prediction_similar"].to_numpy(), similar_max)
        scores = bts_scores(answers, preds, alpha=alpha)
        scores.insert(0, "participant_id", group["participant_id"].to_numpy())
        scored.append(scores)
    return participant_means(scored, left_out=left_out, min_respondents=min_respondents)


def participant_means(
    scored: list[pd.DataFrame], *, left_out: dict[str, int] | None = None, min_respondents: int = MIN_RESPONDENTS
) -> pd.DataFrame:
    """Per-question BTS scores (each frame with participant_id, information, prediction, total)
    averaged per participant: columns participant_id, n_questions, information, prediction, total,
    best first. The mean (not the sum) keeps participants who answered fewer questions comparable.
    ``attrs``: ``left_out`` (question -> respondents, the questions with fewer than ``min_respondents``)
    and ``min_respondents``."""
    if min_respondents < 2:
        raise ValueError(f"min_respondents must be at least 2 (BTS compares respondents), got {min_respondents}")
    columns = ["participant_id", "n_questions", "information", "prediction", "total"]
    attrs = {"left_out": dict(left_out or {}), "min_respondents": min_respondents}
    if not scored:
        out = pd.DataFrame(columns=columns)
        out.attrs = attrs
        return out
    out = (
        pd.concat(scored, ignore_index=True)
        .groupby("participant_id")
        .agg(
            n_questions=("total", "size"),
            information=("information", "mean"),
            prediction=("prediction", "mean"),
            total=("total", "mean"),
        )
    )
    out = out.reset_index()[columns].sort_values("total", ascending=False, ignore_index=True)
    out.attrs = attrs
    return out


def left_out_sentence(scores: pd.DataFrame) -> str:
    """Which questions ``scores`` (from :func:`participant_means`) left out and why; "" when none."""
    left_out, floor = scores.attrs.get("left_out", {}), scores.attrs.get("min_respondents", MIN_RESPONDENTS)
    if not left_out:
        return ""
    listed = ", ".join(f"{question} ({n})" for question, n in left_out.items())
    return (
        f"{len(left_out)} question(s) left out of the honesty scores, answered by fewer than {floor} participants "
        f"(BTS over so few respondents is mostly noise; respondents in brackets): {listed}"
    )


def top_bonus(
    scores: pd.DataFrame,
    *,
    score_column: str,
    rule: BonusRule,
    id_column: str = "participant_id",
    tie_columns: Sequence[str] = (),
) -> pd.DataFrame:
    """The top ``rule.top_fraction`` (at least one) as Prolific's bulk-bonus table: columns
    participant_id, amount.

    Participants are ranked by ``score_column``, then by each of ``tie_columns`` (descending) to
    break ties; whoever ties with the last winner on all of them is included too, so the list can be
    longer than ``rule.target(len(scores))`` (compare with ``TIE_WARNING_RATIO``). Only pass the
    eligible participants' scores.
    """
    if scores.empty:
        return pd.DataFrame(columns=["participant_id", "amount"])
    keys = [score_column, *tie_columns]
    ranked = scores.sort_values(keys, ascending=False, kind="stable", ignore_index=True)
    k = rule.target(len(ranked))
    last = ranked.loc[k - 1, keys]
    tied = (ranked[keys] == last).all(axis=1)
    winners = ranked[(ranked.index < k) | tied]
    return pd.DataFrame({"participant_id": winners[id_column].to_numpy(), "amount": rule.amount})


RATIONALE_TIE_COLUMNS = ("rationale_vocabulary", "rationale_characters")


def rationale_detail(pairs: pd.DataFrame) -> pd.DataFrame:
    """Default rationale-bonus measure, per participant: ``rationale_words``, the mean number of
    distinct words per rationale (the ranking), with two tie-breakers (``RATIONALE_TIE_COLUMNS``):
    ``rationale_vocabulary``, the number of distinct words over all of the participant's rationales,
    then ``rationale_characters``, the total length of the rationales (whitespace collapsed).

    Mean distinct words alone ties often (short rationales give the same small integers); the
    tie-breakers make ties at the cut-off rare. A researcher may rank by any other column (for
    example hand-coded persuasiveness) instead.
    """
    texts = pairs["rationale"].fillna("").astype(str)
    frame = pairs.assign(
        _words=texts.map(lambda text: text.lower().split()),
        _chars=texts.map(lambda text: len(" ".join(text.split()))),
    )
    grouped = frame.groupby("participant_id")
    out = pd.DataFrame(
        {
            "rationale_words": grouped["_words"].agg(lambda col: np.mean([len(set(w)) for w in col])),
            "rationale_vocabulary": grouped["_words"].agg(lambda col: len(set().union(*map(set, col)))),
            "rationale_characters": grouped["_chars"].sum(),
        }
    ).reset_index()
    return out.sort_values(
        ["rationale_words", *RATIONALE_TIE_COLUMNS], ascending=False, kind="stable", ignore_index=True
    )


def bulk_bonus_csv(bonus: pd.DataFrame) -> str:
    """Prolific's bulk bonus format: one 'participant_id,amount' line per participant, no header."""
    return "".join(
        f"{pid},{amount:.2f}\n" for pid, amount in zip(bonus["participant_id"], bonus["amount"], strict=True)
    )


class Positive(Protocol):
    """A block's BTS questions (``tasks.base.BtsPositive``, from each task type and ``tasks.bts_positives``):
    the positive answer, those of ``measure`` with ``low <= value <= high``; the answers table's rows of
    ``block`` (the block key when empty), of ``conditions`` and about ``subjects`` (all when empty)."""

    @property
    def measure(self) -> str: ...

    @property
    def low(self) -> float: ...

    @property
    def high(self) -> float: ...

    @property
    def block(self) -> str: ...

    @property
    def conditions(self) -> tuple[str, ...]: ...

    @property
    def subjects(self) -> tuple[str, ...]: ...


def block_answers(
    answers: pd.DataFrame,
    block: str,
    measure: str,
    *,
    conditions: Sequence[str] = (),
    subjects: Sequence[str] = (),
) -> pd.DataFrame:
    """The numeric answers of one measure of one block of a long answers table (format 2 export), only
    those of ``conditions`` and about ``subjects`` when given (:func:`block_rows`)."""
    rows = block_rows(answers, block, conditions=conditions, subjects=subjects)
    return rows[rows["measure"] == measure].dropna(subset=["value"]).astype({"value": float})


def block_rows(
    answers: pd.DataFrame, block: str, *, conditions: Sequence[str] = (), subjects: Sequence[str] = ()
) -> pd.DataFrame:
    """The rows of a long answers table whose ``block`` is ``block``, only those of ``conditions`` and about
    ``subjects`` when given (where a block's answers are: ``tasks.questions.answers_rows``)."""
    chosen = answers["block"] == block
    if conditions:
        chosen &= answers["condition"].isin(conditions)
    if subjects:
        chosen &= answers["subject"].isin(subjects)
    return answers[chosen]


def honesty_scores(
    answers: pd.DataFrame,
    positives: Mapping[str, Positive],
    *,
    alpha: float = 1.0,
    min_respondents: int = MIN_RESPONDENTS,
) -> pd.DataFrame:
    """Binary BTS per question (a block's item) over the participants who answered both the task and the
    prediction ("what percentage of other participants answered X?", X the positive answer), averaged per
    participant: participant_id, n_questions, information, prediction, total (Prelec 2004, :func:`bts_scores`).
    ``positives``: block key -> its positive answer and where its answers are (the blocks with a BTS
    follow-up; a block converted from format 1 selects its condition's rows of ``pairs`` about its pairs,
    so a question, (condition, subject), is format 1's (condition, set, comparison) of
    :func:`participant_bts`, and the scores are the same). Options are 0 = the positive answer and 1 = any
    other; the prediction p% gives (p/100, 1 - p/100). A question with fewer than ``min_respondents``
    respondents is left out and named ("block/subject") in ``attrs["left_out"]``.

    Parameters
    ----------
    answers : pandas.DataFrame
        The long answers table of the export: ``participant_id``, ``block``, ``condition``, ``subject``,
        ``measure`` and ``value`` (the predictions are the rows whose measure is ``prediction``).
    positives : mapping of str to Positive
        Block key -> its positive answer (``measure``, ``low``, ``high``) and where its rows are
        (``block``, ``conditions``, ``subjects``; empty: the block's own rows, all of them).
    alpha : float
        The weight of the prediction score.
    min_respondents : int
        The fewest respondents a question needs to count.

    Returns
    -------
    pandas.DataFrame
        One row per participant: ``participant_id``, ``n_questions``, ``information``, ``prediction``,
        ``total``; ``attrs["left_out"]`` names the questions with too few respondents.

    Examples
    --------
    One yes/no question answered by three participants, each predicting that 50% of the others say yes
    (1): two say yes, so the scores are those of the :func:`bts_scores` example with options (yes, no):

    >>> from types import SimpleNamespace
    >>> import pandas as pd
    >>> answers = pd.DataFrame({
    ...     "participant_id": [1, 2, 3] * 2, "block": "agree", "condition": "c", "subject": "s1",
    ...     "measure": ["agree"] * 3 + ["prediction"] * 3, "value": [1, 1, 0, 50, 50, 50]})
    >>> yes = SimpleNamespace(measure="agree", low=1, high=1, block="", conditions=(), subjects=())
    >>> scores = honesty_scores(answers, {"agree": yes}, min_respondents=3).sort_values("participant_id")
    >>> scores["information"].round(4).tolist()
    [0.2877, 0.2877, -0.4055]
    """
    scored, left_out = [], {}
    for block, positive in positives.items():
        rows, columns = positive.block or block, ["participant_id", "subject", "value"]
        where = {"conditions": positive.conditions, "subjects": positive.subjects}
        task = block_answers(answers, rows, positive.measure, **where)[columns]
        predictions = block_answers(answers, rows, "prediction", **where)[columns]
        both = task.merge(predictions, on=["participant_id", "subject"], suffixes=("", "_prediction"))
        for subject, question in both.groupby("subject"):
            if len(question) < min_respondents:
                left_out[f"{block}/{subject}"] = len(question)
                continue
            value = question["value"].to_numpy()
            is_positive = ((value >= positive.low) & (value <= positive.high)).astype(int)
            p = question["value_prediction"].to_numpy(float) / 100
            scores = bts_scores(1 - is_positive, np.column_stack([p, 1 - p]), alpha)
            scored.append(scores.assign(participant_id=question["participant_id"].to_numpy()))
    return participant_means(scored, left_out=left_out, min_respondents=min_respondents)
