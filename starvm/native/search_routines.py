"""The routines around the search kernels (MIN, MAX, HIT, SETMIN of stdlib/search.star):
which arguments a kernel takes, the Star body for the rest, and the steps the body would take
(steps.py), for any backend's kernels (search_cupy.py and compare_cupy.py on the GPU,
emulated.py on the emulated device).

Kernels take and return the backend's vectors: ``extreme(T, X_v, want_max)``,
``compare(name, T, F, X_v)`` with name "hit_rows" (HIT) or "less_rows" (SETMIN); each returns
Z's new value. MATCH has no native kernel on one device: the GPU tier's compiled body is within
2x of its CUDA kernel (docs/architecture.md), which distributed/search.py runs on its ranks.
"""
from __future__ import annotations

from . import steps, timed_call


def _usable(T, X, Z) -> bool:
    return 0 < T.k <= 64 and T.n > 0 and X.n == T.n and Z.n == T.n


def extreme_factory(extreme, want_max: bool):
    def count(k):                       # looked up per call (a test replaces a formula)
        return (steps.maximum if want_max else steps.minimum)(k)

    def make(star_body, backend, meter):
        def routine(T, X, Z):
            if not _usable(T, X, Z) or not meter.affords(count(T.k).ticks):
                return star_body(T, X, Z)
            meter.charge(count(T.k))
            Z.v = timed_call(extreme, backend, meter, T, X.v, want_max)
            return (Z,)
        routine.star_body = star_body
        return routine
    return make


def compare_factory(compare, kernel_name: str):
    def count(k):
        return (steps.hit if kernel_name == "hit_rows" else steps.setmin)(k)

    def make(star_body, backend, meter):
        def routine(T, F, X, Z):
            if not ((T.n, T.k) == (F.n, F.k) and T.n > 0 and X.n == T.n and Z.n == T.n) or not meter.affords(
                    count(T.k).ticks):
                return star_body(T, F, X, Z)
            meter.charge(count(T.k))
            Z.v = timed_call(compare, backend, meter, kernel_name, T, F, X.v)
            return (Z,)
        routine.star_body = star_body
        return routine
    return make
