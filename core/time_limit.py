"""One SIGALRM time limit for long work in a worker's (or a command's) main thread."""

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def time_limit(seconds: float | None, expired: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``expired()`` after ``seconds`` (nothing outside the main thread, or for no limit).

    Python code is interrupted at its next bytecode; a C loop already running (a pandas parse)
    finishes first. An outer limit already armed is respected: if it comes first it is left alone,
    otherwise it is suspended and re-armed afterwards with its remaining time and its own handler.
    """
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    outer_remaining, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    if outer_remaining and outer_remaining <= seconds:
        yield  # the outer limit comes first
        return

    def expire(signum, frame):
        raise expired()

    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_remaining:
            left = outer_remaining - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), outer_interval)
