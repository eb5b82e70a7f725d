"""Run simulated participants through the same services and forms a browser uses."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, cast

import numpy as np
from django import forms
from django.utils import timezone
from django.utils.datastructures import MultiValueDict

from participation.adaptive import resolved_page
from participation.enrolment import Enrolment, enrolment_of
from participation.models import Participant
from participation.pages import ContentIndex, condition_index, form_answers, page_form
from participation.rendering import page_load
from participation.services import (
    SentPage,
    SubmitOutcome,
    page_shown,
    page_submit,
    participant_arrive,
    participant_consent,
    participant_submit_all,
    submits_at_once,
)
from participation.signals import PageSignals, records_signals
from simulation.effort import GenerativeModel, SimulatedParticipant
from simulation.interaction import draw_reader, page_interaction
from simulation.raters import GroupEffects, SimulatedRater, check_group_effects, default_group_effects, draw_rater
from studies.format1 import AI_MODEL
from studies.lifecycle import StudyNotOpen
from studies.services import latest_study
from studies.study_facts import study_facts
from tasks import task_for
from tasks.agree import Agree
from tasks.page_index import Page

if TYPE_CHECKING:
    from participation.models import ParticipantWithSpecHash


@dataclass(frozen=True)
class SimulationReport:
    created: int
    completed: int
    by_condition: dict[str, int]
    seed: int
    stopped: str = ""  # why arrivals stopped before n (the study closed, e.g. at its recruitment target)


def _typed_chars(form) -> int:
    """Characters in the form's text fields (what ``static/surveys/signals.js`` counts when a page is sent)."""
    return sum(
        len(str(form[name].value() or ""))
        for name, field in form.fields.items()
        if isinstance(field.widget, forms.TextInput | forms.Textarea)
    )


def as_post(data: dict) -> MultiValueDict:
    """A page's POST data as a browser sends it (lists as repeated fields, every value a string)."""
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
    pilot: bool = False,
) -> SimulationReport:
    """Create ``n`` simulated participants (ids ``sim-<seed>-<i>``) who arrive over the past
    ``hours`` and take the whole study; a share ``decline_rate`` declines consent. Arrivals stop
    when the study stops taking new participants (its recruitment target closed it: ``stopped``
    says so); a study that is not live refuses the first (ValueError). ``pilot``: they come by the
    researcher's pilot link (ids ``sim-pilot-<seed>-<i>``), which a draft or pilot study admits as well as a
    live one; pilots
    are left out of the balance, the exports and the analyses (``participant_arrive``).

    Studies converted from format 1 (blocks with ``page_key``): answers from ``model``
    (``simulation.effort``), drawn in format 1's order, so that a converted study gets format 1's answers.
    Other blocks: each participant is a rater drawn by ``simulation.raters.draw_rater`` with
    ``group_effects`` (default: ``default_group_effects``), and every page's POST data comes from its task
    type's ``simulate``. Each page's time and interaction signals come from the person's reading and typing
    (``simulation.interaction``) over the page's load as served (``participation.page_load``)."""
    model = model or GenerativeModel()
    rng = np.random.default_rng(seed)
    study = latest_study(slug)
    group_effects = default_group_effects(study.spec) if group_effects is None else group_effects
    check_group_effects(study.spec, group_effects)
    start = timezone.now() - timedelta(hours=hours)
    offsets = np.sort(rng.uniform(0, hours * 3600, size=n))
    completed, stopped = 0, ""
    for i in range(n):
        at = start + timedelta(seconds=float(offsets[i]))
        try:
            participant, created = participant_arrive(
                study_slug=slug,
                external_id=f"sim-{'pilot-' if pilot else ''}{seed}-{i}",
                simulated=True,
                pilot=pilot,
                at=at,
                seed=int(rng.integers(2**62)),
            )
        except StudyNotOpen as exc:
            if i == 0:
                admitted = (
                    "the pilot link starts only a draft, pilot or live study"
                    if pilot
                    else ("only a live study takes new participants (--pilot: the pilot link, in draft or pilot)")
                )
                raise ValueError(f"{slug}: {exc}; {admitted}") from exc
            stopped, n = f"{exc} after {i} arrivals", i
            break
        if not created:
            if progress:
                progress(i + 1)
            continue
        accept = rng.random() >= decline_rate
        arrived = cast("ParticipantWithSpecHash", participant)  # a new participant carries its spec_hash
        participant = participant_consent(participant_id=participant.pk, accept=accept, at=at, participant=arrived)
        if not accept:
            if progress:
                progress(i + 1)
            continue
        completed += _take_study(participant, study.spec, study.spec_hash, group_effects, model, rng, at)
        if progress:
            progress(i + 1)
    counts: dict[str, int] = {}
    for key in Participant.objects.filter(
        study__slug=slug, simulated=True, pilot=pilot, condition__isnull=False
    ).values_list("condition__key", flat=True):
        counts[key] = counts.get(key, 0) + 1
    return SimulationReport(created=n, completed=completed, by_condition=counts, seed=seed, stopped=stopped)


