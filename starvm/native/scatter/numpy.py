"""SCATTER in NumPy: GATHER's decode (gather/numpy.py), then the rows the other way round;
where several marked rows name one target row the largest source row i wins (the Star body's
last write), made explicit with np.unique on the reversed index array (the first occurrence
there is the last one)."""
from __future__ import annotations

import numpy as np

from ..gather.numpy import decode
from ..shared.numpy_rows import STORAGE, move_rows, pack
from . import routine


def scatter_apply(T, IX, plan, X_v, R) -> None:
    rows, dst = plan
    if rows.size and T.k:
        # rows ascend; reversed, the first occurrence of a target is its largest source
        # row i, the one the Star body writes last
        targets, first = np.unique(dst[::-1], return_index=True)
        winners = rows[::-1][first]
        hit = np.zeros(R.n, dtype=bool)
        hit[targets] = True
        move_rows(T, winners, R, targets, pack(hit[None, :], R.n))


def scatter(T, IX, X_v, R) -> None:
    scatter_apply(T, IX, decode(IX, X_v, R.n)[0], X_v, R)


make = routine(decode, scatter_apply, STORAGE)
