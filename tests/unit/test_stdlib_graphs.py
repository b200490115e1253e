"""stdlib/graphs.star against SciPy (scipy.sparse.csgraph) on random graphs.

Shapes: sparse, dense, disconnected (two blocks and isolated vertices), equal weights and
a single vertex. Edge lists are tables `left`, `right` (vertex numbers 1..n, c bits) and
`weight` (b bits), one row per arc, column 1 the most significant bit; distances are one
row per vertex, all ones = infinity.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, csgraph_from_dense, minimum_spanning_tree, shortest_path

from starvm.resources import stdlib_dir
from test_stdlib_search import get_machine, nums


def bits(values, k: int) -> np.ndarray:
    """Unsigned numbers as the rows of a bool table, k bits, column 1 the most significant."""
    return ((np.asarray(values, np.int64).reshape(-1)[:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(bool)


def edge_tables(m, arcs, c: int, b: int):
    """The left / right / weight tables of an arc list [(u, v, w)] with 1-based vertices."""
    a = np.asarray(arcs, np.int64).reshape(-1, 3)
    return m.table(bits(a[:, 0], c)), m.table(bits(a[:, 1], c)), m.table(bits(a[:, 2], b))


_NATIVE: dict[str, object] = {}


def native_machine(backend: str):
    """A machine whose library routines run their native kernels where the backend has them."""
    import io
    import starvm
    if backend not in _NATIVE:
        _NATIVE[backend] = starvm.Machine(backend=backend, out=io.StringIO(), jit="off")   # as get_machine
    return _NATIVE[backend]


def mask(shape: str, n: int, rng) -> np.ndarray:
    """A random directed adjacency mask (no self-loops) of the given shape."""
    if shape == "sparse":
        p = rng.random((n, n)) < 2.0 / n
    elif shape == "dense":
        p = rng.random((n, n)) < 0.6
    elif shape == "disconnected":
        p = np.zeros((n, n), bool)
        h = n // 2
        p[:h, :h] = rng.random((h, h)) < 0.3
        p[h:n - 2, h:n - 2] = rng.random((n - 2 - h, n - 2 - h)) < 0.3      # the last 2 isolated
    elif shape == "equal":
        p = rng.random((n, n)) < 0.3
    else:
        raise ValueError(shape)
    np.fill_diagonal(p, False)
    return p


# the large dense graph: some 630 arcs (BORUVKA: 900), 10-14 words of rows, vertex numbers of 6
# bits (it was 45 vertices: 1190 arcs and 45 rounds of the shortest-path loops, 40% of this
# file's time for nothing the 33 do not check)
SHAPES = [("sparse", 40), ("dense", 14), ("disconnected", 24), ("equal", 20), ("sparse", 9), ("sparse", 130),
          ("dense", 33)]


# ---------------------------------------------------------------- BFS and components
@pytest.mark.parametrize("shape,n", SHAPES + [("single", 1)])
def test_bfs_levels(backend, shape, n):
    m = get_machine(backend)
    rng = np.random.default_rng(n)
    p = np.zeros((1, 1), bool) if shape == "single" else mask(shape, n, rng)
    b = n.bit_length() + 1
    for s in sorted({1, n, int(rng.integers(1, n + 1))}):
        L = m.table(rng.random((n, b)) < 0.5)                 # garbage in
        m.reset_stats()
        m.call("BFS", n, m.table(p), s, L)
        ref = shortest_path(csr_matrix(p.astype(float)), unweighted=True, indices=s - 1)
        want = np.where(np.isinf(ref), 2 ** b - 1, ref).astype(np.int64)
        assert nums(L.to_numpy()).tolist() == want.tolist()
        reached = int(np.isfinite(ref).sum())
        st = m.stats
        levels = int(ref[np.isfinite(ref)].max()) + 1              # one WCOPY (b COL reads) per level
        assert st["COL_GET"] == n + reached + levels * b and st["STEP"] == reached
        assert st["COL_SET"] == b + levels * b
        assert st["ROW_SET"] == n and st["CONVERT"] == n and "ROW_GET" not in st


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("shape,n", SHAPES + [("single", 1)])
def test_bfs_adapt_levels(backend, shape, n, native):
    """BFS-adapt on the arc list of the same graphs: BFS's levels."""
    m = native_machine(backend) if native else get_machine(backend)
    rng = np.random.default_rng(n)
    p = np.zeros((1, 1), bool) if shape == "single" else mask(shape, n, rng)
    arcs = [(int(i) + 1, int(j) + 1, 1) for i, j in zip(*np.nonzero(p))] or [(1, 1, 1)]
    c = max(n.bit_length(), 1)
    left, right, _ = edge_tables(m, arcs, c, 1)
    b = n.bit_length() + 1
    for s in sorted({1, n, int(rng.integers(1, n + 1))}):
        L = m.table(rng.random((n, b)) < 0.5)                 # garbage in
        m.call("BFS-adapt", n, s, left, right, L)
        ref = shortest_path(csr_matrix(p.astype(float)), unweighted=True, indices=s - 1)
        want = np.where(np.isinf(ref), 2 ** b - 1, ref).astype(np.int64)
        assert nums(L.to_numpy()).tolist() == want.tolist()


