import pandas as pd
from rest_framework.renderers import BaseRenderer

from research.export import table_to_csv


class CSVRenderer(BaseRenderer):
    """Render a list of records (or an error dict) as CSV, formulas neutralised."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict):
            data = [data]
        return table_to_csv(pd.DataFrame(data or []))
