"""Per-routine profile for `star run --profile`, in the manner of cProfile's listing.

When profiling is on, every Star routine the machine defines is wrapped at the call layer
(the name the generated code calls it by): each call counts, and the machine's step counters
and a clock are read as it enters and leaves. *Total* is the call with everything it calls;
*self* leaves out the routines it calls. A recursive routine's total counts its outermost
call only (as cProfile's cumulative time). A routine the compiled tier (starvm/jit) runs is
wrapped like any other, but the routines it calls from compiled code are counted as part of
it; a standard-library routine replaced by a native kernel is counted as one call with the
steps of the Star body it replaces.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass


@dataclass
class RoutineStats:
    display: str
    where: str
    calls: int = 0
    steps_total: int = 0
    steps_self: int = 0
    time_total: float = 0.0
    time_self: float = 0.0
    active: int = 0          # nesting depth of this routine right now (recursion)


class RoutineProfile:
    def __init__(self, counts: list[int]):
        self.counts = counts
        self.routines: dict[str, RoutineStats] = {}
        self._stack: list[list] = []   # per active call: [child steps, child seconds]

    def reset(self) -> None:
        # in place: the wrapped routines keep their RoutineStats objects
        for stats in self.routines.values():
            stats.calls = stats.steps_total = stats.steps_self = 0
            stats.time_total = stats.time_self = 0.0

    def install(self, ns: dict, routines) -> None:
        """Wrap each routine of ``routines`` (RoutineInfo) found in ``ns``."""
        for info in routines:
            fn = ns.get(info.pyname)
            if fn is None or getattr(fn, "_star_profiled", False):
                continue
            loc = info.node.loc
            stats = self.routines.setdefault(info.pyname, RoutineStats(info.display, f"{loc.filename}:{loc.line}"))
            ns[info.pyname] = self._wrap(fn, stats)

    def uninstall(self, ns: dict) -> None:
        """Put the unwrapped routines back (profiling off: no cost per call)."""
        for name, fn in list(ns.items()):
            if getattr(fn, "_star_profiled", False):
                ns[name] = fn.__wrapped__

    def _wrap(self, fn, stats: RoutineStats):
        counts, stack = self.counts, self._stack

        @functools.wraps(fn)
        def profiled(*args):
            stats.calls += 1
            stats.active += 1
            s0, t0 = sum(counts), time.perf_counter()
            stack.append([0, 0.0])
            try:
                return fn(*args)
            finally:
                steps, secs = sum(counts) - s0, time.perf_counter() - t0
                child_steps, child_secs = stack.pop()
                stats.steps_self += steps - child_steps
                stats.time_self += secs - child_secs
                stats.active -= 1
                if stats.active == 0:      # recursion: the outermost call holds the total
                    stats.steps_total += steps
                    stats.time_total += secs
                if stack:
                    stack[-1][0] += steps
                    stack[-1][1] += secs

        profiled._star_profiled = True
        return profiled

    def report(self) -> list[str]:
        rows = sorted((s for s in self.routines.values() if s.calls),
                      key=lambda s: (-s.steps_total, s.display))
        if not rows:
            return []
        head = f"{'calls':>8}{'self steps':>12}{'total steps':>13}{'self, s':>10}{'total, s':>10}  routine"
        lines = ["per routine (total: with the routines it calls; self: without them)", head, "-" * len(head)]
        for s in rows:
            lines.append(f"{s.calls:>8}{s.steps_self:>12}{s.steps_total:>13}{s.time_self:>10.4f}"
                         f"{s.time_total:>10.4f}  {s.display} ({s.where})")
        return lines