@pytest.mark.parametrize("shape,n", SHAPES + [("single", 1)])
def test_components(backend, shape, n):
    m = get_machine(backend)
    rng = np.random.default_rng(2 * n + 1)
    p = np.zeros((1, 1), bool) if shape == "single" else mask(shape, n, rng)
    p = p | p.T
    c = n.bit_length()
    C = m.table(rows=n, cols=c)
    m.reset_stats()
    count = m.call("COMPONENTS", n, m.table(p), C)
    ncomp, labels = connected_components(csr_matrix(p), directed=False)
    first = {lab: int(np.flatnonzero(labels == lab)[0]) + 1 for lab in range(ncomp)}
    assert count == ncomp
    assert nums(C.to_numpy()).tolist() == [first[lab] for lab in labels]
    assert m.stats["COL_GET"] == n + ncomp * c and m.stats["STEP"] == n and m.stats["FND"] == ncomp


# ---------------------------------------------------------------- shortest paths
def weighted(shape: str, n: int, rng, wmax: int):
    """(arc list, dense weight matrix with inf for no arc) of a random digraph; weights may be 0."""
    if shape == "single":
        return [(1, 1, 3)], np.full((1, 1), np.inf)           # one self-loop only
    p = mask(shape, n, rng)
    w = np.full((n, n), 5) if shape == "equal" else rng.integers(0, wmax + 1, (n, n))
    arcs = [(i + 1, j + 1, int(w[i, j])) for i, j in zip(*np.nonzero(p))]
    if not arcs:                                              # a table needs at least one row
        arcs = [(1, 1, 0)]
    g = np.where(p, w, np.inf).astype(float)
    return arcs, g


def reference_distances(g: np.ndarray, s: int | None, b: int) -> np.ndarray:
    graph = csgraph_from_dense(g, null_value=np.inf)           # keeps 0-weight arcs
    d = shortest_path(graph, directed=True, indices=None if s is None else s - 1)
    inf = 2 ** b - 1
    return np.where(d >= inf, inf, d).astype(np.int64)        # lengths >= 2^b - 1 count as infinite


SP_CASES = SHAPES + [("single", 1)]


@pytest.mark.parametrize("proc", ["DIJKSTRA", "BELLMAN_FORD", "BELLMAN_FORD-adapt"])
@pytest.mark.parametrize("shape,n", SP_CASES)
def test_single_source(backend, proc, shape, n):
    m = get_machine(backend)
    rng = np.random.default_rng(3 * n + len(shape))
    arcs, g = weighted(shape, n, rng, wmax=9)
    c, b = n.bit_length(), 8
    left, right, weight = edge_tables(m, arcs, c, b)
    for s in sorted({1, n, int(rng.integers(1, n + 1))}):
        D = m.table(rng.random((n, b)) < 0.5)
        m.call(proc, n, s, left, right, weight, D)
        assert nums(D.to_numpy()).tolist() == reference_distances(g, s, b).tolist()


@pytest.mark.parametrize("shape,n", SP_CASES)
def test_bellman_ford_adapt_with_native_kernels(backend, shape, n):
    """The same with GATHER, SCATTER and GROUPMIN as native kernels (where the backend has them)."""
    m = native_machine(backend)
    rng = np.random.default_rng(3 * n + len(shape))
    arcs, g = weighted(shape, n, rng, wmax=9)
    left, right, weight = edge_tables(m, arcs, n.bit_length(), 8)
    for s in sorted({1, n, int(rng.integers(1, n + 1))}):
        D = m.table(rng.random((n, 8)) < 0.5)
        m.call("BELLMAN_FORD-adapt", n, s, left, right, weight, D)
        assert nums(D.to_numpy()).tolist() == reference_distances(g, s, 8).tolist()


