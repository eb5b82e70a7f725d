"""Audit AI models on tabular data: group metrics for any model, effort-aware and disagreement-derived
fairness when the subjects and the study allow them (no Django).

Subjects file (CSV), one row per decision subject:

* ``id``: unique subject id;
* ``score_<model>``: a model's score in [0, 1] and/or ``label_<model>``: its 0/1 label (at least one model;
  its label is ``label_<model>``, else score >= 0.5; its score is ``score_<model>``, else its label);
* ``groups`` (``audit_models --groups``): the sensitive columns, named, never guessed;
* ``outcome_column`` (``--outcome-column``): the truth (0/1): accuracy and error rates need it;
* optionally ``x_<label>``: the yearly (non-cumulative) effort feature, one column per time step, in time
  order, at least 3, numbers >= 0, with ``inertia`` in [0, 1] or ``race`` mapped through the paper's poverty
  table; a file of that format (an effort study's) may leave ``groups`` out: every other column with at most
  50 values is then a group column, as before;
* any other columns (features for ``--features-from``, ignored otherwise).

Column names are checked against :data:`COLUMN_NAME` (letters, digits, ``_``, ``.``, ``-``; at most
64 characters; starting with a letter or digit), model names (after ``score_`` or ``label_``) against
:data:`MODEL_NAME`; anything else is refused with a :class:`SubjectsFileError` naming the column.

:func:`audit` computes, per model: the group metrics of its labels (``fairness.group_metrics``: selection
rate, and with the truth accuracy, TPR, FPR, FNR, by group, overall, difference and ratio, with intervals),
and only when the subjects carry effort series and the condition says what they mean (``desirable``,
``scale``): EaIF with equal weights and with each given alpha (exact up to ``exact_limit`` subjects, sampled
with a CI above), the violation share and worst pairs, effort-unaware parity per group column (Tables 6 and
8), EaGF per effort bin (Figure 3); when yes/no feedback is given, the disagreement-derived notions per model
(the critic's label is recovered from the shown model's label and the disagreement, so the same feedback
scores every model) and, with effort, the disagreement-based calibration of alpha. ``AuditResult.sections``
states for each part why it is there or why not.
"""

import json
import re
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.families import adjust_table
from fairness.calibration import DisagreementCalibration, boundary_note, calibrate_from_disagreement
from fairness.disagreement import disagreement_notions
from fairness.distributed import dask_client, eaif_dask
from fairness.effort import aggregate as aggregate_of
from fairness.effort import effort as effort_of
from fairness.effort import inertia_from_groups
from fairness.group import GroupParity, effort_aware_parity, parity_figure
from fairness.group_metrics import group_metrics
from fairness.human_audit import HumanAudit
from fairness.individual import eaif_details, eaif_sampled, worst_pairs, worst_pairs_sampled
from fairness.pair_sampling import ASSUMPTIONS
from fairness.sampling_options import BOUNDS, LEVEL, MAX_PAIRS, SAMPLED_PAIRS


class SubjectsFileError(ValueError):
    """The subjects file breaks a rule; the message names the column and rows."""


MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
COLUMN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MODEL_PREFIXES = ("score_", "label_")


def check_column_names(columns) -> None:
    """Refuse column names outside :data:`COLUMN_NAME` and model names outside :data:`MODEL_NAME`
    (names end up in reports, CSV headers and API responses)."""
    for column in columns:
        if not isinstance(column, str):
            raise SubjectsFileError(f"column {column!r}: column names must be text")
        prefix = next((p for p in MODEL_PREFIXES if column.startswith(p)), None)
        if prefix is not None:
            if not MODEL_NAME.fullmatch(column.removeprefix(prefix)):
                raise SubjectsFileError(
                    f"column {column!r}: a model name after {prefix!r} must be 1-64 letters, digits, '_', '.' "
                    "or '-', starting with a letter or digit"
                )
        elif not COLUMN_NAME.fullmatch(column):
            raise SubjectsFileError(
                f"column {column!r}: column names must be 1-64 letters, digits, '_', '.' or '-', starting with "
                "a letter or digit"
            )


