"""The one place that says whether a native kernel replaces a standard-library routine on a
backend. The machine (runtime/machine.py, which installs the kernels when a unit loads) and
the compiled tier (jit/tier.py, which leaves a routine a native replaces to it) both ask
``native_for``; nothing else decides it.

A native replaces a routine only where all of these hold:

  * natives are on: the machine's switch (``Machine(native=...)``), which defaults to
    config.use_natives() (STARVM_NATIVE=0 turns them off); ``enabled=None`` reads config.use_natives();
  * the routine is the standard library's own (declared in a file under ``stdlib/``): a
    program's routine of the same name runs as written;
  * the backend has a kernel for it (``KERNELS``: folded routine name -> backend name ->
    "module:factory"). On the auto backend a routine is native where its host or its device
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

# folded routine name -> backend name -> "module:factory"
KERNELS: dict[str, dict[str, str]] = {
    # no numpy kernel: the compiled Star body (starvm/jit) is within 2x of the bit-packed NumPy
    # kernel (bench/results/compiled_cpu2.md), which stays for the emulated device
    "warshall_adapt": {"cupy": "starvm.native.warshall_cupy:make",
                       "emulated": "starvm.native.warshall_numpy:make",
                       "mpi:numpy": "starvm.distributed.warshall:make"},
    # no cupy or emulated kernel: the GPU tier's compiled MATCH body is within 2x of its CUDA
    # kernel (bench/results/natives_gpu_h100.md), which stays for distributed GPU ranks
    # (distributed/search.py), where the compiled tier does not run (docs/architecture.md)
    "match": {},
    "min": {"cupy": "starvm.native.search_cupy:make_min"},
    "max": {"cupy": "starvm.native.search_cupy:make_max"},
    "hit": {"cupy": "starvm.native.compare_cupy:make_hit"},
    "setmin": {"cupy": "starvm.native.compare_cupy:make_setmin"},
    "iota": {"numpy": "starvm.native.rows_numpy:make_iota", "cupy": "starvm.native.rows_cupy:make_iota"},
    "gather": {"numpy": "starvm.native.rows_numpy:make_gather", "cupy": "starvm.native.rows_cupy:make_gather"},
    "scatter": {"numpy": "starvm.native.rows_numpy:make_scatter", "cupy": "starvm.native.rows_cupy:make_scatter"},
    "groupmin": {"numpy": "starvm.native.rows_numpy:make_groupmin",
                 "cupy": "starvm.native.rows_cupy:make_groupmin"},
    # no numpy kernel: their compiled Star bodies are within 2x of the NumPy kernels
    # (bench/results/compiled_cpu2.md), which stay for the emulated device; on the GPU the
    # compiled body takes grid barriers per marked row, so the CUDA kernels stay
    # (docs/architecture.md)
    "compact": {"cupy": "starvm.native.rows_cupy:make_compact", "emulated": "starvm.native.emulated:make_compact"},
    "expand": {"cupy": "starvm.native.rows_cupy:make_expand", "emulated": "starvm.native.emulated:make_expand"},
}
for _name in ("min", "max", "hit", "setmin", "iota", "gather", "scatter", "groupmin"):
    KERNELS[_name]["emulated"] = f"starvm.native.emulated:make_{_name}"
# distributed ranks (starvm/distributed): the row moves and the searches over the ranks
for _name in ("iota", "gather", "scatter", "groupmin", "compact", "expand"):
    for _local in ("numpy", "cupy", "emulated"):
        KERNELS[_name][f"mpi:{_local}"] = f"starvm.distributed.rows:make_{_name}"
for _name in ("match", "min", "max", "hit", "setmin"):
    for _local in ("cupy", "emulated"):
        KERNELS[_name][f"mpi:{_local}"] = f"starvm.distributed.search:make_{_name}"


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
    ask about its host side only."""
    if not (config.use_natives() if enabled is None else enabled):
        return None
    if origin is None or not origin.startswith(LIBRARY):
        return None
    backend_name = getattr(backend, "name", backend)
    if host_side and backend_name == "auto":
        backend_name = backend.host.name
    make = _factory(name, backend_name)
    return NativeRoutine(name, backend_name, make) if make is not None else None


def _factory(name: str, backend_name: str) -> Callable | None:
    if backend_name == "auto":
        return _auto_factory(name)
    target = KERNELS.get(name, {}).get(backend_name)
    if target is None:
        return None
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)


def _auto_factory(name: str) -> Callable | None:
    """On the auto backend (backends/auto_backend.py) a routine runs its host or its device
    kernel, or its Star body where that side has none, on the side ``place`` picks per call."""
    kernels = KERNELS.get(name, {})
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
