"""SCATTER on the emulated device: the NumPy kernel behind the device's word vectors (GATHER's
decode: gather/emulated.py)."""
from __future__ import annotations

from ..gather.emulated import decode
from ..shared import emulated
from . import numpy as kernels
from . import routine


def scatter_apply(T, IX, plan, X_v, R) -> None:
    kernels.scatter_apply(T, IX, plan, emulated.as_int(X_v), R)


make = routine(decode, scatter_apply, emulated.STORAGE)
