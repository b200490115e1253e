"""WARSHALL-adapt (stdlib/warshall.star) on the distributed backend: per pivot k, the owner
of row k broadcasts it (n bits: the columns i with P(k, i) = 1) and every rank ORs its block
of COL(k, P) into its block of those columns. One broadcast of n/8 bytes per pivot; the rest
is local (native/warshall_adapt/numpy.py's kernel on each rank's rows). Reports the Star body's
steps (native/warshall_adapt/: its guard ``routine``)."""
from __future__ import annotations

import numpy as np

from ..native import warshall_adapt


def closure_in_place(P) -> int:
    B = P.backend
    lay = B.layout(P.n)
    m = P.aux.data                    # n columns x this rank's words
    n = P.n
    one = np.uint64(1)
    ors = 0
    nbytes = (n + 7) // 8
    for k in range(n):
        owner = lay.owner(k)
        row = np.zeros(nbytes, dtype=np.uint8)
        if owner == B.rank:
            r = k - lay.start
            row[:] = np.packbits(((m[:, r >> 6] >> np.uint64(r & 63)) & one).astype(bool), bitorder="little")
        row = B.comm.bcast_array(row, owner)
        has = np.unpackbits(row, count=n, bitorder="little").astype(bool)
        ors += int(np.count_nonzero(has))
        if m.shape[1]:
            m[has] |= m[k]
    B.bytes_moved[0] += n
    B.bytes_moved[1] += n * nbytes
    return ors


def _distributed_numpy(P) -> bool:
    return P.backend.distributed and isinstance(P.aux.data, np.ndarray)


def make(star_body, backend, meter):
    inner = warshall_adapt.routine(closure_in_place)(star_body, backend, meter)

    def routine(n, P):
        if not _distributed_numpy(P):
            return star_body(n, P)
        return inner(n, P)
    routine.star_body = star_body
    return routine