@dataclass(frozen=True)
class Subjects:
    frame: pd.DataFrame
    series_columns: list[str]  # the effort series x_<time> (empty: no effort-aware sections)
    models: list[str]
    group_columns: list[str]
    outcome_column: str | None = None
    groups_named: bool = True  # False: guessed from an effort file's columns (no --groups)

    def scores(self, model: str) -> np.ndarray:
        """The model's scores: ``score_<model>``, else its 0/1 label."""
        column = f"score_{model}" if f"score_{model}" in self.frame else f"label_{model}"
        return self.frame[column].to_numpy(float)

    def labels(self, model: str) -> np.ndarray:
        """The model's 0/1 labels: ``label_<model>``, else score >= 0.5."""
        if f"label_{model}" in self.frame:
            return self.frame[f"label_{model}"].to_numpy(int)
        return (self.frame[f"score_{model}"].to_numpy(float) >= 0.5).astype(int)


def _numbers(frame: pd.DataFrame, column: str) -> pd.Series:
    """The column as numbers; SubjectsFileError naming the first rows that are not finite numbers."""
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = frame.index[~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))].tolist()
    if bad:
        raise SubjectsFileError(f"column {column!r}: non-numeric, missing or infinite values in rows {bad[:5]}")
    return values


def read_subjects(
    source: str | Path | pd.DataFrame, *, groups: Sequence[str] | None = None, outcome_column: str | None = None
) -> Subjects:
    """Read and check a subjects table (see the module docstring for the format) for :func:`audit`.

    Parameters
    ----------
    source : str, pathlib.Path or pandas.DataFrame
        A CSV file, a Parquet file (``.parquet``) or a table: ``id``, ``score_<model>`` and/or ``label_<model>``,
        optionally the effort series ``x_<time>`` and any other columns.
    groups : sequence of str, optional
        The sensitive columns (named, never guessed, except in an effort study's file).
    outcome_column : str, optional
        The column of the truth (0/1), for accuracy and error rates.

    Returns
    -------
    Subjects
        The checked ``frame`` with its ``models``, ``group_columns`` and ``series_columns``.

    Raises
    ------
    SubjectsFileError
        A ValueError naming the column and the first rows that break a rule.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"id": [1, 2, 3], "sex": ["f", "m", "f"], "score_m": [0.2, 0.7, 0.4]})
    >>> subjects = read_subjects(table, groups=["sex"])
    >>> subjects.models, subjects.group_columns, subjects.labels("m").tolist()
    (['m'], ['sex'], [0, 1, 0])
    >>> read_subjects(table.assign(score_m=[0.2, 1.7, 0.4]), groups=["sex"])
    Traceback (most recent call last):
    ...
    fairness.model_audit.SubjectsFileError: column 'score_m' must lie in [0, 1]; rows [1] do not
    """
    if isinstance(source, pd.DataFrame):
        frame = source.copy()
    else:
        try:
            frame = pd.read_parquet(source) if str(source).endswith(".parquet") else pd.read_csv(source)
        except (OSError, ValueError, UnicodeDecodeError) as exc:  # ParserError and ArrowInvalid are ValueErrors
            raise SubjectsFileError(f"cannot read {source}: {exc}") from exc
    check_column_names(frame.columns)
    if "id" not in frame.columns:
        raise SubjectsFileError("missing column 'id'")
    if frame["id"].duplicated().any():
        raise SubjectsFileError(f"duplicate ids: {frame.loc[frame['id'].duplicated(), 'id'].head(5).tolist()}")
    series = [c for c in frame.columns if c.startswith("x_")]
    scores = [c for c in frame.columns if c.startswith("score_")]
    labels = [c for c in frame.columns if c.startswith("label_")]
    models = list(dict.fromkeys(c.split("_", 1)[1] for c in [*scores, *labels]))
    if 0 < len(series) < 3:
        raise SubjectsFileError(f"an effort series needs at least 3 effort columns named x_<time>, found {series}")
    if not models:
        raise SubjectsFileError("need at least one model column named score_<model> or label_<model>")
    inertia = ["inertia"] if series and "inertia" in frame else []
    for column in series + scores + labels + inertia:
        frame[column] = _numbers(frame, column)
    if (frame[series] < 0).any().any():
        raise SubjectsFileError("effort columns x_* must be >= 0")
    for column in scores + inertia:
        outside = frame.index[(frame[column] < 0) | (frame[column] > 1)].tolist()
        if outside:
            raise SubjectsFileError(f"column {column!r} must lie in [0, 1]; rows {outside[:5]} do not")
    for column in labels + ([outcome_column] if outcome_column else []):
        if column not in frame:
            raise SubjectsFileError(f"--outcome-column: {column!r} is not a column of the subjects file")
        frame[column] = _numbers(frame, column)
        wrong = frame.index[~frame[column].isin([0, 1])].tolist()
        if wrong:
            raise SubjectsFileError(f"column {column!r} must be 0 or 1; rows {wrong[:5]} are not")
    if series and "inertia" not in frame:
        if "race" not in frame:
            raise SubjectsFileError("give an 'inertia' column or a 'race' column for the poverty-based inertia")
        try:
            frame["inertia"] = inertia_from_groups(frame["race"].astype(str).tolist())
        except KeyError as exc:
            raise SubjectsFileError(f"column 'race': {exc.args[0]}") from exc
    reserved = {"id", *series, *scores, *labels, *([outcome_column] if outcome_column else [])}
    if groups is not None:
        for column in groups:
            if column not in frame or column in reserved:
                why = (
                    "is not a column of the subjects file" if column not in frame else "is the id, a model or the truth"
                )
                raise SubjectsFileError(f"--groups: {column!r} {why}")
            if frame[column].isna().any():
                raise SubjectsFileError(f"--groups: column {column!r} is blank in rows {_blank_rows(frame[column])}")
        group_columns = list(dict.fromkeys(groups))
    elif series:  # an effort study's file, as before: every other column with at most 50 values
        group_columns = [c for c in frame.columns if c not in reserved | {"inertia"} and frame[c].nunique() <= 50]
    else:
        group_columns = []
    return Subjects(
        frame.reset_index(drop=True), series, models, group_columns, outcome_column, groups is not None or not series
    )


