"""A study file uploaded in the browser: checked with the same rules as ``load_study``, kept
server-side under the SHA-256 of its bytes until the researcher loads it, and previewed against the
study's current version (what loading it would do, and which fields change).

The stash lives in the run storage (``study-uploads/<user id>/<sha256>.json``), so any web server
can show the preview and load the file; the load reads the stored bytes again and checks their
hash, so nothing the browser resends is trusted.

A file larger than ``INLINE_MAX_BYTES`` is checked, previewed and loaded by background jobs, never
inside a web request: the job stores its preview next to the stash (``<sha256>.<kind>.json``,
:func:`stash_preview`) and the preview page shows that record.
"""

import hashlib
import json
import re
from dataclasses import asdict, dataclass, replace
from datetime import timedelta

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from core import strict_json
from studies.format2 import BlockItems, condition_summaries
from studies.models import Study
from studies.services import StudyLoadResult, may_load_version, slug_taken, spec_digest, stored_file, study_load
from studies.study_file import InvalidStudyFile, StudyFileProblem, read_study_text
from tasks.attention import attention_count

STASH_PREFIX = "study-uploads"
STASH_MAX_AGE = timedelta(days=1)
DIGEST = re.compile(r"^[0-9a-f]{64}$")
MAX_CHANGES = 60
# Checked, previewed and loaded inside the web request up to this size (the work is linear in the bytes:
# validation, the changes against the current version, two validations when loading); larger: a job.
INLINE_MAX_BYTES = 96 * 1024
# A builder CSV up to this size is parsed in the request (then built there if ``studies.builder.builds_inline``)
BUILD_INLINE_MAX_BYTES = 256 * 1024
PREVIEW_KINDS = ("build", "upload")
# What loading a file did (``StudyLoadResult.action``), as the researcher reads it
OUTCOMES = {
    "created": "created as a new study, owned by you",
    "unchanged": "unchanged: the same content is already loaded",
    "replaced": "updated in place (the previous version had no participants yet)",
    "new_version": "saved as a new version (the previous one has participants, who keep theirs)",
    "taken": "refused: the slug is another researcher's",
}


class StashedFileMissing(LookupError):
    """No stashed upload with this hash for this researcher (never uploaded, loaded, or expired)."""


class StashNotStored(OSError):
    """The file could not be stashed (disk full, storage down); nothing of it was kept (507)."""


@dataclass(frozen=True)
class ConditionSummary:
    key: str
    label: str
    pages: int  # pages one participant of this condition sees
    blocks: tuple[BlockItems, ...]  # each task block's items shown, as its item shape names them


@dataclass(frozen=True)
class SpecChange:
    path: str  # as in validation errors: conditions[arrests].subjects[S03].series
    change: str  # "added", "removed", "changed", "order changed"
    before: str = ""
    after: str = ""


@dataclass(frozen=True)
class StudyPreview:
    digest: str
    slug: str
    title: str
    conditions: list[ConditionSummary]
    attention_checks: int
    current: Study | None  # the latest version with this slug (None when it is another researcher's)
    outcome: str  # what loading does: "created", "unchanged", "replaced", "new_version" or "taken"
    changes: list[SpecChange]
    more_changes: int  # changes beyond the first MAX_CHANGES
    refusal: str  # why this researcher may not load it ("" if they may)


def _stash_name(user, digest: str) -> str:
    return f"{STASH_PREFIX}/{user.pk}/{digest}.json"


def check_upload_size(upload) -> None:
    """InvalidStudyFile when the upload is larger than ``STUDY_FILE_MAX_BYTES`` (from its size, unread)."""
    limit = settings.STUDY_FILE_MAX_BYTES
    if upload.size > limit:
        raise InvalidStudyFile(
            [StudyFileProblem("", f"file is larger than the limit of {limit:,} bytes ({upload.size:,})")]
        )


def read_upload(upload) -> tuple[str, bytes, dict]:
    """The upload's hash, bytes and validated study, refused (InvalidStudyFile) above
    ``STUDY_FILE_MAX_BYTES`` or when it is not UTF-8 JSON text that passes every study-file rule."""
    check_upload_size(upload)
    raw = upload.read()
    spec = validated_spec(raw)
    return hashlib.sha256(raw).hexdigest(), raw, spec


