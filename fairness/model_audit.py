"""Audit AI models with effort-aware and disagreement-derived fairness (no Django).

Subjects file (CSV), one row per decision subject:

* ``id``: unique subject id;
* ``x_<label>``: the yearly (non-cumulative) effort feature, one column per time step, in time
  order, at least 3, numbers >= 0;
* ``score_<model>``: each model's risk score in [0, 1] (one column per model);
* ``inertia`` (optional) in [0, 1]; otherwise ``race`` is mapped through the paper's poverty table;
* any other columns (race, sex, age_group, ...) are group columns for parity.

Column names are checked against :data:`COLUMN_NAME` (letters, digits, ``_``, ``.``, ``-``; at most
64 characters; starting with a letter or digit), model names (after ``score_``) against
:data:`MODEL_NAME`; anything else is refused with a :class:`SubjectsFileError` naming the column.

:func:`audit` computes, per model: EaIF with equal weights and with each given alpha (exact up to
``exact_limit`` subjects, sampled with a CI above), the violation share and worst pairs,
effort-unaware parity per group column (Tables 6 and 8), EaGF per effort bin (Figure 3), and, when
yes/no feedback is given, the disagreement-derived notions per model (binary labels: score >= 0.5;
the critic's label is recovered from the shown model's label and the disagreement, so the same
feedback scores every model) and the disagreement-based calibration of alpha.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from fairness.calibration import DisagreementCalibration, boundary_note, calibrate_from_disagreement
from fairness.disagreement import disagreement_notions
from fairness.effort import aggregate as aggregate_of
from fairness.effort import effort as effort_of
from fairness.effort import inertia_from_groups
from fairness.group import GroupParity, effort_aware_parity, parity_figure
from fairness.human_audit import HumanAudit
from fairness.individual import eaif_details, eaif_sampled, worst_pairs


class SubjectsFileError(ValueError):
    """The subjects file breaks a rule; the message names the column and rows."""


MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
COLUMN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_column_names(columns) -> None:
    """Refuse column names outside :data:`COLUMN_NAME` and model names outside :data:`MODEL_NAME`
    (names end up in reports, CSV headers and API responses)."""
    for column in columns:
        if not isinstance(column, str):
            raise SubjectsFileError(f"column {column!r}: column names must be text")
        if column.startswith("score_"):
            if not MODEL_NAME.fullmatch(column.removeprefix("score_")):
                raise SubjectsFileError(
                    f"column {column!r}: a model name after 'score_' must be 1-64 letters, digits, '_', '.' "
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
    series_columns: list[str]
    models: list[str]
    group_columns: list[str]


def read_subjects(source: str | Path | pd.DataFrame) -> Subjects:
    """Read and check a subjects table (see the module docstring for the format)."""
    if isinstance(source, pd.DataFrame):
        frame = source.copy()
    else:
        try:
            frame = pd.read_csv(source)
        except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise SubjectsFileError(f"cannot read {source}: {exc}") from exc
    check_column_names(frame.columns)
    if "id" not in frame.columns:
        raise SubjectsFileError("missing column 'id'")
    if frame["id"].duplicated().any():
        raise SubjectsFileError(f"duplicate ids: {frame.loc[frame['id'].duplicated(), 'id'].head(5).tolist()}")
    series = [c for c in frame.columns if c.startswith("x_")]
    models = [c for c in frame.columns if c.startswith("score_")]
    if len(series) < 3:
        raise SubjectsFileError(f"need at least 3 effort columns named x_<time>, found {series}")
    if not models:
        raise SubjectsFileError("need at least one model column named score_<model>")
    for column in series + models + (["inertia"] if "inertia" in frame else []):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame.index[~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))].tolist()
        if bad:
            raise SubjectsFileError(f"column {column!r}: non-numeric, missing or infinite values in rows {bad[:5]}")
        frame[column] = values
    if (frame[series] < 0).any().any():
        raise SubjectsFileError("effort columns x_* must be >= 0")
    for column in models + (["inertia"] if "inertia" in frame else []):
        outside = frame.index[(frame[column] < 0) | (frame[column] > 1)].tolist()
        if outside:
            raise SubjectsFileError(f"column {column!r} must lie in [0, 1]; rows {outside[:5]} do not")
    if "inertia" not in frame:
        if "race" not in frame:
            raise SubjectsFileError("give an 'inertia' column or a 'race' column for the poverty-based inertia")
        try:
            frame["inertia"] = inertia_from_groups(frame["race"].astype(str).tolist())
        except KeyError as exc:
            raise SubjectsFileError(f"column 'race': {exc.args[0]}") from exc
    groups = [c for c in frame.columns if c not in {"id", "inertia", *series, *models} and frame[c].nunique() <= 50]
    return Subjects(frame.reset_index(drop=True), series, [m.removeprefix("score_") for m in models], groups)


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


def _eaif_row(model, weights, alpha, e, s, risk, exact: bool, seed: int) -> dict:
    """EaIF of one model under one weight: exact, or sampled with a CI for large populations."""
    if exact:
        res = eaif_details(e, s, risk, alpha=alpha)
        return {
            "model": model,
            "weights": weights,
            "alpha": alpha,
            "eaif": res.eaif,
            "ci_low": res.eaif,
            "ci_high": res.eaif,
            "violation_share": res.violation_share,
            "method": "exact",
        }
    est = eaif_sampled(e, s, risk, alpha=alpha, n_pairs=2_000_000, seed=seed)
    return {
        "model": model,
        "weights": weights,
        "alpha": alpha,
        "eaif": est.estimate,
        "ci_low": est.ci[0],
        "ci_high": est.ci[1],
        "violation_share": est.violation_share,
        "method": "sampled",
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


def audit(
    subjects: Subjects,
    *,
    desirable: bool,
    scale: float,
    alphas: Mapping[str, float] | None = None,
    feedback: pd.DataFrame | None = None,
    shown_model: str | None = None,
    width: float = 0.1,
    min_size: int = 10,
    exact_limit: int = 50_000,
    seed: int = 0,
    n_resamples: int = 1000,
    human: HumanAudit | None = None,
) -> AuditResult:
    """Compare the models of ``subjects``. ``alphas`` names extra effort weights (e.g. {"human
    (likert)": 0.6577}); equal weights (0.5) are always included. ``feedback`` has columns
    participant, subject, model_label (label shown), disagreement; ``shown_model`` is the model
    whose scores participants saw (for the disagreement calibration); ``human``: the parts from what people
    said (``fairness.human_audit``), kept in the result for the report."""
    frame = subjects.frame
    e, s = effort_and_aggregate(subjects, desirable=desirable, scale=scale)
    weight_sets = {"equal": 0.5, **(alphas or {})}
    exact = len(frame) <= exact_limit
    eaif_rows, worst = [], {}
    for model in subjects.models:
        risk = frame[f"score_{model}"].to_numpy(float)
        for name, alpha in weight_sets.items():
            eaif_rows.append(_eaif_row(model, name, alpha, e, s, risk, exact, seed))
        worst[model] = worst_pairs(
            e, s, risk, alpha=weight_sets[list(weight_sets)[-1]], ids=frame["id"].to_numpy(), k=20
        )
    eagf = {
        (model, col): effort_aware_parity(
            e, frame[f"score_{model}"], frame[col].astype(str), width=width, min_size=min_size
        )
        for model in subjects.models
        for col in subjects.group_columns
    }
    parity = pd.DataFrame({col: {m: eagf[(m, col)].overall for m in subjects.models} for col in subjects.group_columns})
    notions, calibration = None, None
    if feedback is not None and len(feedback):
        notions, calibration = feedback_estimates(
            subjects, feedback, e=e, s=s, shown_model=shown_model, n_resamples=n_resamples, seed=seed
        )
        if calibration is not None:  # both human weights side by side
            for model in subjects.models:
                eaif_rows.append(
                    _eaif_row(
                        model,
                        "human (disagreement)",
                        calibration.alpha,
                        e,
                        s,
                        frame[f"score_{model}"].to_numpy(float),
                        exact,
                        seed,
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
        },
        human,
    )


def feedback_estimates(
    subjects: Subjects,
    feedback: pd.DataFrame,
    *,
    e: np.ndarray,
    s: np.ndarray,
    shown_model: str | None,
    n_resamples: int,
    seed: int,
) -> tuple[pd.DataFrame, DisagreementCalibration | None]:
    """What yes/no ``feedback`` (participant, subject, model_label, disagreement) says about the models of
    ``subjects`` (efforts ``e``, aggregates ``s``): the disagreement-derived notions per model (model,
    group_column, notion, value, ci_low, ci_high, exact, disagreement_rate; binary labels score >= 0.5, the
    critic's label recovered from the shown label and the disagreement) and, given the ``shown_model``, the
    disagreement calibration of alpha (None when it cannot be estimated)."""
    frame = subjects.frame
    fb = critic_labels(feedback[feedback["subject"].isin(set(frame["id"]))])
    info = frame.set_index("id")
    group_col = "race" if "race" in frame else subjects.group_columns[0]
    rows = []
    for model in subjects.models:
        label = (info.loc[fb["subject"], f"score_{model}"].to_numpy() >= 0.5).astype(int)
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
                }
            )
    calibration = None
    if shown_model is not None:
        index = {sid: i for i, sid in enumerate(frame["id"])}
        try:
            calibration = calibrate_from_disagreement(
                e,
                s,
                frame[f"score_{shown_model}"].to_numpy(float),
                fb,
                subject_index=index,
                n_resamples=n_resamples,
                seed=seed,
            )
        except ValueError:
            calibration = None
    return pd.DataFrame(rows), calibration


def audit_tables(result: AuditResult) -> dict[str, pd.DataFrame]:
    """The audit's CSV tables by file name: eaif, parity (one row per model), eagf_bins and, with
    feedback, disagreement_notions."""
    tables = {
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
    (--features-from)."""
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
    return tables


def audit_summary(result: AuditResult) -> dict:
    """results.json: settings, EaIF rows, parity, notions and the disagreement calibration."""
    cal = result.disagreement_calibration
    summary = {
        "settings": result.settings,
        "eaif": json.loads(result.eaif.to_json(orient="records")),
        "parity": json.loads(result.parity.to_json()),
        "notions": None if result.notions is None else json.loads(result.notions.to_json(orient="records")),
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


def notions_pivot(result: AuditResult) -> pd.DataFrame | None:
    """Disagreement-derived notions, one row per model (None without feedback)."""
    if result.notions is None or not len(result.notions):
        return None
    return result.notions.pivot(index="model", columns="notion", values="value")


def audit_figures(result: AuditResult) -> list[go.Figure]:
    """EaIF bars per model and weights, effort-aware parity per group column (Figure 3) and, with
    feedback, the disagreement-calibration curve."""
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
