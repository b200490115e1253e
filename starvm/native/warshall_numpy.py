"""Transitive closure of a square table on the NumPy backend: bit-packed Warshall.

The table stores column c of P as row c of ``data`` (a bit set over the rows r with
P(r, c) = 1), i.e. ``data`` is the adjacency matrix of the reversed graph packed by rows.
Warshall on it (for each pivot k, every row holding bit k takes row k) yields the closure of
the reversed graph, which is the transpose of the closure: exactly the columns of closure(P).
"""
from __future__ import annotations

import numpy as np

from . import closure_routine


def closure_in_place(table) -> None:
    m = table.data
    n = table.n
    one = np.uint64(1)
    for k in range(n):
        has = ((m[:, k >> 6] >> np.uint64(k & 63)) & one).astype(bool)
        m[has] |= m[k]


make = closure_routine(closure_in_place)
