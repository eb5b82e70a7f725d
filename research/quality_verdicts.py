"""Completed participants' own answer-quality verdicts, stored (:class:`research.models.ParticipantQuality`).

A completed participant's pages and answers never change, so their own rules (``research.quality.assess``
with the comparisons unknown) and their failed attention checks are final for their study version's file
(whose ``quality`` options are the thresholds) and this revision of the rules: they are assessed once, when
the participant completes or by ``manage.py backfill_quality_verdicts`` (``research.quality_writes``), else by
the first look at the study that meets them (``research.quality_evidence``), and read back by every later
one, in any process. A verdict whose ``basis`` is not the participant's
version's current one (its file was replaced, or :data:`QUALITY_REVISION` was raised) counts as missing and
is assessed again."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from django.db.models import Q, QuerySet

from participation.models import Participant
from research.models import ParticipantQuality
from research.quality import Quality, RuleResult
from studies.models import Study

QUALITY_REVISION = 1  # raise when research.quality's rules change: every stored verdict is assessed again


@dataclass(frozen=True)
class OwnVerdict:
    """A participant's own rule results and failed attention checks."""

    quality: Quality
    attention_failed: int


class Version(Protocol):
    """What a verdict needs of a study version (a :class:`Study`, or its cached ``StudyFacts``)."""

    @property
    def spec(self) -> dict: ...

    @property
    def spec_hash(self) -> str: ...


def basis(study: Version) -> str:
    """What a verdict of ``study``'s participants holds for: its file's digest and :data:`QUALITY_REVISION`."""
    return f"{study.spec_hash}:{QUALITY_REVISION}"


def _current(studies: Iterable[Study]) -> Q:
    """Stored verdicts (of :class:`ParticipantQuality`) under their participant's version's current basis."""
    found = Q(pk__in=[])
    for study in studies:
        found |= Q(participant__study=study, basis=basis(study))
    return found


def stored_verdicts(studies: Iterable[Study], chosen: QuerySet[Participant]) -> dict[int, OwnVerdict]:
    """The current verdicts of the participants of ``chosen`` that have one."""
    rows = ParticipantQuality.objects.filter(_current(studies), participant__in=chosen)
    return {
        pk: OwnVerdict(Quality(tuple(RuleResult(*rule) for rule in rules)), failed)
        for pk, rules, failed in rows.values_list("participant_id", "rules", "attention_failed").iterator(2000)
    }


def held_current(studies: Iterable[Study]) -> Q:
    """Participants (of ``studies``) whose stored verdict is under their version's current basis."""
    held = Q(pk__in=[])
    for study in studies:
        held |= Q(study=study, stored_quality__basis=basis(study))
    return held


def flagged_or_unassessed(
    studies: Iterable[Study], completed: QuerySet[Participant]
) -> tuple[dict[int, tuple[int, list[str], int]], list[tuple[int, int, str]]]:
    """Of ``completed`` (completed participants of ``studies``), in one query whatever their number: participant
    -> (study version id, own flags, failed attention checks) for those whose current verdict has a flag or a
    failed attention check (the others have neither: no more is read), and (id, study version id, status) of
    those without a current verdict."""
    current = {s.pk: basis(s) for s in studies}
    wanted = ~held_current(studies) | ~Q(stored_quality__flags=[]) | Q(stored_quality__attention_failed__gt=0)
    verdict = ("stored_quality__basis", "stored_quality__flags", "stored_quality__attention_failed")
    rows = completed.filter(wanted).order_by().values_list("pk", "study_id", "status", *verdict)  # unsorted
    flagged: dict[int, tuple[int, list[str], int]] = {}
    missing: list[tuple[int, int, str]] = []
    for pk, sid, status, held_basis, flags, failed in rows:
        if held_basis != current[sid]:
            missing.append((pk, sid, status))
        else:
            flagged[pk] = (sid, flags, failed)
    return flagged, missing


def store_verdicts(verdicts: Mapping[int, OwnVerdict], studies: Mapping[int, Version]) -> None:
    """Store (or replace) each participant's verdict, under the basis of their version (``studies``: the
    participant -> their study version)."""
    ParticipantQuality.objects.bulk_create(
        [
            ParticipantQuality(
                participant_id=pk,
                basis=basis(studies[pk]),
                rules=[[r.rule, r.value, r.threshold, r.flagged] for r in verdict.quality.rules],
                flags=list(verdict.quality.flags),
                attention_failed=verdict.attention_failed,
            )
            for pk, verdict in verdicts.items()
        ],
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["participant"],
        update_fields=["basis", "rules", "flags", "attention_failed"],
    )


def forget_withdrawn_verdict(sender, instance: Participant, **kwargs) -> None:
    """A withdrawn participant's answers are deleted (``participant_withdraw``), and so is what was derived
    from them: their stored verdict."""
    if instance.status == Participant.Status.WITHDRAWN:
        ParticipantQuality.objects.filter(participant=instance).delete()
