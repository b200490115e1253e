"""BFS-adapt's frontier shrinking (stdlib/graphs.star: BFS_LEVELS, BFS_LIVE): an arc whose tail
was in a frontier never leaves one again, so once at most half the arcs are live it compacts
them and the levels go on there. The levels stay BFS's (SciPy), on every backend, natives on
and off, and each shrink keeps at most half the rows."""
from __future__ import annotations

import io

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

import starvm
from starvm.graphs.generators import rmat


def levels_of(L) -> list[int]:
    b = L.to_numpy()
    return (b.astype(np.int64) @ (np.int64(1) << np.arange(b.shape[1] - 1, -1, -1, dtype=np.int64))).tolist()


def arcs(graph: str):
    if graph == "path":          # two arcs a level: the live arcs halve again and again
        n = 70
        return n, np.r_[np.arange(1, n), np.arange(2, n + 1)], np.r_[np.arange(2, n + 1), np.arange(1, n)]
    if graph == "rmat":          # R-MAT scale 7, undirected
        g = rmat(7, edge_factor=4, seed=11)
        return g.n, g.src, g.dst
    n = 65                       # a star: the centre's arcs die at once, the leaves' stay live
    leaves = np.arange(2, n + 1)
    return n, np.r_[np.ones(n - 1, np.int64), leaves], np.r_[leaves, np.ones(n - 1, np.int64)]


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("graph", ["path", "rmat", "star"])
def test_bfs_adapt_shrinks_and_keeps_bfs_levels(backend, native, graph):
    n, src, dst = arcs(graph)
    # interpreted, so that the hook below sees BFS_LIVE's calls (compiled code calls it directly;
    # test_stdlib_graphs.py's BFS-adapt tests run the compiled tier too)
    m = starvm.Machine(backend=backend, out=io.StringIO(), native=native, jit="off")
    c = int(n).bit_length()
    left, right = m.table_from_ints(src, c), m.table_from_ints(dst, c)
    m.call("NUMOF", m.word(np.zeros(3, bool)))                 # loads graphs.star
    sizes: list = []
    live = m.ns["r_bfs_live"]
    m.ns["r_bfs_live"] = lambda *a: sizes[-1].append(a[1]) or live(*a)     # (n, live, ...)
    p = csr_matrix((np.ones(len(src)), (np.asarray(src) - 1, np.asarray(dst) - 1)), shape=(n, n))
    b = c + 1
    for s in (1, n // 2 + 1):
        sizes.append([])
        L = m.table(np.random.default_rng(s).random((n, b)) < 0.5)     # garbage in
        m.call("BFS-adapt", n, s, left, right, L)
        ref = shortest_path(p, unweighted=True, indices=s - 1)
        assert levels_of(L) == np.where(np.isinf(ref), 2 ** b - 1, ref).astype(np.int64).tolist()
    for shrunk in sizes:                                         # each time at most half the rows
        rows = [len(src)] + shrunk
        assert shrunk and all(2 * b_ <= a_ for a_, b_ in zip(rows, rows[1:])), rows
