"""The condition a model audit scores and the Likert calibration it weighs with, checked when the audit is
requested (the API and the dashboard's form, ``runs.serializers.AuditRequestSerializer``) and again by the
job and ``audit_models`` (``runs.audit_runs.audit_run_create``). Light: no scientific import."""

from runs.models import Calibration
from studies.models import Study


class AuditError(ValueError):
    pass


def audited_condition(
    study: Study, *, condition: str | None = None, calibration_id: int | None = None, effort_series: bool = True
) -> tuple[str, Calibration | None]:
    """The condition key (``condition``, else the calibration's, else the study's first) and the Likert
    calibration (the given one, else the condition's latest, else None: equal weights). AuditError when the
    calibration is not the study's, the study has no such condition, or the subjects carry an effort series
    (``effort_series``) and the condition does not say whether more of its effort feature is good (``desirable``
    and ``aggregate_scale``: the effort the audit weighs). A subjects file without effort series needs neither:
    group metrics and what people said are audited on any tabular data."""
    likert = None
    if calibration_id is not None:
        likert = (
            Calibration.objects.filter(pk=calibration_id, study__slug=study.slug)
            .select_related("study", "condition")
            .first()
        )
        if likert is None:
            raise AuditError(f"no calibration {calibration_id} for study {study.slug!r}")
        condition = condition or likert.condition.key
    conditions = {c["key"]: c for c in study.spec["conditions"]}
    condition = condition or next(iter(conditions))
    if condition not in conditions:
        raise AuditError(f"unknown condition {condition!r}; the study has {sorted(conditions)}")
    if effort_series and not {"desirable", "aggregate_scale"} <= set(conditions[condition]):
        raise AuditError(
            f"the subjects carry an effort series, but condition {condition!r} does not say whether more of its "
            "effort feature is good: give it 'desirable' and 'aggregate_scale' in the study file, or audit a file "
            "without x_<time> columns (group metrics and what people said need none)"
        )
    if likert is None:
        likert = (
            Calibration.objects.filter(study__slug=study.slug, kind="likert", condition__key=condition)
            .select_related("study", "condition")
            .order_by("-created_at")
            .first()
        )
    return condition, likert
