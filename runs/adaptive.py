"""The refit of an adaptive block (``participation.adaptive``), run by the job worker as an ``adaptive_refit``
job: the block's task type names its refit (``tasks.base.Adaptive.fit``), which fits every non-pilot
participant's answers of its measure; the result is stored as plain numbers (``AdaptiveFit``) and made the
block's current fit. The block stays on the balanced fallback until its first refit (``refit_every``
answers). The refits: ``choose``, Bradley-Terry strengths ("Equally" as Davidson ties) with one virtual
win and loss per subject (``analysis.adaptive_design.choice_fit``: finite from the first answers on);
``pair_comparable`` and ``triplet``, the learned metric's per-column weights with their covariance
(``fairness.human_metric.metric_for_design``). A refit the data cannot give (a metric over a pool whose
subjects do not differ in any feature) stores nothing and says why in the job's result: the block keeps
its current fit, or the balanced fallback.
"""

from django.db import transaction
from django.utils.module_loading import import_string

from participation.adaptive import refit_wanted
from participation.models import AdaptiveFit, AdaptiveState, Answer
from studies.content import study_content
from tasks import block_task


def adaptive_refit(*, study_id: int, block: str) -> dict:
    """Fit the block's answers and install the fit; returns what happened (the job's result)."""
    with transaction.atomic():
        state = AdaptiveState.objects.select_for_update().get(study_id=study_id, block=block)
        AdaptiveState.objects.filter(pk=state.pk).update(fitted_answers=state.answers)
    try:
        return _refit(state)
    finally:  # fitted or not, the next refit may be queued
        AdaptiveState.objects.filter(pk=state.pk).update(refit_queued=False)


def _refit(state: AdaptiveState) -> dict:
    study = state.study
    content = study_content(study.spec, study.spec_hash)
    block = content.blocks[state.block]
    adaptive = block_task(block).adaptive
    assert adaptive is not None, f"block {state.block!r} is not adaptive"
    rows = list(
        Answer.objects.filter(
            participant__study_id=state.study_id,
            participant__pilot=False,
            set_key=state.block,
            measure=adaptive.measure,
            number__isnull=False,
        ).values_list("participant_id", "subject_key", "number")
    )
    result = {"block": state.block, "n_answers": len(rows)}
    if not rows:
        return {**result, "fit": None}
    try:
        fitted = import_string(adaptive.fit)(rows, content.pools[block["pool"]])
    except ValueError as exc:  # e.g. a metric over a pool without a usable feature: the current fit stays
        return {**result, "fit": None, "problem": str(exc)}
    parameters, estimate, covariance, vectors = fitted
    with transaction.atomic():
        locked = AdaptiveState.objects.select_for_update().get(pk=state.pk)
        version = AdaptiveFit.objects.filter(study_id=state.study_id, block=state.block).count() + 1
        stored = AdaptiveFit.objects.create(
            study_id=state.study_id,
            block=state.block,
            version=version,
            n_answers=len(rows),
            parameters=parameters,
            estimate=estimate,
            covariance=covariance,
            vectors=vectors,
        )
        AdaptiveState.objects.filter(pk=locked.pk).update(fit=stored)
    return {**result, "fit": version}


def queue_refit(sender, *, study_id: int, block: str, **kwargs) -> None:
    """Answer :data:`participation.adaptive.refit_wanted` with an ``adaptive_refit`` job."""
    from runs.services import job_queue_system

    job_queue_system(kind="adaptive_refit", study_id=study_id, params={"block": block})


refit_wanted.connect(queue_refit, dispatch_uid="runs.adaptive.queue_refit")
