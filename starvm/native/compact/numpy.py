"""COMPACT in NumPy: the emulated device's kernel (emulated.py) and the reference the CUDA kernel
is tested against; the NumPy backend runs the compiled Star body instead (within 2x of this,
docs/architecture.md)."""
from __future__ import annotations

import numpy as np

from ..shared.numpy_rows import move_rows, pack, vec_bools


def _first_rows(c: int, n: int) -> np.ndarray:
    """1 x W words marking rows 1..c of n."""
    hit = np.zeros(n, dtype=bool)
    hit[:c] = True
    return pack(hit[None, :], n)


def compact(T, X_v, R, marked: int | None = None) -> None:
    """The marked rows of T, in order, into rows 1..c of R (R may be T: every chunk of
    columns is read before it is written)."""
    rows = np.flatnonzero(vec_bools(X_v, T.n))
    if rows.size and T.k:
        move_rows(T, rows, R, np.arange(rows.size), _first_rows(rows.size, R.n))