@pytest.mark.parametrize("proc", ["DIJKSTRA", "BELLMAN_FORD", "BELLMAN_FORD-adapt"])
def test_single_source_saturates(backend, proc):
    """b = 4: lengths of 15 or more are infinite (all ones); sums never wrap around."""
    m = get_machine(backend)
    rng = np.random.default_rng(99)
    n = 12
    arcs, g = weighted("sparse", n, rng, wmax=9)
    arcs += [(i, i + 1, 7) for i in range(1, n)]              # a long path: 7, 14, 21 (> 15), ...
    for i in range(1, n):
        g[i - 1, i] = min(g[i - 1, i], 7)
    left, right, weight = edge_tables(m, arcs, 4, 4)
    D = m.table(rows=n, cols=4)
    m.call(proc, n, 1, left, right, weight, D)
    assert nums(D.to_numpy()).tolist() == reference_distances(g, 1, 4).tolist()


def floyd_table(g: np.ndarray, b: int) -> np.ndarray:
    n = g.shape[0]
    d = np.where(np.isinf(g), 2 ** b - 1, g).astype(np.int64)
    d = np.minimum(d, 2 ** b - 1)
    np.fill_diagonal(d, 0)
    return bits(d.reshape(-1), b).reshape(n, n * b)


@pytest.mark.parametrize("shape,n", [("sparse", 16), ("dense", 10), ("disconnected", 12), ("equal", 9),
                                     ("single", 1)])
def test_floyd(backend, shape, n):
    m = get_machine(backend)
    rng = np.random.default_rng(5 * n)
    _, g = weighted(shape, n, rng, wmax=12)
    b = 7
    D = m.table(floyd_table(g, b))
    m.reset_stats()
    m.call("FLOYD", n, D)
    got = nums(D.to_numpy().reshape(n * n, b)).reshape(n, n)
    g0 = g.copy()
    np.fill_diagonal(g0, 0)
    assert got.tolist() == reference_distances(g0, None, b).tolist()
    assert m.stats["ROW_GET"] == n and "ROW_SET" not in m.stats


def test_floyd_saturates(backend):
    m = get_machine(backend)
    n, b = 8, 4
    g = np.full((n, n), np.inf)
    for i in range(n - 1):
        g[i, i + 1] = 6                                       # 6, 12, 18 > 15: infinite
    g[3, 0] = 1
    D = m.table(floyd_table(g, b))
    m.call("FLOYD", n, D)
    got = nums(D.to_numpy().reshape(n * n, b)).reshape(n, n)
    g0 = g.copy()
    np.fill_diagonal(g0, 0)
    assert got.tolist() == reference_distances(g0, None, b).tolist()


# ---------------------------------------------------------------- minimum spanning forests
def undirected(shape: str, n: int, rng, distinct: bool):
    """(edge list with i < j, weights >= 1) of a random undirected graph."""
    if shape == "single":
        return [(1, 1, 3)]                                    # a self-loop: never in a tree
    p = mask(shape, n, rng)
    p = np.triu(p | p.T, 1)
    pairs = list(zip(*np.nonzero(p)))
    if shape == "equal":
        w = [4] * len(pairs)
    elif distinct:
        w = list(rng.permutation(len(pairs)) + 1)
    else:
        w = list(rng.integers(1, 6, len(pairs)))
    edges = [(int(i) + 1, int(j) + 1, int(x)) for (i, j), x in zip(pairs, w)]
    return edges or [(1, 1, 1)]


def check_forest(n, edges, tree, distinct):
    real = [(u, v, w) for u, v, w in edges if u != v]
    g = np.zeros((n, n))
    for u, v, w in real:
        g[u - 1, v - 1] = w
    ref = minimum_spanning_tree(csr_matrix(g))
    chosen = [edges[e] for e in np.flatnonzero(tree)]
    assert sum(w for _, _, w in chosen) == int(ref.sum())
    ncomp, _ = connected_components(csr_matrix(g), directed=False)
    assert len(chosen) == n - ncomp
    t = np.zeros((n, n))
    for u, v, w in chosen:
        assert u != v
        t[u - 1, v - 1] = 1
    assert connected_components(csr_matrix(t), directed=False)[0] == ncomp    # acyclic and spanning
    if distinct:
        r = ref.tocoo()
        want = sorted((min(i, j) + 1, max(i, j) + 1) for i, j in zip(r.row, r.col))
        assert sorted((u, v) for u, v, _ in chosen) == want


