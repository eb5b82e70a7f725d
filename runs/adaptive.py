"""The refit of an adaptive block (``participation.adaptive``), run by the job worker as an ``adaptive_refit``
job: Bradley-Terry strengths of the block's subjects from every counted participant's choices
(``analysis.paired_comparison.bradley_terry``, "Equally" as Davidson ties), stored as plain numbers
(``AdaptiveFit``: strengths and their covariance, centred on the subjects' mean) and made the block's
current fit. A comparison graph the estimator cannot fit yet (not strongly connected: some subject never
chosen or always chosen) stores no fit: the block stays on its current fit (or the balanced fallback)
until the next ``refit_every`` answers.
"""

from django.db import transaction

from analysis.adaptive_design import centred
from participation.adaptive import refit_wanted
from participation.models import AdaptiveFit, AdaptiveState, Answer


def adaptive_refit(*, study_id: int, block: str) -> dict:
    """Fit the block's choices and install the fit; returns what happened (the job's result)."""
    with transaction.atomic():
        state = AdaptiveState.objects.select_for_update().get(study_id=study_id, block=block)
        AdaptiveState.objects.filter(pk=state.pk).update(fitted_answers=state.answers)
    try:
        return _refit(state)
    finally:  # fitted or not, the next refit may be queued
        AdaptiveState.objects.filter(pk=state.pk).update(refit_queued=False)


def _refit(state: AdaptiveState) -> dict:
    import pandas as pd

    from analysis.paired_comparison import bradley_terry

    study_id, block = state.study_id, state.block
    rows = list(
        Answer.objects.filter(
            participant__study_id=study_id, participant__pilot=False, set_key=block, measure="choice"
        ).values_list("subject_key", "number")
    )
    result = {"block": block, "n_answers": len(rows)}
    try:
        pairs = [subject.split("~") for subject, _ in rows]
        comparisons = pd.DataFrame(
            {
                "winner": [a if value >= 0.5 else b for (a, b), (_, value) in zip(pairs, rows, strict=True)],
                "loser": [b if value >= 0.5 else a for (a, b), (_, value) in zip(pairs, rows, strict=True)],
                "tie": [int(value == 0.5) for _, value in rows],
            }
        )
        fit = bradley_terry(comparisons)
    except ValueError as exc:
        return {**result, "fit": None, "reason": str(exc)}
    subjects, strength, covariance = centred(fit.strength, fit.covariance)
    with transaction.atomic():
        state = AdaptiveState.objects.select_for_update().get(pk=state.pk)
        version = AdaptiveFit.objects.filter(study_id=study_id, block=block).count() + 1
        stored = AdaptiveFit.objects.create(
            study_id=study_id,
            block=block,
            version=version,
            n_answers=len(rows),
            subjects=subjects,
            strength=strength,
            covariance=covariance,
        )
        AdaptiveState.objects.filter(pk=state.pk).update(fit=stored, pending={})
    return {**result, "fit": version}


def queue_refit(sender, *, study_id: int, block: str, **kwargs) -> None:
    """Answer :data:`participation.adaptive.refit_wanted` with an ``adaptive_refit`` job."""
    from runs.services import job_queue_system

    job_queue_system(kind="adaptive_refit", study_id=study_id, params={"block": block})


refit_wanted.connect(queue_refit, dispatch_uid="runs.adaptive.queue_refit")
