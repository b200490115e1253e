"""A stand-in for the GPU: the NumPy backend with device-style vectors (uint64 word arrays).

The auto backend (auto_backend.py) tells host from device vectors by type, so with this as
its device every placement decision, transfer and mixed operation of the auto backend runs,
and is tested, on a machine without a GPU (STARVM_AUTO_EMULATE=1; the test suite sets it
there). Results are the NumPy backend's: each primitive converts to a Python int and back.

Device vectors are ``DeviceWords``, an ndarray subclass, so that they differ by type from the
host's arrays as CuPy arrays do: auto's device-side branches (``from_words`` of device words,
native kernels placed on the device, starvm/native/registry.py) run here as on a GPU, with the
emulated device's own native kernels (starvm/native/<routine>/emulated.py).
"""
from __future__ import annotations

import numpy as np

from .numpy_backend import NumpyBackend, numpy_backend


def _words(n: int) -> int:
    return (n + 63) // 64


class DeviceWords(np.ndarray):
    """A vector on the emulated device: 1-D uint64 words (a CuPy array's place on a GPU)."""


def device_words(words) -> DeviceWords:
    """A copy of ``words`` as a device vector."""
    return np.array(words, dtype=np.uint64).view(DeviceWords)


def _i(v) -> int:
    return int.from_bytes(v.tobytes(), "little")


def _v(x: int, words: int):
    return np.frombuffer(x.to_bytes(words * 8, "little"), dtype=np.uint64).copy().view(DeviceWords)


class EmulatedDevice(NumpyBackend):
    name = "emulated"
    device = "emulated device (NumPy)"
    is_device = True                 # device-style vectors, as CuPy's; no real GPU (gpu stays False)

    @property
    def host(self) -> NumpyBackend:
        return numpy_backend()

    def zeros(self, n):
        return np.zeros(_words(n), dtype=np.uint64).view(DeviceWords)

    def ones(self, n):
        return _v(super().ones(n), _words(n))

    def from_bools(self, bits):
        return _v(super().from_bools(bits), _words(len(bits)))

    def to_bools(self, v, n):
        return super().to_bools(_i(v), n)

    def to_words(self, v, n):
        return np.array(v, dtype=np.uint64)        # plain words, as a CuPy array's are plain

    def from_words(self, words, n):
        return device_words(words)

    def get_bit(self, v, i):
        return super().get_bit(_i(v), i)

    def set_bit(self, v, i, b):
        return _v(super().set_bit(_i(v), i, b), v.size)

    def fnd(self, v):
        return super().fnd(_i(v))

    def step(self, v):
        pos, rest = super().step(_i(v))
        return pos, _v(rest, v.size)

    def numb(self, v):
        return super().numb(_i(v))

    def some(self, v):
        return super().some(_i(v))

    def frst(self, v):
        return _v(super().frst(_i(v)), v.size)

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def xor(self, a, b):
        return a ^ b

    def not_(self, v, n):
        return _v(super().not_(_i(v), n), v.size)

    def equal(self, a, b):
        return bool(np.array_equal(a, b))

    def trim(self, v, i, j):
        return _v(super().trim(_i(v), i, j), _words(j - i + 1))

    def rep(self, w, i, v, m):
        return _v(super().rep(_i(w), i, _i(v), m), w.size)

    def compare(self, a, b):
        return super().compare(_i(a), _i(b))

    def add(self, a, b, n):
        return _v(super().add(_i(a), _i(b), n), a.size)

    def subt(self, a, b, n):
        return _v(super().subt(_i(a), _i(b), n), a.size)

    def col_get(self, t, j):
        return device_words(t.data[j])

    def col_set(self, t, j, v):
        t.data[j] = v

    def row_get(self, t, i):
        return _v(super().row_get(t, i), _words(t.k))

    def row_set(self, t, i, v):
        super().row_set(t, i, _i(v))
