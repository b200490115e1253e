"""EXPAND in NumPy: the emulated device's kernel (emulated.py) and the reference the CUDA kernel
is tested against; the NumPy backend runs the compiled Star body instead, as for COMPACT."""
from __future__ import annotations

import numpy as np

from ..shared.numpy_rows import move_rows, vec_bools, vec_words


def expand(T, X_v, R, marked: int | None = None) -> None:
    """Rows 1..c of T back to the marked rows of R, in order."""
    rows = np.flatnonzero(vec_bools(X_v, R.n))
    if rows.size and T.k:
        move_rows(T, np.arange(rows.size), R, rows, vec_words(X_v, R.n)[None, :])
