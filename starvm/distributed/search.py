"""MATCH, MIN, MAX, HIT and SETMIN of stdlib/search.star on distributed GPU ranks (and on the
emulated device, which stands in for a GPU on the CPU): the local backend's own kernels
(native/<routine>/cuda.py on a GPU, native/<routine>/emulated.py) run on each rank's block of
rows.

  MATCH, HIT, SETMIN  row by row: each rank's kernel on its rows is the whole answer there;
  MIN, MAX            each rank's kernel finds the extreme of its marked rows and hands it
                      to the host (``extreme_with_value``: on a GPU one 16-byte copy queued
                      behind the kernel, the call's one wait for the device); one
                      all-reduction of one 8-byte word gives the global extreme, and a rank
                      whose value is not it clears its result.

The steps reported are the Star bodies' (native/<routine>/: body_steps), as on one machine. Arguments the
kernels do not take (tables wider than 64 columns, lengths that do not match) run the Star
body on the distributed backend, as before.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from ..native import hit, match, setmin, timed_call
from ..native import max as maximum
from ..native import min as minimum
from .vectors import Shard

NAMES = ("match", "min", "max", "hit", "setmin")
LOCALS = ("cupy", "emulated")


def _kernels(local):
    """(match, (extreme, extreme_with_value), {"hit": HIT's, "setmin": SETMIN's}) of the local
    backend's native kernels (a GPU's, or the emulated device's)."""
    if local.gpu:
        from ..native.hit.cuda import hit_rows
        from ..native.match.cuda import match as match_rows
        from ..native.min.cuda import extreme, extreme_with_value
        from ..native.setmin.cuda import less_rows
    else:
        from ..native.hit.emulated import hit_rows
        from ..native.match.emulated import match as match_rows
        from ..native.min.emulated import extreme, extreme_with_value
        from ..native.setmin.emulated import less_rows
    return match_rows, (extreme, extreme_with_value), {"hit": hit_rows, "setmin": less_rows}


def _usable(B, T, X, Z) -> bool:
    return (T.backend is B and 0 < T.k <= 64 and T.n > 0 and X.n == T.n and Z.n == T.n)


# Per-phase host timestamps of extreme_here (bench_scale's --min-phases): None, or a list
# that receives (phase, time.perf_counter()); PHASE_SYNC also waits for the device after the
# kernel, so that the kernel's time shows apart from the read's.
PHASES: list | None = None
PHASE_SYNC = False
_NOT_FOUND = {False: (1 << 64) - 1, True: 0}   # MIN, MAX: the all-reduction's neutral value


def _mark(B, phase: str) -> None:
    if phase == "kernel" and PHASE_SYNC:
        B.L.synchronize()
    PHASES.append((phase, perf_counter()))


def extreme_here(B, T, X_v, want_max: bool, extreme):
    """MIN / MAX over the ranks: the local kernel, then one all-reduction of the local extremes.
    A rank without a marked row offers the reduction's neutral value; where a marked row holds
    that value itself (MIN of all ones, MAX of 0) the rank keeps its rows, rightly."""
    lay = B.layout(T.n)
    phases = PHASES is not None
    if phases:
        _mark(B, "start")
    if B.size == 1:                     # one rank alone: its extreme is the extreme, nothing to read
        z = extreme[0](T.aux, B.local_part(X_v, T.n), want_max)
        if phases:
            for phase in ("kernel", "read", "allreduce", "end"):
                _mark(B, phase)
        return Shard(z, T.n)
    if lay.local_n:
        z, finish = extreme[1](T.aux, B.local_part(X_v, T.n), want_max)
        if phases:
            _mark(B, "kernel")
        found, value = finish()
    else:
        z, found, value = B.L.zeros(0), 0, 0
        if phases:
            _mark(B, "kernel")
    if phases:
        _mark(B, "read")
    B.bytes_moved[0] += 1
    B.bytes_moved[1] += 8
    mine = np.array([value if found else _NOT_FOUND[want_max]], dtype=np.uint64)
    best = int(B.comm.allreduce_array(mine, "max" if want_max else "min")[0])
    if phases:
        _mark(B, "allreduce")
    if found and value != best:
        z.fill(0)                       # z is this call's own: cleared in place, no allocation
    if phases:
        _mark(B, "end")
    return Shard(z, T.n)


def _local_rows(B, T, kernel, *args):
    """A row-by-row kernel on this rank's rows (nothing to run on a rank without rows)."""
    if not B.layout(T.n).local_n:
        return Shard(B.L.zeros(0), T.n)
    return Shard(kernel(*args), T.n)


def _factory(name: str):
    def make(star_body, backend, meter):
        match_rows, extreme, compare = _kernels(backend.L)
        B = backend

        if name == "match":
            def routine(T, X, v, Z):
                if not (_usable(B, T, X, Z) and v.n == T.k):
                    return star_body(T, X, v, Z)
                meter.charge(match.body_steps(T.k, B.numb(v.v)))
                Z.v = timed_call(lambda: _local_rows(B, T, match_rows, T.aux, B.local_part(X.v, T.n),
                                                     B.whole(v.v, T.k), T.k), B, meter)
                return (Z,)
        elif name in ("min", "max"):
            want_max = name == "max"

            def routine(T, X, Z):
                if not _usable(B, T, X, Z):
                    return star_body(T, X, Z)
                meter.charge((maximum if want_max else minimum).body_steps(T.k))
                Z.v = timed_call(lambda: extreme_here(B, T, X.v, want_max, extreme), B, meter)
                return (Z,)
        else:
            kernel, routine_of = compare[name], hit if name == "hit" else setmin

            def routine(T, F, X, Z):
                if not ((T.n, T.k) == (F.n, F.k) and F.backend is B and _usable(B, T, X, Z)):
                    return star_body(T, F, X, Z)
                meter.charge(routine_of.body_steps(T.k))
                Z.v = timed_call(lambda: _local_rows(B, T, kernel, T.aux, F.aux, B.local_part(X.v, T.n)), B, meter)
                return (Z,)
        routine.star_body = star_body
        return routine
    return make


make_match, make_min, make_max, make_hit, make_setmin = (_factory(n) for n in NAMES)

