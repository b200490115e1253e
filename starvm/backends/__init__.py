"""Backends: where tables and vectors live; one file each, imported only when chosen
(``get_backend``; ``NAMES`` lists them for every --backend option and the tests).

``base.py`` (the ``Backend`` protocol and its capabilities: ``is_device``, ``gpu``, ``mixed``,
``distributed``, ``host``), ``numpy_backend.py`` (the reference), ``cupy_backend.py`` (GPU
memory; its own kernels in ``cuda_backend_kernels.py``, its fused `parallel for` launched by
``cupy_forall.py``), ``auto_backend.py`` (each table on the host or the device),
``emulated_device.py`` (a CPU stand-in for the GPU, auto's device in tests) and ``codes.py``
(tables from integer codes and back). The distributed backend is ``starvm/distributed``'s.
"""
from __future__ import annotations

from functools import lru_cache

from .base import Backend

NAMES = ("numpy", "cupy", "auto")


class BackendUnavailable(Exception):
    """The backend asked for cannot run here (e.g. CuPy without a GPU)."""


@lru_cache(maxsize=None)
def get_backend(name: str) -> Backend:
    """``numpy`` | ``cupy`` | ``auto`` (each table on the CPU or the GPU, auto_backend.py;
    the NumPy backend itself where no GPU is usable)."""
    name = name.lower()
    if name == "auto":
        from .. import config
        from .auto_backend import AutoBackend
        try:
            device = get_backend("cupy")
        except BackendUnavailable:
            if not config.auto_emulate():
                return get_backend("numpy")
            from .emulated_device import EmulatedDevice
            device = EmulatedDevice()
        return AutoBackend(get_backend("numpy"), device, config.auto_gpu_rows(), config.auto_gpu_bits())
    if name == "numpy":
        from .numpy_backend import numpy_backend
        return numpy_backend()
    if name == "cupy":
        _cupy_or_unavailable()
        from .cupy_backend import CupyBackend
        return CupyBackend()     # any error here (a kernel that does not compile, ...) is a bug: it propagates
    raise BackendUnavailable(f"unknown backend '{name}' (choose one of: numpy, cupy, auto)")


# cudaErrorInsufficientDriver (no NVIDIA driver at all) and cudaErrorNoDevice
_NO_DEVICE_STATUS = (35, 100)


def _cupy_or_unavailable():
    """CuPy, when it imports and sees a CUDA device; else BackendUnavailable. These two are the
    only reasons the cupy backend is "not available here": every other failure (a kernel that
    does not compile, a misspelt kernel name, a driver error on a machine with a GPU) is an
    error and must show as one, not as a skipped GPU test."""
    try:
        import cupy
    except ImportError as e:
        raise BackendUnavailable(f"the cupy backend needs CuPy and a CUDA GPU ({e})") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        if getattr(e, "status", None) not in _NO_DEVICE_STATUS:
            raise
        raise BackendUnavailable(f"the cupy backend cannot use a GPU here: no CUDA device ({e})") from None
    if count < 1:
        raise BackendUnavailable("the cupy backend cannot use a GPU here: no CUDA device")
    return cupy


def available_backends() -> list[str]:
    out = []
    for n in NAMES:
        try:
            if get_backend(n).name == n:     # auto without a GPU is the NumPy backend
                out.append(n)
        except BackendUnavailable:
            pass
    return out