def _take_study(participant: Participant, spec: dict, spec_hash: str, effects: GroupEffects, model, rng, at) -> int:
    """A participant: a rater (``draw_rater``), or, in a study converted from format 1 (blocks
    with ``page_key``), format 1's simulated participant, who answers the converted blocks' pages drawing
    from ``rng`` exactly as on the format 1 pages they were (:func:`_effort_answers`)."""
    assert participant.condition_id is not None  # participant_consent (accepted) has given them one
    condition = study_facts(participant.study_id, participant.condition_id).condition_keys[participant.condition_id]
    index = condition_index(spec, spec_hash, condition)
    person = _converted_participant(model, index, rng)
    rater = draw_rater(spec, effects, rng) if person is None else SimulatedRater()
    enrolment = enrolment_of(participant)
    assert enrolment is not None  # consented: a plan and a condition
    # A rater's page times and signals: the interaction model, on a generator of their own (their answers'
    # draws stay as they were); format 1's participant keeps format 1's page times and sends no signals,
    # so a converted study exports what the format 1 runtime stored.
    timing = np.random.default_rng([participant.seed, 1]) if person is None else rng
    reader, block = (draw_reader(timing) if person is None else None), None
    # The first page's display; each saved page records the next one's as the web view does (``show_next``):
    # the next page is shown when the previous one is sent, at the same time. A plan whose pages need no answer
    # saved before them (``submits_at_once``) is saved at once when the participant has sent its last page.
    shown_at, sent, at_once = at, [], submits_at_once(spec, participant.plan)
    if not at_once:
        page_shown(participant=participant, page_key=participant.plan[0]["key"], at=at)
    for planned in participant.plan:
        page = resolved_page(planned, index, participant_id=participant.pk, study_id=participant.study_id)
        data = _effort_answers(person, page, index) if person is not None else None
        if data is None:
            data = task_for(page).simulate(page, index, rater, rng)
        familiar, block = page.get("block") is not None and page.get("block") == block, page.get("block")
        page_sent = _sent(page, (index, spec_hash), data, (reader, familiar, timing), at)
        at = page_sent.at
        if at_once:
            sent.append(page_sent)
        else:
            _submit(enrolment, page_sent)
    if at_once:
        participant_submit_all(enrolment=enrolment, shown_at=shown_at, pages=sent)
    return 1


def _converted_participant(model: GenerativeModel, index: ContentIndex, rng) -> SimulatedParticipant | None:
    """Format 1's simulated participant for a condition of a converted study: the scale, BTS measures and
    rationale factors of its first ``page_key`` pairs block, the subjects of that block's pool with the
    model ``ai``'s score and label (``studies.format1.format1_to_format2``'s inverse); None when the
    condition has no such block."""
    pairs = [
        b
        for b in index.content.blocks.values()
        if b.get("page_key", {}).get("block") == "pairs" and index.condition["key"] in b["conditions"]
    ]
    if not pairs:
        return None
    block = pairs[0]
    spec = {
        "likert": block["likert"],
        "rationale_factors": block["rationale_factors"],
        "bts": {"questions": block.get("bts", {}).get("measures", [])},
    }
    subjects = [
        {"id": s["id"], "series": s["series"], "risk_score": ai["score"], "label": ai["label"]}
        for s in index.content.pools[block["pool"]]["subjects"]
        for ai in (s["models"][AI_MODEL],)
    ]
    return SimulatedParticipant(model, spec, {"subjects": subjects, "desirable": index.condition["desirable"]}, rng)


def _effort_answers(person: SimulatedParticipant, page: Page, index: ContentIndex) -> dict | None:
    """Format 1's simulated answers (``simulation.effort``) to the page of a converted block that was a
    format 1 pair, output, disagreement or attention page (``page_key``: the same draws in the same order);
    None for any other page."""
    if "block" not in page:
        return None
    block = index.block(page)
    converted = block.get("page_key", {})  # format 1's pairs and output pages: their set's key
    part = converted.get("block")
    if part == "pairs":
        pair = index.pair(page)
        return person.likert_page(converted["key"], pair["a"], pair["b"], page["measure"])
    if part == "output":
        reference = index.stimulus_set(page)["reference"]
        return person.output_page(converted["key"], reference, page["subjects"])  # the set's pairs as shown
    if part == "disagreement":  # one page, its items' forms prefixed (tasks.agree)
        task = task_for(page)
        assert isinstance(task, Agree)  # studies.format1 converts the disagreement pages to a one-page agree block
        forms_ = task.item_forms(block, page, index)
        drawn = person.disagreement_page({f.add_prefix("answer"): f.page["item"] for f in forms_})
        return {name.removeprefix("agree_"): value for name, value in drawn.items()}
    if part == "attention":
        return person.attention_page(block)
    return None


def _sent(page: Page, shown, data: dict, person, at) -> SentPage:
    """Validate ``data`` with the page's form as the web view does a browser's POST, after the time the person
    (``person``: their ``simulation.interaction.Reader`` or None for format 1's participant, whether the
    page's layout is familiar, the generator) spends on the page ``shown`` (its condition index and version
    digest): the page as sent, at the time after."""
    (index, spec_hash), (reader, familiar, rng) = shown, person
    form = page_form(page, index, data=as_post(data))
    if not form.is_valid():
        raise RuntimeError(f"simulated answer refused on {page['key']}: {form.errors.as_text()}")
    signals, load = None, None
    if reader is None:  # format 1's page times
        at = at + timedelta(seconds=float(rng.lognormal(np.log(25), 0.5)))
    else:
        load = page_load(page, index, spec_hash)
        typed = _typed_chars(form)
        spent = page_interaction(
            reader, words=load.words, inputs=load.inputs, typed_chars=typed, familiar=familiar, rng=rng
        )
        at = at + timedelta(seconds=spent.seconds)
        if records_signals(index.spec):
            signals = PageSignals(*spent.signals)
    return SentPage(page["key"], form_answers(page, index, form), at, signals, load)


def _submit(enrolment: Enrolment, page: SentPage) -> None:
    """Save a sent page like the web view, recording the next page as shown then."""
    outcome = page_submit(
        enrolment=enrolment,
        page_key=page.page_key,
        answers=page.answers,
        at=page.at,
        show_next=True,
        signals=page.signals,
        load=page.load,
    ).outcome
    if outcome is not SubmitOutcome.SAVED:
        raise RuntimeError(f"simulated page {page.page_key} was not saved: {outcome}")
