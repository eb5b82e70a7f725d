"""Storing study files as versions: load, look up, who may load a new version."""

import hashlib
import json
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from studies.format1 import converted_plan, format1_to_format2
from studies.lifecycle import study_set_status
from studies.models import Condition, Study, StudyStatusChange
from studies.selectors import owning_version
from studies.study_file import validate_study


class StudyNotFound(LookupError):
    pass


class StudyOwnedByOther(PermissionError):
    """A study file's slug belongs to another researcher's study (a new version would hand them its data)."""


def slug_taken(slug: str) -> str:
    """The refusal of a slug the researcher may not load: it names nothing of the study but its slug."""
    return (
        f"The slug {slug!r} is taken by another researcher's study; only its owner or an account with the "
        "studies.load_any_study permission can load a new version of it. Choose another slug."
    )


def spec_digest(spec: dict) -> str:
    """SHA-256 of the canonical JSON (sorted keys), so formatting changes do not count as edits."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def stored_file(spec: dict) -> tuple[dict, dict | None]:
    """The validated study file a version stores for ``spec``, and the format 1 file it was converted
    from (None for a format 2 file): a format 1 file is stored as its format 2 conversion
    (:func:`studies.format1.format1_to_format2`), so every study runs, exports and is analysed on one
    path, with format 1's page and question keys (``page_key``)."""
    spec = validate_study(spec)
    if spec["format"] == 1:
        return validate_study(format1_to_format2(spec)), spec
    return spec, None


def convert_version(study, participants) -> int:
    """Store the format 1 version ``study`` as its conversion (:func:`stored_file`: ``spec``, its hash,
    the original in ``format1_spec``) and each of its ``participants`` with a condition (those who
    consented: a plan) with the same pages in format 2's shape (:func:`studies.format1.converted_plan`);
    returns the number of plans converted, 0 for a version not in format 1. Page visits and answers
    keep their keys (``page_key``). Works on the models or on a migration's historical ones; the caller
    holds the transaction."""
    if study.spec.get("format") != 1:  # a stored file is validated: its format is set
        return 0
    spec, original = stored_file(study.spec)
    study.format1_spec, study.spec, study.spec_hash = original, spec, spec_digest(spec)
    study.save(update_fields=["format1_spec", "spec", "spec_hash"])
    converted = 0
    for participant in participants.filter(condition__isnull=False).select_related("condition").iterator():
        participant.plan = converted_plan(spec, participant.condition.key, participant.plan)
        participant.save(update_fields=["plan"])
        converted += 1
    return converted


@dataclass(frozen=True)
class StudyLoadResult:
    study: Study
    action: str  # "created", "unchanged", "replaced" (no answers yet) or "new_version"


def _create_study_rows(study: Study, spec: dict, format1_spec: dict | None) -> None:
    """The version's Condition rows, which participants, calibrations and audit runs point at. The
    rest of the content (subjects, sets, prompts, pools, blocks) is read from ``study.spec`` only.
    A converted format 1 file's conditions (same keys, same order) name their effort feature and unit
    from the format 1 file; format 2 ones have a key, a label and maybe a cap (validation gives a
    format 2 file without conditions the one condition "main")."""
    Condition.objects.bulk_create(
        [
            Condition(
                study=study,
                key=cond["key"],
                label=cond["label"],
                feature=cond.get("feature", ""),
                unit=cond.get("unit", ""),
                desirable=cond.get("desirable"),
                cap=cond.get("cap"),
                position=position,
            )
            for position, cond in enumerate((format1_spec or spec)["conditions"])
        ]
    )


