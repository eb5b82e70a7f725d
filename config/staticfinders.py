"""Serve the Plotly.js bundle that the ``plotly`` Python package ships, as ``vendor/plotly.min.js``.

Only that one file is exposed (not the package's data sets), and no CDN is involved.
"""

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
STATIC_NAME = "vendor/plotly.min.js"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs):
        self.storage = FileSystemStorage(location=str(PLOTLY_JS.parent))
        self.storage.prefix = "vendor"

    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        if path != STATIC_NAME:
            return [] if find_all else None
        return [str(PLOTLY_JS)] if find_all else str(PLOTLY_JS)

    def list(self, ignore_patterns):
        yield PLOTLY_JS.name, self.storage
