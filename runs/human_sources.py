"""What people said in a study, for a model audit (``audit_models --metric-from / --utility-from /
--features-from SLUG[:BLOCK]``): the learned fair metric, the per-rater utilities or the feature-fairness shares
of a block whose task type yields them (``BlockTask.yields``; ``runs.human_source_options.OPTIONS`` says which
yield each option needs), fitted to the answers of the measure the type names for that yield.

``SLUG`` must be a study of the researcher (the one who starts the audit; from the command line, the owner of
the audited study); ``BLOCK`` (a task block's key) chooses when the study has several blocks of the kind.
Answers are the completed, non-pilot participants' who passed the attention checks; rater groups are the
source study's questionnaire answers to ``by`` (none: the "all raters" rows only)."""

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from analysis.bts import block_answers
from analysis.paired_comparison import ALL_RATERS, utility_model
from analysis.tradeoff import model_scores, tradeoff_weights
from fairness.feature_fairness import feature_fairness_shares
from fairness.human_audit import (
    HumanAudit,
    Surrogate,
    UtilityAgreement,
    lipschitz_table,
    unfair_feature_reliance,
    utility_agreement,
)
from fairness.human_metric import MAX_METRIC_RESAMPLES, HumanMetric, Kind, fit_metric, judgements_of, pool_frame
from fairness.model_audit import Subjects
from fairness.rater_groups import group_of_raters
from runs.audit_parameters import AuditParameters
from runs.human_source_options import OPTIONS, SourceOption, parameter_problems
from runs.study_exports import StudyExports
from studies.format2 import check_by
from studies.models import Study
from studies.selectors import can_view, owning_version
from tasks import block_task
from tasks.choose import choices_of, coded_like_pool, feature_matrix, pool_features
from tasks.tradeoff import TradeoffProblem, model_outcomes
from tasks.tradeoff import choices_of as tradeoff_choices
from tasks.yields import Yield

# the progress stages of human_audit_of, in order: the sources' answers, the metric's refits, the rest
ANSWERS, METRIC, OTHERS = "source answers", "human metric bootstrap", "utility and feature judgements"
STAGES = (ANSWERS, METRIC, OTHERS)
# the fit_metric judgements of a metric block's answers, by the measure its type yields the metric from
METRIC_KINDS: dict[str, Kind] = {"comparable": "comparable", "closer": "triplet"}
NO_OUTCOME = "the trade-off features need the audited subjects' true outcomes: give --outcome-column"
# what the audited subjects' missing columns are to a source, by the yield it reads (default: the pool's features)
MISSING_WHAT = {Yield.UTILITIES: "utility model's", Yield.FEATURE_SHARES: "judged", Yield.TRADEOFF_WEIGHTS: "group"}


