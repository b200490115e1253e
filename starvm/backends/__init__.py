"""Backends: one file each, imported only when chosen (see ``get_backend``)."""
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
        from .numpy_backend import NumpyBackend
        return NumpyBackend()
    if name == "cupy":
        try:
            from .cupy_backend import CupyBackend
        except ImportError as e:
            raise BackendUnavailable(f"the cupy backend needs CuPy and a CUDA GPU ({e})") from None
        try:
            return CupyBackend()
        except Exception as e:  # no device, driver mismatch, ...
            raise BackendUnavailable(f"the cupy backend cannot use a GPU here: {e}") from None
    raise BackendUnavailable(f"unknown backend '{name}' (choose one of: numpy, cupy, auto)")


def available_backends() -> list[str]:
    out = []
    for n in NAMES:
        try:
            if get_backend(n).name == n:     # auto without a GPU is the NumPy backend
                out.append(n)
        except BackendUnavailable:
            pass
    return out
