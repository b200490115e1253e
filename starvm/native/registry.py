"""The one place that says whether a native kernel replaces a standard-library routine on a
backend. The machine (runtime/machine.py, which installs the kernels when a unit loads) and
the compiled tier (jit/tier.py, which leaves a routine a native replaces to it) both ask
``native_for``; nothing else decides it.

A native replaces a routine only where all of these hold:

  * natives are on: the machine's switch (``Machine(native=...)``), which defaults to
    config.use_natives() (STARVM_NATIVE=0 turns them off); ``enabled=None`` reads config.use_natives();
  * the routine is the standard library's own (declared in a file under ``stdlib/``): a
    program's routine of the same name runs as written;
  * the backend has a kernel for it (``kernels_of``: the KERNELS of the routine's folder,
    native/<name>/). On the auto backend a routine is native where its host or its device
    side has a kernel; the routine then picks the side per call (AutoBackend.place, whose
    threshold is STARVM_AUTO_GPU_BITS) and runs its Star body on a side without one.
    ``host_side=True`` asks about auto's host side alone (the CPU tier compiles the body
    where that side has none, and auto's host calls then run it).

A ``NativeRoutine`` makes the routine that stands in for the Star body:
``native.make(star_body, backend, meter)`` takes and returns what the generated Python
function of the Star routine does. Its kernels are imported only then, so asking costs no
import of CuPy.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from .. import config

LIBRARY = "stdlib/"      # where the routines natives replace are declared

# The accelerated routines (folded names): each has its folder, starvm/native/<name>/, whose
# __init__.py gives its Star body's home (HOME), its step formula (body_steps), its argument
# guard (routine) and its kernels per backend (KERNELS: backend name -> "module:factory").
ROUTINES = ("warshall_adapt", "match", "min", "max", "hit", "setmin",
            "iota", "gather", "scatter", "groupmin", "compact", "expand")


def kernels_of(name: str) -> dict[str, str]:
    """Routine ``name``'s kernels: backend name -> "module:factory" ({} for a routine without)."""
    if name not in ROUTINES:
        return {}
    return importlib.import_module(f"{__package__}.{name}").KERNELS


@dataclass(frozen=True)
class NativeRoutine:
    """A native kernel's routine for one library routine on one backend. ``make(star_body,
    backend, meter)`` gives the function that replaces the Star body's generated function."""
    name: str
    backend: str
    make: Callable


def native_for(name: str, backend, *, origin: str | None = LIBRARY, enabled: bool | None = None,
               host_side: bool = False) -> NativeRoutine | None:
    """The native routine that replaces routine ``name`` (folded: "groupmin") on ``backend``
    (a Backend, or its name), or None where its Star body runs.

    ``origin``: the file the routine was declared in (its location's filename; None when it
    has none): only the standard library's routines are replaced. ``enabled``: the machine's
    native switch (None: config.use_natives(), STARVM_NATIVE). ``host_side``: on the auto backend,
    ask about its host side only (a mixed backend's ``host``)."""
    if not (config.use_natives() if enabled is None else enabled):
        return None
    if origin is None or not origin.startswith(LIBRARY):
        return None
    if host_side and getattr(backend, "mixed", False):
        backend = backend.host
    backend_name = getattr(backend, "name", backend)
    make = _factory(name, backend_name)
    return NativeRoutine(name, backend_name, make) if make is not None else None


def _factory(name: str, backend_name: str) -> Callable | None:
    if backend_name == "auto":
        return _auto_factory(name)
    target = kernels_of(name).get(backend_name)
    if target is None:
        return None
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)


def _auto_factory(name: str) -> Callable | None:
    """On the auto backend (backends/auto_backend.py) a routine runs its host or its device
    kernel, or its Star body where that side has none, on the side ``place`` picks per call."""
    kernels = kernels_of(name)
    if not any(side in kernels for side in ("numpy", "cupy", "emulated")):
        return None

    def make(star_body, auto, meter):
        def build(side):
            f = _factory(name, side.name)
            return f(star_body, side, meter) if f is not None else star_body
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
