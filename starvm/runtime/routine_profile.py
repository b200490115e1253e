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
    # the steps by kind (indexed like Machine.counts), kept only while ``by_kind`` is on (--cost)
    kinds_self: list[int] | None = None
    kinds_total: list[int] | None = None


class RoutineProfile:
    def __init__(self, counts: list[int]):
        self.counts = counts
        self.routines: dict[str, RoutineStats] = {}
        self._stack: list[list] = []   # per active call: [child steps, child seconds, child steps by kind]
        self.by_kind = False           # also keep each routine's steps by kind (starvm/costs)

    def reset(self) -> None:
        # in place: the wrapped routines keep their RoutineStats objects
        for stats in self.routines.values():
            stats.calls = stats.steps_total = stats.steps_self = 0
            stats.time_total = stats.time_self = 0.0
            stats.kinds_self = stats.kinds_total = None

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
        counts, stack, profile = self.counts, self._stack, self

        @functools.wraps(fn)
        def profiled(*args):
            stats.calls += 1
            stats.active += 1
            by_kind = profile.by_kind
            k0 = list(counts) if by_kind else None
            s0, t0 = sum(counts), time.perf_counter()
            stack.append([0, 0.0, [0] * len(counts) if by_kind else None])
            try:
                return fn(*args)
            finally:
                steps, secs = sum(counts) - s0, time.perf_counter() - t0
                child_steps, child_secs, child_kinds = stack.pop()
                stats.steps_self += steps - child_steps
                stats.time_self += secs - child_secs
                stats.active -= 1
                kinds = [a - b for a, b in zip(counts, k0)] if k0 is not None else None
                if kinds is not None and child_kinds is not None:
                    _add(stats, "kinds_self", [a - b for a, b in zip(kinds, child_kinds)])
                if stats.active == 0:      # recursion: the outermost call holds the total
                    stats.steps_total += steps
                    stats.time_total += secs
                    if kinds is not None:
                        _add(stats, "kinds_total", kinds)
                if stack:
                    stack[-1][0] += steps
                    stack[-1][1] += secs
                    if kinds is not None and stack[-1][2] is not None:
                        stack[-1][2] = [a + b for a, b in zip(stack[-1][2], kinds)]

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


def _add(stats: RoutineStats, field: str, kinds: list[int]) -> None:
    old = getattr(stats, field)
    setattr(stats, field, kinds if old is None else [a + b for a, b in zip(old, kinds)])
