"""A study's maximum time (``time_limit`` in the study file) and who is past it.

A participant's time runs from their arrival (opening the study link, when Prolific's own clock
for the submission starts too). Active participants past ``max_minutes`` become ``timed_out``:
lazily on their next request, or by ``manage.py expire_participants``; the condition balance
ignores them at once (it counts active participants only while they are within the limit).
"""

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class TimeLimit:
    max_minutes: int | None  # None: no limit
    may_finish_late: bool = False  # whether a timed-out participant may still answer the remaining pages

    def cutoff(self, now: datetime) -> datetime | None:
        """Participants who arrived before this moment are past the limit (None without a limit)."""
        return None if self.max_minutes is None else now - timedelta(minutes=self.max_minutes)

    def expired(self, arrived_at: datetime | None, now: datetime) -> bool:
        cutoff = self.cutoff(now)
        return cutoff is not None and arrived_at is not None and arrived_at < cutoff


def time_limit(spec: dict) -> TimeLimit:
    """The study file's ``time_limit`` (``max_minutes``, ``may_finish_late``, default false)."""
    limit = spec.get("time_limit")
    if not limit:
        return TimeLimit(None)
    return TimeLimit(limit["max_minutes"], bool(limit.get("may_finish_late", False)))
