"""Native kernels: hand-written implementations that replace a standard-library routine's
Star body on one backend (issue: "fast whole-algorithm paths", "fused associative search").

The Star body stays the specification: a native kernel must compute exactly the same
result, and the tests compare the two on random inputs. A kernel applies only to the
routine *from the standard library* (a program's own routine of the same name runs as
written) and only for the arguments it declares it handles; otherwise the Star body runs.
A native kernel does not execute the Star body's base operations, but it reports the steps
the body would take (steps.py: by formula, from the sizes and what the kernel counted) to the
machine's counters through its ``Meter``, and advances the --max-steps count the same way,
so a program's step counts do not depend on which route ran it. The meter also records the
kernel's calls and time (``Machine.native_timing``, shown by --profile).

Each backend's kernels live in their own module, imported only when that backend is used.
A registry entry names a factory ``make(star_body, backend, meter) -> routine``: the
routine takes and returns exactly what the generated Python function of the Star routine
does (its arguments, and the tuple of its var slices/words for the caller to copy back).
The emulated device (backends/emulated_device.py, auto's device where no GPU is usable) has
kernels of its own (emulated.py): the NumPy kernels, behind its device-style vectors.
"""
from __future__ import annotations

import operator
from time import perf_counter
from typing import Callable

def factory_for(routine: str, backend: str) -> Callable | None:
    """The factory of routine's native kernel on the backend named ``backend``, or None
    (registry.py decides; machine.py and jit/tier.py move to ``registry.native_for``)."""
    from .registry import _factory
    return _factory(routine, backend)


class Meter:
    """What native kernels report to their machine: calls and time (``timing``, the machine's
    ``native_timing``), and the steps their Star bodies would take (``counts``, the machine's
    step counters; ``ticks()`` gives the machine's --max-steps ticker, None without a limit).
    ``timed()`` says whether a call waits for the device to time its kernel (the machine's
    --profile): otherwise the next operation that reads the device waits, as after any launch."""

    def __init__(self, timing: list | None = None, counts: list | None = None, ticks: Callable = lambda: None,
                 timed: Callable[[], bool] = lambda: True):
        from ..ir.ops import BASE_OPS
        self.timing = timing if timing is not None else [0, 0.0]
        self.counts = counts if counts is not None else [0] * len(BASE_OPS)
        self.ticks = ticks
        self.timed = timed
        self._index = {op: i for i, op in enumerate(BASE_OPS)}

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
            self.counts[self._index[op]] += c

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


def closure_routine(kernel: Callable) -> Callable:
    """A factory for (n: integer; var P: table) closures: the kernel runs when P is n x n.
    ``kernel(P)`` returns the number of OR steps the Star body takes (steps.warshall_adapt)."""
    from . import steps

    def make(star_body, backend, meter):
        def routine(n, P):
            if not (isinstance(n, int) and P.n == n and P.k == n):
                return star_body(n, P)       # an unusual call: the Star body is the definition
            if not meter.affords(steps.warshall_adapt(n, 0).ticks):
                return star_body(n, P)       # past --max-steps: the body stops part way
            meter.tick(steps.warshall_adapt(n, 0).ticks)
            ors = timed_call(kernel, backend, meter, P)
            meter.count(steps.warshall_adapt(n, int(ors)).ops)
        routine.star_body = star_body
        return routine
    return make