@transaction.atomic
def study_load(
    *, spec: dict, owner=None, status: str | None = None, initial_status: str = Study.Status.LIVE
) -> StudyLoadResult:
    """Validate and store a study file.

    The same content again changes nothing. Changed content replaces the latest version while no
    participant has arrived and no calibration or audit run points at it, and otherwise becomes
    version n + 1, so that what participants saw (and what a result was computed for) is never altered.

    Only the study's owner or an account with ``studies.load_any_study`` may load a file whose slug
    already exists: anyone else would otherwise own a new version and with it every earlier
    participant's data. A new version keeps the study's owner and collaborators (the first version's:
    they decide access to every version), whoever loads it; ``owner`` owns only a new slug and is
    recorded as the version's ``loaded_by``.

    A format 1 file is stored as its format 2 conversion, the original in ``format1_spec``
    (:func:`stored_file`); the content hash is the conversion's, so the same format 1 file again is
    "unchanged".

    ``status``: the lifecycle state (``studies.lifecycle``) the study is put in; None keeps an existing
    study's state (a new version takes it over) and starts a new study in ``initial_status`` (live, as
    ``load_study``; a study uploaded from the web starts as a draft).
    """
    result = _study_store(spec, owner, status, initial_status)
    if result.action == "created":
        StudyStatusChange.objects.create(
            study=result.study,
            new_status=result.study.status,
            changed_by=owner,
            changed_at=result.study.created_at,
            reason="loaded",
        )
    elif status is not None:
        study_set_status(slug=result.study.slug, status=status, by=owner, reason="loaded")
        result.study.refresh_from_db(fields=["status"])
    return result


def _study_store(spec: dict, owner, status: str | None, initial_status: str) -> StudyLoadResult:
    spec, format1_spec = stored_file(spec)
    digest = spec_digest(spec)
    latest = Study.objects.select_for_update().filter(slug=spec["slug"]).order_by("-version").first()
    if latest is not None and owner is not None and not may_load_version(owner, latest):
        raise StudyOwnedByOther(slug_taken(latest.slug))
    if latest is not None and latest.spec_hash == digest:
        return StudyLoadResult(latest, "unchanged")
    if latest is not None and not _in_use(latest):
        latest.conditions.all().delete()
        latest.spec, latest.spec_hash, latest.title, latest.loaded_by = spec, digest, spec["title"], owner
        latest.format1_spec = format1_spec
        latest.save(update_fields=["spec", "spec_hash", "title", "loaded_by", "format1_spec"])
        _create_study_rows(latest, spec, format1_spec)
        return StudyLoadResult(latest, "replaced")
    version = 1 if latest is None else latest.version + 1
    owning = owning_version(latest.slug) if latest is not None else None
    study = Study.objects.create(
        slug=spec["slug"],
        version=version,
        title=spec["title"],
        spec=spec,
        spec_hash=digest,
        format1_spec=format1_spec,
        owner=owning.owner if owning is not None else owner,  # a version loaded by another stays the owner's
        loaded_by=owner,
        status=(status or initial_status) if latest is None else latest.status,
    )
    if owning is not None:
        study.collaborators.set(owning.collaborators.all())
    _create_study_rows(study, spec, format1_spec)
    return StudyLoadResult(study, "created" if latest is None else "new_version")


def _in_use(study: Study) -> bool:
    """Participants, or results (calibrations, audit runs) of the version or of its conditions."""
    results = Q(calibrations__isnull=False) | Q(audit_runs__isnull=False)
    return (
        study.participants.exists()
        or Study.objects.filter(results, pk=study.pk).exists()
        or Condition.objects.filter(results, study=study).exists()
    )


def may_load_version(user, study: Study) -> bool:
    """The owner of ``study``'s slug (its first version's owner), whichever version ``study`` is, or
    an account with the explicit permission ``studies.load_any_study`` (superusers have it); the bare
    ``is_staff`` flag is not enough."""
    if user.has_perm("studies.load_any_study"):
        return True
    owning = owning_version(study.slug)
    return owning is not None and owning.owner_id == user.pk


def latest_study(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).order_by("-version").first()
    if study is None:
        raise StudyNotFound(f"no study with slug {slug!r}")
    return study


def latest_version(slug: str) -> tuple[int, str, str]:
    """The id, file digest and lifecycle state of the latest version (without reading its file: every
    arrival asks)."""
    version = Study.objects.filter(slug=slug).order_by("-version").values_list("pk", "spec_hash", "status").first()
    if version is None:
        raise StudyNotFound(f"no study with slug {slug!r}")
    return version
