"""Error rates against the truth: accuracy, false positive and false negative rates of the
participants' answers, of the crowd's majority and of the model, per subject group and per rater group
(Dressel & Farid 2018, Table 1: humans vs COMPAS by defendant race).

For a ``rate`` answer (:func:`rating_predictions`) the predicted label is 1 (the event) when the rating is
on the scale's unfavourable side of a threshold: with ``favourable="lower"`` (higher ratings = more risk)
rating >= threshold, with ``favourable="higher"`` rating < threshold (the threshold's rule per scale is
the caller's: ``fairness.task_blocks.rating_threshold``).

For an ``agree`` answer the participant's predicted label is the AI's label when they agree and the
other label when they disagree (:func:`agree_predictions`). Against the outcome y (1 = the event, e.g.
two-year recidivism):

* accuracy = P(yhat = y), FPR = P(yhat = 1 | y = 0) = FP / (FP + TN), FNR = P(yhat = 0 | y = 1) = FN / (FN + TP);
* ``participants``: pooled over answers (ratio of sums: each answer counts once; equal to the mean of
  the raters' own rates when every rater answers the same subjects, as in Dressel & Farid's blocks);
* ``majority``: per subject, the majority of its raters' predicted labels, then the rates over subjects;
  a tie (as many 1s as 0s) is ``tie="negative"`` -> 0 (Dressel & Farid: a tie counts as "will not
  recidivate": their crowd accuracies 67.0% / 66.5% reproduce only with it) or ``tie="agree"`` -> the
  AI's label (the platform's disagreement notions count a tie as agreement with the AI,
  ``fairness.disagreement.majority``);
* the model: its fixed labels over the subjects the rater group answered.

Intervals (``<rate>_low`` / ``<rate>_high``, level ``level``). Raters are resampled within the design's
blocks: the connected components of the rater-subject graph (Dressel & Farid's 20 blocks of 50
defendants; a study where raters answer overlapping random subsets is one block), each block's raters
drawn with replacement as many as it has, so every resample keeps each block's crowd size.

* ``participants``: the percentile interval of the pooled rate over those resamples. Estimand: the rate
  of an answer by a rater drawn from the rater population, on these subjects.
* ``majority``: a normal interval, estimate +- z * sqrt(V_subjects + V_raters), clipped to [0, 1]:
  V_subjects = s^2 / m, the spread of the per-subject correctness (1 when the subject's majority is
  right) over the m subjects of the rate's denominator, and V_raters the variance of the majority's
  rate over the rater resamples. Estimand: the expected rate of the majority of a crowd of this size
  drawn from the rater population, on a population of subjects like these (the interval also covers
  the same crowd's expected rate on these very subjects, conservatively). Why not the percentile
  interval of the resamples: a resampled crowd holds duplicates, fewer distinct voters, and their
  majority is worse, so that interval sat below the truth (it covered 65% in a simulation shaped like
  Dressel & Farid's study); only its spread is used here. Measured coverage (``tests/fairness/
  test_error_rates.py``, ``bench/coverage.py``): 93-98% for the subject-population estimand and 96-100%
  for these subjects, with 1, 2 or 20 blocks and rater skill spread 0.3-1.0 on the logit scale.

The model's labels do not depend on the raters, so its rows have no interval (NaN). Rates with an empty
denominator are NaN.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse, stats
from scipy.sparse.csgraph import connected_components

from fairness.rater_groups import ALL as ALL_RATERS

TieRule = Literal["negative", "agree"]
TIE_RULES: tuple[TieRule, ...] = ("negative", "agree")
ALL_SUBJECTS = "all subjects"
RATES = ("accuracy", "fpr", "fnr")


def agree_predictions(agree: np.ndarray | pd.Series, ai_label: np.ndarray | pd.Series) -> np.ndarray:
    """The participant's predicted label from an agree answer: ai_label if agree = 1, else 1 - ai_label."""
    agree, ai_label = np.asarray(agree, dtype=int), np.asarray(ai_label, dtype=int)
    return np.where(agree == 1, ai_label, 1 - ai_label)


def rating_predictions(ratings: np.ndarray | pd.Series, *, threshold: float, favourable: str = "lower") -> np.ndarray:
    """The predicted label (1 = the event) from ratings: 1 where rating >= threshold if ``favourable`` is
    "lower" (high ratings are unfavourable), 1 where rating < threshold if it is "higher"."""
    if favourable not in ("lower", "higher"):
        raise ValueError(f"favourable must be 'lower' or 'higher', not {favourable!r}")
    high = np.asarray(ratings, dtype=float) >= threshold
    return (high if favourable == "lower" else ~high).astype(int)