def validated_spec(raw: bytes) -> dict:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidStudyFile([StudyFileProblem("", f"the file is not UTF-8 text (byte {exc.start})")]) from exc
    return read_study_text(text)


def stash_upload(*, user, digest: str, raw: bytes) -> None:
    """Keep the validated bytes until they are loaded; stashes older than a day are removed. A stash
    of this hash whose bytes do not match (truncated by a full disk) is written again; a failure to
    write leaves no stash behind and raises StashNotStored."""
    folder = f"{STASH_PREFIX}/{user.pk}"
    try:
        old = default_storage.listdir(folder)[1]
    except (FileNotFoundError, NotADirectoryError):
        old = []
    cutoff = timezone.now() - STASH_MAX_AGE
    for name in old:
        if default_storage.get_modified_time(f"{folder}/{name}") < cutoff:
            default_storage.delete(f"{folder}/{name}")
    name = _stash_name(user, digest)
    try:
        stashed_bytes(user=user, digest=digest)
        return  # already stashed, intact
    except StashedFileMissing:
        default_storage.delete(name)  # a truncated stash (nothing when there is none)
    try:
        stored = default_storage.save(name, ContentFile(raw))
    except OSError as exc:
        default_storage.delete(name)
        raise StashNotStored(
            f"The file could not be stored on the server ({exc.strerror or exc}); nothing was kept. "
            "Try again later or tell the platform's operator."
        ) from exc
    if stored != name:  # another request wrote it between the delete and the save: keep one copy
        default_storage.delete(stored)


def stashed_spec(*, user, digest: str) -> dict:
    """The stashed file's validated study, after checking that its bytes still have ``digest``."""
    return validated_spec(stashed_bytes(user=user, digest=digest))


def stashed_bytes(*, user, digest: str) -> bytes:
    """The stashed file's bytes, after checking that they still have ``digest``."""
    if not DIGEST.match(digest):
        raise StashedFileMissing(digest)
    try:
        with default_storage.open(_stash_name(user, digest), "rb") as handle:
            raw = handle.read()
    except FileNotFoundError as exc:
        raise StashedFileMissing(digest) from exc
    if hashlib.sha256(raw).hexdigest() != digest:
        raise StashedFileMissing(digest)
    return raw


def stash_is_large(*, user, digest: str) -> bool:
    """Whether the stashed file is larger than INLINE_MAX_BYTES (loaded and previewed by jobs only)."""
    try:
        return default_storage.size(_stash_name(user, digest)) > INLINE_MAX_BYTES
    except OSError:  # no such stash: the caller's hash check answers 404
        return False


def _preview_name(user, digest: str, kind: str) -> str:
    if kind not in PREVIEW_KINDS:
        raise ValueError(f"preview kind {kind!r} is not one of {', '.join(PREVIEW_KINDS)}")
    return f"{STASH_PREFIX}/{user.pk}/{digest}.{kind}.json"


def stash_preview(*, user, digest: str, kind: str, preview: dict) -> None:
    """Keep a job's preview record (JSON) of the stash ``digest`` next to it, for the preview page."""
    name = _preview_name(user, digest, kind)
    default_storage.delete(name)
    try:
        default_storage.save(name, ContentFile(strict_json.dumps(preview).encode()))
    except OSError as exc:
        default_storage.delete(name)
        raise StashNotStored(f"The preview could not be stored on the server ({exc.strerror or exc}).") from exc


def stashed_preview(*, user, digest: str, kind: str) -> dict | None:
    """The preview record a job stored for this stash, or None (a small file: previewed in the request)."""
    if not DIGEST.match(digest):
        return None
    try:
        with default_storage.open(_preview_name(user, digest, kind), "rb") as handle:
            return json.loads(handle.read())
    except (FileNotFoundError, ValueError):
        return None


def load_stashed(*, user, digest: str) -> StudyLoadResult:
    """Load the stashed file as the user (``study_load``'s ownership rule applies; a new study starts as
    a draft, a new version keeps the study's state), then drop the stash and its preview records."""
    result = study_load(spec=stashed_spec(user=user, digest=digest), owner=user, initial_status=Study.Status.DRAFT)
    default_storage.delete(_stash_name(user, digest))
    for kind in PREVIEW_KINDS:
        default_storage.delete(_preview_name(user, digest, kind))
    return result


