"""Time budgets: a whole run's budget with a deadline, and a watchdog that stops one call
which overruns its limit (SIGALRM: only in the main thread of a POSIX process)."""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager


class RunTimeout(Exception):
    """Raised by the watchdog inside a call that overran its limit."""


def _alarm(signum, frame):
    raise RunTimeout()


def watchdog_available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def watchdog(limit_s: float | None):
    """``with watchdog(5.0): call()`` raises RunTimeout in ``call`` after 5 s (at least 0.05 s);
    ``None``, or no SIGALRM here: no limit."""
    if limit_s is None or not watchdog_available():
        yield
        return
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, limit_s))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def caused_by_timeout(exc: BaseException | None) -> bool:
    """Is ``exc`` the watchdog's exception, possibly wrapped by a library it interrupted?"""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, RunTimeout):
            return True
        exc = exc.__cause__ or exc.__context__ or getattr(exc, "orig_exc", None)
        seen += 1
    return False


class Budget:
    """A wall-time budget counted from ``start`` (default: now), ``reserve_s`` of it kept back
    (for writing the report)."""

    def __init__(self, total_s: float, start: float | None = None, reserve_s: float = 0.0):
        self.total_s = float(total_s)
        self.start = time.perf_counter() if start is None else start
        self.deadline = self.start + self.total_s - reserve_s

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def spent(self) -> float:
        return time.perf_counter() - self.start

    def fits(self, estimate_s: float | None) -> bool:
        return estimate_s is None or estimate_s <= self.left()
