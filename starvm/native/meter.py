"""What native kernels report to their machine (``Meter``) and how a kernel's call is timed
(``timed_call``)."""
from __future__ import annotations

import operator
from time import perf_counter
from typing import Callable

from ..ir.ops import STEP_INDEX


class Meter:
    """What native kernels report to their machine: calls and time (``timing``, the machine's
    ``native_timing``), and the steps their Star bodies would take (``counts``, the machine's
    step counters; ``ticks()`` gives the machine's --max-steps ticker, None without a limit).
    ``timed()`` says whether a call waits for the device to time its kernel (the machine's
    --profile): otherwise the next operation that reads the device waits, as after any launch."""

    def __init__(self, timing: list | None = None, counts: list | None = None, ticks: Callable = lambda: None,
                 timed: Callable[[], bool] = lambda: True):
        self.timing = timing if timing is not None else [0, 0.0]
        self.counts = counts if counts is not None else [0] * len(STEP_INDEX)
        self.ticks = ticks
        self.timed = timed

    def affords(self, ticks: int) -> bool:
        """Can the body take ``ticks`` more loop iterations and calls within --max-steps? A
        routine runs its kernel only then: past the limit the body stops part way, with what
        it wrote and counted up to there, so the body itself runs (the same partial effects on
        every route, natives on or off, interpreted or compiled)."""
        tick = self.ticks()
        return tick is None or ticks <= ticks_left(tick)

    def tick(self, count: int) -> None:
        """Loop iterations and calls the body would take (a routine checks first that the
        limit ``affords`` them)."""
        tick = self.ticks()
        if tick is not None:
            from ..execution.limits import tick_many
            tick_many(tick, count)

    def count(self, ops: dict) -> None:
        for op, c in ops.items():
            self.counts[STEP_INDEX[op]] += c

    def charge(self, steps) -> None:
        """A steps.Steps known before the kernel runs (and ``affords``): ticks, then the counts."""
        self.tick(steps.ticks)
        self.count(steps.ops)


def ticks_left(tick) -> int:
    """How many more calls a --max-steps ticker (execution/limits.ticker) allows."""
    gen = tick.__self__
    if gen.gi_frame is None:            # exhausted: it raised
        return 0
    if gen.gi_yieldfrom is None:        # not started: its whole limit
        return int(gen.gi_frame.f_locals["max_steps"])
    return operator.length_hint(gen.gi_yieldfrom)


def timed_call(kernel: Callable, backend, meter: Meter, *args):
    """Run a kernel, add one call and its time to the meter; the time is the kernel's only
    where the meter is timed (a wait for the device: about 4 ms of BORUVKA's 62 at R-MAT
    scale 22 on the H100, bench/results/stdlib_auto_h100_boruvka_kernels.md)."""
    t0 = perf_counter()
    out = kernel(*args)
    if meter.timed():
        backend.synchronize()
    meter.timing[0] += 1
    meter.timing[1] += perf_counter() - t0
    return out