@pytest.mark.parametrize("distinct", [True, False])
@pytest.mark.parametrize("proc", ["PRIM", "KRUSKAL"])
@pytest.mark.parametrize("shape,n", SHAPES + [("single", 1)])
def test_spanning_forest(backend, proc, shape, n, distinct):
    m = get_machine(backend)
    rng = np.random.default_rng(7 * n + distinct)
    edges = undirected(shape, n, rng, distinct)
    c = max(n.bit_length(), 1)
    b = max(len(edges).bit_length(), 3)
    left, right, weight = edge_tables(m, edges, c, b)
    tree = m.slice(np.ones(len(edges), bool))
    m.reset_stats()
    m.call(proc, n, left, right, weight, tree)
    check_forest(n, edges, tree.to_numpy(), distinct and shape != "equal")
    if proc == "PRIM":
        edges_in = int(tree.to_numpy().sum())
        assert m.stats.get("ROW_GET", 0) == edges_in and m.stats["FND"] == n          # one per tree edge, one per tree root


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("distinct", [True, False])
@pytest.mark.parametrize("shape,n", SHAPES + [("single", 1)])
def test_boruvka(backend, shape, n, distinct, native):
    """BORUVKA takes every edge as two arcs; it marks one arc of each tree edge."""
    m = native_machine(backend) if native else get_machine(backend)
    rng = np.random.default_rng(7 * n + distinct)
    edges = undirected(shape, n, rng, distinct)
    arcs = edges + [(v, u, w) for u, v, w in edges]
    c = max(n.bit_length(), 1)
    b = max(len(edges).bit_length(), 3)
    left, right, weight = edge_tables(m, arcs, c, b)
    tree = m.slice(np.ones(len(arcs), bool))
    m.call("BORUVKA", n, left, right, weight, tree)
    chosen = np.flatnonzero(tree.to_numpy())
    per_edge = np.zeros(len(edges), bool)
    per_edge[chosen % len(edges)] = True
    assert per_edge.sum() == len(chosen), "an edge was taken from both sides"
    check_forest(n, edges, per_edge, distinct and shape != "equal")


def test_boruvka_rounds_are_logarithmic(backend):
    """Every round at least halves the components, so on 64 vertices GROUPMIN (one call a
    round, after the one that keeps one row of every edge) runs at most 1 + log2(64) = 7 times. A path whose weights rise towards the middle
    needs exactly 2 rounds (each vertex hooks towards the nearer end, then the halves join);
    a random connected graph on 64 vertices at most 6."""
    import io
    import starvm
    # interpreted: the hook below wraps the interpreter's GROUPMIN; compiled BORUVKA calls its
    # own compiled GROUPMIN (the rounds are the same in both tiers)
    m = starvm.Machine(backend=backend, out=io.StringIO(), native=False, jit="off")
    n = 64
    edges = [(i, i + 1, min(i, n - i)) for i in range(1, n)]
    arcs = edges + [(v, u, w) for u, v, w in edges]
    left, right, weight = edge_tables(m, arcs, 7, 6)
    tree = m.slice(np.zeros(len(arcs), bool))
    m.load((stdlib_dir() / "rows.star").read_text(), "stdlib/rows.star")
    m.load((stdlib_dir() / "graphs.star").read_text(), "stdlib/graphs.star")
    calls = []
    groupmin = m.ns["r_groupmin"]
    m.ns["r_groupmin"] = lambda *a: calls.append(1) or groupmin(*a)
    m.call("BORUVKA", n, left, right, weight, tree)
    per_edge = tree.to_numpy()[:n - 1] | tree.to_numpy()[n - 1:]
    assert per_edge.all() and tree.to_numpy().sum() == n - 1
    assert len(calls) == 1 + 2
    rng = np.random.default_rng(64)
    edges = [(i, int(rng.integers(1, i)), int(rng.integers(1, 50))) for i in range(2, n + 1)]   # a random tree
    edges += [(int(u), int(v), int(w)) for u, v, w in rng.integers(1, n + 1, (80, 3)) if u != v]
    arcs = edges + [(v, u, w) for u, v, w in edges]
    left, right, weight = edge_tables(m, arcs, 7, 6)
    tree = m.slice(np.zeros(len(arcs), bool))
    calls.clear()
    m.call("BORUVKA", n, left, right, weight, tree)
    assert tree.to_numpy().sum() == n - 1 and 2 <= len(calls) <= 1 + 6
