"""The refit of an adaptive block (``participation.adaptive``), run by the job worker as an ``adaptive_refit``
job: Bradley-Terry strengths of the block's subjects from every non-pilot participant's choices ("Equally"
as Davidson ties) with one virtual win and loss per subject (``analysis.adaptive_design.fit_for_design``:
finite from the first answers on), stored as plain numbers (``AdaptiveFit``: strengths and their
covariance, centred on the subjects' mean) and made the block's current fit. The block stays on the
balanced fallback until its first refit (``refit_every`` answers).
"""

from django.db import transaction

from analysis.adaptive_design import fit_for_design
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

    rows = [
        (subject.split("~"), float(value or 0.0))  # never None: number__isnull=False
        for subject, value in Answer.objects.filter(
            participant__study_id=state.study_id,
            participant__pilot=False,
            set_key=state.block,
            measure="choice",
            number__isnull=False,
        ).values_list("subject_key", "number")
    ]
    result = {"block": state.block, "n_answers": len(rows)}
    if not rows:
        return {**result, "fit": None}
    comparisons = pd.DataFrame(
        {
            "winner": [a if value >= 0.5 else b for (a, b), value in rows],
            "loser": [b if value >= 0.5 else a for (a, b), value in rows],
            "tie": [int(value == 0.5) for _, value in rows],
        }
    )
    subjects, strength, covariance = fit_for_design(comparisons)
    with transaction.atomic():
        locked = AdaptiveState.objects.select_for_update().get(pk=state.pk)
        version = AdaptiveFit.objects.filter(study_id=state.study_id, block=state.block).count() + 1
        stored = AdaptiveFit.objects.create(
            study_id=state.study_id,
            block=state.block,
            version=version,
            n_answers=len(rows),
            subjects=subjects,
            strength=strength,
            covariance=covariance,
        )
        AdaptiveState.objects.filter(pk=locked.pk).update(fit=stored)
    return {**result, "fit": version}


def queue_refit(sender, *, study_id: int, block: str, **kwargs) -> None:
    """Answer :data:`participation.adaptive.refit_wanted` with an ``adaptive_refit`` job."""
    from runs.services import job_queue_system

    job_queue_system(kind="adaptive_refit", study_id=study_id, params={"block": block})


refit_wanted.connect(queue_refit, dispatch_uid="runs.adaptive.queue_refit")
