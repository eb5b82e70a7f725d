"""A plain-text progress bar for long management commands (no extra dependency)."""

import sys
import time


class ProgressBar:
    def __init__(self, total: int, label: str, stream=None, width: int = 30):
        self.total, self.label, self.width = max(total, 1), label, width
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self._last = -1

    def __call__(self, done: int) -> None:
        percent = int(100 * done / self.total)
        if percent == self._last and done != self.total:
            return
        self._last = percent
        filled = int(self.width * done / self.total)
        elapsed = time.monotonic() - self.started
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{self.total} {elapsed:5.1f}s"
        )
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()
