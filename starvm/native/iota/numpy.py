"""IOTA in NumPy: column j (1-based) of T holds bit k-j of the row number i = r+1."""
from __future__ import annotations

import numpy as np

from ..shared.numpy_rows import STORAGE, pack
from . import routine

_ONE = np.uint64(1)


def iota(T) -> None:
    n, k = T.n, T.k
    if n == 0 or k == 0:
        return
    i = np.arange(1, n + 1, dtype=np.uint64)
    bits = np.zeros((k, n), dtype=np.uint8)
    for c in range(k):
        b = k - 1 - c                  # column c+1 holds bit k-(c+1) of i (i mod 2^k)
        if b < 64:
            bits[c] = ((i >> np.uint64(b)) & _ONE).astype(np.uint8)
    T.data[...] = pack(bits, n)


make = routine(iota, STORAGE)
