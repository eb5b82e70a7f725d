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
