"""GATHER on the emulated device: the NumPy kernel behind the device's word vectors; ``decode``
(SCATTER's too) reads its count through host_read, as the CuPy kernel's one transfer."""
from __future__ import annotations

from ..shared import emulated
from . import numpy as kernels
from . import routine


def decode(IX, X_v, limit: int):
    plan, marked = kernels.decode(IX, emulated.as_int(X_v), limit)
    return plan, emulated.host_read(marked)     # with the range check, one transfer on CuPy


def gather_apply(T, IX, plan, X_v, R) -> None:
    kernels.gather_apply(T, IX, plan, emulated.as_int(X_v), R)


make = routine(decode, gather_apply, emulated.STORAGE)
