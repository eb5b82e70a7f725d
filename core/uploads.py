"""Read an uploaded CSV safely: bounded size, rows, columns and time, a checked header, specific errors.

Everything a researcher uploads (situation-testing data, counterfactuals, audit subjects) goes
through :func:`read_csv_upload`, which refuses, with an :class:`UploadError` naming the upload:

* a file larger than ``max_bytes`` (checked from the file's size or while reading, never after
  reading it all), an empty file, text that is not UTF-8;
* a separator that is not one character (``"\\t"`` typed as backslash-t means a tab): pandas would
  read a longer one as a regular expression;
* a header (its first line, read with the :mod:`csv` module before pandas sees anything) with
  duplicate names (pandas renames duplicates in quadratic time: 100,000 copies of one name kept a
  worker busy for 80 s), more than ``max_columns`` columns, or empty names;
* more than ``max_rows`` data rows (pandas stops reading at ``max_rows + 1``).

Time: pandas' C tokenizer cannot be interrupted from Python, so the real bound on parse time is
the byte, row and column limits above (a 20 MB file of 1,000 columns parsed in 0.5 s on the
2-core development machine). ``max_seconds`` is enforced with a SIGALRM timer when the call runs
in the process's main thread (management commands; a job worker, whose own job timer is suspended
and re-armed around the parse): the Python-level parts of the parse are interrupted, the
tokenizer's current pass finishes first. In other threads (web requests) the limit is the
server's own timeout (``GUNICORN_TIMEOUT``) and a background job's time limit.

NaN and infinite values are the analysis' business (which columns must be numbers depends on it):
situation testing and the audit's subjects reader refuse them with the column and the first rows.
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from typing import TYPE_CHECKING

from django.conf import settings

from core.time_limit import time_limit

if TYPE_CHECKING:
    import pandas as pd

SEPARATOR_HINT = 'use one character, e.g. sep "," or ";" or "|", or "\\t" for a tab (--sep on the command line)'
_CHUNK = 1 << 16


class UploadError(ValueError):
    """An upload that cannot be read; the message names the upload and the rule it breaks."""


def check_separator(sep: str, name: str) -> str:
    """The separator as pandas needs it (one character; `\\t` means tab), else UploadError."""
    if sep in ("\\t", "\t"):
        return "\t"
    if not isinstance(sep, str) or len(sep) != 1 or sep in '\r\n"':
        raise UploadError(f"{name}: separator {sep!r} is not allowed; {SEPARATOR_HINT}")
    return sep


def _read_bytes(source, *, name: str, max_bytes: int) -> bytes:
    """The upload's bytes, refusing anything larger than ``max_bytes`` before reading it all."""

    def too_large(size: int | None = None) -> UploadError:
        got = f" ({size:,} bytes)" if size is not None else ""
        return UploadError(f"{name}: file is larger than the limit of {max_bytes:,} bytes{got}")

    if isinstance(source, bytes | bytearray | memoryview):
        if len(source) > max_bytes:
            raise too_large(len(source))
        return bytes(source)
    if isinstance(source, str | os.PathLike):
        try:
            size = os.stat(source).st_size
            if size > max_bytes:
                raise too_large(size)
            with open(source, "rb") as handle:
                return _read_limited(handle, max_bytes, too_large)
        except OSError as exc:
            raise UploadError(f"{name}: cannot read {source}: {exc.strerror or exc}") from exc
    known = getattr(source, "size", None)  # Django's UploadedFile knows its size
    if isinstance(known, int) and known > max_bytes:
        raise too_large(known)
    if hasattr(source, "seek"):
        try:
            source.seek(0)
        except (OSError, ValueError):
            pass
    if hasattr(source, "chunks"):
        out = bytearray()
        for chunk in source.chunks(_CHUNK):
            out += chunk
            if len(out) > max_bytes:
                raise too_large()
        return bytes(out)
    return _read_limited(source, max_bytes, too_large)


