"""Native kernels: hand-written implementations that replace a standard-library routine's
Star body on one backend (issue: "fast whole-algorithm paths", "fused associative search").

The Star body stays the specification: a native kernel must compute exactly the same
result, and the tests compare the two on random inputs. A kernel applies only to the
routine *from the standard library* (a program's own routine of the same name runs as
written) and only for the arguments it declares it handles; otherwise the Star body runs.
A native kernel does not execute the Star body's base operations, so it counts no steps;
the machine records its calls and time (``Machine.native_timing``, shown by --profile).

Each backend's kernels live in their own module, imported only when that backend is used.
A registry entry names a factory ``make(star_body, backend, timing) -> routine``: the
routine takes and returns exactly what the generated Python function of the Star routine
does (its arguments, and the tuple of its var slices/words for the caller to copy back).
"""
from __future__ import annotations

import importlib
from time import perf_counter
from typing import Callable

# (routine name, backend name) -> "module:factory"
_REGISTRY: dict[tuple[str, str], str] = {
    ("warshall_adapt", "numpy"): "starvm.native.warshall_numpy:make",
    ("warshall_adapt", "cupy"): "starvm.native.warshall_cupy:make",
    ("match", "cupy"): "starvm.native.search_cupy:make_match",
    ("min", "cupy"): "starvm.native.search_cupy:make_min",
    ("max", "cupy"): "starvm.native.search_cupy:make_max",
    ("hit", "cupy"): "starvm.native.compare_cupy:make_hit",
    ("setmin", "cupy"): "starvm.native.compare_cupy:make_setmin",
    ("iota", "numpy"): "starvm.native.rows_numpy:make_iota",
    ("iota", "cupy"): "starvm.native.rows_cupy:make_iota",
    ("gather", "numpy"): "starvm.native.rows_numpy:make_gather",
    ("gather", "cupy"): "starvm.native.rows_cupy:make_gather",
    ("scatter", "numpy"): "starvm.native.rows_numpy:make_scatter",
    ("scatter", "cupy"): "starvm.native.rows_cupy:make_scatter",
    ("groupmin", "numpy"): "starvm.native.rows_numpy:make_groupmin",
    ("groupmin", "cupy"): "starvm.native.rows_cupy:make_groupmin",
}


def factory_for(routine: str, backend: str) -> Callable | None:
    if backend == "auto":
        return _auto_factory(routine)
    target = _REGISTRY.get((routine, backend))
    if target is None:
        return None
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)


def _auto_factory(routine: str) -> Callable | None:
    """On the auto backend (backends/auto_backend.py) a routine runs its host or its device
    kernel, or its Star body where that side has none, on the side ``place`` picks per call."""
    if not any((routine, side) in _REGISTRY for side in ("numpy", "cupy")):
        return None

    def make(star_body, auto, timing):
        def build(side):
            f = factory_for(routine, side.name)
            return f(star_body, side, timing) if f is not None else star_body
        on_host, on_dev = build(auto.host), None

        def routine_(*args):
            nonlocal on_dev
            if not auto.place(args):
                return on_host(*args)
            if on_dev is None:
                on_dev = build(auto.dev)
            return on_dev(*args)
        routine_.star_body = star_body
        return routine_
    return make


def timed_call(kernel: Callable, backend, timing: list, *args):
    """Run a kernel, wait for the device, add one call and its time to ``timing``."""
    t0 = perf_counter()
    out = kernel(*args)
    backend.synchronize()
    timing[0] += 1
    timing[1] += perf_counter() - t0
    return out


def closure_routine(kernel: Callable) -> Callable:
    """A factory for (n: integer; var P: table) closures: the kernel runs when P is n x n."""
    def make(star_body, backend, timing):
        def routine(n, P):
            if not (isinstance(n, int) and P.n == n and P.k == n):
                return star_body(n, P)       # an unusual call: the Star body is the definition
            timed_call(kernel, backend, timing, P)
        routine.star_body = star_body
        return routine
    return make
