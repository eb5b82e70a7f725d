"""The API's one way of paging lists: ``?limit=`` and ``?offset=``, answered as
``{"count": ..., "next": URL or null, "previous": URL or null, "results": [...]}``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.pagination import LimitOffsetPagination

if TYPE_CHECKING:
    import pandas as pd

MAX_PAGE_SIZE = 1000


class ApiPagination(LimitOffsetPagination):
    """DRF's limit/offset pagination: ``limit`` defaults to ``PAGE_SIZE`` (100) and is capped at
    :data:`MAX_PAGE_SIZE` (a larger ``limit`` gives a page of that size, not an error)."""

    max_limit = MAX_PAGE_SIZE

    def paginate_frame(self, frame: pd.DataFrame, request, view=None) -> list[dict]:
        """One page of a table's rows as JSON-ready records (only the page is converted)."""
        from research.export import table_records

        self.request = request
        self.limit = self.get_limit(request)
        assert self.limit is not None, "PAGE_SIZE is set (config/settings.py)"
        self.count = len(frame)
        self.offset = self.get_offset(request)
        return table_records(frame.iloc[self.offset : self.offset + self.limit])
