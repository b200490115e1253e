"""Run one generated program on the reference model and on every route of starvm; report any
difference in what it prints or in its step counts (by kind).

A route is a way of running a program: a backend and the machine's switches. ``ROUTES`` lists
them by name, one line each; adding a route (the compiled tier's, a new backend) is one more
line there. Routes whose backend is not usable here (no GPU) are left out by ``usable_routes``.
"""
from __future__ import annotations

import inspect
import io
from functools import lru_cache

import starvm
from starvm.backends import BackendUnavailable, get_backend

from .gen import Gen, render
from .library_parses import keep_library_parses
from .model import Interp

keep_library_parses()       # a fuzzed program runs on several machines: the library parsed once

# the interpreter (not the compiled tier) where the machine has one: a route says what it wants
_JIT = "jit" in inspect.signature(starvm.Machine.__init__).parameters


def _auto_emulated():
    """The auto backend with the NumPy-emulated device and small thresholds (tables of 64 rows
    or more on the device), so that programs mix host and device tables on any machine."""
    from starvm.backends.auto_backend import AutoBackend
    from starvm.backends.emulated_device import EmulatedDevice
    return AutoBackend(get_backend("numpy"), EmulatedDevice(), gpu_rows=64, gpu_bits=4096)


# name -> (backend: a name or a factory, Machine keyword arguments)
ROUTES: dict[str, tuple] = {
    "numpy": ("numpy", dict(fuse=True, native=True, jit="off")),
    "numpy-unfused": ("numpy", dict(fuse=False, native=True, jit="off")),
    "numpy-bodies": ("numpy", dict(fuse=True, native=False, jit="off")),
    "auto": (_auto_emulated, dict(fuse=True, native=True, jit="off")),
    "auto-unfused": (_auto_emulated, dict(fuse=False, native=True, jit="off")),
    "auto-bodies": (_auto_emulated, dict(fuse=True, native=False, jit="off")),
    "cupy": ("cupy", dict(fuse=True, native=True, jit="off")),
    "cupy-bodies": ("cupy", dict(fuse=True, native=False, jit="off")),
    # the compiled tier (starvm/jit) on every routine it can take; natives off so that the
    # library bodies the generator calls are compiled too
    "jit": ("numpy", dict(fuse=True, native=False, jit="on")),
}
DEFAULT_ROUTES = ("numpy", "numpy-unfused", "numpy-bodies", "auto", "auto-unfused", "auto-bodies", "cupy")


@lru_cache(maxsize=None)
def _backend(spec):
    return get_backend(spec) if isinstance(spec, str) else spec()


def usable_routes(names=DEFAULT_ROUTES) -> tuple[str, ...]:
    """The routes of ``names`` whose backend can run here."""
    out = []
    for name in names:
        try:
            _backend(ROUTES[name][0])
        except BackendUnavailable:
            continue
        out.append(name)
    return tuple(out)


def run_route(src, route: str):
    """(printed output, steps by kind) of a program (its text, or a ``starvm.compile``d
    program: parsed once for all routes) run on one route."""
    spec, kwargs = ROUTES[route]
    if not _JIT:
        kwargs = {k: v for k, v in kwargs.items() if k != "jit"}
    out = io.StringIO()
    m = starvm.Machine(backend=_backend(spec), out=out, **kwargs)
    m.run(src, "fuzz.star")
    run_route.native_calls += m.native_timing[0]
    return out.getvalue(), m.stats


run_route.native_calls = 0     # native kernel calls so far, all routes (the campaign reports them)


def run_starvm(src: str, backend: str, fuse: bool):
    """One run on a backend by name (the NumPy backend's routes use these switches)."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out, fuse=fuse, **({"jit": "off"} if _JIT else {}))
    m.run(src, "fuzz.star")
    return out.getvalue(), list(m.counts)


def differential(src_random, routes=None, max_stmts: int = 8):
    """Generate a program; run it on the model and on every route. Returns (source, list of
    mismatch descriptions): output or steps (by kind) that differ from the model's."""
    prog = Gen(src_random, max_stmts).program()
    src = render(prog)
    model = Interp(prog)
    want = model.run()
    want_steps = {k: c for k, c in model.counts.items() if c}
    problems = []
    try:
        parsed = starvm.compile(src, "fuzz.star", check=False)
    except Exception as e:  # noqa: BLE001 - a valid program must parse and check
        return src, [f"compile: {type(e).__name__}: {e}"]
    for route in usable_routes(routes or DEFAULT_ROUTES):
        try:
            got, steps = run_route(parsed, route)
        except Exception as e:  # noqa: BLE001 - any failure of a valid program is a bug
            problems.append(f"{route}: {type(e).__name__}: {e}")
            continue
        if got != want:
            problems.append(f"{route}: output differs from the reference model\n" + first_difference(want, got))
        if steps != want_steps:
            diff = {k: (want_steps.get(k, 0), steps.get(k, 0)) for k in sorted(set(steps) | set(want_steps))
                    if want_steps.get(k, 0) != steps.get(k, 0)}
            problems.append(f"{route}: steps differ from the reference model (model, starvm): {diff}")
    return src, problems


def first_difference(want: str, got: str) -> str:
    w, g = want.splitlines(), got.splitlines()
    for i, (a, b) in enumerate(zip(w, g)):
        if a != b:
            return f"line {i + 1}:\n  model : {a}\n  starvm: {b}"
    return f"model printed {len(w)} lines, starvm {len(g)}"
