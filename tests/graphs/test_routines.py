"""Every graph routine of the standard library against NetworkX and SciPy (graph_cases.py):
the real graphs NetworkX ships and small made-up arc lists, on every backend, with the
backends' native kernels on and off (Machine(native=...)). The MST routines are checked by
total weight and by the chosen rows forming a spanning forest; the others by their exact
output tables."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from graph_cases import (Case, adjacency, all_cases, all_pairs, bfs_levels, check_spanning_forest, closure,
                         components, distances, real_cases)

CASES = all_cases()
_MACHINES: dict[tuple[str, bool], starvm.Machine] = {}


def machine(backend: str, native: bool) -> starvm.Machine:
    """One machine per backend and native switch for the module (the library compiles once).
    The interpreter alone: at the suite's threshold (tests/conftest.py) --jit auto compiles
    nothing, but installing the tier and its estimate of each call cost a third of these tests'
    time (with test_bounds and test_properties); the tier on the library is tests/jit's."""
    key = (backend, native)
    if key not in _MACHINES:
        _MACHINES[key] = starvm.Machine(backend=backend, out=io.StringIO(), native=native, jit="off")
    return _MACHINES[key]


def bits(values, k: int) -> np.ndarray:
    """Unsigned numbers as the rows of a bool table, k bits, column 1 the most significant."""
    v = np.asarray(values, np.int64).reshape(-1)
    return ((v[:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(bool)


def nums(table) -> list[int]:
    b = table.to_numpy()
    return (b.astype(np.int64) @ (np.int64(1) << np.arange(b.shape[1] - 1, -1, -1, dtype=np.int64))).tolist()


def width(x: int) -> int:
    return max(1, int(x).bit_length())


def edge_tables(m, case: Case, b: int):
    a = case.a
    c = width(case.n)
    return m.table(bits(a[:, 0], c)), m.table(bits(a[:, 1], c)), m.table(bits(a[:, 2], b))


def exact_width(case: Case) -> int:
    """Distance bits with 2^b - 1 above every path length: no saturation."""
    return width(case.n * (int(case.a[:, 2].max()) + 1)) + 1


NATIVE = pytest.mark.parametrize("native", [False, True], ids=["star", "native"])
ALL = pytest.mark.parametrize("case", CASES, ids=str)


# ------------------------------------------------------------------ minimum spanning forests
@NATIVE
@pytest.mark.parametrize("proc", ["PRIM", "KRUSKAL", "BORUVKA"])
@ALL
def test_mst(backend, native, proc, case):
    """Each row an undirected edge: once (as NetworkX lists them) and as both arcs."""
    m = machine(backend, native)
    for c in (case, case.both_ways()):
        left, right, weight = edge_tables(m, c, width(int(c.a[:, 2].max())))
        tree = m.slice(np.ones(len(c.arcs), bool))        # garbage in
        m.call(proc, c.n, left, right, weight, tree)
        check_spanning_forest(c, tree.to_numpy())


# ------------------------------------------------------------------ shortest paths
@NATIVE
@pytest.mark.parametrize("proc", ["DIJKSTRA", "BELLMAN_FORD", "BELLMAN_FORD-adapt"])
@ALL
def test_single_source(backend, native, proc, case):
    m = machine(backend, native)
    b = exact_width(case)
    left, right, weight = edge_tables(m, case, b)
    for s in sorted({1, case.n}):
        D = m.table(rows=case.n, cols=b)
        m.call(proc, case.n, s, left, right, weight, D)
        ref = distances(case, s)
        assert nums(D) == [ref.get(v, 2 ** b - 1) for v in range(1, case.n + 1)], s


@ALL
def test_floyd(backend, case):
    if case.n > 40:
        pytest.skip("FLOYD takes O(n^2 b) steps: the small graphs only")
    m = machine(backend, False)
    n, b = case.n, exact_width(case)
    ref = all_pairs(case)
    start = np.full((n, n), 2 ** b - 1, dtype=np.int64)
    for u, v, w in case.arcs:
        start[u - 1, v - 1] = min(start[u - 1, v - 1], w)
    np.fill_diagonal(start, 0)
    D = m.table(bits(start.reshape(-1), b).reshape(n, n * b))
    m.call("FLOYD", n, D)
    got = np.array(nums(m.table(D.to_numpy().reshape(n * n, b)))).reshape(n, n)
    assert got.tolist() == np.where(np.isinf(ref), 2 ** b - 1, ref).astype(np.int64).tolist()


# ------------------------------------------------------------------ BFS, components, closure
@NATIVE
@pytest.mark.parametrize("proc", ["BFS", "BFS-adapt"])
@ALL
def test_bfs(backend, native, proc, case):
    m = machine(backend, native)
    n = case.n
    b = width(n) + 1
    for s in sorted({1, n}):
        L = m.table(rows=n, cols=b)
        if proc == "BFS":
            m.call("BFS", n, m.table(adjacency(case)), s, L)
        else:
            left, right, _ = edge_tables(m, case, 1)
            m.call("BFS-adapt", n, s, left, right, L)
        ref = bfs_levels(case, s)
        assert nums(L) == [ref.get(v, 2 ** b - 1) for v in range(1, n + 1)], s


@ALL
def test_components(backend, case):
    m = machine(backend, False)
    A = adjacency(case)
    C = m.table(rows=case.n, cols=width(case.n))
    count = m.call("COMPONENTS", case.n, m.table(A | A.T), C)
    want_count, want_labels = components(case)
    assert count == want_count and nums(C) == want_labels


@NATIVE
@pytest.mark.parametrize("proc", ["WARSHALL", "WARSHALL-C", "WARSHALL-adapt"])
@ALL
def test_closure(backend, native, proc, case):
    m = machine(backend, native)
    P = m.table(adjacency(case))
    m.call(proc, case.n, P)
    assert (P.to_numpy() == closure(case)).all()


def test_real_graphs_are_the_ones_networkx_ships():
    sizes = {c.name: (c.n, len(c.arcs)) for c in real_cases()}
    assert sizes == {"karate": (34, 78), "lesmis": (77, 254), "florentine": (15, 20), "davis": (32, 89)}
