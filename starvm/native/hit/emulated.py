"""HIT on the emulated device: the CUDA kernel's rule, one whole-slice NumPy operation per bit
column."""
from __future__ import annotations

import numpy as np

from ...backends.emulated_device import device_words
from . import routine


def hit_rows(T, F, X):
    z = np.array(X, dtype=np.uint64)
    for c in range(T.k):
        z &= ~(T.data[c] ^ F.data[c])
    return device_words(z)


make = routine(hit_rows)
