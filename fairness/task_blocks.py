"""The analysis of a format 2 study, block by block, overall and per stakeholder (rater) group.

Rater groups are participants' answers to one questionnaire question or a combination (``by``:
``["role", "age_band"]`` gives groups such as "judge / 30-49", ``fairness.rater_groups.rater_group_labels``).
Every participant answers many items, so answers are not independent: every CI resamples raters (a
percentile cluster bootstrap, each rater's answers kept together) and every test of "no difference
between rater groups" permutes the group labels across raters (group sizes kept;
p = (1 + #{T*_b >= T}) / (1 + B), Phipson & Smyth 2010) with T = max_r T_r - min_r T_r and with the
size-weighted W, and every pair of groups with Holm's adjustment (``fairness.rater_groups.compare_groups``).
Rater groups below ``min_group_size`` participants and subject groups below ``min_subject_group`` subjects
are "too few to compare" (or pooled into "other"); numeric subject-group columns are binned
(:func:`subject_groups`). Per task type:

* ``agree``: disagreement s = 1 - agree; the disagreement rate DR and the disagreement-derived notions
  (CA, AE, EO, PE, OMR) per subject-group column of the pool, overall and per rater group
  (``fairness.rater_groups``, Telukunta & Nadendla's poster); when the pool names an ``outcome_column``
  (the true outcome), accuracy, FPR and FNR of the participants' predicted labels (the AI's label when
  they agree, the other when they disagree), of their majority per subject (ties: ``majority_tie``)
  and of the model, per subject group and rater group (``fairness.error_rates``, Dressel & Farid's
  Table 1).
* ``rate``: each rater group's mean rating per subject group (answers pooled, a ratio of sums); differential
  parity (``fairness.rater_group_parity.parity_by_rater_group``) of all raters and each rater group
  against the AI and of every pair of rater groups, per subject attribute (:func:`_rating_parity`); the
  raters' ICC (``analysis.agreement.rating_icc``, raters who rated every item).
* ``pair_comparable``: the share of "treat alike" answers per pair and per rater group, and the raters'
  agreement (Fleiss' kappa over the pairs with the most common number of answers).
* ``pair_distance`` with trajectory and aggregate measures: the Likert alpha = a2 / (a1 + a2) of Eq. 5
  per rater group and condition (``fairness.rater_groups.alpha_by_rater_group``).
* BTS (every block with a ``bts`` follow-up and a binary "positive" answer): Prelec's scores per question
  (block and item) over the participants who answered both the task and the prediction, averaged per
  participant (``analysis.bts``).

The inputs are the long ``answers`` and ``questionnaire`` tables of the format 2 export (columns as in
``research.export``); ``runs.design_analysis`` reads them from the export and names each block's analysis
from its task type (``BlockTask.analysis``).
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.inter_rater import fleiss_kappa

from analysis.agreement import rating_icc
from analysis.bts import Positive, block_answers, block_rows, honesty_scores
from analysis.families import adjust_tables
from analysis.group_size import small_group_warnings
from analysis.sample import SampleSelection
from fairness.disagreement import NOTIONS, disagreement_notions
from fairness.error_rates import TieRule, agree_predictions, error_rates, rating_predictions
from fairness.group_options import BIN_ABOVE, DEFAULT_QUANTILES, MIN_GROUP_SIZE, MIN_SUBJECT_GROUP
from fairness.human_metric import judgements_of, metric_by_rater_group, pool_frame
from fairness.rater_group_alpha import alpha_by_rater_group
from fairness.rater_group_parity import parity_by_rater_group
from fairness.rater_groups import (
    ALL,
    SEPARATOR,
    RaterGroupTest,
    apply_min_group_size,
    compare_groups,
    group_of_raters,
    membership,
    notion_rows,
    notions_by_rater_group,
    rater_group_difference_tests,
    ratio_ci,
)

IN_GROUP_MAX_LEVELS = 8  # subject-group columns with more values (age in years) get no in-group table
LIKERT_COLUMNS = {"trajectory": "d_traj", "aggregate": "d_aggr", "overall": "d_overall"}
NO_ANSWERS = "No answers: the analysed participants answered none of this block's questions."


@dataclass(frozen=True)
class BlockAnalysis:
    """One task block's tables (tidy DataFrames by name) and notes (what could not be computed, and why)."""

    block: str
    task: str
    tables: dict[str, pd.DataFrame]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DesignAnalysis:
    by: tuple[str, ...]
    rater_groups: pd.DataFrame  # rater_group, n_participants, status ("compared", "too few to compare", ...)
    blocks: list[BlockAnalysis]
    honesty: pd.DataFrame  # participant_id, rater_group, n_questions, information, prediction, total
    n_participants: int
    n_without_group: int
    seed: int
    n_resamples: int
    n_permutations: int
    warnings: tuple[str, ...] = ()  # rater groups too small to compare (``analysis.group_size``)
    n_too_few: int = 0  # participants in rater groups too small to compare (in the ALL rows only)
    options: dict = field(default_factory=dict)  # min_group_size, pool_small, min_subject_group, bins
    sample: SampleSelection | None = None  # who was analysed and who dropped, by reason (``runs.design_analysis``)
    # {"method": ..., "families": {family: [test ids]}} (``analysis.families``)
    multiple_testing: dict = field(default_factory=dict)

    @property
    def rater_group(self) -> str:
        """The ``by`` questions joined by " / ", or, split by none, the one rater group (:data:`ONE_GROUP`)."""
        return SEPARATOR.join(self.by) or f"no question (one rater group, {ONE_GROUP!r})"


# Rater groups -------------------------------------------------------------------------------------


ONE_GROUP = "all"  # the rater group of every participant when ``by`` names no question


