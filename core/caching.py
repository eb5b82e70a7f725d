"""A small thread-safe, size-bounded mapping for per-process caches of immutable values."""

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Lock
from typing import Generic, TypeVar

V = TypeVar("V")
_ALL: list["BoundedCache"] = []


IN_MEMORY_FACTOR = 5  # Python objects of parsed JSON: 3.6-5.0x its compact text (study files, plans)


def json_bytes(value) -> int:
    """The memory a parsed JSON value holds, estimated as IN_MEMORY_FACTOR x its compact text
    (measured with tracemalloc on the bundled studies and the effort demo's 44-page plan)."""
    return IN_MEMORY_FACTOR * len(json.dumps(value, separators=(",", ":"), default=str))


def clear_process_caches() -> None:
    """Empty every cache. Never needed in service (database ids are not reused there), but tests
    roll their database back, so the next test may reuse ids with other content."""
    for cache in _ALL:
        cache.clear()


class BoundedCache(Generic[V]):
    """Least-recently-used mapping of at most ``size`` entries and, with ``max_bytes`` and ``weigh``
    (a value's size in bytes), at most ``max_bytes`` in all: the least recently used entries go
    first, and a value heavier than ``max_bytes`` alone is returned without being kept.

    Only for values that never change once built, so two threads building the same entry at once
    is harmless (the later ``put`` wins).
    """

    def __init__(self, size: int, *, max_bytes: int | None = None, weigh: Callable[[V], int] | None = None) -> None:
        if (max_bytes is None) != (weigh is None):
            raise ValueError("max_bytes and weigh go together")
        self.size = size
        self.max_bytes = max_bytes
        self._weigh = weigh
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._weights: dict[Hashable, int] = {}
        self._total = 0
        self._lock = Lock()
        _ALL.append(self)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> V:
        weight = self._weigh(value) if self._weigh else 0
        if self.max_bytes is not None and weight > self.max_bytes:
            return value
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            self._total += weight - self._weights.get(key, 0)
            self._weights[key] = weight
            while len(self._items) > self.size or (self.max_bytes is not None and self._total > self.max_bytes):
                old, _ = self._items.popitem(last=False)
                self._total -= self._weights.pop(old)
        return value

    @property
    def weight(self) -> int:
        """The bytes held (0 without ``weigh``)."""
        with self._lock:
            return self._total

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weights.clear()
            self._total = 0
