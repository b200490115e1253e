"""MIN and MAX on the emulated device: the CUDA kernels' rule (cuda.py), one whole-slice NumPy
operation per bit column of the words."""
from __future__ import annotations

import numpy as np

from ...backends.emulated_device import device_words
from . import routine


def extreme(T, X, want_max: bool):
    z = np.array(X, dtype=np.uint64)
    for c in range(T.k):
        col = T.data[c]
        y = z & (col if want_max else ~col)
        if y.any():
            z = y
    return device_words(z)


def extreme_with_value(T, X, want_max: bool):
    """(Z, finish) as cuda.py's: finish() gives (1, the extreme of the rows X marks, column 1
    the most significant bit) or (0, 0) when X marks none."""
    z = extreme(T, X, want_max)
    words = np.asarray(z, dtype=np.uint64)
    hit = np.flatnonzero(words)
    if not hit.size:
        return z, lambda: (0, 0)
    word = int(words[hit[0]])
    bit = (word & -word).bit_length() - 1       # every row Z marks holds the extreme: take any
    value = 0
    for c in range(T.k):
        value = (value << 1) | ((int(T.data[c][hit[0]]) >> bit) & 1)
    return z, lambda: (1, value)


make = routine(extreme, False)
make_max = routine(extreme, True)