def _blank_rows(values: pd.Series) -> list:
    return values.index[values.isna()].tolist()[:5]


@dataclass(frozen=True)
class AuditResult:
    eaif: pd.DataFrame  # model, weights, alpha, eaif, ci_low, ci_high, violation_share, method
    parity: pd.DataFrame  # model x group column (effort-unaware)
    eagf: dict[tuple[str, str], GroupParity]
    worst: dict[str, pd.DataFrame]
    notions: pd.DataFrame | None
    disagreement_calibration: DisagreementCalibration | None
    settings: dict = field(default_factory=dict)
    human: HumanAudit | None = None  # what people said: the human metric, utilities, feature fairness
    # model, group_column ("" = overall only), metric, quantity (a group, overall, difference, ratio), value, CI
    group_metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    sections: dict[str, str] = field(default_factory=dict)  # part -> why it is there, or why not
    # results.json's multiple_testing: {"method", "families": {"notions/pvalue/<model>": [test ids]}}
    multiple_testing: dict = field(default_factory=dict)

    @property
    def effort_aware(self) -> bool:
        """Whether the effort-aware parts were computed (the subjects carry effort series the condition explains)."""
        return len(self.eaif) > 0


ESTIMAND = "the exact value over all n(n - 1)/2 pairs of these subjects; the sampling of pairs is the only randomness"


@dataclass(frozen=True)
class PairSampling:
    """How the audit samples pairs above its exact limit (``fairness.individual.eaif_sampled``): ``n_pairs``
    uniform pairs, or with ``half_width`` draws until the interval is at most that wide (``n_pairs`` then the first
    check, at most ``max_pairs``), each interval by ``bound`` at ``level``."""

    bound: str = BOUNDS[0]
    n_pairs: int = SAMPLED_PAIRS
    half_width: float | None = None
    level: float = LEVEL
    max_pairs: int = MAX_PAIRS

    def statement(self) -> dict:
        """results.json's ``pair_sampling``: the estimand, the bound and its assumptions, the pairs asked for."""
        return {
            "estimand": ESTIMAND,
            "bound": self.bound,
            "assumptions": ASSUMPTIONS[self.bound],
            "level": self.level,
            "n_pairs": self.n_pairs,
            "half_width": self.half_width,
            "max_pairs": self.max_pairs,
        }


