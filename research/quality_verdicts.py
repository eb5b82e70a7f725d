"""Completed participants' own answer-quality verdicts, stored (:class:`research.models.ParticipantQuality`).

A completed participant's pages and answers never change, so their own rules (``research.quality.assess``
with the comparisons unknown) and their failed attention checks are final for their study version's file
(whose ``quality`` options are the thresholds) and this revision of the rules: they are assessed once, by
whichever look at the study first meets them (``research.quality_evidence``: the dashboard, the export),
and read back by every later one, in any process. A verdict whose ``basis`` is not the participant's
version's current one (its file was replaced, or :data:`QUALITY_REVISION` was raised) counts as missing and
is assessed again."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet

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


def basis(study: Study) -> str:
    """What a verdict of ``study``'s participants holds for: its file's digest and :data:`QUALITY_REVISION`."""
    return f"{study.spec_hash}:{QUALITY_REVISION}"


def _current(studies: Iterable[Study]) -> Q:
    """Stored verdicts (of :class:`ParticipantQuality`) under their participant's version's current basis."""
    found = Q(pk__in=[])
    for study in studies:
        found |= Q(participant__study=study, basis=basis(study))
    return found


def unassessed(studies: Iterable[Study], completed: QuerySet[Participant]) -> list[tuple[int, int, str]]:
    """(id, study version id, status) of the participants of ``completed`` (completed participants of
    ``studies``) without a current verdict: one anti-join, whatever their number."""
    missing = Q(pk__in=[])
    for study in studies:
        current = ParticipantQuality.objects.filter(participant=OuterRef("pk"), basis=basis(study))
        missing |= Q(study=study) & ~Exists(current)
    return list(completed.filter(missing).values_list("pk", "study_id", "status"))


def stored_verdicts(studies: Iterable[Study], chosen: QuerySet[Participant]) -> dict[int, OwnVerdict]:
    """The current verdicts of the participants of ``chosen`` that have one."""
    rows = ParticipantQuality.objects.filter(_current(studies), participant__in=chosen)
    return {
        pk: OwnVerdict(Quality(tuple(RuleResult(*rule) for rule in rules)), failed)
        for pk, rules, failed in rows.values_list("participant_id", "rules", "attention_failed").iterator(2000)
    }


def flagged_verdicts(studies: Iterable[Study], chosen: QuerySet[Participant]) -> dict[int, tuple[int, list[str], int]]:
    """Participant -> (study version id, own flags, failed attention checks), for those of ``chosen`` whose
    current verdict has a flag or a failed attention check (the others have neither: the dashboard reads no
    more)."""
    rows = ParticipantQuality.objects.filter(_current(studies), participant__in=chosen).exclude(
        flags=[], attention_failed=0
    )
    found = rows.values_list("participant_id", "participant__study_id", "flags", "attention_failed")
    return {pk: (sid, flags, failed) for pk, sid, flags, failed in found}


def store_verdicts(verdicts: Mapping[int, OwnVerdict], studies: Mapping[int, Study]) -> None:
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
