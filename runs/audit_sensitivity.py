"""The model audit's sensitivity to the participants flagged for answer quality (issue 24, part 1): each
estimate the audit takes from what people said, with all participants and without the flagged ones, under
the analyses' rule (``analysis.sensitivity``, the same ``sensitivity.csv``):

* the Likert calibration's alpha: the row its analysis run computed (``alpha: condition=...``), when the
  run has one (runs from before the sensitivity analysis have none);
* the disagreement-derived notions and alpha, recomputed from the audited study's yes/no feedback
  (``fairness.model_audit.feedback_estimates``);
* the results of ``--metric-from / --utility-from / --features-from`` (Lipschitz violations under the
  human metric, agreement with the stakeholders' utility, reliance on features judged unfair), recomputed
  from their studies' answers (``runs.human_sources.human_audit_of``).
"""

from collections.abc import Callable, Iterator, Sequence

import pandas as pd

from analysis.sensitivity import COLUMNS, Sensitivity, compare_estimates, sensitivity_of
from fairness.human_audit import HumanAudit
from fairness.model_audit import AuditResult, Subjects, effort_and_aggregate, feedback_estimates, human_tables
from research.export import ExportTables
from runs.analysis_runs import without_flagged
from runs.models import Calibration
from runs.study_exports import StudyExports
from studies.services import latest_study

# a table of what people said -> its estimate (renamed "value": "statistic" names rows in analysis.sensitivity)
HUMAN_ESTIMATES = {
    "human_metric_lipschitz": "statistic",
    "utility_agreement": "statistic",
    "unfair_feature_reliance": "reliance",
}


def study_feedback(disagreements: pd.DataFrame, condition: str) -> pd.DataFrame | None:
    """The audited ``condition``'s yes/no feedback from a study's disagreements export, excluded participants
    left out (participant, subject, model_label, disagreement); None when the study has no such answers."""
    if not len(disagreements):
        return None
    chosen = disagreements[(disagreements["condition"] == condition) & (disagreements["excluded"] != 1)]
    return chosen.rename(columns={"participant_id": "participant"})[
        ["participant", "subject", "model_label", "disagreement"]
    ]


def _flagged(tables: ExportTables) -> int:
    """How many of the export's participants have a quality flag (any rule flagged)."""
    quality = tables.quality
    return int(quality.loc[quality["flagged"].fillna(0).astype(int) == 1, "participant_id"].nunique())


def _likert_rows(likert: Calibration) -> pd.DataFrame:
    """The Likert alpha's row of its analysis run's sensitivity (none when the run has none)."""
    run = likert.analysis_run
    rows = ((run.results if run else {}).get("sensitivity") or {}).get("estimates", [])
    wanted = f"alpha: condition={likert.condition.key}"
    frame = pd.DataFrame([row for row in rows if row["estimate"] == wanted], columns=COLUMNS)
    return frame.assign(estimate=f"Likert calibration v{likert.version} {wanted}")


def _feedback_frames(notions: pd.DataFrame | None, calibration) -> dict[str, pd.DataFrame]:
    """The feedback's headline tables: the notions (rows named by model, subject column and notion) and alpha."""
    frames = {}
    if notions is not None:
        frames["disagreement notions"] = notions.rename(
            columns={"notion": "statistic", "group_column": "subject_attribute"}
        )
    frames["disagreement calibration"] = pd.DataFrame(
        [{"alpha": calibration.alpha, "ci_low": calibration.ci[0], "ci_high": calibration.ci[1]}]
        if calibration is not None
        else [],
        columns=["alpha", "ci_low", "ci_high"],
    )
    return frames


def _human_pieces(everyone: HumanAudit, without: HumanAudit | None) -> Iterator[pd.DataFrame]:
    ours, theirs = human_tables(everyone), human_tables(without)
    for name, column in HUMAN_ESTIMATES.items():
        if name in ours:
            other = theirs.get(name, ours[name].iloc[0:0])
            yield compare_estimates(
                ours[name].rename(columns={column: "value"}),
                other.rename(columns={column: "value"}),
                estimate="value",
                prefix=name.replace("_", " "),
            )


def audit_sensitivity(
    result: AuditResult,
    subjects: Subjects,
    *,
    slug: str,
    condition: str,
    likert: Calibration | None,
    shown_model: str | None,
    seed: int,
    n_resamples: int,
    human: Callable[[str], HumanAudit | None],
    exports: StudyExports,
    source_slugs: Sequence[str] = (),
) -> Sensitivity:
    """The audit's study-derived estimates (module doc) with all participants and without the flagged ones
    (``research.quality.EXCLUSION_MODES`` "none" and "flagged", ``runs.analysis_runs.without_flagged``).
    ``human(mode)``: the audit's parts from what people said under that quality exclusion; ``source_slugs``:
    their studies; ``exports``: the job's snapshot of their exports. The flagged count is over the audited study
    and the source studies."""
    spec = latest_study(slug).spec
    e, s = (
        effort_and_aggregate(subjects, desirable=result.settings["desirable"], scale=result.settings["scale"])
        if result.effort_aware
        else (None, None)
    )

    def from_feedback(mode: str) -> dict[str, pd.DataFrame]:
        feedback = study_feedback(exports.tables(slug, quality_exclusion=mode).disagreements, condition)
        if feedback is None or not len(feedback):
            raise ValueError("no yes/no feedback left")
        notions, calibration = feedback_estimates(
            subjects, feedback, e=e, s=s, shown_model=shown_model, n_resamples=n_resamples, seed=seed
        )
        return _feedback_frames(notions, calibration)

    pieces = [_likert_rows(likert)] if likert is not None else []
    if result.notions is not None:  # the audit had feedback
        main = _feedback_frames(result.notions, result.disagreement_calibration)
        everyone, without = without_flagged(from_feedback, main, spec, same=exports.same_in_every_mode(slug))
        pieces += [
            compare_estimates(
                frame,
                (without or {}).get(name, frame.iloc[0:0]),
                estimate="value" if name == "disagreement notions" else "alpha",
                prefix=name,
            )
            for name, frame in everyone.items()
        ]
    if result.human is not None:

        def from_sources(mode: str) -> HumanAudit:
            parts = human(mode)
            assert parts is not None  # the audit has sources
            return parts

        rules = [latest_study(source).spec.get("quality", {}).get("exclude_if", []) for source in source_slugs]
        everyone_human, without_human = without_flagged(
            from_sources,
            result.human,
            {"quality": {"exclude_if": [flag for names in rules for flag in names]}},
            same=all(exports.same_in_every_mode(source, completed=True) for source in source_slugs),
        )
        pieces += list(_human_pieces(everyone_human, without_human))
    n_flagged = _flagged(exports.tables(slug)) + sum(  # the quality table is the same under every mode
        _flagged(exports.tables(source, completed=True)) for source in dict.fromkeys(source_slugs) if source != slug
    )
    return sensitivity_of(pieces, n_flagged)