def _eaif_row(
    model, weights, alpha, e, s, risk, exact: bool, seed: int, sampling: PairSampling, dask: Any = None
) -> dict:
    """EaIF of one model under one weight: exact (on the Dask client ``dask`` when given, at any size), or
    sampled as ``sampling`` says, with its interval and the violation share's, the pairs used and the bound."""
    row = {"model": model, "weights": weights, "alpha": alpha}
    if exact or dask is not None:
        res = eaif_details(e, s, risk, alpha=alpha) if dask is None else eaif_dask(e, s, risk, alpha=alpha, client=dask)
        return row | {
            "eaif": res.eaif,
            "ci_low": res.eaif,
            "ci_high": res.eaif,
            "violation_share": res.violation_share,
            "method": "exact" if dask is None else "exact, on Dask",
            "n_pairs": res.n_pairs,
        }
    est = eaif_sampled(
        e,
        s,
        risk,
        alpha=alpha,
        n_pairs=sampling.n_pairs,
        seed=seed,
        level=sampling.level,
        bound=sampling.bound,
        half_width=sampling.half_width,
        max_pairs=sampling.max_pairs,
    )
    return row | {
        "eaif": est.estimate,
        "ci_low": est.ci[0],
        "ci_high": est.ci[1],
        "violation_share": est.violation_share,
        "method": f"sampled: {est.n_pairs:,} uniform pairs; CI by the {est.bound} bound ({est.assumptions})",
        "n_pairs": est.n_pairs,
        "bound": est.bound,
        "half_width": est.half_width,
        "violation_share_ci_low": est.violation_share_ci[0],
        "violation_share_ci_high": est.violation_share_ci[1],
    }


def _worst(e, s, risk, weight_sets: dict, ids, exact: bool, seed: int, sampling: PairSampling):
    """The 20 worst pairs under the last weights: exact over all pairs up to the exact limit, else among the
    sampled EaIF's first ``sampling.n_pairs`` pairs; and how they were searched (results.json's
    ``settings.worst_pairs``)."""
    alpha = weight_sets[list(weight_sets)[-1]]
    if exact:
        return worst_pairs(e, s, risk, alpha=alpha, ids=ids, k=20), {"search": "exact over all pairs"}
    found = worst_pairs_sampled(e, s, risk, alpha=alpha, ids=ids, k=20, n_pairs=sampling.n_pairs, seed=seed)
    return found.pairs, {
        "search": "sampled",
        "n_pairs": found.n_pairs,
        "seed": found.seed,
        "miss_probability": found.miss_probability,
        "top_share": found.top_share,
        "statement": (
            f"the worst of {found.n_pairs:,} uniform pairs (the sampled EaIF's first); each listed pair is real "
            f"with its exact D - d, but worse pairs may be missed: a given pair (the worst, say) is never drawn "
            f"with probability {found.miss_probability:.3g}, and with probability 95% the worst drawn pair is "
            f"among the worst {found.top_share:.2g} of all pairs"
        ),
    }


def critic_labels(feedback: pd.DataFrame) -> pd.DataFrame:
    """Recover each answer's critic label from the shown model label and the disagreement."""
    return feedback.assign(
        critic_label=np.where(feedback["disagreement"] == 1, 1 - feedback["model_label"], feedback["model_label"])
    )


