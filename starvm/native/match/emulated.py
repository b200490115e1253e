"""MATCH on the emulated device (distributed ranks over it), the CUDA kernel's rule: one
whole-slice NumPy operation per bit column of the words."""
from __future__ import annotations

import numpy as np

from ...backends.emulated_device import device_words


def match(T, X, v, k: int):
    pattern = int(np.asarray(v)[0])            # bit c: column c + 1
    z = np.array(X, dtype=np.uint64)
    for c in range(k):
        col = T.data[c]
        z &= col if (pattern >> c) & 1 else ~col
    return device_words(z)
