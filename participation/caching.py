"""A small thread-safe, size-bounded mapping for per-process caches of immutable values."""

from collections import OrderedDict
from collections.abc import Hashable
from threading import Lock
from typing import Generic, TypeVar

V = TypeVar("V")
_ALL: list["BoundedCache"] = []


def clear_process_caches() -> None:
    """Empty every cache. Never needed in service (database ids are not reused there), but tests
    roll their database back, so the next test may reuse ids with other content."""
    for cache in _ALL:
        cache.clear()


class BoundedCache(Generic[V]):
    """Least-recently-used mapping of at most ``size`` entries.

    Only for values that never change once built, so two threads building the same entry at once
    is harmless (the later ``put`` wins).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = Lock()
        _ALL.append(self)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> V:
        with self._lock:
            self._items[key] = value
            if len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