def effort_and_aggregate(subjects: Subjects, *, desirable: bool, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Each subject's effort E = m * sigmoid(A_avg) (or m * (1 - sigmoid(A_avg)) for an undesirable feature)
    and aggregate S = 2 * sigmoid(total / ``scale``) - 1 of its effort series (``fairness.effort``, Eq. 11)."""
    series = subjects.frame[subjects.series_columns].to_numpy(float)
    return (
        effort_of(series, subjects.frame["inertia"].to_numpy(float), desirable=desirable),
        aggregate_of(series, scale=scale),
    )


GROUP_METRIC_RESAMPLES = 1000


def model_group_metrics(subjects: Subjects, *, seed: int, n_resamples: int) -> pd.DataFrame:
    """Per model and sensitive column (``""``: overall only, when no group column is named), the group metrics
    of the model's labels against the truth (``fairness.group_metrics``, its intervals' estimand)."""
    frame = subjects.frame
    truth = frame[subjects.outcome_column].to_numpy(int) if subjects.outcome_column else None
    rows = []
    for model in subjects.models:
        columns: list[str | None] = [*subjects.group_columns] or [None]
        for column in columns:
            result = group_metrics(
                subjects.labels(model),
                y_true=truth,
                sensitive_features=None if column is None else frame[column].astype(str).to_numpy(),
                sensitive_name=column,
                n_resamples=n_resamples,
                seed=seed,
            )
            sizes = result.by_group["n"].to_dict()
            rows.append(
                result.intervals.assign(
                    model=model,
                    group_column=column or "",
                    n=[sizes.get(q, len(frame) if q == "overall" else np.nan) for q in result.intervals["quantity"]],
                )
            )
    columns = ["model", "group_column", "metric", "quantity", "value", "ci_low", "ci_high", "n"]
    table = pd.concat(rows, ignore_index=True)[columns]
    return table.astype({"n": "Int64"})  # subjects of a group or overall; none for a difference or ratio


def audit_sections(subjects: Subjects, *, effort: str | None, feedback: bool, human: HumanAudit | None) -> dict:
    """Why each part of the audit is there or not (``AuditResult.sections``); ``effort`` is why the
    effort-aware parts are missing (None: they are there)."""
    groups = ", ".join(subjects.group_columns)
    if subjects.group_columns:
        named = "named with --groups" if subjects.groups_named else "guessed from an effort file (at most 50 values)"
        group_text = f"by {groups} ({named})"
    else:
        group_text = "overall only: no sensitive column was named (--groups)"
    truth = (
        f"against the truth {subjects.outcome_column!r}: selection rate, accuracy, TPR, FPR and FNR"
        if subjects.outcome_column
        else "selection rate only: accuracy and error rates need the truth (--outcome-column)"
    )
    sections = {"group_metrics": f"Every model's labels, {group_text}, {truth}."}
    sections["effort"] = effort or (
        f"The subjects carry an effort series ({len(subjects.series_columns)} x_<time> columns) and the condition says "
        "whether more of it is good (desirable) and its scale (aggregate_scale)."
    )
    sections["feedback"] = (
        "The study's yes/no answers about these subjects give the disagreement-derived notions."
        if feedback
        else "No disagreement-derived notions: the study has no yes/no answers about these subjects."
    )
    if human is not None:
        sections["human"] = "What people said: " + "; ".join(f"{k} from {v}" for k, v in human.sources.items()) + "."
    else:
        sections["human"] = (
            "No human-calibrated sections: no --metric-from, --utility-from or --features-from was given."
        )
    return sections


def audit(
    subjects: Subjects,
    *,
    desirable: bool | None = None,
    scale: float | None = None,
    alphas: Mapping[str, float] | None = None,
    feedback: pd.DataFrame | None = None,
    shown_model: str | None = None,
    width: float = 0.1,
    min_size: int = 10,
    exact_limit: int = 50_000,
    seed: int = 0,
    n_resamples: int = 1000,
    human: HumanAudit | None = None,
    multiple_testing: str = "holm",
    exact_on_dask: bool = False,
    scheduler: str | None = None,
    sampling: PairSampling = PairSampling(),
) -> AuditResult:
    """Compare the models of ``subjects``: their group metrics always; the effort-aware parts when the subjects
    carry effort series and ``desirable`` and ``scale`` say what they mean (``sections`` says why not).

    Parameters
    ----------
    subjects : Subjects
        The subjects table, read and checked by :func:`read_subjects` (module docstring).
    desirable : bool, optional
        Whether more of the effort feature is good (effort-aware parts only).
    scale : float, optional
        The effort feature's aggregate scale (effort-aware parts only).
    alphas : mapping of str to float, optional
        Extra effort weights by name (e.g. {"human (likert)": 0.6577}); equal weights (0.5) are always included.
    feedback : pandas.DataFrame, optional
        Yes/no answers: columns participant, subject, model_label (label shown), disagreement.
    shown_model : str, optional
        The model whose scores participants saw (for the disagreement calibration).
    width, min_size : float, int
        EaGF's effort bin width and smallest counted group.
    exact_limit : int
        Up to this many subjects EaIF is exact; above, sampled with a CI.
    seed : int
        The seed of every random choice.
    n_resamples : int
        Bootstrap resamples of the intervals and permutations of the notions' "no gap" tests (at least 1).
    human : HumanAudit, optional
        The parts from what people said (``fairness.human_audit``), kept in the result for the report.
    multiple_testing : {"holm", "bh", "none"}
        The adjustment of the notions' "no gap" tests (groups permuted among the subjects) within each model's
        family ("does this model's feedback show a gap between groups?"; ``analysis.families``).
    exact_on_dask : bool
        The EaIF of equal and given weights exact at any size, on Dask (``fairness.distributed.eaif_dask``).
    scheduler : str, optional
        With ``exact_on_dask``: a running cluster's scheduler, "tcp://HOST:PORT" (default DASK_SCHEDULER_ADDRESS;
        neither: a LocalCluster of this machine, started and stopped by the audit).
    sampling : PairSampling
        Above ``exact_limit`` (without ``exact_on_dask``): the pairs sampled for EaIF and the bound of their
        intervals (default: 2,000,000 pairs, the empirical Bernstein bound at 95%).

    Returns
    -------
    AuditResult
        ``group_metrics`` (model, group column, metric, quantity, value, CI), ``eaif``, ``parity``, ``eagf``,
        ``worst``, ``notions``, ``disagreement_calibration`` and ``sections``.

    Examples
    --------
    One model's labels select 1 of 4 women and 3 of 4 men: selection rates 0.25 and 0.75, difference 0.5,
    ratio 1/3. With no effort series the effort-aware parts are left out, and ``sections`` says why:

    >>> import pandas as pd
    >>> table = pd.DataFrame({"id": range(8), "sex": ["f", "m"] * 4, "label_m": [0, 1, 1, 1, 0, 0, 0, 1]})
    >>> result = audit(read_subjects(table, groups=["sex"]), n_resamples=50)
    >>> result.group_metrics.set_index("quantity")["value"].round(4).to_dict()
    {'f': 0.25, 'm': 0.75, 'overall': 0.5, 'difference': 0.5, 'ratio': 0.3333}
    >>> result.effort_aware, result.sections["effort"]
    (False, 'No effort-aware sections: the subjects carry no effort series (x_<time> columns).')
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    frame = subjects.frame
    metrics = model_group_metrics(subjects, seed=seed, n_resamples=min(n_resamples, GROUP_METRIC_RESAMPLES))
    if not subjects.series_columns:
        no_effort = "No effort-aware sections: the subjects carry no effort series (x_<time> columns)."
    elif desirable is None or scale is None:
        no_effort = (
            "No effort-aware sections: the condition does not say whether more of the effort feature is good "
            "(desirable) and its scale (aggregate_scale)."
        )
    else:
        no_effort = None
    weight_sets = {"equal": 0.5, **(alphas or {})} if no_effort is None else {}
    eaif_rows: list[dict] = []
    worst: dict[str, pd.DataFrame] = {}
    eagf: dict[tuple[str, str], GroupParity] = {}
    e = s = None
    worst_search: dict[str, Any] = {}
    if no_effort is None:
        e, s = effort_and_aggregate(subjects, desirable=bool(desirable), scale=float(scale or 1.0))
        exact = len(frame) <= exact_limit
        with ExitStack() as stack:
            dask = stack.enter_context(dask_client(scheduler=scheduler)) if exact_on_dask else None
            for model in subjects.models:
                risk = subjects.scores(model)
                for name, alpha in weight_sets.items():
                    eaif_rows.append(_eaif_row(model, name, alpha, e, s, risk, exact, seed, sampling, dask))
                worst[model], worst_search = _worst(
                    e, s, risk, weight_sets, frame["id"].to_numpy(), exact, seed, sampling
                )
        eagf = {
            (model, col): effort_aware_parity(
                e, subjects.scores(model), frame[col].astype(str), width=width, min_size=min_size
            )
            for model in subjects.models
            for col in subjects.group_columns
        }
    parity = (
        pd.DataFrame({col: {m: eagf[(m, col)].overall for m in subjects.models} for col in subjects.group_columns})
        if eagf
        else pd.DataFrame(index=subjects.models)
    )
    notions, calibration = None, None
    families: dict[str, list[str]] = {}
    if feedback is not None and len(feedback):
        notions, calibration = feedback_estimates(
            subjects,
            feedback,
            e=e,
            s=s,
            shown_model=shown_model,
            n_resamples=n_resamples,
            seed=seed,
            n_permutations=n_resamples,
        )
        notions, families = adjust_table(notions, prefix="notions", method=multiple_testing, split=("model",))
        if calibration is not None and e is not None and s is not None:  # both human weights side by side
            exact = len(frame) <= exact_limit
            for model in subjects.models:
                eaif_rows.append(
                    _eaif_row(
                        model,
                        "human (disagreement)",
                        calibration.alpha,
                        e,
                        s,
                        subjects.scores(model),
                        exact,
                        seed,
                        sampling,
                    )
                )
    return AuditResult(
        pd.DataFrame(eaif_rows),
        parity,
        eagf,
        worst,
        notions,
        calibration,
        {
            "desirable": desirable,
            "scale": scale,
            "width": width,
            "min_size": min_size,
            "seed": seed,
            "n_subjects": len(frame),
            "weights": weight_sets,
            "group_columns": subjects.group_columns,
            "outcome_column": subjects.outcome_column,
            "exact_on_dask": exact_on_dask,
            "exact_limit": exact_limit,
            "pair_sampling": sampling.statement(),
            "worst_pairs": worst_search,
        },
        human,
        metrics,
        audit_sections(subjects, effort=no_effort, feedback=notions is not None, human=human),
        {"method": multiple_testing, "families": families},
    )