def _rater_groups(questionnaire: pd.DataFrame, by: tuple[str, ...], answered: pd.Index) -> pd.Series:
    """participant_id (``answered``) -> rater group label (missing when the participant did not answer a
    ``by`` question); without ``by``, every participant is in the one group :data:`ONE_GROUP`, so a study
    without a questionnaire (a converted format 1 study) is analysed on the same path."""
    if not by:
        return pd.Series(ONE_GROUP, index=answered, dtype=object)
    frame = questionnaire.reindex(columns=["participant_id", *by])
    frame[list(by)] = frame[list(by)].replace("", np.nan)
    return group_of_raters(frame, "participant_id", list(by)).reindex(answered)


# Per rater group means, their CIs and the permutation test --------------------------------------


def rater_group_means(
    frame: pd.DataFrame,
    value: str,
    *,
    n_resamples: int,
    n_permutations: int,
    seed: int,
    level: float = 0.95,
) -> tuple[pd.DataFrame, RaterGroupTest]:
    """The mean of ``value`` over the answers of all raters and of each rater group (sum / count over
    the group's answers), its percentile CI resampling raters, and the permutation tests of
    T = max_r mean_r - min_r mean_r and of W (weights: the groups' answers). ``frame`` has
    participant_id, rater_group and ``value``; a rater whose rater_group is missing counts in the ALL row
    only (in no group row, not permuted in the test).

    Returns (table: rater_group, mean, ci_low, ci_high, n_raters, n_answers; the tests of
    ``fairness.rater_groups.compare_groups``: T, W weighted by the groups' answers, the pairs with Holm's
    adjustment; NaN with fewer than two rater groups)."""
    by_rater = frame.groupby("participant_id")  # three reductions: a fifth of named aggregation's time
    per_rater = pd.DataFrame(
        {
            "rater_group": by_rater["rater_group"].first(),
            "total": by_rater[value].sum(),
            "count": by_rater[value].size(),
        }
    )
    rng = np.random.default_rng(seed)
    rows = []
    parts = [(ALL, per_rater), *sorted(per_rater.groupby("rater_group"), key=lambda item: str(item[0]))]
    for name, part in parts:
        sums = part[["total", "count"]].to_numpy(float)
        ci = ratio_ci(sums, rng, n_resamples, level) if n_resamples and len(sums) > 1 else (np.nan, np.nan)
        rows.append(
            {
                "rater_group": name,
                "mean": sums[:, 0].sum() / sums[:, 1].sum(),
                "ci_low": float(ci[0]),
                "ci_high": float(ci[1]),
                "n_raters": len(sums),
                "n_answers": int(sums[:, 1].sum()),
            }
        )
    grouped = per_rater.dropna(subset=["rater_group"])
    levels, codes = np.unique(grouped["rater_group"].astype(str), return_inverse=True)
    if len(levels) < 2:
        return pd.DataFrame(rows), RaterGroupTest(value, np.nan, np.nan, n_permutations, {})
    totals, counts = grouped["total"].to_numpy(float), grouped["count"].to_numpy(float)

    def values_of(kept: np.ndarray, assignments: np.ndarray, n_groups: int) -> dict:
        weights = membership(assignments, n_groups)
        answers = weights @ counts[kept]
        with np.errstate(invalid="ignore", divide="ignore"):
            return {value: ((weights @ totals[kept]) / answers, answers)}

    test = compare_groups(codes, levels.tolist(), values_of, n_permutations=n_permutations, seed=seed)[value]
    return pd.DataFrame(rows), test


def in_group_gaps(
    frame: pd.DataFrame, subjects: pd.DataFrame, value: str, opts: "Options", tests: "Tests"
) -> pd.DataFrame:
    """Rater group x subject group interaction (in-group bias), tested at the rater level.

    For each subject-group column with at most ``IN_GROUP_MAX_LEVELS`` groups and each of its groups g (of
    two groups only the first, the other being its mirror image): every rater's own gap G_i = mean of
    ``value`` over the rater's answers on subjects in g - mean over the rest (raters who answered both;
    subject and rater main effects cancel); per rater group the mean gap with the t interval over its raters
    (mean -/+ t_{n-1} s / sqrt(n): a rater's gap is one independent number; the percentile bootstrap covered
    91% with 20 raters per group), and the permutation test across raters of T = max_r mean gap_r -
    min_r mean gap_r (:func:`rater_group_means` on one row per rater). T is the interaction contrast
    (mean_A,g - mean_A,rest) - (mean_B,g - mean_B,rest) of two rater groups; when the rater groups are the
    subject groups (a rater race and a defendant race) a gap that differs by the rater's own group is
    in-group bias (Biswas et al., COMPASS 2020). The two-stage (summary statistics) test treats raters as
    the units: its level holds however a rater's answers are correlated.

    ``frame``: participant_id, rater_group, subject and ``value``. Returns the table (measure,
    subject_attribute, subject_group, rater_group, gap, ci_low, ci_high, n_raters); each test goes to
    ``tests`` (the block's ``tests`` and ``pairwise`` tables, as ``in-group: <value>``)."""
    means = dict(n_permutations=opts.n_permutations, seed=opts.seed)
    tables = []
    for attribute, usable, values in _in_group_attributes(frame, subjects):
        for group in values[:1] if len(values) == 2 else values:
            inside = (usable[attribute] == group).rename("inside")
            per_rater = usable.groupby(["participant_id", inside])[value].mean().unstack()  # a fifth of pivot_table's
            if not {True, False} <= set(per_rater.columns):
                continue
            gaps = (per_rater[True] - per_rater[False]).dropna().rename("gap").reset_index()
            gaps["rater_group"] = gaps["participant_id"].map(usable.groupby("participant_id")["rater_group"].first())
            if len(gaps) < 2:
                continue
            table, test = rater_group_means(gaps, "gap", **{**means, "n_resamples": 0})
            table = table.rename(columns={"mean": "gap"}).drop(columns="n_answers")
            intervals = [
                _t_interval(gaps["gap"] if name == ALL else gaps.loc[gaps["rater_group"] == name, "gap"])
                for name in table["rater_group"]
            ]
            table[["ci_low", "ci_high"]] = np.array(intervals, dtype=float).reshape(-1, 2)
            tables.append(table.assign(measure=value, subject_attribute=_name(attribute), subject_group=group))
            tests.add(f"in-group: {value}", test, _name(attribute), group)
    columns = ["measure", "subject_attribute", "subject_group", "rater_group", "gap", "ci_low", "ci_high", "n_raters"]
    return pd.concat(tables, ignore_index=True)[columns] if tables else pd.DataFrame(columns=columns)