class SourceError(ValueError):
    """A ``SLUG[:BLOCK]`` the audit cannot use; the message names the option and the reason, ``field`` the
    option's API and form field (``metric_from``, ``utility_from``, ``features_from``, ``by`` or ``lipschitz``)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Source:
    """A source block with its study, its answers (one measure, with each rater's group) and a description."""

    option: str
    study: Study
    block: dict
    answers: pd.DataFrame
    groups: pd.Series  # participant_id -> rater group (missing without ``by`` or an answer to it)

    @property
    def label(self) -> str:
        raters = self.answers["participant_id"].nunique()
        decision = f", decision {self.block['decision']!r}" if self.block.get("decision") else ""
        return f"{self.study.slug}:{self.block['key']} ({self.block['task']}, {raters} raters{decision})"

    @property
    def needs(self) -> Yield:
        """The yield its option reads (``runs.human_source_options.OPTIONS``)."""
        return OPTIONS[self.option].needs

    @property
    def measure(self) -> str:
        """The measure of the answers its block's type yields :attr:`needs` from (``BlockTask.yields``)."""
        return block_task(self.block).yields[self.needs]

    def error(self, message: str) -> SourceError:
        return SourceError(f"{OPTIONS[self.option].flag} {self.study.slug}:{self.block['key']}: {message}", self.option)

    def subject_columns(self) -> list[str]:
        """The audited subjects' columns the source reads: the pool features of a metric, the raw columns of
        a utility model's coded features, the judged features of feature-fairness answers."""
        if self.needs == Yield.UTILITIES:
            raw = pool_features(self.study.spec, self.block).columns
            _, coded, _ = feature_matrix(self.study.spec, self.block)
            return list(dict.fromkeys(name if name in raw else name.partition("=")[0] for name in coded))
        if self.needs == Yield.FEATURE_SHARES:
            return sorted(self.answers["subject"].astype(str).unique())
        if self.needs == Yield.TRADEOFF_WEIGHTS:
            return [self.block["group"]]
        return pool_frame(self.pool())[1]

    def pool(self) -> dict:
        """The block's pool in the study file."""
        return next(p for p in self.study.spec["pools"] if p["key"] == self.block["pool"])

    def missing_columns(self, columns: Collection[str]) -> None:
        """SourceError naming the :meth:`subject_columns` that ``columns`` (the audited subjects') lack."""
        missing = [c for c in self.subject_columns() if c not in columns]
        if missing:
            what = MISSING_WHAT.get(self.needs, "pool")
            raise self.error(
                f"the block's {what} features {', '.join(missing)} are not columns of the audited subjects (their "
                f"columns: {', '.join(map(str, columns))})"
            )


def _may_use(researcher, audited_slug: str, slug: str) -> bool:
    """A researcher's study (``studies.selectors.can_view``); without a researcher (the command line), a
    study with the audited study's owner."""
    if researcher is not None:
        return can_view(researcher, slug)
    source, audited = owning_version(slug), owning_version(audited_slug)
    return source is not None and audited is not None and source.owner_id == audited.owner_id


def _no_block(slug: str, key: str, task_blocks: list[dict], option: SourceOption) -> str:
    """Why study ``slug`` has no block for ``option``: no task block ``key``, or none whose type yields what the
    option needs (naming the study's task blocks and the types that would)."""
    if key:
        return f"no task block {key!r} in study {slug!r}"
    listed = ", ".join(f"{b['key']} ({b['task']})" for b in task_blocks) or "none"
    return (
        f"study {slug!r} has no block that yields {option.needs.meaning}; its task blocks: {listed}; "
        f"{option.flag} needs {option.reads}"
    )


def source_block(
    option: str,
    reference: str,
    *,
    researcher,
    audited_slug: str,
    by: Sequence[str] = (),
    quality_exclusion: str = "study",
    exports: StudyExports,
) -> Source:
    """The block ``reference`` (``SLUG[:BLOCK]``) names for ``option`` (a key of :data:`OPTIONS`: a block whose
    type yields what the option needs, ``tasks.block_task(block).yields``) and its answers of the measure the type
    yields it from (``quality_exclusion``: which quality flags exclude a rater, ``research.export.export_tables``;
    the job's snapshot ``exports``); SourceError for a study not the researcher's, no block that yields it or
    several, no answers."""
    wanted = OPTIONS[option]
    flag, needs = wanted.flag, wanted.needs
    slug, _, key = reference.partition(":")
    if not slug or not _may_use(researcher, audited_slug, slug):
        raise SourceError(f"{flag} {reference!r}: no study {slug!r} among the researcher's studies", option)
    study = Study.objects.filter(slug=slug).order_by("-version").first()
    assert study is not None  # _may_use found its owning version
    task_blocks = [b for b in study.spec.get("blocks", []) if b.get("type") == "task"]
    named = [b for b in task_blocks if not key or b["key"] == key]
    blocks = [b for b in named if needs in block_task(b).yields]
    if key and named and not blocks:
        raise SourceError(
            f"{flag} {reference!r}: block {key!r} of study {slug!r} is of type {named[0]['task']}, which does not "
            f"yield {needs.meaning}; {flag} needs {wanted.reads}",
            option,
        )
    if not blocks:
        raise SourceError(f"{flag} {reference!r}: {_no_block(slug, key, task_blocks, wanted)}", option)
    if len(blocks) > 1:
        keys = ", ".join(b["key"] for b in blocks)
        raise SourceError(
            f"{flag} {reference!r}: study {slug!r} has several such blocks ({keys}); name one: {slug}:BLOCK", option
        )
    block = blocks[0]
    tables = exports.tables(slug, completed=True, quality_exclusion=quality_exclusion)
    answers = tables.answers
    answers = answers[(answers["measure"] != "questionnaire") & (answers["excluded"] != 1)] if len(answers) else answers
    frame = block_answers(answers, block["key"], block_task(block).yields[needs]) if len(answers) else answers
    if frame.empty:
        raise SourceError(f"{flag} {slug}:{block['key']}: no completed participant's answers yet", option)
    groups = pd.Series(np.nan, index=pd.Index(frame["participant_id"].unique()), dtype=object)
    if by:
        try:
            columns = list(check_by(study.spec, by))
        except ValueError as exc:
            raise SourceError(f"--by: {exc} (study {slug!r}, read by {flag})", "by") from exc
        questionnaire = tables.questionnaire.reindex(columns=["participant_id", *columns])
        questionnaire[columns] = questionnaire[columns].replace("", np.nan)
        groups = group_of_raters(questionnaire, "participant_id", columns).reindex(groups.index)
    return Source(option, study, block, frame.assign(rater_group=frame["participant_id"].map(groups)), groups)


class SourceErrors(ValueError):
    """Every problem of an audit's source options (:func:`check_sources`): ``errors`` maps each field
    (``metric_from``, ``utility_from``, ``features_from``, ``by``, ``lipschitz``) to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(message for messages in errors.values() for message in messages))
        self.errors = errors


def check_sources(
    *,
    audited_slug: str,
    researcher=None,
    columns: Collection[str] | None = None,
    parameters: AuditParameters,
    quality_exclusion: str = "study",
    exports: StudyExports | None = None,
) -> dict[str, Source]:
    """The audit's source options checked before anything is queued or fitted (the API and the audit form call
    it when the request is made, ``audit_models`` and the job through :func:`human_audit_of`, the job's second
    line): each source of ``parameters`` (``SLUG[:BLOCK]``)
    names a study of ``researcher`` (:func:`source_block`: a block that yields what the option needs, with answers),
    ``by`` questions of each source study, the audited subjects' ``columns`` (None: not checked) have every
    feature the source reads (:meth:`Source.missing_columns`), ``lipschitz`` > 0, ``surrogate`` one of
    ``runs.human_source_options.SURROGATES`` (``quality_exclusion`` and ``exports``, the job's snapshot, else a
    new one: :func:`source_block`'s). Returns the sources by option; SourceErrors with every problem by field."""
    by = parameters.by
    errors: dict[str, list[str]] = defaultdict(
        list, parameter_problems(lipschitz=parameters.lipschitz, surrogate=parameters.surrogate)
    )
    given = parameters.sources
    exports = exports or StudyExports()
    if by and not given:
        errors["by"].append(
            "--by splits the raters of the sources into groups: name a source (--metric-from, --utility-from or "
            "--features-from)"
        )
    sources = {}
    for option, reference in given.items():
        try:
            source = source_block(
                option,
                reference,
                researcher=researcher,
                audited_slug=audited_slug,
                by=by,
                quality_exclusion=quality_exclusion,
                exports=exports,
            )
            if columns is not None:
                source.missing_columns(columns)
            if source.needs == Yield.TRADEOFF_WEIGHTS and not parameters.outcome_column:
                raise source.error(NO_OUTCOME)
        except SourceError as exc:
            errors[exc.field].append(str(exc))
        else:
            sources[option] = source
    if errors:
        raise SourceErrors(dict(errors))
    return sources


def source_metric(
    source: Source,
    subjects: pd.DataFrame,
    *,
    n_resamples: int,
    seed: int,
    progress: Callable[[str, int, int], None] | None = None,
) -> HumanMetric:
    """The block's learned metric (``fairness.human_metric.fit_metric`` over the pool's features, at most
    MAX_METRIC_RESAMPLES rater-bootstrap refits; :func:`check_sources` has checked that the audited subjects
    have its features); SourceError when an audited subject has a text value the pool does not have (the
    metric cannot measure it). ``progress`` is told of the refits (stage :data:`METRIC`)."""
    pool_subjects, features = pool_frame(source.pool())
    kind = METRIC_KINDS.get(source.measure)
    if kind is None:
        raise source.error(
            f"a metric is fitted to answers of {', '.join(METRIC_KINDS)} (fairness.human_metric.fit_metric), not "
            f"{source.measure!r}"
        )
    judgements = judgements_of(source.answers, kind).drop(columns="rater_group")
    resamples = min(n_resamples, MAX_METRIC_RESAMPLES)
    try:
        metric = fit_metric(
            judgements,
            pool_subjects,
            features,
            kind=kind,
            n_resamples=resamples,
            seed=seed,
            progress=(lambda done: progress(METRIC, done, resamples)) if progress else None,
        )
    except ValueError as exc:
        raise source.error(f"no metric ({exc})") from exc
    for feature in metric.scaling.numeric:
        if pd.to_numeric(subjects[feature], errors="coerce").isna().any():
            raise source.error(f"column {feature!r} of the audited subjects must be a number for every subject")
    for feature, levels in metric.scaling.categorical.items():
        unseen = sorted(set(subjects[feature].astype(str)) - set(levels))
        if unseen:
            raise source.error(
                f"column {feature!r} of the audited subjects has values the pool does not ({', '.join(unseen[:5])}; "
                f"the pool's: {', '.join(levels)})"
            )
    return metric


def source_utility(
    source: Source, scores: pd.DataFrame, subjects: pd.DataFrame, *, n_resamples: int, seed: int
) -> UtilityAgreement:
    """Each rater's utility weights from the block's choices over the pool's coded features
    (``analysis.paired_comparison.utility_model``, ``tasks.choose.feature_matrix``) and the models' rank
    correlation with the stakeholders' utility of the audited subjects (``fairness.human_audit``)."""
    coded_pool, features, _ = feature_matrix(source.study.spec, source.block)
    if not features:
        raise source.error("the pool's subjects have no numeric or two-valued feature that varies: no utility model")
    try:
        coded = coded_like_pool(pool_features(source.study.spec, source.block), features, subjects)
    except ValueError as exc:
        raise source.error(f"the audited subjects: {exc}") from exc
    try:
        comparisons = choices_of(source.answers, source.groups)
        model = utility_model(comparisons, coded_pool, features, by="rater_group", n_resamples=0, seed=seed)
        return utility_agreement(
            scores,
            model.per_rater[features],
            coded,
            groups=model.per_rater["rater_group"],
            all_raters=ALL_RATERS,
            n_resamples=n_resamples,
            seed=seed,
        )
    except ValueError as exc:
        raise source.error(str(exc)) from exc


def source_tradeoff(source: Source, subjects: Subjects) -> pd.DataFrame:
    """Each audited model scored by the block's trade-off weights (``analysis.tradeoff``: all raters and each
    rater group): its features x (accuracy and the FPR, FNR and selection-rate gaps between the block's ``group``
    on the audited subjects, ``tasks.tradeoff.model_outcomes``), its score w . x and its difference from the first
    model with the interval. SourceError without the subjects' outcome or when the weights cannot be fitted."""
    if subjects.outcome_column is None:  # check_sources refuses the request
        raise source.error(NO_OUTCOME)
    frame, group = subjects.frame, source.block["group"]
    truth = frame[subjects.outcome_column].to_numpy(int)
    features = {}
    for model in subjects.models:
        rows = zip(frame["id"], truth, frame[group].astype(str), subjects.labels(model), strict=True)
        pool = {
            "subjects": [
                {"id": i, "outcome": int(y), "groups": {group: g}, "models": {model: {"label": int(label)}}}
                for i, y, g, label in rows
            ]
        }
        try:
            features[model] = model_outcomes(pool, None, model, group).features
        except TradeoffProblem as exc:
            raise source.error(f"model {model!r} on the audited subjects: {exc}") from exc
    table = pd.DataFrame(features).T
    choices = tradeoff_choices(source.study.spec, source.block, source.answers, source.groups)
    weights = tradeoff_weights(choices, by="rater_group")
    if weights.table.empty:
        raise source.error(f"no trade-off weights ({'; '.join(weights.notes)})")
    parts = []
    for group_name in dict.fromkeys(weights.table["rater_group"]):
        scores = model_scores(weights, table, rater_group=group_name)
        parts.append(scores.table.assign(rater_group=group_name, reference=scores.reference))
    return pd.concat(parts, ignore_index=True)


def source_shares(source: Source, *, n_resamples: int, seed: int) -> pd.DataFrame:
    """The share of answers judging each feature fair, all raters and per rater group, with its
    rater-bootstrap CI (``fairness.feature_fairness.feature_fairness_shares``)."""
    frame = source.answers.assign(feature=source.answers["subject"])
    shares, _ = feature_fairness_shares(frame, n_resamples=n_resamples, n_permutations=n_resamples, seed=seed)
    return shares


def human_audit_of(
    subjects: Subjects,
    *,
    audited_slug: str,
    researcher=None,
    parameters: AuditParameters,
    exports: StudyExports,
    quality_exclusion: str = "study",
    progress: Callable[[str, int, int], None] | None = None,
) -> HumanAudit | None:
    """The audit's parts from what people said (``fairness.human_audit.HumanAudit``; None when no source is
    given): every source of ``parameters`` is checked (:func:`check_sources`) before anything is fitted; the
    human metric's Lipschitz condition uses L = ``parameters.lipschitz``, the reliance on features judged unfair
    the ``surrogate`` ("linear" or "forest") of each model's scores; ``quality_exclusion`` and ``exports`` (the
    job's snapshot): :func:`source_block`'s. ``progress(stage, done, total)`` is told of each of :data:`STAGES`."""
    progress = progress or (lambda stage, done, total: None)
    progress(ANSWERS, 0, len(parameters.sources))
    frame = subjects.frame.set_index("id")
    sources = check_sources(
        audited_slug=audited_slug,
        researcher=researcher,
        columns=frame.columns,
        parameters=parameters,
        quality_exclusion=quality_exclusion,
        exports=exports,
    )
    seed, n_resamples = parameters.seed, parameters.n_resamples
    progress(ANSWERS, len(sources), len(sources))
    if not sources:
        progress(METRIC, 0, 0)
        progress(OTHERS, 0, 0)
        return None
    scores = pd.DataFrame({model: subjects.scores(model) for model in subjects.models}, index=frame.index)
    violations = worst = utility = reliance = tradeoff = None
    if "metric_from" in sources:
        metric = source_metric(sources["metric_from"], frame, n_resamples=n_resamples, seed=seed, progress=progress)
        violations, worst = lipschitz_table(scores, frame, metric, L=parameters.lipschitz)
    progress(METRIC, 0, 0)  # done (without a metric: nothing to refit)
    progress(OTHERS, 0, 1)
    if "utility_from" in sources:
        utility = source_utility(sources["utility_from"], scores, frame, n_resamples=n_resamples, seed=seed)
    if "features_from" in sources:
        source = sources["features_from"]
        shares = source_shares(source, n_resamples=n_resamples, seed=seed)
        try:
            surrogate = cast(Surrogate, parameters.surrogate)  # check_sources checked it is one
            reliance = unfair_feature_reliance(scores, frame, shares, seed=seed, surrogate=surrogate)
        except ValueError as exc:
            raise source.error(str(exc)) from exc
    if "tradeoff_from" in sources:
        tradeoff = source_tradeoff(sources["tradeoff_from"], subjects)
    progress(OTHERS, 1, 1)
    labels = {OPTIONS[o].flag: source.label for o, source in sources.items()}
    return HumanAudit(violations, worst, utility, reliance, labels, tradeoff)