def feedback_estimates(
    subjects: Subjects,
    feedback: pd.DataFrame,
    *,
    e: np.ndarray | None,
    s: np.ndarray | None,
    shown_model: str | None,
    n_resamples: int,
    seed: int,
    n_permutations: int = 0,
) -> tuple[pd.DataFrame, DisagreementCalibration | None]:
    """What yes/no ``feedback`` (participant, subject, model_label, disagreement) says about the models of
    ``subjects`` (efforts ``e``, aggregates ``s``): the disagreement-derived notions per model (model,
    group_column, notion, value, ci_low, ci_high, exact, disagreement_rate and, with ``n_permutations``, pvalue: the
    permutation test of "no gap", ``fairness.disagreement``; binary labels score >= 0.5, the
    critic's label recovered from the shown label and the disagreement) and, given the ``shown_model``, the
    disagreement calibration of alpha (None when it cannot be estimated or without effort). The notions compare
    the groups of the first named group column (an effort file without --groups: race, else its first)."""
    frame = subjects.frame
    fb = critic_labels(feedback[feedback["subject"].isin(set(frame["id"]))])
    info = frame.set_index("id")
    columns = ["model", "group_column", "notion", "value", "ci_low", "ci_high", "exact", "disagreement_rate"]
    columns += ["pvalue"] if n_permutations else []
    if not subjects.group_columns:
        return pd.DataFrame(columns=columns), None
    group_col = "race" if "race" in frame and not subjects.groups_named else subjects.group_columns[0]
    rows = []
    for model in subjects.models:
        label = pd.Series(subjects.labels(model), index=info.index).loc[fb["subject"]].to_numpy()
        s_model = (label != fb["critic_label"].to_numpy()).astype(int)
        groups = info.loc[fb["subject"], group_col].astype(str).to_numpy()
        try:
            res = disagreement_notions(
                groups,
                label,
                s_model,
                labels=[0, 1],
                subjects=fb["subject"].to_numpy(),
                n_resamples=n_resamples,
                seed=seed,
                n_permutations=n_permutations,
                items=fb["subject"].to_numpy(),  # groups belong to subjects: permute them among subjects
            )
        except ValueError:
            continue
        for name, v in res.notions.items():
            low, high = v.ci if v.ci is not None else (np.nan, np.nan)  # no interval without resamples
            rows.append(
                {
                    "model": model,
                    "group_column": group_col,
                    "notion": name,
                    "value": v.value,
                    "ci_low": low,
                    "ci_high": high,
                    "exact": v.exact,
                    "disagreement_rate": res.overall_dr,
                    **({"pvalue": np.nan if v.pvalue is None else v.pvalue} if n_permutations else {}),
                }
            )
    calibration = None
    if shown_model is not None and e is not None and s is not None:
        index = {sid: i for i, sid in enumerate(frame["id"])}
        try:
            calibration = calibrate_from_disagreement(
                e,
                s,
                subjects.scores(shown_model),
                fb,
                subject_index=index,
                n_resamples=n_resamples,
                seed=seed,
            )
        except ValueError:
            calibration = None
    return pd.DataFrame(rows, columns=columns), calibration