def confusion_rates(predicted: np.ndarray | pd.Series, outcome: np.ndarray | pd.Series) -> dict[str, float]:
    """accuracy, fpr = FP / (FP + TN), fnr = FN / (FN + TP) and n of 0/1 predictions against 0/1 outcomes."""
    yhat, y = np.asarray(predicted, dtype=int), np.asarray(outcome, dtype=int)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "accuracy": float(np.mean(yhat == y)) if len(y) else np.nan,
            "fpr": float(np.sum((yhat == 1) & (y == 0)) / np.sum(y == 0)),
            "fnr": float(np.sum((yhat == 0) & (y == 1)) / np.sum(y == 1)),
            "n": len(y),
        }


def majority_labels(yes: np.ndarray, votes: np.ndarray, ai_label: np.ndarray, tie: TieRule) -> np.ndarray:
    """The majority label per subject from its yes votes and votes (any leading axes: resamples); NaN
    without votes; a tie gives 0 (``tie="negative"``) or the AI's label (``tie="agree"``)."""
    if tie not in TIE_RULES:
        raise ValueError(f"tie must be one of {', '.join(TIE_RULES)}, not {tie!r}")
    label = (2 * yes > votes).astype(float)
    if tie == "agree":
        label = np.where(2 * yes == votes, np.broadcast_to(ai_label, label.shape), label)
    return np.where(votes > 0, label, np.nan)


def _quantiles(values: np.ndarray, level: float) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return np.nan, np.nan
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return numerator / denominator


def rater_blocks(answered: np.ndarray) -> np.ndarray:
    """The block of each rater (rows of ``answered``, raters x subjects, > 0 where the rater answered):
    the connected components of the bipartite rater-subject graph, numbered 0, 1, ..."""
    n_raters, n_subjects = answered.shape
    links = sparse.csr_matrix(answered > 0)
    graph = sparse.bmat([[None, links], [links.T, None]])
    _, labels = connected_components(graph, directed=False)
    _, blocks = np.unique(labels[:n_raters], return_inverse=True)
    return blocks


