"""SETMIN on the emulated device: the CUDA kernel's rule, one whole-slice NumPy operation per bit
column (column 1, the most significant, first)."""
from __future__ import annotations

import numpy as np

from ...backends.emulated_device import device_words
from . import routine


def less_rows(T, F, X):
    z = np.array(X, dtype=np.uint64)
    lt = np.zeros_like(z)
    for c in range(T.k):
        t, f = T.data[c], F.data[c]
        lt |= z & f & ~t
        z &= ~(t ^ f)
    return device_words(lt)


make = routine(less_rows)