def audit_tables(result: AuditResult) -> dict[str, pd.DataFrame]:
    """The audit's CSV tables by file name: group_metrics; with effort eaif, parity (one row per model) and
    eagf_bins; with feedback, disagreement_notions."""
    tables = {"group_metrics": result.group_metrics}
    if result.effort_aware:
        tables |= {
            "eaif": result.eaif,
            "parity": result.parity.rename_axis("model").reset_index(),
            "eagf_bins": pd.concat([r.by_bin.assign(model=m, group_column=c) for (m, c), r in result.eagf.items()])
            if result.eagf
            else pd.DataFrame(),
        }
    if result.notions is not None:
        tables["disagreement_notions"] = result.notions
    return tables | human_tables(result.human)


def human_tables(human: HumanAudit | None) -> dict[str, pd.DataFrame]:
    """The CSV tables of what people said, by file name: human_metric_lipschitz and human_metric_worst_pairs
    (--metric-from), utility_agreement (--utility-from), unfair_feature_reliance and feature_importance
    (--features-from), tradeoff_scores (--tradeoff-from)."""
    if human is None:
        return {}
    tables = {}
    if human.lipschitz is not None and human.worst is not None:
        tables["human_metric_lipschitz"] = human.lipschitz
        tables["human_metric_worst_pairs"] = pd.concat(
            [pairs.assign(model=model) for model, pairs in human.worst.items()], ignore_index=True
        )
    if human.utility is not None:
        tables["utility_agreement"] = human.utility.table
    if human.reliance is not None:
        tables["unfair_feature_reliance"] = human.reliance.models
        tables["feature_importance"] = human.reliance.features
    if human.tradeoff is not None:
        tables["tradeoff_scores"] = human.tradeoff
    return tables