def _in_group_attributes(frame: pd.DataFrame, subjects: pd.DataFrame):
    """(attribute, the answers with a value of it, its sorted values) for each subject-group column with 2 to
    ``IN_GROUP_MAX_LEVELS`` values among the answered subjects (age in years: one test per year would be noise)."""
    frame = frame.merge(subjects, on="subject", how="left")
    for attribute in _attributes(subjects):
        usable = frame.dropna(subset=[attribute])
        values = sorted(usable[attribute].unique())
        if 2 <= len(values) <= IN_GROUP_MAX_LEVELS:
            yield attribute, usable, values


def in_group_rates(frame: pd.DataFrame, subjects: pd.DataFrame, value: str) -> pd.DataFrame:
    """The cells of :func:`in_group_gaps`' interaction (its figure): for each subject-group column it uses and
    each of its groups g, every rater's own mean of ``value`` on the subjects in g, averaged over all raters
    (``ALL``) and over the raters of each rater group, with two intervals for two estimands:

    * ``ci_low``/``ci_high``, the t interval over the raters (mean -/+ t_{n-1} s / sqrt(n); each rater weighs
      once): the mean over the rater population **on these subjects**;
    * ``ci_blocks_low``/``ci_blocks_high``, the t interval over stimulus blocks (a block: the raters who answered
      the same set of subjects, as in Dressel & Farid's 20 blocks of 50 defendants): the block means m_b of
      the raters' means, mean_b m_b -/+ t_{B-1} s_b / sqrt(B), the mean **on subjects like these** (another
      draw of blocks from the same population); NaN with fewer than two blocks or no block answered by two
      raters (then blocks are not a design's unit).

    ``frame``: participant_id, rater_group, subject and ``value``. Returns measure, subject_attribute,
    subject_group, rater_group, mean, ci_low, ci_high, n_raters, ci_blocks_low, ci_blocks_high, n_blocks."""
    signature = frame.groupby("participant_id")["subject"].agg(lambda s: "~".join(sorted(map(str, set(s)))))
    rows = []
    for attribute, usable, _ in _in_group_attributes(frame, subjects):
        per_rater = usable.groupby(["participant_id", attribute])[value].mean().rename("mean").reset_index()
        first = usable.groupby("participant_id")["rater_group"].first()
        per_rater["rater_group"] = per_rater["participant_id"].map(first)
        per_rater["block"] = per_rater["participant_id"].map(signature)
        for group, cell in per_rater.groupby(attribute, sort=True):
            parts = [(ALL, cell), *cell.dropna(subset=["rater_group"]).groupby("rater_group", sort=True)]
            for rater_group, part in parts:
                low, high = _t_interval(part["mean"])
                blocks = part.groupby("block")["mean"]
                shared = len(blocks) >= 2 and blocks.size().max() >= 2
                block_low, block_high = _t_interval(blocks.mean()) if shared else (float("nan"),) * 2
                rows.append(
                    {
                        "measure": value,
                        "subject_attribute": _name(attribute),
                        "subject_group": group,
                        "rater_group": rater_group,
                        "mean": float(part["mean"].mean()),
                        "ci_low": low,
                        "ci_high": high,
                        "n_raters": len(part),
                        "ci_blocks_low": block_low,
                        "ci_blocks_high": block_high,
                        "n_blocks": len(blocks),
                    }
                )
    columns = [
        "measure",
        "subject_attribute",
        "subject_group",
        "rater_group",
        "mean",
        "ci_low",
        "ci_high",
        "n_raters",
        "ci_blocks_low",
        "ci_blocks_high",
        "n_blocks",
    ]
    return pd.DataFrame(rows, columns=columns)


def _t_interval(values: pd.Series, level: float = 0.95) -> tuple[float, float]:
    """The one-sample t interval of a mean (scipy); NaN with fewer than two values."""
    if len(values) < 2:
        return float("nan"), float("nan")
    interval = stats.ttest_1samp(values.to_numpy(float), 0.0).confidence_interval(level)
    return float(interval.low), float(interval.high)


# The study's content ----------------------------------------------------------------------------


def _pool_subjects(spec: dict, pool_key: str, model: str | None) -> pd.DataFrame:
    """One row per subject of the pool: subject, its group columns (as text), the model's label and score."""
    pool = next(p for p in spec["pools"] if p["key"] == pool_key)
    outcome = pool.get("outcome_column")
    rows = []
    for subject in pool.get("subjects", []):
        output = subject.get("models", {}).get(model, {}) if model else {}
        known = {**subject.get("features", {}), **subject.get("groups", {})}
        rows.append(
            {
                "subject": str(subject["id"]),
                **{f"group:{k}": v for k, v in subject.get("groups", {}).items()},
                "model_label": output.get("label", np.nan),
                "model_score": output.get("score", np.nan),
                **({"outcome": subject.get("outcome", known.get(outcome, np.nan))} if outcome else {}),
            }
        )
    return pd.DataFrame(rows)


