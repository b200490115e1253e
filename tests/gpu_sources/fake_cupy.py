"""A stand-in for CuPy, so the GPU code's Python side (what it compiles, how it launches)
runs in CI without a GPU: arrays are NumPy arrays, ``RawModule`` compiles with NVRTC
(nvrtc.py), and a kernel launch runs nothing but checks its arguments against the kernel's
parameters in the PTX (count and widths) and its grid and block, and is recorded in
``LAUNCHES``. Results of launches are not computed: tests check what is launched, not values.

    with fake_cupy_installed(monkeypatch) as cp:
        from starvm.backends.cupy_backend import CupyBackend     # imported against the fake
"""
from __future__ import annotations

import contextlib
import importlib
import sys
import types
from dataclasses import dataclass

import numpy as np

from . import nvrtc

MODULES: list = []       # every RawModule made (code, options, name_expressions)
LAUNCHES: list = []      # every kernel launch (Launch)
ON_LAUNCH: list = []     # callables(Launch) run at each launch: a test's stand-in for the kernel


class ndarray(np.ndarray):
    """A 'device' array: a NumPy array with CuPy's .get(); an element is a 0-d 'device' array,
    as CuPy gives (interpreted code reads it with .get() or int())."""
    def get(self):
        return np.asarray(self).copy()

    def __getitem__(self, key):
        out = super().__getitem__(key)
        return np.asarray(out).view(ndarray) if isinstance(out, np.generic) else out


def _dev(a):
    return np.asarray(a).view(ndarray)


@dataclass
class Launch:
    kernel: str
    grid: tuple
    block: tuple
    args: tuple
    shared_mem: int
    code: str = None        # the module's source (emulate.run_launch runs a kernel of it on the CPU)


class LaunchError(AssertionError):
    pass


def _width(a) -> int:
    if isinstance(a, np.ndarray):
        return 64                                   # a device pointer
    if isinstance(a, np.generic):
        return a.dtype.itemsize * 8
    if isinstance(a, bool):
        return 8
    if isinstance(a, int):
        return 64
    raise LaunchError(f"an argument CuPy cannot pass: {type(a).__name__}")


class Kernel:
    def __init__(self, name: str, params: list[int]):
        self.name, self.params = name, params
        self.max_dynamic_shared_size_bytes = 48 * 1024

    def __call__(self, grid, block, args, shared_mem=0):
        for dims, what, limit in ((grid, "grid", 2 ** 31 - 1), (block, "block", 1024)):
            if not (isinstance(dims, tuple) and 1 <= len(dims) <= 3
                    and all(isinstance(d, (int, np.integer)) and 1 <= d <= limit for d in dims)):
                raise LaunchError(f"{self.name}: bad {what} {dims!r}")
        if int(np.prod(block)) > 1024:
            raise LaunchError(f"{self.name}: {np.prod(block)} threads in a block")
        if len(grid) > 1 and any(d > 65535 for d in grid[1:]):
            raise LaunchError(f"{self.name}: grid {grid!r} beyond 65535 in y or z")
        if not isinstance(args, tuple):
            raise LaunchError(f"{self.name}: the arguments must be a tuple")
        widths = [_width(a) for a in args]
        if widths != self.params:
            raise LaunchError(f"{self.name}: arguments of widths {widths}, the kernel takes {self.params}")
        if shared_mem > self.max_dynamic_shared_size_bytes:
            raise LaunchError(f"{self.name}: {shared_mem} bytes of shared memory above the set maximum")
        launch = Launch(self.name, grid, block, args, shared_mem, getattr(self, "code", None))
        LAUNCHES.append(launch)
        for effect in ON_LAUNCH:
            effect(launch)


# PTX of each (code, options, name expressions) this process compiled: NVRTC gives the same PTX
# for the same input, and each test that installs the stand-in builds the same modules again
# (0.8 s a test for the row-move kernels); a failing compile is not kept, so it fails every time
_PTX: dict[tuple, nvrtc.Ptx] = {}


class RawModule:
    def __init__(self, code=None, options=(), name_expressions=None, **_):
        self.code, self.options, self.name_expressions = code, tuple(options), tuple(name_expressions or ())
        key = (code, self.options, self.name_expressions)
        if key not in _PTX:
            _PTX[key] = _kept_ptx(*key)
        self.ptx = _PTX[key]
        MODULES.append(self)


    def get_function(self, name: str) -> Kernel:
        try:
            kernel = Kernel(name, self.ptx.entry(name))
            kernel.code = self.code
            return kernel
        except KeyError as e:       # CuPy: CUDA_ERROR_NOT_FOUND
            raise RuntimeError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}") from e


