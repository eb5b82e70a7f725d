"""Run simulated participants through the same services and forms a browser uses."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.utils import timezone
from django.utils.datastructures import MultiValueDict

from participation.adaptive import resolved_page
from participation.enrolment import enrolment_of
from participation.models import Participant
from participation.pages import condition_index, form_answers, page_form
from participation.services import SubmitOutcome, page_shown, page_submit, participant_arrive, participant_consent
from simulation.effort import GenerativeModel, SimulatedParticipant
from simulation.raters import GroupEffects, check_group_effects, default_group_effects, draw_rater
from studies.services import latest_study
from tasks import task_for


@dataclass(frozen=True)
class SimulationReport:
    created: int
    completed: int
    by_condition: dict[str, int]
    seed: int


def _as_post(data: dict) -> MultiValueDict:
    return MultiValueDict({k: [str(x) for x in v] if isinstance(v, list) else [str(v)] for k, v in data.items()})


def simulate_participants(
    slug: str,
    *,
    n: int,
    seed: int,
    model: GenerativeModel | None = None,
    hours: float = 6.0,
    decline_rate: float = 0.02,
    group_effects: GroupEffects | None = None,
    progress: Callable[[int], None] | None = None,
) -> SimulationReport:
    """Create ``n`` simulated participants (ids ``sim-<seed>-<i>``) who arrive over the past
    ``hours`` and take the whole study; a share ``decline_rate`` declines consent.

    Format 1 studies: answers from ``model`` (``simulation.effort``). Format 2 studies: each
    participant is a rater drawn by ``simulation.raters.draw_rater`` with ``group_effects``
    (default: ``default_group_effects``), and every page's POST data comes from its task type's
    ``simulate``."""
    model = model or GenerativeModel()
    rng = np.random.default_rng(seed)
    study = latest_study(slug)
    if study.spec.get("format") == 2:
        group_effects = default_group_effects(study.spec) if group_effects is None else group_effects
        check_group_effects(study.spec, group_effects)
    elif group_effects:
        raise ValueError("group effects need a format 2 study with a questionnaire (this study is format 1)")
    start = timezone.now() - timedelta(hours=hours)
    offsets = np.sort(rng.uniform(0, hours * 3600, size=n))
    completed = 0
    for i in range(n):
        at = start + timedelta(seconds=float(offsets[i]))
        participant, created = participant_arrive(
            study_slug=slug, external_id=f"sim-{seed}-{i}", simulated=True, at=at, seed=int(rng.integers(2**62))
        )
        if not created:
            if progress:
                progress(i + 1)
            continue
        accept = rng.random() >= decline_rate
        participant = participant_consent(participant_id=participant.pk, accept=accept, at=at)
        if not accept:
            if progress:
                progress(i + 1)
            continue
        if study.spec.get("format") == 2:
            completed += _take_study_v2(participant, study.spec, study.spec_hash, group_effects, rng, at)
        else:
            completed += _take_study(participant, study.spec, study.spec_hash, model, rng, at)
        if progress:
            progress(i + 1)
    counts: dict[str, int] = {}
    for key in Participant.objects.filter(study__slug=slug, simulated=True, condition__isnull=False).values_list(
        "condition__key", flat=True
    ):
        counts[key] = counts.get(key, 0) + 1
    return SimulationReport(created=n, completed=completed, by_condition=counts, seed=seed)


def _take_study(participant: Participant, spec: dict, spec_hash: str, model, rng, at) -> int:
    index = condition_index(spec, spec_hash, participant.condition.key)
    person = SimulatedParticipant(model, spec, index.condition, rng)
    enrolment = enrolment_of(participant)
    for page in participant.plan:
        kind = page["kind"]
        if kind == "likert":
            k = index.sets[page["set"]]["reference"]
            data = person.likert_page(page["set"], k, page["subject"], page["measure"])
        elif kind == "output":
            data = person.output_page(page["set"], index.sets[page["set"]]["reference"], page["subjects"])
        elif kind == "disagreement":
            data = person.disagreement_page({key: index.prompts[key]["subject"] for key in page["prompts"]})
        elif kind == "attention":
            data = person.attention_page(index.checks[page["check"]])
        elif kind == "screening":  # simulated participants are eligible
            data = {"choice": spec["screening"]["eligible"][0]}
        else:
            data = {}
        at = _submit(participant, enrolment, page, index, data, rng, at)
    return 1


def _take_study_v2(participant: Participant, spec: dict, spec_hash: str, effects: GroupEffects, rng, at) -> int:
    index = condition_index(spec, spec_hash, participant.condition.key)
    rater = draw_rater(spec, effects, rng)
    enrolment = enrolment_of(participant)
    for planned in participant.plan:
        page = resolved_page(planned, index, participant_id=participant.pk, study_id=participant.study_id)
        at = _submit(participant, enrolment, page, index, task_for(page).simulate(page, index, rater, rng), rng, at)
    return 1


def _submit(participant: Participant, enrolment, page: dict, index, data: dict, rng, at):
    """Validate ``data`` with the page's form and save it like a browser's POST; returns the time after."""
    form = page_form(page, index, data=_as_post(data))
    if not form.is_valid():
        raise RuntimeError(f"simulated answer refused on {page['key']}: {form.errors.as_text()}")
    page_shown(participant=participant, page_key=page["key"], at=at)
    at = at + timedelta(seconds=float(rng.lognormal(np.log(25), 0.5)))
    outcome = page_submit(
        enrolment=enrolment, page_key=page["key"], answers=form_answers(page, index, form), at=at
    ).outcome
    if outcome is not SubmitOutcome.SAVED:
        raise RuntimeError(f"simulated page {page['key']} was not saved: {outcome}")
    return at