def _numeric(values: pd.Series) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values.dropna())


def _cut(values: pd.Series, cuts: Iterable[float]) -> tuple[pd.Series, list[dict]]:
    """Numbers binned at the cut points: "< c1", "c1 to < c2", ..., ">= ck"; and one row per bin (lower,
    upper: the bin is lower <= x < upper)."""
    edges = [-np.inf, *sorted(set(float(c) for c in cuts)), np.inf]
    bins = []
    for lower, upper in zip(edges, edges[1:], strict=False):
        if lower == -np.inf:
            label = f"< {upper:g}"
        else:
            label = f">= {lower:g}" if upper == np.inf else f"{lower:g} to < {upper:g}"
        bins.append({"subject_group": label, "lower": lower, "upper": upper})
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(float)
    index = np.searchsorted(edges[1:-1], numbers, side="right")
    labels = pd.Series([bins[i]["subject_group"] for i in index], index=values.index, dtype=object)
    return labels.where(values.notna()), bins


def subject_groups(
    subjects: pd.DataFrame,
    *,
    bins: Mapping[str, Sequence[float]] | None = None,
    min_size: int = MIN_SUBJECT_GROUP,
    pool_small: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pool's ``group:<name>`` columns as group labels, and the table of the groups used.

    A numeric column (every value a number) with more than ``BIN_ABOVE`` distinct values, or one named
    in ``bins``, is binned at cut points: ``bins[name]`` when given, else the pool's quartiles
    (``DEFAULT_QUANTILES``), so that a numeric column is not one group per value. Then every subject group
    with fewer than ``min_size`` subjects is "too few to compare" (its subjects count in no comparison of
    that column) or, with ``pool_small``, pooled into "other" (``fairness.rater_groups.apply_min_group_size``).
    Table: subject_attribute, subject_group, lower, upper (the bin, lower <= x < upper; NaN: an open end,
    or not binned), n_subjects, status."""
    bins = dict(bins or {})  # columns this pool lacks are ignored (analyze_design checks the names)
    subjects, tables = subjects.copy(), []
    for attribute in _attributes(subjects):
        values, name = subjects[attribute], _name(attribute)
        if name in bins and not _numeric(values):
            raise ValueError(f"bins: the subject-group column {name!r} is not numeric")
        edges = pd.DataFrame(columns=["subject_group", "lower", "upper"])
        if name in bins or (_numeric(values) and values.nunique() > BIN_ABOVE):
            cuts = bins.get(name) or np.unique(np.quantile(values.dropna().astype(float), DEFAULT_QUANTILES))
            labels, rows = _cut(values, cuts)
            edges = pd.DataFrame(rows)
        else:
            labels = values.map(lambda v: v if pd.isna(v) else str(v))
        kept, table = apply_min_group_size(labels.set_axis(subjects["subject"]), min_size, pool_small=pool_small)
        subjects[attribute] = kept.to_numpy()
        table = table.rename(columns={"rater_group": "subject_group", "n_participants": "n_subjects"})
        table = table.merge(edges, on="subject_group", how="left").assign(subject_attribute=name)
        table = table.sort_values(["lower", "subject_group"], na_position="last")  # bins in order
        tables.append(table.replace([-np.inf, np.inf], np.nan))  # an open end: no edge
    columns = ["subject_attribute", "subject_group", "lower", "upper", "n_subjects", "status"]
    return subjects, (pd.concat(tables, ignore_index=True)[columns] if tables else pd.DataFrame(columns=columns))


def two_largest(labels: pd.Series) -> list[str]:
    """The two subject groups with the most subjects (ties: the first in sorted order)."""
    counts = labels.dropna().value_counts()
    return sorted(counts.index, key=lambda g: (-counts[g], str(g)))[:2]


def _attributes(subjects: pd.DataFrame) -> list[str]:
    """The pool's subject-group columns (``group:<name>``)."""
    return sorted(c for c in subjects.columns if c.startswith("group:"))


def adjust_families(blocks: list[BlockAnalysis], method: str) -> tuple[list[BlockAnalysis], dict[str, list[str]]]:
    """Each block's p-values adjusted within their families (``analysis.families.adjust_tables``; the
    ``pairwise`` table one family per statistic and subject group), and the families by name."""
    out: list[BlockAnalysis] = []
    families: dict[str, list[str]] = {}
    split = {"pairwise": ("condition", "measure", "subject_attribute", "subject_group")}
    for block in blocks:
        tables, found = adjust_tables(block.tables, prefix=block.block, method=method, split=split)
        out.append(replace(block, tables=tables))
        families |= found
    return out, families


def _name(attribute: str) -> str:
    return attribute.removeprefix("group:")


# Task blocks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    n_resamples: int
    n_permutations: int
    seed: int
    majority_tie: TieRule = "negative"
    generalise: str | None = None  # "stimuli": alpha's CI resamples stimuli (subjects) too
    min_group_size: int = MIN_GROUP_SIZE  # raters per compared rater group
    pool_small: bool = False  # pool smaller rater and subject groups into "other"
    min_subject_group: int = MIN_SUBJECT_GROUP
    bins: Mapping[str, Sequence[float]] = field(default_factory=dict)  # subject-group column -> cut points


class Tests:
    """A block's rater-group tests (the ``tests`` table: T and W per statistic) and their pairs of groups
    (the ``pairwise`` table, Holm-adjusted within each statistic)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.pairs: list[dict] = []

    def add(self, measure: str, test: RaterGroupTest, subject_attribute: str = "", subject_group: str = "", **more):
        where = {"measure": measure, "subject_attribute": subject_attribute, "subject_group": subject_group, **more}
        self.rows.append(where | test.row())
        self.pairs += [where | row for row in test.pairwise_rows()]

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"tests": pd.DataFrame(self.rows)} | ({"pairwise": pd.DataFrame(self.pairs)} if self.pairs else {})


def _agree(
    block: dict, frame: pd.DataFrame, subjects: pd.DataFrame, groups: pd.DataFrame, opts: Options
) -> BlockAnalysis:
    """DR and the disagreement notions over all answers and per rater group, per subject-group column
    (participants without a rater group count in the ALL rows only)."""
    frame = frame.merge(subjects, on="subject", how="left")
    frame["disagreement"] = 1 - frame["value"].astype(int)
    means = dict(n_resamples=opts.n_resamples, n_permutations=opts.n_permutations, seed=opts.seed)
    rates, test = rater_group_means(frame, "disagreement", **means)
    tests, notion_tables, difference_tables, notes = Tests(), [], [], []
    tests.add("DR", test)
    for attribute in _attributes(subjects):
        usable = frame.dropna(subset=[attribute, "model_label"])
        if usable[attribute].nunique() < 2 or usable["model_label"].nunique() < 2:
            notes.append(f"No notions by {_name(attribute)}: the answered subjects need two groups and both labels.")
            continue
        columns = dict(rater="participant_id", subject_group=attribute, model_label="model_label")
        pair = two_largest(subjects[attribute])
        # The max - min over all compared subject groups and the two largest groups alone, each with its CIs
        # and its rater-group permutation tests (the pair's tests name it in subject_group).
        for scope, part in (("all", usable), (" vs ".join(pair), usable[usable[attribute].isin(pair)])):
            table, differences = _notion_table(part, attribute, columns, opts)
            where = dict(subject_attribute=_name(attribute), subject_groups=scope)
            notion_tables.append(table.assign(**where))
            difference_tables.append(differences.assign(**where))
            grouped = part.dropna(subset=["rater_group"])
            if grouped["rater_group"].nunique() > 1:
                results = rater_group_difference_tests(
                    grouped,
                    rater_group="rater_group",
                    **columns,
                    statistics=NOTIONS,
                    n_permutations=opts.n_permutations,
                    seed=opts.seed,
                )
                for statistic, result in results.items():
                    tests.add(statistic, result, _name(attribute), "" if scope == "all" else scope)
    keys = ["participant_id", "rater_group", "subject"]
    measures = {"disagreement": frame[[*keys, "disagreement"]]}
    if frame["model_label"].notna().all():
        measures["predicted"] = frame[keys].assign(predicted=agree_predictions(frame["value"], frame["model_label"]))
    in_group = pd.concat([in_group_gaps(m, subjects, name, opts, tests) for name, m in measures.items()])
    cells = pd.concat([in_group_rates(m, subjects, name) for name, m in measures.items()])
    tables = {"disagreement_rate": rates, **tests.tables(), "subject_groups": groups}
    if len(in_group):
        tables["in_group"] = in_group.reset_index(drop=True)
        tables["in_group_rates"] = cells.reset_index(drop=True)
    if notion_tables:
        tables["notions"] = pd.concat(notion_tables, ignore_index=True)
        tables["notion_differences"] = pd.concat(difference_tables, ignore_index=True)
    if "outcome" in subjects.columns:
        tables["agree_error_rates"] = _agree_error_rates(block, frame, subjects, opts)
    return BlockAnalysis(block["key"], "agree", tables, notes)


def _notion_table(usable: pd.DataFrame, attribute: str, columns: dict, opts: Options):
    """The notions over the subject groups of ``usable`` (answers), all raters and per rater group, with
    each all-raters gap's interval (raters resampled) and permutation test of "no gap" (the subjects'
    groups shuffled); and the signed differences between subject groups (``disagreement_notions``)."""
    overall = disagreement_notions(
        usable[attribute],
        usable["model_label"],
        usable["disagreement"],
        labels=sorted(pd.unique(usable["model_label"]).tolist()),
        subjects=usable["participant_id"],
        n_resamples=opts.n_resamples,
        seed=opts.seed,
        items=usable["subject"],
        n_permutations=opts.n_permutations,
    )
    grouped = usable.dropna(subset=["rater_group"])
    by_group = pd.DataFrame()
    if grouped["rater_group"].nunique() > 1:
        result = notions_by_rater_group(
            grouped, rater_group="rater_group", **columns, n_resamples=opts.n_resamples, seed=opts.seed
        )
        by_group = result.frame().query("statistic != 'DR'")
    rows = notion_rows(ALL, overall, usable["participant_id"].nunique(), len(usable))
    return pd.concat([pd.DataFrame(rows), by_group], ignore_index=True), overall.differences


def _agree_error_rates(block: dict, frame: pd.DataFrame, subjects: pd.DataFrame, opts: Options) -> pd.DataFrame:
    """Accuracy, FPR and FNR against the pool's outcome (``fairness.error_rates.error_rates``) of the
    participants, their majority and the block's model, per subject-group column and rater group."""
    frame = frame.dropna(subset=["model_label"])
    answers = frame.assign(predicted=agree_predictions(frame["value"], frame["model_label"]))
    return _error_rates(block, answers, subjects, opts)


