"""The analysis run of a format 2 study: its export's answers and questionnaire tables analysed block by
block (``fairness.task_blocks``), each block by the analysis its task type names (``BlockTask.analysis``)
or with the reason it has none, per rater group of the questionnaire questions ``by``."""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypedDict

from django.utils.module_loading import import_string

from analysis.sample import select_participants
from fairness.task_blocks import DesignAnalysis
from fairness.task_blocks import analyze_design as analyze_blocks
from studies.format2 import BY_LANGUAGE, check_by, questionnaire_questions
from tasks import answers_where, block_task, bts_positives

if TYPE_CHECKING:  # the export (pandas) is imported by the job that runs the analysis, not by web workers
    from runs.study_exports import StudyExports


class GroupOptions(TypedDict, total=False):
    """The group options of ``fairness.task_blocks.analyze_design`` a researcher chooses (command, API, form)."""

    min_group_size: int
    pool_small: bool
    min_subject_group: int
    bins: Mapping[str, Sequence[float]]


GROUP_OPTIONS = tuple(GroupOptions.__annotations__)
ANALYSED_STATUSES = ("active", "completed", "timed_out")  # with include_incomplete; else completed only


def block_analyses(spec: dict) -> dict:
    """Block key -> its task type's analysis (a function) or the reason it has none, for every task block."""
    out: dict = {}
    for block in spec["blocks"]:
        if block["type"] == "task":
            task = block_task(block)
            out[block["key"]] = import_string(task.analysis) if task.analysis else task.no_analysis
    return out


def analyze_design(spec: dict, answers, questionnaire, *, by: Sequence[str], **options) -> DesignAnalysis:
    """``by`` checked against the study's questionnaire, then every task block analysed
    (``fairness.task_blocks.analyze_design``; ``options``: seed, n_resamples, n_permutations, progress)."""
    return analyze_blocks(
        spec,
        answers,
        questionnaire,
        by=check_by(spec, by),
        analyses=block_analyses(spec),
        where=answers_where(spec),
        positives=bts_positives(spec),
        **options,
    )


def study_analysis(
    slug: str,
    spec: dict,
    *,
    by: Sequence[str],
    include_pilot: bool = False,
    include_incomplete: bool = False,
    quality_exclusion: str = "study",
    exports: "StudyExports | None" = None,
    **options,
) -> DesignAnalysis:
    """:func:`analyze_design` on the ``answers`` and ``questionnaire`` tables of the study's export
    (``research.export``; ``by`` may name ``language``, the participants table's column): completed
    participants (with ``include_incomplete`` also active and timed-out ones), pilots only with
    ``include_pilot``, those excluded for answer quality as ``quality_exclusion`` says
    (``research.quality.EXCLUSION_MODES``) (``exports``: the job's snapshot of exports, else a new one;
    ``options``: seed, n_resamples, n_permutations, progress). The
    result's ``sample`` counts the participants dropped by reason (``analysis.sample.select_participants``,
    as the effort pipeline counts them); none left to analyse is a "too few participants" error."""
    from runs.study_exports import StudyExports

    by = check_by(spec, by)
    tables = (exports or StudyExports()).tables(slug, include_pilot=include_pilot, quality_exclusion=quality_exclusion)
    people = tables.participants
    if include_incomplete:  # the statuses analysed: declined, screened-out and withdrawn participants never are
        people = people[people["status"].isin(ANALYSED_STATUSES)]
    answers = tables.answers[
        (tables.answers["measure"] != "questionnaire") & tables.answers["participant_id"].isin(people["participant_id"])
    ]
    sample = select_participants(answers, people, include_incomplete=include_incomplete)
    if not sample.included:
        raise ValueError(f"too few participants to analyse: {sample.sentence()}")
    if not include_incomplete:  # the attention-excluded stay: analyze_design leaves them out itself
        answers = answers[answers["participant_id"].isin(people.loc[people["status"] == "completed", "participant_id"])]
    questionnaire = tables.questionnaire
    if BY_LANGUAGE in by and BY_LANGUAGE not in questionnaire_questions(spec):  # the participants table's column
        languages = tables.participants[["participant_id", BY_LANGUAGE]]
        questionnaire = questionnaire.drop(columns=BY_LANGUAGE, errors="ignore").merge(
            languages, on="participant_id", how="outer"
        )
    result = analyze_design(spec, answers.reset_index(drop=True), questionnaire, by=by, **options)
    return replace(result, sample=sample)