def block_resample_weights(blocks: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """n_resamples x raters counts: each block's raters drawn with replacement, as many as it has."""
    weights = np.zeros((n_resamples, len(blocks)))
    for block in np.unique(blocks):
        members = np.flatnonzero(blocks == block)
        weights[:, members] = rng.multinomial(len(members), np.full(len(members), 1 / len(members)), size=n_resamples)
    return weights


def majority_interval(correct: np.ndarray, resampled: np.ndarray, level: float) -> tuple[float, float]:
    """estimate +- z sqrt(s^2 / m + var(resampled)) clipped to [0, 1] (module doc): ``correct`` the m
    per-subject 0/1 correctness of the majority, ``resampled`` the majority's rate in each rater resample."""
    resampled = resampled[np.isfinite(resampled)]
    if len(correct) < 2 or len(resampled) < 2:
        return np.nan, np.nan
    variance = np.var(correct, ddof=1) / len(correct) + np.var(resampled, ddof=1)
    half = stats.norm.ppf(0.5 + level / 2) * np.sqrt(variance)
    estimate = float(np.mean(correct))
    return max(0.0, estimate - half), min(1.0, estimate + half)


def error_rates(
    answers: pd.DataFrame,
    subjects: pd.DataFrame,
    *,
    attributes: Sequence[str] = (),
    model: str = "model",
    tie: TieRule = "negative",
    rater: str = "participant_id",
    rater_group: str | None = "rater_group",
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Accuracy, FPR and FNR of the participants, their majority and the model (module doc), over all
    subjects and per group of each subject attribute, for all raters and per rater group.

    ``answers``: one row per answer with ``rater``, ``subject``, ``predicted`` (0/1) and optionally
    ``rater_group`` (a rater without one counts in the all-participants rows only); ``subjects``: one
    row per subject with ``subject``, ``outcome`` (0/1; subjects without one are left out),
    ``model_label`` (0/1) and the ``attributes`` columns.

    Returns one row per (subject_attribute, subject_group, rater_group, source) with accuracy, fpr, fnr,
    n (answers for participants, subjects otherwise), n_raters and the CI bounds
    ``<rate>_low`` / ``<rate>_high``.
    """
    subjects = subjects.dropna(subset=["outcome"]).drop_duplicates("subject").reset_index(drop=True)
    answers = answers[answers["subject"].isin(subjects["subject"])]
    s_index = {s: i for i, s in enumerate(subjects["subject"])}
    y = subjects["outcome"].to_numpy(int)
    ai = subjects["model_label"].to_numpy(float)
    cells: list[tuple[str, str, np.ndarray]] = [("", ALL_SUBJECTS, np.ones(len(subjects), bool))]
    for attribute in attributes:
        values = subjects[attribute]
        for value in sorted(values.dropna().astype(str).unique()):
            cells.append((attribute, value, (values.astype(str) == value).to_numpy() & values.notna().to_numpy()))
    groups: list[tuple[str, pd.DataFrame]] = [(ALL_RATERS, answers)]
    if rater_group and rater_group in answers.columns:
        named = answers.dropna(subset=[rater_group])
        groups += sorted(((str(g), part) for g, part in named.groupby(rater_group)), key=lambda item: item[0])
    rng = np.random.default_rng(seed)
    rows = []
    for group, part in groups:
        raters, r_codes = np.unique(part[rater].astype(str), return_inverse=True)
        s_codes = part["subject"].map(s_index).to_numpy(int)
        predicted = part["predicted"].to_numpy(int)
        shape = (len(raters), len(subjects))
        answered = np.zeros(shape)
        yes = np.zeros(shape)
        np.add.at(answered, (r_codes, s_codes), 1)
        np.add.at(yes, (r_codes, s_codes), predicted)
        correct = np.where(y == 1, yes, answered - yes)
        weights = np.ones((1, len(raters)))
        if n_resamples and len(raters) > 1:
            weights = np.vstack([weights, block_resample_weights(rater_blocks(answered), n_resamples, rng)])
        majority = majority_labels(weights @ yes, weights @ answered, ai, tie)  # resamples x subjects
        seen = answered.sum(axis=0) > 0
        for attribute, subject_group, cell in cells:
            neg, pos = cell & (y == 0), cell & (y == 1)
            per_rater = {
                "accuracy": (correct[:, cell].sum(1), answered[:, cell].sum(1)),
                "fpr": (yes[:, neg].sum(1), answered[:, neg].sum(1)),
                "fnr": ((answered - yes)[:, pos].sum(1), answered[:, pos].sum(1)),
            }
            voted = np.isfinite(majority) & cell
            hits = np.where(voted, majority == y, False)
            per_subject = {
                "accuracy": (hits.sum(1), voted.sum(1)),
                "fpr": ((voted & (majority == 1) & (y == 0)).sum(1), (voted & (y == 0)).sum(1)),
                "fnr": ((voted & (majority == 0) & (y == 1)).sum(1), (voted & (y == 1)).sum(1)),
            }
            # each rate's denominator subjects (as voted in the data) and whether the majority was right
            right = {
                "accuracy": (voted[0], hits[0]),
                "fpr": (voted[0] & (y == 0), majority[0] == 0),
                "fnr": (voted[0] & (y == 1), majority[0] == 1),
            }
            base = {"subject_attribute": attribute, "subject_group": subject_group, "rater_group": group}
            for source, rates, n in (
                ("participants", {k: _ratio(weights @ a, weights @ b) for k, (a, b) in per_rater.items()}, None),
                ("majority", {k: _ratio(a, b) for k, (a, b) in per_subject.items()}, int(voted[0].sum())),
            ):
                row = {**base, "source": source, **{k: float(v[0]) for k, v in rates.items()}}
                row["n"] = int(answered[:, cell].sum()) if n is None else n
                row["n_raters"] = len(raters)
                for k, v in rates.items():
                    if source == "participants":
                        row[f"{k}_low"], row[f"{k}_high"] = _quantiles(v[1:], level)
                    else:
                        subjects_in, was_right = right[k]
                        low, high = majority_interval(was_right[subjects_in].astype(float), v[1:], level)
                        if k != "accuracy":  # FPR and FNR are error rates: 1 - the correct share
                            low, high = 1 - high, 1 - low
                        row[f"{k}_low"], row[f"{k}_high"] = low, high
                rows.append(row)
            model_rows = cell & seen & np.isfinite(ai)
            model_rates = confusion_rates(ai[model_rows], y[model_rows])
            rows.append(
                {**base, "source": model, **model_rates, "n_raters": len(raters)}
                | {f"{k}_{end}": np.nan for k in RATES for end in ("low", "high")}
            )
    columns = ["subject_attribute", "subject_group", "rater_group", "source", *RATES, "n", "n_raters"]
    columns += [f"{k}_{end}" for k in RATES for end in ("low", "high")]
    return pd.DataFrame(rows, columns=columns)
