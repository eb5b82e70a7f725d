"""Eq. 5-8 as linear mixed models with crossed random effects for participant and stimulus.

    y_ij = x_ij' beta + u_i + v_j + e_ij,   u_i ~ N(0, s_u^2) (participant), v_j ~ N(0, s_v^2)
    (stimulus: one rated pair), e_ij ~ N(0, s^2), fitted by REML.

Participants and stimuli are crossed (every participant rates the same pairs), so the model is
statsmodels' ``MixedLM`` with one all-encompassing group and the two random intercepts as variance
components (``vc_formula``; the statsmodels documentation's recipe for crossed effects). Unlike
participant clustering, the stimulus variance s_v^2 lets the inference generalise to other
stimuli. The outcome is divided by its SD for the fit (Powell, then L-BFGS; REML) and the
estimates are scaled back. The contrast a2 - a1 (``d_traj - d_aggr``) is a Wald z-test with a normal CI.
A model that does not converge is returned with ``converged=False`` and a ``note`` saying why,
never an exception.
"""

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.regression.mixed_linear_model import MixedLM

STIMULUS_COLUMNS = ("condition", "set", "reference", "comparison")


@dataclass(frozen=True)
class Contrast:
    """A linear combination of fixed effects: Wald z ``statistic``, two-sided ``pvalue``."""

    hypothesis: str
    estimate: float
    std_err: float
    statistic: float
    pvalue: float
    confidence_interval: tuple[float, float]


@dataclass(frozen=True)
class MixedModelResult:
    formula: str
    n: int
    n_participants: int
    n_stimuli: int
    params: pd.Series
    bse: pd.Series
    pvalues: pd.Series
    conf_int: pd.DataFrame
    variance_components: dict[str, float]
    contrast: Contrast | None
    converged: bool
    note: str = ""
    model: Any = field(default=None, repr=False)  # the statsmodels results object

    def summary(self) -> str:
        return str(self.model.summary()) if self.model is not None else self.note


def stimulus_key(pairs: pd.DataFrame) -> pd.Series:
    """One id per rated pair of stimuli: condition / set / reference K / comparison X."""
    missing = [c for c in STIMULUS_COLUMNS if c not in pairs]
    if missing:
        raise ValueError(f"the pairs table lacks {missing}, needed to identify stimuli")
    return pairs[list(STIMULUS_COLUMNS)].astype(str).agg("/".join, axis=1)


def crossed_mixed_model(
    data: pd.DataFrame,
    formula: str,
    *,
    contrast: tuple[str, str] | None = ("d_aggr", "d_traj"),
    participant: str = "participant_id",
    stimulus: str = "stimulus",
    level: float = 0.95,
) -> MixedModelResult:
    """Fit ``formula`` (fixed effects) with crossed random intercepts for ``participant`` and
    ``stimulus`` by REML; ``contrast`` (a, b) adds the Wald test of b - a = 0."""
    names = [c for c in data.columns if c in formula]
    frame = data[[*dict.fromkeys([*names, participant, stimulus])]].dropna().reset_index(drop=True)
    counts = (len(frame), frame[participant].nunique(), frame[stimulus].nunique())
    empty = pd.Series(dtype=float)

    def failed(note: str) -> MixedModelResult:
        return MixedModelResult(formula, *counts, empty, empty, empty, pd.DataFrame(), {}, None, False, note)

    if counts[1] < 3 or counts[2] < 3:
        return failed("not fitted: needs at least 3 participants and 3 stimuli")
    # string codes are categorical to patsy without C(), which a moderator column named C would shadow
    frame = frame.assign(
        _group=1,
        _participant=[f"p{i}" for i in pd.factorize(frame[participant])[0]],
        _stimulus=[f"s{i}" for i in pd.factorize(frame[stimulus])[0]],
    )
    vc = {"participant": "0 + _participant", "stimulus": "0 + _stimulus"}
    outcome, rhs = (part.strip() for part in formula.split("~", 1))
    scale = float(frame[outcome].std()) or 1.0  # fitted on y / SD(y): the optimiser converges far more often
    frame = frame.assign(_y=frame[outcome] / scale)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = MixedLM.from_formula(
                f"_y ~ {rhs}", groups="_group", re_formula="0", vc_formula=vc, data=frame, use_sparse=True
            )
            fit = model.fit(reml=True, method=["powell", "lbfgs"])
        except (np.linalg.LinAlgError, ValueError) as exc:
            return failed(f"not fitted: {exc}")
    messages = sorted({str(w.message).split("\n")[0] for w in caught if issubclass(w.category, Warning)})
    fe = fit.fe_params.index
    components = {name: float(v) * scale**2 for name, v in zip(model.exog_vc.names, fit.vcomp, strict=True)}
    components["residual"] = float(fit.scale) * scale**2
    notes = [f"warning: {m}" for m in messages]
    if not fit.converged:
        notes.insert(0, "the optimiser did not converge; estimates are unreliable")
    notes += [f"{name} variance estimated at 0 (boundary)" for name, v in components.items() if v < 1e-8]
    test = None
    if contrast is not None:
        a, b = contrast
        weights = np.zeros((1, len(fe)))
        weights[0, fe.get_loc(b)], weights[0, fe.get_loc(a)] = 1.0, -1.0
        t = fit.t_test(weights)
        lo, hi = np.asarray(t.conf_int(alpha=1 - level))[0]
        test = Contrast(
            f"{b} = {a}",
            float(np.asarray(t.effect).ravel()[0]) * scale,
            float(np.asarray(t.sd).ravel()[0]) * scale,
            float(np.asarray(t.tvalue).ravel()[0]),
            float(np.asarray(t.pvalue).ravel()[0]),
            (float(lo) * scale, float(hi) * scale),
        )
    ci = fit.conf_int(alpha=1 - level).loc[fe] * scale
    return MixedModelResult(
        formula,
        *counts,
        fit.fe_params * scale,
        fit.bse.loc[fe] * scale,
        fit.pvalues.loc[fe],
        ci,
        components,
        test,
        bool(fit.converged) and not np.isnan(fit.bse.loc[fe]).any(),
        "; ".join(notes),
        fit,
    )