def _read_limited(handle, max_bytes: int, too_large) -> bytes:
    data = handle.read(max_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > max_bytes:
        raise too_large()
    return data


def _check_header(text: str, *, name: str, sep: str, max_columns: int) -> list[str]:
    first_line = next(csv.reader(io.StringIO(text, newline=None), delimiter=sep), None)
    if not first_line or all(not cell.strip() for cell in first_line):
        raise UploadError(f"{name}: the first line (the header) is empty")
    duplicates = [(column, n) for column, n in Counter(first_line).items() if n > 1]
    if duplicates:
        shown = ", ".join(f"{column!r} ({n} times)" for column, n in duplicates[:5])
        more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
        raise UploadError(f"{name}: duplicate column name(s) in the header: {shown}{more}; every name must be unique")
    if len(first_line) > max_columns:
        raise UploadError(f"{name}: {len(first_line):,} columns, more than the limit of {max_columns:,}")
    empty = [i + 1 for i, cell in enumerate(first_line) if not cell.strip()]
    if empty:
        shown = ", ".join(map(str, empty[:5])) + (" ..." if len(empty) > 5 else "")
        raise UploadError(f"{name}: empty column name(s) in the header at position(s) {shown}; name every column")
    return first_line


def _read_text(source, *, name: str, max_bytes: int) -> str:
    """The upload as text: not empty, UTF-8 (a byte-order mark dropped), no NUL bytes."""
    raw = _read_bytes(source, name=name, max_bytes=max_bytes)
    if not raw.strip():
        raise UploadError(f"{name}: the file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UploadError(f"{name}: the file is not UTF-8 text (byte {exc.start}); save it as CSV UTF-8") from exc
    if "\x00" in text:
        raise UploadError(f"{name}: the file contains NUL bytes; it is not a text CSV")
    return text


def csv_upload_header(source, *, name: str, sep: str = ",") -> list[str]:
    """The column names of an uploaded CSV (its checked header, as :func:`read_csv_upload` checks it, under
    the same byte and column limits), without pandas: a request can check an upload's columns."""
    text = _read_text(source, name=name, max_bytes=settings.UPLOAD_MAX_BYTES)
    return _check_header(text, name=name, sep=check_separator(sep, name), max_columns=settings.UPLOAD_MAX_COLUMNS)


PARQUET_MAGIC = b"PAR1"  # a Parquet file's first and last four bytes


def is_parquet(source, *, name: str) -> bool:
    """Whether an upload is a Parquet file (it starts with ``PAR1``), under the byte limit; UploadError when it
    starts like one but does not end like one (a truncated file). Without pyarrow: a request can ask."""
    raw = _read_bytes(source, name=name, max_bytes=settings.UPLOAD_MAX_BYTES)
    if raw[:4] != PARQUET_MAGIC:
        return False
    if len(raw) < 12 or raw[-4:] != PARQUET_MAGIC:
        raise UploadError(f"{name}: the file starts like Parquet but does not end like it (truncated?)")
    return True


def check_parquet_upload(path, *, name: str) -> None:
    """A Parquet upload within the row and column limits, read from its footer (pyarrow: job side only)."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise UploadError(f"{name}: not a readable Parquet file: {exc}") from exc
    if meta.num_rows > settings.UPLOAD_MAX_ROWS:
        raise UploadError(f"{name}: {meta.num_rows:,} rows, more than the limit of {settings.UPLOAD_MAX_ROWS:,}")
    if meta.num_columns > settings.UPLOAD_MAX_COLUMNS:
        raise UploadError(
            f"{name}: {meta.num_columns:,} columns, more than the limit of {settings.UPLOAD_MAX_COLUMNS:,}"
        )


class _ParseTimeout(BaseException):
    """A BaseException, so that no ``except Exception`` inside pandas turns it into another error."""


def read_csv_upload(
    source,
    *,
    name: str,
    sep: str = ",",
    max_bytes: int | None = None,
    max_rows: int | None = None,
    max_columns: int | None = None,
    max_seconds: float | None = None,
    text_columns: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Read an uploaded CSV (a path, bytes, or a Django UploadedFile / binary file-like) into a DataFrame.

    ``text_columns`` are read as written (no number inference: an id "007" stays "007", not 7).

    Limits default to the settings ``UPLOAD_MAX_BYTES``, ``UPLOAD_MAX_ROWS``, ``UPLOAD_MAX_COLUMNS``
    and ``UPLOAD_MAX_PARSE_SECONDS``. Raises :class:`UploadError` (a ``ValueError``) whose message
    starts with ``name`` and states the rule; see the module docstring for every check.
    """
    import pandas as pd  # only a reading loads pandas; the module's errors and checks stay light

    max_bytes = settings.UPLOAD_MAX_BYTES if max_bytes is None else max_bytes
    max_rows = settings.UPLOAD_MAX_ROWS if max_rows is None else max_rows
    max_columns = settings.UPLOAD_MAX_COLUMNS if max_columns is None else max_columns
    max_seconds = settings.UPLOAD_MAX_PARSE_SECONDS if max_seconds is None else max_seconds
    sep = check_separator(sep, name)
    text = _read_text(source, name=name, max_bytes=max_bytes)
    _check_header(text, name=name, sep=sep, max_columns=max_columns)
    try:
        with time_limit(max_seconds, _ParseTimeout):
            frame = pd.read_csv(
                io.StringIO(text), sep=sep, nrows=max_rows + 1, engine="c", dtype=dict.fromkeys(text_columns, str)
            )
    except _ParseTimeout as exc:
        raise UploadError(f"{name}: reading the file took longer than {max_seconds:g} s") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, csv.Error) as exc:
        raise UploadError(f"{name}: cannot read the CSV: {str(exc).strip()}") from exc
    if len(frame) > max_rows:
        raise UploadError(f"{name}: more than the limit of {max_rows:,} data rows")
    return frame
