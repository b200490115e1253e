"""WARSHALL-adapt's transitive closure of a square table in NumPy: bit-packed Warshall (the
emulated device's kernel).

The table stores column c of P as row c of ``data`` (a bit set over the rows r with
P(r, c) = 1), i.e. ``data`` is the adjacency matrix of the reversed graph packed by rows.
Warshall on it (for each pivot k, every row holding bit k takes row k) yields the closure of
the reversed graph, which is the transpose of the closure: exactly the columns of closure(P).
"""
from __future__ import annotations

import numpy as np

from . import routine


def closure_in_place(table) -> int:
    """Returns the OR steps of the Star body: for every pivot k, the rows of ``data`` holding
    bit k (the columns i with P(k, i) = 1) just before pivot k."""
    m = table.data
    n = table.n
    one = np.uint64(1)
    ors = 0
    for k in range(n):
        has = ((m[:, k >> 6] >> np.uint64(k & 63)) & one).astype(bool)
        ors += int(np.count_nonzero(has))
        m[has] |= m[k]
    return ors


make = routine(closure_in_place)
