"""One export table as a downloadable file, for the dashboard's links and the API's ``?format=``:
CSV (the answers table streamed as it is read), JSON, Parquet, SPSS ``.sav`` or Stata ``.dta``
(typed and labelled by the codebook: ``research.export_formats``). pandas, pyarrow and pyreadstat
are imported only when such a file is asked for."""

import tempfile
from pathlib import Path

from django.http import HttpResponse
from django.http.response import HttpResponseBase

from research.export_stream import STREAMED, streamed_csv_response
from research.participant_samples import DEFAULT_SAMPLE, sample_filter

DOWNLOAD_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "parquet": "application/vnd.apache.parquet",
    "sav": "application/x-spss-sav",
    "dta": "application/x-stata-dta",
}
FILE_FORMATS = ("parquet", "sav", "dta")  # binary files: no JSON records, no paging


def table_download(slug: str, table: str, sample: str, fmt: str) -> HttpResponseBase:
    """The table ``table`` of study ``slug`` (participants filter ``sample``) as an attachment in ``fmt``,
    named ``<slug>[-<sample>]-<table>.<fmt>`` (the sample named when it is not the default)."""
    name = slug if sample == DEFAULT_SAMPLE else f"{slug}-{sample}"
    filename = f"{name}-{table}.{fmt}"
    if fmt == "csv" and table in STREAMED:
        return streamed_csv_response(slug, table, sample_filter(sample), filename)
    from research.export import cached_export, table_to_csv, table_to_json

    frame = getattr(cached_export(slug, sample), table)
    if fmt in ("csv", "json"):
        body: bytes | str = table_to_csv(frame) if fmt == "csv" else table_to_json(frame)
    else:
        from research.codebook import export_labels
        from research.export_formats import write_table

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / filename
            write_table(frame, path, fmt, export_labels(slug)[table])
            body = path.read_bytes()
    response = HttpResponse(body, content_type=DOWNLOAD_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
