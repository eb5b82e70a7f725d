"""The effort weight alpha per stakeholder (rater) group, for both calibrations, and a test of equality.

* Likert (``alpha_by_rater_group``): per rater group r, Eq. 5 d = a0 + a1 d_S + a2 d_E fitted by OLS on
  r's pairs and alpha_r = a2 / (a1 + a2) (``analysis.pipeline.alpha_from``); its CI is
  ``analysis.pipeline.bootstrap_alpha`` on r's pairs (percentile, resampling r's participants: alpha
  *for these stimulus pairs*). When the pairs identify their stimuli (a ``stimulus`` column), the two-way
  (participants x stimuli) bootstrap's CI is reported too (``ci_stimuli``: alpha for a population of such
  pairs), and with ``generalise="stimuli"`` it is the group's CI (and the contrast's distributions).
* Disagreement (``disagreement_alpha_by_rater_group``): per rater group,
  ``fairness.calibration.calibrate_from_disagreement`` on r's yes/no feedback (its CI resamples r's
  participants and recomputes the subjects' disagreement rates).
On one group, each estimate and CI is therefore the existing function's on that group's data; ``overall``
is the same function on every participant, with a group or without.

Between groups, in Fairlearn's terms, ``difference() = max_r alpha_r - min_r alpha_r`` and ``ratio() =
min_r alpha_r / max_r alpha_r`` over the groups with an estimate. With exactly two such groups, ``contrast``
is alpha_second - alpha_first (groups in sorted order) with the percentile CI of the difference of the two
groups' bootstrap distributions (independent, since each resamples its own participants).

Test of "alpha is equal across rater groups": the group labels are permuted across participants (each
keeps all their pairs or answers; group sizes are kept), T = difference(), p = (1 + #{T*_b >= T}) / (1 + B)
(Phipson & Smyth 2010), with the permuted groups' alphas computed as the observed ones are; beside it the
weighted variance W of the alphas (w_r = the group's participants) and every pair of groups with Holm's
adjustment (``fairness.rater_groups.compare_groups``). The test is
exact under exchangeable participants (ratings that do not depend on the group), which implies equal
alphas; groups that differ only in something else (e.g. how noisy their ratings are) can also make it reject.

A rater group with fewer than ``min_participants`` participants, or whose estimate is degenerate (singular
design, a1 + a2 = 0, no defined rank correlation), gets alpha NaN and a ``note``; it is left out of
difference(), ratio() and the test (its participants are not permuted). Participants without a group (a
missing questionnaire answer) count in ``overall`` only (in no group, not permuted) and in ``n_without_group``.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.pipeline import NAN_CI, bootstrap_alpha, check_generalise
from analysis.repeated_measures import ESTIMAND_POPULATION, ESTIMAND_STIMULI, design
from fairness.calibration import alpha_from_rates, calibrate_from_disagreement, feedback_matrices, violation_curves
from fairness.rater_groups import ALL, RaterGroupTest, compare_groups, group_of_raters, membership

LIKERT_COLUMNS = ("participant_id", "d_aggr", "d_traj", "d_overall")
FEEDBACK_COLUMNS = ("participant", "subject", "disagreement")


@dataclass(frozen=True)
class GroupAlpha:
    """alpha of one rater group (or of all participants), with its bootstrap CI (``estimand`` says which:
    participants resampled, or participants and stimuli); Likert: both CIs separately as well."""

    alpha: float
    confidence_interval: tuple[float, float]
    n_participants: int
    n_observations: int  # rated pairs (Likert) or yes/no answers (disagreement)
    note: str = ""
    distribution: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    ci_participants: tuple[float, float] = NAN_CI
    ci_stimuli: tuple[float, float] = NAN_CI
    estimand: str = ""


@dataclass(frozen=True)
class GroupContrast:
    """alpha of ``groups[1]`` minus alpha of ``groups[0]``, with a bootstrap CI."""

    groups: tuple[str, str]
    estimate: float
    confidence_interval: tuple[float, float]


@dataclass(frozen=True)
class AlphaByRaterGroup:
    calibration: str  # "likert" or "disagreement"
    overall: GroupAlpha
    by_group: dict[str, GroupAlpha]
    contrast: GroupContrast | None  # exactly two groups with an estimate
    test: RaterGroupTest  # permutation test of equal alphas; statistic = difference()
    n_without_group: int
    n_resamples: int
    seed: int

    def _estimates(self) -> list[float]:
        return [g.alpha for g in self.by_group.values() if np.isfinite(g.alpha)]

    def difference(self) -> float:
        """max_r alpha_r - min_r alpha_r over the groups with an estimate (NaN with fewer than two)."""
        values = self._estimates()
        return float(max(values) - min(values)) if len(values) > 1 else float("nan")

    def ratio(self) -> float:
        """min_r alpha_r / max_r alpha_r (NaN with fewer than two estimates or a maximum <= 0)."""
        values = self._estimates()
        return float(min(values) / max(values)) if len(values) > 1 and max(values) > 0 else float("nan")

    def frame(self) -> pd.DataFrame:
        """One row for all participants and one per rater group: alpha, CI, participants, observations, note."""
        rows = [(ALL, self.overall), *self.by_group.items()]
        return pd.DataFrame(
            [
                {
                    "calibration": self.calibration,
                    "rater_group": name,
                    "alpha": g.alpha,
                    "ci_low": g.confidence_interval[0],
                    "ci_high": g.confidence_interval[1],
                    "n_participants": g.n_participants,
                    "n_observations": g.n_observations,
                    "estimand": g.estimand,
                    "ci_participants_low": g.ci_participants[0],
                    "ci_participants_high": g.ci_participants[1],
                    "ci_stimuli_low": g.ci_stimuli[0],
                    "ci_stimuli_high": g.ci_stimuli[1],
                    "note": g.note,
                }
                for name, g in rows
            ]
        )


def _grouped(
    frame: pd.DataFrame,
    participant: str,
    group_columns: str | Sequence[str],
    required: Sequence[str],
    min_groups: int = 2,
) -> tuple[pd.DataFrame, pd.Series, int]:
    """Rows with every required value (of every participant); the group of each participant with one (at
    least ``min_groups`` groups); how many had none."""
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"the table lacks the column(s) {', '.join(map(repr, missing))}")
    frame = frame.dropna(subset=list(required))
    groups = group_of_raters(frame, participant, group_columns)
    without = int(groups.isna().sum())
    groups = groups.dropna()
    if groups.nunique() < min_groups:
        compared = "rater groups are compared: need participants from at least two rater groups"
        raise ValueError(compared if min_groups == 2 else "no participant has a rater group")
    return frame, groups, without


def _percentile(distribution: np.ndarray, level: float) -> tuple[float, float]:
    ok = distribution[np.isfinite(distribution)]
    if ok.size == 0:
        return NAN_CI
    tail = (1 - level) / 2
    lo, hi = np.quantile(ok, [tail, 1 - tail])
    return float(lo), float(hi)


def _assemble(
    calibration: str,
    overall: GroupAlpha,
    by_group: dict[str, GroupAlpha],
    values_of,
    groups: pd.Series,
    *,
    n_permutations: int,
    n_resamples: int,
    seed: int,
    level: float,
    n_without_group: int,
) -> AlphaByRaterGroup:
    """The contrast of two groups and the permutation test over the groups with an estimate.
    ``values_of(participants, assignments, n_groups)`` gives the alpha of every group under every row of
    ``assignments`` (codes of ``participants``' groups)."""
    estimable = sorted(g for g, a in by_group.items() if np.isfinite(a.alpha))
    contrast = None
    if len(estimable) == 2:
        first, second = (by_group[g] for g in estimable)
        diff = second.distribution - first.distribution
        contrast = GroupContrast((estimable[0], estimable[1]), second.alpha - first.alpha, _percentile(diff, level))
    kept = groups[groups.isin(estimable)]
    name = f"alpha ({calibration})"
    if len(estimable) < 2:
        test = RaterGroupTest(name, float("nan"), float("nan"), n_permutations, {g: float("nan") for g in by_group})
    else:
        codes = pd.Index(estimable).get_indexer(kept.to_numpy())

        def sized(idx: np.ndarray, assignments: np.ndarray, n_groups: int) -> dict:
            alphas = values_of(kept.index[idx], assignments, n_groups)
            return {name: (alphas, membership(assignments, n_groups).sum(axis=-1))}  # w_r: participants

        test = compare_groups(codes, estimable, sized, n_permutations=n_permutations, seed=seed)[name]
    return AlphaByRaterGroup(calibration, overall, by_group, contrast, test, n_without_group, n_resamples, seed)


def _eq5_alpha(xx: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """alpha = a2 / (a1 + a2) from summed normal equations (... x 9 and ... x 3); NaN where X'X is
    singular or a1 + a2 = 0."""
    a = xx.reshape(*xx.shape[:-1], 3, 3).copy()
    singular = np.linalg.cond(a) > 1e12
    a[singular] = np.eye(3)
    beta = np.linalg.solve(a, xy[..., None])[..., 0]
    total = beta[..., 1] + beta[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = beta[..., 2] / total
    return np.where(singular | np.isclose(total, 0, atol=1e-12), np.nan, alpha)


def alpha_by_rater_group(
    pairs: pd.DataFrame,
    group_columns: str | Sequence[str],
    *,
    participant: str = "participant_id",
    n_resamples: int = 2000,
    n_permutations: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    min_participants: int = 3,
    generalise: str | None = None,
) -> AlphaByRaterGroup:
    """Likert alpha per rater group (see module doc) from one condition's pairs export with the group
    column(s) merged in (``participant_id``, ``d_aggr``, ``d_traj``, ``d_overall``; optionally ``stimulus``);
    one rater group (a study analysed split by no question) gives its alpha and NaN tests.
    Group i (sorted) is bootstrapped with seed ``seed + 1 + i``, all participants with ``seed`` (the two-way
    bootstrap with those seeds + 7919)."""
    if check_generalise(generalise) == "stimuli" and "stimulus" not in pairs:
        raise ValueError("generalising over stimuli needs a 'stimulus' column identifying the rated pairs")
    if "condition" in pairs and pairs["condition"].nunique() > 1:
        raise ValueError("alpha is estimated per condition: pass the pairs of one condition")
    frame = pairs.rename(columns={participant: "participant_id"}) if participant != "participant_id" else pairs
    frame, groups, without = _grouped(frame, "participant_id", group_columns, LIKERT_COLUMNS, min_groups=1)
    codes, participants = pd.factorize(frame["participant_id"])
    x, y = design(frame, ["d_aggr", "d_traj"]), frame["d_overall"].to_numpy(float)
    xx = np.zeros((len(participants), 9))
    np.add.at(xx, codes, np.einsum("ni,nj->nij", x, x).reshape(-1, 9))
    xy = np.zeros((len(participants), 3))
    np.add.at(xy, codes, x * y[:, None])
    moments = pd.DataFrame(np.hstack([xx, xy]), index=participants)

    def estimate(part: pd.DataFrame, boot_seed: int) -> GroupAlpha:
        n_p = part["participant_id"].nunique()
        if n_p < min_participants:
            note = f"not estimated: {n_p} participant(s), fewer than {min_participants}"
            return GroupAlpha(float("nan"), NAN_CI, n_p, len(part), note)
        sums = moments.loc[pd.unique(part["participant_id"])].to_numpy().sum(axis=0)
        alpha = float(_eq5_alpha(sums[:9], sums[9:]))
        if not np.isfinite(alpha):
            note = "not estimated: Eq. 5 is degenerate (singular design or a1 + a2 = 0)"
            return GroupAlpha(float("nan"), NAN_CI, n_p, len(part), note)
        ci, dist = bootstrap_alpha(part, n_resamples=n_resamples, seed=boot_seed, level=level)
        if "stimulus" not in part:
            return GroupAlpha(alpha, ci, n_p, len(part), "", dist, ci, NAN_CI, "for the rated stimuli")
        n_s = part["stimulus"].nunique()
        ci_s, dist_s = bootstrap_alpha(
            part, n_resamples=n_resamples, seed=boot_seed + 7919, level=level, generalise="stimuli"
        )
        if generalise == "stimuli":
            return GroupAlpha(alpha, ci_s, n_p, len(part), "", dist_s, ci, ci_s, ESTIMAND_POPULATION.format(n=n_s))
        return GroupAlpha(alpha, ci, n_p, len(part), "", dist, ci, ci_s, ESTIMAND_STIMULI.format(n=n_s))

    label = frame["participant_id"].map(groups)
    by_group = {g: estimate(frame[label == g], seed + 1 + i) for i, g in enumerate(sorted(groups.unique()))}

    def values_of(kept: pd.Index, assignments: np.ndarray, n_groups: int) -> np.ndarray:
        per = moments.loc[kept].to_numpy()
        sums = membership(assignments, n_groups) @ per
        return _eq5_alpha(sums[..., :9], sums[..., 9:])

    return _assemble(
        "likert",
        estimate(frame, seed),
        by_group,
        values_of,
        groups,
        n_permutations=n_permutations,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
        n_without_group=without,
    )


def disagreement_alpha_by_rater_group(
    effort,
    aggregate,
    risk,
    feedback: pd.DataFrame,
    group_columns: str | Sequence[str],
    *,
    subject_index: dict,
    grid_step: float = 0.01,
    n_resamples: int = 1000,
    n_permutations: int = 999,
    seed: int = 0,
    level: float = 0.95,
    min_participants: int = 3,
) -> AlphaByRaterGroup:
    """Disagreement alpha per rater group (see module doc); ``feedback`` is that of
    ``calibrate_from_disagreement`` (participant, subject, disagreement) with the group column(s).
    Group i (sorted) is bootstrapped with seed ``seed + 1 + i``, all participants with ``seed``."""
    feedback = feedback[feedback["subject"].isin(subject_index)] if "subject" in feedback else feedback
    feedback, groups, without = _grouped(feedback, "participant", group_columns, FEEDBACK_COLUMNS)
    arrays = (effort, aggregate, risk)
    judged = sorted(feedback["subject"].unique(), key=str)
    curves = violation_curves(*arrays, judged, subject_index=subject_index, grid_step=grid_step)  # once for all

    def estimate(part: pd.DataFrame, boot_seed: int) -> GroupAlpha:
        n_p = part["participant"].nunique()
        if n_p < min_participants:
            note = f"not estimated: {n_p} participant(s), fewer than {min_participants}"
            return GroupAlpha(float("nan"), NAN_CI, n_p, len(part), note)
        try:
            cal = calibrate_from_disagreement(
                *arrays,
                part,
                subject_index=subject_index,
                grid_step=grid_step,
                n_resamples=n_resamples,
                seed=boot_seed,
                level=level,
                curves=curves,
            )
        except ValueError as exc:
            return GroupAlpha(float("nan"), NAN_CI, n_p, len(part), f"not estimated: {exc}")
        estimand = f"for these {part['subject'].nunique()} subjects (participants resampled)"
        return GroupAlpha(cal.alpha, cal.ci, n_p, len(part), "", cal.distribution, cal.ci, NAN_CI, estimand)

    label = feedback["participant"].map(groups)
    by_group = {g: estimate(feedback[label == g], seed + 1 + i) for i, g in enumerate(sorted(groups.unique()))}

    def values_of(kept: pd.Index, assignments: np.ndarray, n_groups: int) -> np.ndarray:
        data = feedback_matrices(
            *arrays,
            feedback[feedback["participant"].isin(kept)],
            subject_index=subject_index,
            grid_step=grid_step,
            curves=curves,
        )
        order = data.participants.get_indexer(kept)
        weights = membership(assignments, n_groups)[..., np.argsort(order)]  # columns in data's participant order
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = ((weights @ data.disagree) / (weights @ data.answered)).reshape(-1, len(data.subjects))
        alphas = np.full(len(rates), np.nan)
        answered = ~np.isnan(rates)
        # a group's rates are defined on the subjects its raters answered: one rank computation per pattern
        patterns, which = np.unique(answered, axis=0, return_inverse=True)
        for k, pattern in enumerate(patterns):
            if pattern.sum() >= 3:
                rows = which.ravel() == k
                alphas[rows] = alpha_from_rates(data.violations[:, pattern], rates[rows][:, pattern], data.grid)
        return alphas.reshape(len(assignments), n_groups)

    return _assemble(
        "disagreement",
        estimate(feedback, seed),
        by_group,
        values_of,
        groups,
        n_permutations=n_permutations,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
        n_without_group=without,
    )
