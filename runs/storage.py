"""Run files through Django's storage API (``STORAGES["default"]``: a local folder by default, any
django-storages backend in production), addressed by run, never by an absolute local path, so any
web server can serve any run's report. A run's files are written all or nothing."""

import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from django.core.files import File
from django.core.files.storage import default_storage


class RunStorageError(OSError):
    """The run's files could not be stored (disk full, backend down); nothing of them was kept."""


_claim: ContextVar[Callable[[str], None] | None] = ContextVar("claim_prefix", default=None)


@contextmanager
def prefixes_claimed(claim: Callable[[str], None]) -> Iterator[None]:
    """Within the block every :func:`new_prefix` is passed to ``claim`` before the folder is returned (a job
    records it on its row, so that the folder is found and deleted if the job's process dies mid-copy)."""
    token = _claim.set(claim)
    try:
        yield
    finally:
        _claim.reset(token)


def new_prefix(kind: str) -> str:
    """A fresh storage folder for one run: ``<kind>/<uuid4>`` (two runs in one second never share one),
    claimed first if a :func:`prefixes_claimed` block is open."""
    prefix = f"{kind}/{uuid.uuid4()}"
    claim = _claim.get()
    if claim is not None:
        claim(prefix)
    return prefix


def store_directory(local_dir: Path, prefix: str) -> list[str]:
    """Save every file of ``local_dir`` (flat) under the fresh folder ``prefix`` (:func:`new_prefix`);
    on any failure delete the whole folder (with the file a full disk left truncated, which ``save``
    never named) and raise RunStorageError with the reason."""
    saved: list[str] = []
    try:
        for path in sorted(p for p in Path(local_dir).iterdir() if p.is_file()):
            with path.open("rb") as handle:
                saved.append(default_storage.save(f"{prefix}/{path.name}", File(handle, name=path.name)))
    except OSError as exc:
        delete_files(saved)
        delete_prefix(prefix)
        raise RunStorageError(f"could not store the run's files: {exc.strerror or exc}") from exc
    return saved


def store_upload(upload, prefix: str, name: str) -> str:
    """Save an uploaded file (chunk by chunk) as ``prefix/name``; a failure leaves nothing behind."""
    target = f"{prefix}/{name}"
    try:
        return default_storage.save(target, upload)
    except OSError as exc:
        delete_files([target])
        raise RunStorageError(f"could not store the upload {name!r}: {exc.strerror or exc}") from exc


def delete_files(names: list[str]) -> None:
    for name in names:
        try:
            default_storage.delete(name)
        except OSError:
            pass


def delete_prefix(prefix: str) -> None:
    """Remove every file under ``prefix``, its sub-folders included (and, for a local folder, the
    folder itself)."""
    if not prefix:
        return
    try:
        folders, files = default_storage.listdir(prefix)
    except (FileNotFoundError, NotADirectoryError):
        return
    delete_files([f"{prefix}/{name}" for name in files])
    for folder in folders:
        delete_prefix(f"{prefix}/{folder}")
    local = getattr(default_storage, "location", None)
    if local:
        shutil.rmtree(Path(local) / prefix, ignore_errors=True)


def copy_to_local(name: str, target: Path) -> Path:
    """Copy a stored file to a local working file (jobs read their inputs from there)."""
    with default_storage.open(name, "rb") as source, target.open("wb") as out:
        shutil.copyfileobj(source, out)
    return target


def list_files(prefix: str) -> list[str]:
    """Names of the files stored under ``prefix`` (none when it is empty or gone)."""
    if not prefix:
        return []
    try:
        return sorted(default_storage.listdir(prefix)[1])
    except (FileNotFoundError, NotADirectoryError):
        return []
