"""The emulated device's kernels (backends/emulated_device.py: auto's device where no GPU is
usable) run the NumPy kernels behind the device's word vectors, so that auto's device dispatch,
argument guards, Star-body fallbacks and step reports run on a CPU exactly as they do on a GPU.
This is what they share: the conversions, the storage they take, and ``host_read``."""
from __future__ import annotations

import numpy as np

from ...backends.emulated_device import DeviceWords, device_words
from ..guard import Storage


def as_int(words) -> int:
    """Device words as a NumPy-backend vector (a Python int)."""
    return int.from_bytes(np.asarray(words, dtype=np.uint64).tobytes(), "little")


def from_int(v: int, words: int):
    """A Python-int vector as ``words`` device words."""
    return device_words(np.frombuffer(v.to_bytes(words * 8, "little"), dtype=np.uint64))


# The device-to-host reads of the CuPy kernels (one per call) go through host_read here too, so
# that a test can count them per routine and per BORUVKA round (tests/graphs/test_boruvka_device_calls.py).
def host_read(*values: int):
    """What the CuPy kernel copies to the host in its one transfer (a few integers)."""
    return values if len(values) != 1 else values[0]


def numb(X_v) -> int:
    return host_read(as_int(X_v).bit_count())


def _is_table(t) -> bool:
    return hasattr(t, "data") and hasattr(t, "k") and isinstance(getattr(t, "data"), np.ndarray)


def _vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and isinstance(getattr(x, "v", None), DeviceWords)


STORAGE = Storage(_is_table, _vec_ok, nonempty=False)
