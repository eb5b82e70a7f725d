"""Progress through a job's stages with counts and a time estimate ("metric bootstrap 120/500, about 8 s left"),
for the job page and the commands' output. Light: no scientific import."""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

MIN_ESTIMATE_SECONDS = 1.0  # a stage estimates the time left once it has run this long


def seconds_text(seconds: float) -> str:
    """``8 s``, ``2 min`` (rounded up to whole seconds or minutes)."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


@dataclass
class StageProgress:
    """A ``progress(stage, done, total)`` callback. ``stages`` (or :meth:`plan`): the planned stages in order,
    each an equal share of the whole: the overall fraction is the finished stages plus the running one's
    ``done / total`` (a stage not planned: its own ``done / total``). The time left is the running stage's: its
    elapsed time per item times the items left (linear in the count; shown once the stage has run
    MIN_ESTIMATE_SECONDS).

    ``report(fraction, message)`` is told at most every ``min_interval`` seconds, and always when a stage
    starts or ends; ``log(line)`` is told when a stage ends ("metric bootstrap: 500 in 12.3 s").
    :meth:`durations` gives each stage's time so far (``bench/audit.py``)."""

    report: Callable[[float, str], None]
    stages: Sequence[str] = ()
    log: Callable[[str], None] | None = None
    min_interval: float = 0.5
    clock: Callable[[], float] = time.monotonic
    _started: dict[str, float] = field(default_factory=dict, init=False)
    _ended: dict[str, float] = field(default_factory=dict, init=False)
    _last_report: float = field(default=float("-inf"), init=False)

    def plan(self, stages: Sequence[str]) -> None:
        """Plan the stages (in order) the work will report."""
        self.stages = tuple(stages)

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = self.clock()
        starting = stage not in self._started
        if starting:
            self._started[stage] = now
        ending = done >= total and stage not in self._ended
        if ending:
            self._ended[stage] = now
        if not (starting or ending or now - self._last_report >= self.min_interval):
            return
        self._last_report = now
        self.report(self._fraction(stage, done, total), self.message(stage, done, total, now))
        if ending and self.log is not None:
            self.log(f"{stage}: {total} in {now - self._started[stage]:.1f} s")

    def _fraction(self, stage: str, done: int, total: int) -> float:
        part = min(done, total) / total if total > 0 else 1.0
        if stage not in self.stages:
            return part
        return (list(self.stages).index(stage) + part) / len(self.stages)

    def message(self, stage: str, done: int, total: int, now: float) -> str:
        """``stage done/total``, with ``about N s left`` once the stage has run MIN_ESTIMATE_SECONDS."""
        text = f"{stage} {done}/{total}"
        elapsed = now - self._started[stage]
        if 0 < done < total and elapsed >= MIN_ESTIMATE_SECONDS:
            text += f", about {seconds_text(elapsed / done * (total - done))} left"
        return text

    def durations(self) -> dict[str, float]:
        """Each stage begun so far, in the order begun, with its seconds (a stage still running: until now)."""
        now = self.clock()
        return {stage: self._ended.get(stage, now) - started for stage, started in self._started.items()}