def study_preview(*, user, digest: str, spec: dict) -> StudyPreview:
    """Counts per condition (counted from the file, no plan is built), and what loading would do
    compared with the latest version."""
    format1 = spec["format"] == 1
    shown = stored_file(spec)[0] if format1 else spec  # a format 1 file as the conversion it is stored as
    seen = condition_summaries(shown)
    conditions = [
        ConditionSummary(c["key"], c["label"], seen[c["key"]].pages, seen[c["key"]].blocks) for c in shown["conditions"]
    ]
    current = Study.objects.filter(slug=spec["slug"]).defer("spec").order_by("-version").first()
    refusal, changes = "", []
    if current is None:
        outcome = "created"
    elif not may_load_version(user, current):  # nothing of another researcher's study is compared or shown
        current, outcome, refusal = None, "taken", slug_taken(spec["slug"])
    else:
        stored = shown if format1 else stored_file(spec)[0]  # what loading would store
        # a format 1 file against the format 1 file the current version was converted from, as uploaded
        previous = current.format1_spec
        changes = spec_changes(previous, spec) if format1 and previous else spec_changes(current.spec, stored)
        if current.spec_hash == spec_digest(stored):
            outcome = "unchanged"
        else:
            outcome = "new_version" if current.participants.exists() else "replaced"
    return StudyPreview(
        digest=digest,
        slug=spec["slug"],
        title=spec["title"],
        conditions=conditions,
        attention_checks=attention_count(spec),
        current=current,
        outcome=outcome,
        changes=changes[:MAX_CHANGES],
        more_changes=max(0, len(changes) - MAX_CHANGES),
        refusal=refusal,
    )


def preview_record(preview: StudyPreview) -> dict:
    """A preview as JSON (the current version by its title and number), for :func:`stash_preview`."""
    record = asdict(replace(preview, current=None))
    if preview.current is not None:
        record["current"] = {"title": preview.current.title, "version": preview.current.version}
    return record


def _identity(item) -> str | None:
    """Items of a list are matched by their ``key`` (conditions, sets, prompts, checks) or ``id``
    (subjects); anything else is compared by position."""
    if isinstance(item, dict):
        value = item.get("key", item.get("id"))
        return value if isinstance(value, str) else None
    return None


def _shown(value) -> str:
    text = repr(value) if not isinstance(value, dict | list) else f"{type(value).__name__} of {len(value)}"
    return text if len(text) <= 80 else text[:77] + "..."


def spec_changes(old: dict, new: dict) -> list[SpecChange]:
    """Every field that differs between two validated study files (defaults filled in), as paths."""
    changes: list[SpecChange] = []

    def walk(a, b, path: str) -> None:
        if a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in [*a, *(k for k in b if k not in a)]:
                inner = f"{path}.{key}" if path else key
                if key not in b:
                    changes.append(SpecChange(inner, "removed", _shown(a[key])))
                elif key not in a:
                    changes.append(SpecChange(inner, "added", after=_shown(b[key])))
                else:
                    walk(a[key], b[key], inner)
            return
        ids_a = [_identity(x) for x in a] if isinstance(a, list) else [None]
        ids_b = [_identity(x) for x in b] if isinstance(b, list) else [None]
        keyed = None not in ids_a + ids_b and len(set(ids_a)) == len(ids_a) and len(set(ids_b)) == len(ids_b)
        if keyed:
            by_a, by_b = dict(zip(ids_a, a, strict=True)), dict(zip(ids_b, b, strict=True))
            for key in [*ids_a, *(k for k in ids_b if k not in by_a)]:
                inner = f"{path}[{key}]"
                if key not in by_b:
                    changes.append(SpecChange(inner, "removed"))
                elif key not in by_a:
                    changes.append(SpecChange(inner, "added"))
                else:
                    walk(by_a[key], by_b[key], inner)
            common = [k for k in ids_a if k in by_b]
            if common != [k for k in ids_b if k in by_a]:
                changes.append(SpecChange(path, "order changed"))
            return
        changes.append(SpecChange(path, "changed", _shown(a), _shown(b)))

    walk(old, new, "")
    return changes