def audit_summary(result: AuditResult) -> dict:
    """results.json: settings, why each part is there or not, the group metrics, EaIF rows, parity, notions and
    the disagreement calibration."""
    cal = result.disagreement_calibration
    summary = {
        "settings": result.settings,
        "sections": result.sections,
        "group_metrics": json.loads(result.group_metrics.to_json(orient="records")),
        "eaif": json.loads(result.eaif.to_json(orient="records")),
        "parity": json.loads(result.parity.to_json()),
        "notions": None if result.notions is None else json.loads(result.notions.to_json(orient="records")),
        "multiple_testing": result.multiple_testing,
        "disagreement_calibration": None
        if cal is None
        else {
            "alpha": cal.alpha,
            "ci": list(cal.ci),
            "criterion": cal.criterion,
            "correlation": cal.correlation,
            "n_subjects": cal.n_subjects,
            "n_participants": cal.n_participants,
            "estimand": cal.estimand,
            "boundary_note": boundary_note(cal.alpha, cal.ci),
        },
        "human": None
        if result.human is None
        else {
            "sources": result.human.sources,
            **{name: json.loads(frame.to_json(orient="records")) for name, frame in human_tables(result.human).items()},
        },
    }
    return json.loads(json.dumps(summary, default=str))


def eaif_pivot(result: AuditResult) -> pd.DataFrame:
    """EaIF with one row per model and one column per weights (Tables 1 and 7)."""
    return result.eaif.pivot(index="model", columns="weights", values="eaif")


def group_metric_figures(result: AuditResult) -> list[go.Figure]:
    """Per sensitive column: each metric by group for every model, with its interval."""
    figures = []
    table = result.group_metrics
    for column in [c for c in dict.fromkeys(table["group_column"]) if c]:
        rows = table[(table["group_column"] == column) & ~table["quantity"].isin(["overall", "difference", "ratio"])]
        figure = go.Figure(
            [
                go.Bar(
                    x=part["metric"] + ": " + part["quantity"].astype(str),
                    y=part["value"],
                    name=model,
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": part["ci_high"] - part["value"],
                        "arrayminus": part["value"] - part["ci_low"],
                    },
                )
                for model, part in rows.groupby("model", sort=False)
            ]
        )
        figure.update_layout(
            title=f"Group metrics by {column} (bars: value; whiskers: 95% CI)", yaxis_title="rate", barmode="group"
        )
        figures.append(figure)
    return figures


def audit_figures(result: AuditResult) -> list[go.Figure]:
    """With effort: EaIF bars per model and weights, effort-aware parity per group column (Figure 3); with
    feedback and effort, the disagreement-calibration curve."""
    if not result.effort_aware:
        return []
    pivot = eaif_pivot(result)
    bar = go.Figure([go.Bar(x=list(pivot.index), y=pivot[c], name=f"{c} weights") for c in pivot.columns])
    bar.update_layout(title="EaIF per model and weights (higher is fairer)", yaxis_title="EaIF", barmode="group")
    figures = [bar]
    for col in sorted({c for _, c in result.eagf}):
        figures.append(parity_figure({m: r for (m, c), r in result.eagf.items() if c == col}, group_name=col))
    cal = result.disagreement_calibration
    if cal is not None:
        curve = go.Figure(go.Scatter(x=cal.grid, y=cal.correlations, mode="lines"))
        curve.update_layout(
            title="Disagreement calibration: Spearman(violation, disagreement rate) by alpha",
            xaxis_title="alpha (effort weight)",
            yaxis_title="rank correlation",
        )
        figures.append(curve)
    return figures