def rating_threshold(scale: dict) -> float:
    """The rating from which a ``rate`` answer counts as high: ``positive_from`` on a Likert scale (default
    the upper half, labels // 2 + 1, as the block's BTS positive answer), the midpoint (min + max) / 2 on a
    number scale."""
    if scale["type"] == "likert":
        return float(scale.get("positive_from", len(scale["labels"]) // 2 + 1))
    return (scale["min"] + scale["max"]) / 2


def _rate_error_rates(block: dict, frame: pd.DataFrame, subjects: pd.DataFrame, opts: Options) -> pd.DataFrame:
    """Accuracy, FPR and FNR against the pool's outcome of the raters (a rating on the scale's unfavourable
    side of ``rating_threshold`` predicts the event), their majority and the block's model."""
    scale = block["scale"]
    predicted = rating_predictions(
        frame["value"], threshold=rating_threshold(scale), favourable=scale.get("favourable", "lower")
    )
    return _error_rates(block, frame.assign(predicted=predicted), subjects, opts)


def _error_rates(block: dict, answers: pd.DataFrame, subjects: pd.DataFrame, opts: Options) -> pd.DataFrame:
    table = error_rates(
        answers[["participant_id", "subject", "predicted", "rater_group"]],
        subjects,
        attributes=_attributes(subjects),
        model=block.get("model") or "model",
        tie=opts.majority_tie,
        n_resamples=opts.n_resamples,
        seed=opts.seed,
    )
    return table.assign(subject_attribute=table["subject_attribute"].map(_name))


def _means_by_subject_group(
    frame: pd.DataFrame, subjects: pd.DataFrame, value: str, opts: Options
) -> tuple[pd.DataFrame, Tests]:
    """rater_group_means over all answers and within each value of each subject-group column."""
    means = dict(n_resamples=opts.n_resamples, n_permutations=opts.n_permutations, seed=opts.seed)
    table, test = rater_group_means(frame, value, **means)
    tables, tests = [table.assign(subject_attribute="", subject_group="")], Tests()
    tests.add(value, test)
    frame = frame.merge(subjects, on="subject", how="left")
    for attribute in _attributes(subjects):
        for group, part in frame.dropna(subset=[attribute]).groupby(attribute):
            table, test = rater_group_means(part, value, **means)
            tables.append(table.assign(subject_attribute=_name(attribute), subject_group=group))
            tests.add(value, test, _name(attribute), group)
    return pd.concat(tables, ignore_index=True), tests


def _unit_scale(block: dict, ratings: pd.Series) -> pd.Series:
    """Ratings moved onto [0, 1]: (rating - lowest) / (highest - lowest) of the block's scale (Likert: 1 .. P)."""
    scale = block["scale"]
    low, high = (1, len(scale["labels"])) if scale["type"] == "likert" else (scale["min"], scale["max"])
    return (ratings - low) / (high - low)


def _rating_parity(
    block: dict, frame: pd.DataFrame, subjects: pd.DataFrame, opts: Options
) -> tuple[pd.DataFrame, list[str]]:
    """Differential parity of the raters' ratings, per subject attribute and group (one against the rest;
    of two groups only the first in sorted order, the other being its mirror image): all raters and each
    rater group against the AI, every pair of rater groups against each other.

    Choice (the Differential Parity paper compares decisions on one scale): ratings are moved onto [0, 1]
    (:func:`_unit_scale`) and compared with the block model's score in [0, 1], or its 0/1 label when the
    pool has no scores; without a model only the rater groups are compared. ``scale.favourable`` ("lower",
    the default for risk ratings, or "higher") words the verdicts."""
    frame = frame.merge(subjects, on="subject", how="left")
    frame["rating01"] = _unit_scale(block, frame["value"])
    ai: str | None = "model_score" if frame["model_score"].notna().all() else "model_label"
    ai = ai if frame[ai].notna().all() else None
    favourable = block["scale"].get("favourable", "lower")
    tables, notes = [], []
    for attribute in _attributes(subjects):
        usable = frame.dropna(subset=[attribute])
        values = sorted(usable[attribute].unique())
        if len(values) < 2:
            continue
        name = _name(attribute) if _name(attribute) not in usable.columns else attribute
        usable = usable.rename(columns={attribute: name})
        for value in values[:1] if len(values) == 2 else values:
            try:
                result = parity_by_rater_group(
                    usable,
                    "rater_group",
                    rater="participant_id",
                    sensitive=name,
                    value="rating01",
                    ai=ai,
                    sensitive_value=value,
                    favourable=favourable,
                    outcome="ratings",
                    n_resamples=opts.n_resamples,
                    n_permutations=opts.n_permutations,
                    seed=opts.seed,
                )
            except ValueError as exc:
                notes.append(f"No differential parity for {_name(attribute)} = {value}: {exc}.")
                continue
            verdicts = result.frame().assign(subject_attribute=_name(attribute), subject_group=value)
            tables.append(verdicts)
    if ai is None:
        notes.append("Differential parity compares the rater groups only: the block names no model with scores.")
    return (pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()), notes


def _rate(
    block: dict, frame: pd.DataFrame, subjects: pd.DataFrame, groups: pd.DataFrame, opts: Options
) -> BlockAnalysis:
    """Mean ratings per rater group and subject group, differential parity (:func:`_rating_parity`), the
    raters' ICC."""
    rated = frame.rename(columns={"value": "rating"})
    means, tests = _means_by_subject_group(rated, subjects, "rating", opts)
    in_group = in_group_gaps(rated, subjects, "rating", opts, tests)
    tables = {"ratings": means, **tests.tables(), "subject_groups": groups}
    if len(in_group):
        tables["in_group"] = in_group
        tables["in_group_rates"] = in_group_rates(rated, subjects, "rating")
    parity, notes = _rating_parity(block, frame, subjects, opts)
    if len(parity):
        tables["parity"] = parity
    if "outcome" in subjects.columns:
        tables["rate_error_rates"] = _rate_error_rates(block, frame, subjects, opts)
    icc = rating_icc(frame, target="subject", rater="participant_id", rating="value")
    if len(icc):
        tables["icc"] = icc
    else:
        notes.append("No ICC: it needs at least two raters who rated every item of the block and three items.")
    return BlockAnalysis(block["key"], "rate", tables, notes)


def _fleiss(frame: pd.DataFrame) -> dict:
    """Fleiss' kappa of yes/no answers over the items with the most common number of answers."""
    counts = frame.groupby("subject")["value"].agg(["sum", "size"])
    if counts.empty:
        return {"kappa": np.nan, "n_items": 0, "raters_per_item": 0}
    size = int(counts["size"].mode().max())
    kept = counts[counts["size"] == size]
    if size < 2 or len(kept) < 2:
        return {"kappa": np.nan, "n_items": len(kept), "raters_per_item": size}
    table = np.column_stack([kept["sum"], size - kept["sum"]])
    return {"kappa": float(fleiss_kappa(table, method="fleiss")), "n_items": len(kept), "raters_per_item": size}


def _pair_comparable(block: dict, frame: pd.DataFrame, opts: Options, pool: dict) -> BlockAnalysis:
    """The share of "treat alike" answers per rater group (all pairs) and per pair, Fleiss' kappa, and the
    learned fair metric over the pool's features (``fairness.human_metric``, EXPLORE's link)."""
    frame = frame.rename(columns={"value": "comparable"})
    shares, test = rater_group_means(
        frame, "comparable", n_resamples=opts.n_resamples, n_permutations=opts.n_permutations, seed=opts.seed
    )
    per_pair = pd.concat(
        [
            frame.groupby("subject")["comparable"].agg(["mean", "size"]).assign(rater_group=ALL),
            frame.groupby(["subject", "rater_group"])["comparable"].agg(["mean", "size"]).reset_index("rater_group"),
        ]
    ).reset_index()
    per_pair = per_pair.rename(columns={"subject": "pair", "mean": "share", "size": "n_answers"})
    agreement = [{"rater_group": ALL, **_fleiss(frame.rename(columns={"comparable": "value"}))}]
    tests = Tests()
    tests.add("comparable", test)
    for group, part in sorted(frame.groupby("rater_group"), key=lambda item: str(item[0])):
        agreement.append({"rater_group": group, **_fleiss(part.rename(columns={"comparable": "value"}))})
    tables = {
        "shares": shares,
        **tests.tables(),
        "pairs": per_pair[["pair", "rater_group", "share", "n_answers"]],
        "agreement": pd.DataFrame(agreement),
    }
    judgements = judgements_of(frame.rename(columns={"comparable": "value"}), "comparable")
    subjects, features = pool_frame(pool)
    tables["comparable_metric"], notes = metric_by_rater_group(
        judgements, subjects, features, kind="comparable", n_resamples=opts.n_resamples, seed=opts.seed
    )
    return BlockAnalysis(block["key"], "pair_comparable", tables, notes)


def pair_distance_block(
    spec: dict, block: dict, answers: pd.DataFrame, groups: pd.Series, opts: Options
) -> BlockAnalysis:
    """A ``pair_distance`` block: the Likert alpha of Eq. 5 per rater group and condition (needs the
    trajectory and aggregate measures)."""
    part = answers[answers["block"] == block["key"]]
    if part.empty:
        return BlockAnalysis(block["key"], "pair_distance", {}, [NO_ANSWERS])
    wide = part.pivot_table(
        index=["participant_id", "condition", "subject"], columns="measure", values="value", aggfunc="first"
    )
    if not {"trajectory", "aggregate", "overall"} <= set(wide.columns):
        note = "No alpha: the block needs the trajectory, aggregate and overall measures."
        return BlockAnalysis(block["key"], "pair_distance", {}, [note])
    pairs = wide.rename(columns=LIKERT_COLUMNS)[list(LIKERT_COLUMNS.values())].reset_index()
    pairs["rater_group"] = pairs["participant_id"].map(groups)
    pairs["stimulus"] = pairs["subject"]  # one rated pair per pool item
    tables, tests, notes = [], Tests(), []
    for condition, frame in pairs.groupby("condition"):
        try:
            result = alpha_by_rater_group(
                frame,
                "rater_group",
                n_resamples=opts.n_resamples,
                n_permutations=opts.n_permutations,
                seed=opts.seed,
                generalise=opts.generalise,
            )
        except ValueError as exc:
            notes.append(f"Condition {condition}: no alpha per rater group ({exc}).")
            continue
        tables.append(result.frame().assign(condition=condition))
        tests.add("alpha", result.test, condition=condition)
    out = {}
    if tables:
        out = {"alpha": pd.concat(tables, ignore_index=True), **tests.tables()}
    return BlockAnalysis(block["key"], "pair_distance", out, notes)


# Bayesian Truth Serum -----------------------------------------------------------------------------


# The whole study ----------------------------------------------------------------------------------


def analyze_design(
    spec: dict,
    answers: pd.DataFrame,
    questionnaire: pd.DataFrame,
    *,
    by: Sequence[str],
    analyses: Mapping[str, Callable[..., "BlockAnalysis"] | str],
    where: Mapping[str, Mapping],
    positives: Mapping[str, Positive],
    seed: int = 1,
    n_resamples: int = 2000,
    n_permutations: int = 2000,
    majority_tie: TieRule = "negative",
    min_group_size: int = MIN_GROUP_SIZE,
    pool_small: bool = False,
    min_subject_group: int = MIN_SUBJECT_GROUP,
    bins: Mapping[str, Sequence[float]] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    generalise: str | None = None,
    multiple_testing: str = "holm",
) -> DesignAnalysis:
    """Every task block of a format 2 study analysed overall and per rater group (module doc).
    ``by``: questionnaire columns (validated by the caller); ``analyses``: block key -> its analysis,
    called as ``analysis(spec, block, answers, groups, opts)``, or the reason it has none (every task
    block has one or the other: none is skipped), given the block's rows of ``answers`` under its key;
    ``where``: block key -> where its rows are (``tasks.questions.answers_rows``: ``block``, and for a block
    converted from format 1, whose rows carry format 1's part, its ``conditions`` and ``subjects``);
    ``positives``: block key -> its BTS positive answer.
    Participants excluded by the attention checks (``excluded`` = 1) are left out. ``majority_tie``: the
    crowd majority's tie rule of the agree blocks' error rates (``fairness.error_rates``); ``generalise``:
    "stimuli" makes the pair_distance blocks' alpha CIs the two-way (raters x pairs) bootstrap's. Rater groups
    with fewer than ``min_group_size`` participants are too few to compare (in the ALL rows only) or, with
    ``pool_small``, pooled into "other" (``fairness.rater_groups.apply_min_group_size``); subject groups
    likewise with ``min_subject_group`` subjects, numeric subject-group columns binned (``bins``:
    column -> cut points; default quartiles; :func:`subject_groups`). Every p-value is adjusted within its
    family (``analysis.families``: each block table's p-value column, the pairs of rater groups per
    statistic) by ``multiple_testing`` (holm, bh or none), declared in the result's ``multiple_testing``."""
    by = tuple(by)
    answers = answers[answers["excluded"] != 1]
    questionnaire = questionnaire[questionnaire["participant_id"].isin(answers["participant_id"])]
    answered = pd.Index(answers["participant_id"].unique())
    groups = _rater_groups(questionnaire, by, answered)  # missing: no answer to a ``by`` question
    without = int(groups.isna().sum())
    if groups.notna().sum() == 0:
        raise ValueError(f"no analysable participant answered {' and '.join(by)}")
    groups, sizes = apply_min_group_size(groups, min_group_size, pool_small=pool_small)
    columns = {
        name for pool in spec["pools"] for subject in pool.get("subjects", []) for name in subject.get("groups", {})
    }
    unknown = sorted(set(bins or {}) - columns)
    if unknown:
        raise ValueError(
            f"bins name {', '.join(map(repr, unknown))}: not a subject-group column of any pool "
            f"(the pools' columns: {', '.join(sorted(columns)) or 'none'})"
        )
    opts = Options(
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        seed=seed,
        majority_tie=majority_tie,
        generalise=generalise,
        min_group_size=min_group_size,
        pool_small=pool_small,
        min_subject_group=min_subject_group,
        bins=dict(bins or {}),
    )
    settings = {name: getattr(opts, name) for name in ("min_group_size", "pool_small", "min_subject_group", "bins")}
    tasks = [b for b in spec["blocks"] if b["type"] == "task"]  # every block: its results or why none
    results = []
    for done, block in enumerate(tasks):
        if progress:
            progress("task blocks", done, len(tasks))
        analysis = analyses[block["key"]]
        if isinstance(analysis, str):
            results.append(BlockAnalysis(block["key"], block["task"], {}, [analysis]))
        else:
            rows = block_rows(answers, **where[block["key"]]).assign(block=block["key"])
            results.append(analysis(spec, block, rows, groups, opts))
    if progress:
        progress("task blocks", len(tasks), len(tasks))
    results, families = adjust_families(results, multiple_testing)
    honesty = honesty_scores(answers, positives)
    honesty.insert(1, "rater_group", honesty["participant_id"].map(groups))
    return DesignAnalysis(
        by=by,
        rater_groups=sizes.sort_values("rater_group", ignore_index=True),
        blocks=results,
        honesty=honesty,
        n_participants=len(answered),
        n_without_group=without,
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        multiple_testing={"method": multiple_testing, "families": families},
        warnings=tuple(  # split by no question, no group is compared: nothing to warn of
            f"Rater group {w}"
            for w in small_group_warnings(dict(zip(sizes["rater_group"], sizes["n_participants"], strict=True)))
            if by
        ),
        n_too_few=int(groups.isna().sum()) - without,
        options=settings,
    )


def _block_subjects(spec: dict, block: dict, opts: Options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The block pool's subjects with their groups and the table of those groups (:func:`subject_groups`)."""
    return subject_groups(
        _pool_subjects(spec, block["pool"], block.get("model")),
        bins=opts.bins,
        min_size=opts.min_subject_group,
        pool_small=opts.pool_small,
    )


def _rated(block: dict, answers: pd.DataFrame, groups: pd.Series, measure: str) -> pd.DataFrame | BlockAnalysis:
    """The block's answers of ``measure`` with each rater's group (missing: no answer to a ``by`` question,
    or a group too small to compare; such raters count in the "all participants" rows), or the note that
    the block has no answers."""
    frame = block_answers(answers, block["key"], measure)
    if frame.empty:
        return BlockAnalysis(block["key"], block["task"], {}, [NO_ANSWERS])
    return frame.assign(rater_group=frame["participant_id"].map(groups))


def agree_block(spec: dict, block: dict, answers: pd.DataFrame, groups: pd.Series, opts: Options) -> BlockAnalysis:
    """An ``agree`` block (module doc)."""
    frame = _rated(block, answers, groups, "agree")
    if isinstance(frame, BlockAnalysis):
        return frame
    return _agree(block, frame, *_block_subjects(spec, block, opts), opts)


def rate_block(spec: dict, block: dict, answers: pd.DataFrame, groups: pd.Series, opts: Options) -> BlockAnalysis:
    """A ``rate`` block (module doc)."""
    frame = _rated(block, answers, groups, "rating")
    if isinstance(frame, BlockAnalysis):
        return frame
    return _rate(block, frame, *_block_subjects(spec, block, opts), opts)


def pair_comparable_block(
    spec: dict, block: dict, answers: pd.DataFrame, groups: pd.Series, opts: Options
) -> BlockAnalysis:
    """A ``pair_comparable`` block (module doc)."""
    frame = _rated(block, answers, groups, "comparable")
    if isinstance(frame, BlockAnalysis):
        return frame
    return _pair_comparable(block, frame, opts, next(p for p in spec["pools"] if p["key"] == block["pool"]))