def _kept_ptx(code: str, options: tuple, names: tuple) -> nvrtc.Ptx:
    """NVRTC's PTX of a module, kept on disk by the hash of its input (NVRTC gives the same PTX
    for it): the ranks of a test under mpiexec, each a process of its own, compiled every module
    again (seconds each). A GPU-tier kernel of one MPI rank (targets/cuda/ranks.py) is compiled
    as rank 0 of one: its instances differ by the rank's #defines alone, not in their parameters."""
    import hashlib
    import json
    import os
    import re
    import tempfile
    from pathlib import Path
    if code and "\n#define RANKS 1\n" in code:
        code = re.sub(r"#define RK_(RANK|SIZE) \d+LL\n",
                      lambda m: f"#define RK_{m.group(1)} {int(m.group(1) == 'SIZE')}LL\n", code)
    folder = Path(tempfile.gettempdir()) / "starvm-fake-ptx"
    folder.mkdir(exist_ok=True)
    path = folder / (hashlib.sha1(repr((code, options, names)).encode()).hexdigest() + ".json")
    if path.exists():
        d = json.loads(path.read_text())
        return nvrtc.Ptx(d["text"], d["lowered"], {k: list(v) for k, v in d["entries"].items()})
    ptx = nvrtc.compile_ptx(code, "fake_cupy.cu", options, names)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"text": ptx.text, "lowered": ptx.lowered, "entries": ptx.entries}))
    tmp.replace(path)
    return ptx


class ReductionKernel:
    """CuPy's own generated code, not the project's: only the call is modelled."""
    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name, **_):
        self.name = name

    def __call__(self, x):
        return _dev(np.zeros((), dtype=np.int64))


class CUDARuntimeError(RuntimeError):
    def __init__(self, status=0):
        super().__init__(f"cudaError {status}")
        self.status = status


class _Device:
    id = 0
    attributes = {"MultiProcessorCount": 132, "MaxSharedMemoryPerBlockOptin": 227 * 1024}

    def __init__(self, device=0):
        pass

    def synchronize(self):
        pass


def _numpy_function(name: str):
    f = getattr(np, name)
    if not callable(f) or isinstance(f, type):
        return f

    def on_device(*args, **kw):
        out = f(*args, **kw)
        return _dev(out) if isinstance(out, np.ndarray) else out
    return on_device


def make_module() -> types.ModuleType:
    cp = types.ModuleType("cupy")
    cp.ndarray = ndarray
    for t in ("uint64", "int64", "int32", "uint32", "uint8", "bool_", "float64"):
        setattr(cp, t, getattr(np, t))
    cp.empty = lambda shape, dtype=float: _dev(np.empty(shape, dtype))
    cp.zeros = lambda shape, dtype=float: _dev(np.zeros(shape, dtype))
    cp.full = lambda shape, value, dtype=None: _dev(np.full(shape, value, dtype))
    cp.empty_like = lambda a, dtype=None: _dev(np.empty_like(a, dtype))
    cp.zeros_like = lambda a, dtype=None: _dev(np.zeros_like(a, dtype))
    cp.asarray = lambda a, dtype=None: _dev(np.asarray(a, dtype))
    cp.ascontiguousarray = lambda a, dtype=None: _dev(np.ascontiguousarray(a, dtype))
    cp.asnumpy = lambda a: np.asarray(a).copy()
    cp.copyto = lambda dst, src: np.copyto(dst, src)
    cp.array_equal = lambda a, b: bool(np.array_equal(a, b))
    cp.RawModule = RawModule
    cp.__getattr__ = _numpy_function     # anything else: NumPy's, returning 'device' arrays
    cp.ReductionKernel = ReductionKernel
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1, getDevice=lambda: 0,
                                    getDeviceProperties=lambda i: {"name": b"NVRTC stand-in"},
                                    CUDARuntimeError=CUDARuntimeError)
    cp.cuda = types.SimpleNamespace(runtime=runtime, Device=_Device,
                                    get_current_stream=lambda: types.SimpleNamespace(ptr=0, done=True),
                                    alloc_pinned_memory=lambda size: bytearray(size))   # host memory
    return cp


@contextlib.contextmanager
def fake_cupy_installed(monkeypatch, *modules: str):
    """sys.modules['cupy'] is the fake while inside; ``modules`` (e.g.
    'starvm.backends.cupy_backend') are imported afresh against it and yielded after the
    fake; everything is as before afterwards (monkeypatch restores sys.modules)."""
    nvrtc.require()                      # RawModule compiles with it
    from starvm.backends import get_backend
    get_backend.cache_clear()            # a backend made before (the real cupy, or none) is not reused...
    cp = make_module()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    for name in modules:
        monkeypatch.delitem(sys.modules, name, raising=False)
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:         # the import rebinds the package's attribute: undo it after
            monkeypatch.setattr(sys.modules[parent], child, getattr(sys.modules[parent], child, None),
                                raising=False)
    MODULES.clear()
    LAUNCHES.clear()
    ON_LAUNCH.clear()
    before = set(sys.modules)
    try:
        yield (cp, *[importlib.import_module(m) for m in modules])
    finally:
        # forget every module imported against the fake (monkeypatch puts back the real ones
        # of ``modules``, if there were any), and the backends made on it
        ON_LAUNCH.clear()
        get_backend.cache_clear()        # ...nor one made on the fake (Machine(backend="cupy") in it)
        for name in [*modules, *(set(sys.modules) - before)]:
            mod = sys.modules.get(name)
            if name in modules or any(v is cp for v in vars(mod or types).values()):
                sys.modules.pop(name, None)
