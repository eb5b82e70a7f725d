from rest_framework.renderers import BaseRenderer


class CSVRenderer(BaseRenderer):
    """Render a list of records (or an error dict) as CSV, formulas neutralised."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        import pandas as pd  # loaded by the first CSV response, never by a participant page

        from research.export import table_to_csv

        if isinstance(data, dict):
            data = [data]
        return table_to_csv(pd.DataFrame(data or []))


class TableFileRenderer(BaseRenderer):
    """Negotiates ``?format=parquet|sav|dta`` for an export table; the view answers with the file itself
    (``research.downloads.table_download``) and errors are answered as JSON (``api_exception_handler``)."""

    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


def _file_renderer(fmt: str) -> type[TableFileRenderer]:
    from research.downloads import DOWNLOAD_TYPES

    return type(f"{fmt.title()}Renderer", (TableFileRenderer,), {"format": fmt, "media_type": DOWNLOAD_TYPES[fmt]})


FILE_RENDERERS = [_file_renderer(fmt) for fmt in ("parquet", "sav", "dta")]
