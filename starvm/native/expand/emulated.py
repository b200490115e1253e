"""EXPAND on the emulated device: the NumPy kernel (numpy.py) behind the device's word vectors."""
from __future__ import annotations

from ..shared import emulated
from . import numpy as kernels
from . import routine


def expand(T, X_v, R, marked: int) -> None:
    kernels.expand(T, emulated.as_int(X_v), R)


make = routine(expand, emulated.numb, emulated.STORAGE)
