"""Property-based tests (hypothesis): random small arc lists, with the ties, zero weights,
self-loops, repeated arcs and isolated vertices they bring, against NetworkX and SciPy.
Shrinking brings a failure back as a small graph. Few examples per property: every backend
runs them, with the native kernels on and off."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import starvm.graphs as sg
from graph_cases import Case, adjacency, bfs_levels, check_spanning_forest, closure, components, distances
from test_routines import edge_tables, exact_width, machine, nums, width

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@st.composite
def arc_lists(draw, max_n: int = 9, max_w: int = 3) -> Case:
    """n in 1..max_n and 1..20 arcs (u, v, w), w in 0..max_w: loops and repeats allowed."""
    n = draw(st.integers(1, max_n))
    vertex = st.integers(1, n)
    arcs = draw(st.lists(st.tuples(vertex, vertex, st.integers(0, max_w)), min_size=1, max_size=20))
    return Case("hypothesis", n, tuple(arcs))


NATIVE = pytest.mark.parametrize("native", [False, True], ids=["star", "native"])


@NATIVE
@pytest.mark.parametrize("proc", ["PRIM", "KRUSKAL", "BORUVKA"])
@SETTINGS
@given(case=arc_lists())
def test_mst_property(backend, native, proc, case):
    m = machine(backend, native)
    left, right, weight = edge_tables(m, case, width(int(case.a[:, 2].max())))
    tree = m.slice(np.zeros(len(case.arcs), bool))
    m.call(proc, case.n, left, right, weight, tree)
    check_spanning_forest(case, tree.to_numpy())


@NATIVE
@pytest.mark.parametrize("proc", ["DIJKSTRA", "BELLMAN_FORD", "BELLMAN_FORD-adapt"])
@SETTINGS
@given(case=arc_lists(), source=st.integers(1, 9))
def test_single_source_property(backend, native, proc, case, source):
    m = machine(backend, native)
    s = min(source, case.n)
    b = exact_width(case)
    left, right, weight = edge_tables(m, case, b)
    D = m.table(rows=case.n, cols=b)
    m.call(proc, case.n, s, left, right, weight, D)
    ref = distances(case, s)
    assert nums(D) == [ref.get(v, 2 ** b - 1) for v in range(1, case.n + 1)]


@NATIVE
@SETTINGS
@given(case=arc_lists(max_w=0))
def test_bfs_property(backend, native, case):
    m = machine(backend, native)
    b = width(case.n) + 1
    ref = bfs_levels(case, 1)
    want = [ref.get(v, 2 ** b - 1) for v in range(1, case.n + 1)]
    L = m.table(rows=case.n, cols=b)
    m.call("BFS", case.n, m.table(adjacency(case)), 1, L)
    assert nums(L) == want
    left, right, _ = edge_tables(m, case, 1)
    L = m.table(rows=case.n, cols=b)
    m.call("BFS-adapt", case.n, 1, left, right, L)
    assert nums(L) == want


@NATIVE
@SETTINGS
@given(case=arc_lists(max_w=0))
def test_closure_and_components_property(backend, native, case):
    m = machine(backend, native)
    want = closure(case)
    for proc in ("WARSHALL", "WARSHALL-C", "WARSHALL-adapt"):
        P = m.table(adjacency(case))
        m.call(proc, case.n, P)
        assert (P.to_numpy() == want).all(), proc
    A = adjacency(case)
    C = m.table(rows=case.n, cols=width(case.n))
    assert m.call("COMPONENTS", case.n, m.table(A | A.T), C) == components(case)[0]
    assert nums(C) == components(case)[1]


@SETTINGS
@given(case=arc_lists(max_n=6))
def test_floyd_property(backend, case):
    from graph_cases import all_pairs
    m = machine(backend, False)
    n, b = case.n, exact_width(case)
    start = np.full((n, n), 2 ** b - 1, dtype=np.int64)
    for u, v, w in case.arcs:
        start[u - 1, v - 1] = min(start[u - 1, v - 1], w)
    np.fill_diagonal(start, 0)
    from test_routines import bits
    D = m.table(bits(start.reshape(-1), b).reshape(n, n * b))
    m.call("FLOYD", n, D)
    ref = all_pairs(case)
    got = np.array(nums(m.table(D.to_numpy().reshape(n * n, b)))).reshape(n, n)
    assert got.tolist() == np.where(np.isinf(ref), 2 ** b - 1, ref).astype(np.int64).tolist()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(case=arc_lists(max_n=7, max_w=2))
def test_undirected_reading_property(case):
    """Graph.undirected(): a symmetric multiset of arcs holding the given ones, the same
    edges as NetworkX's MultiGraph reading once every pair is counted both ways, and
    idempotent."""
    a = case.a
    g = sg.Graph(case.n, a[:, 0], a[:, 1], a[:, 2])
    u = g.undirected()
    assert not u.directed and u.n == g.n
    assert (u.src[:g.m] == g.src).all() and (u.dst[:g.m] == g.dst).all()       # the given arcs first
    fwd = sorted(zip(u.src.tolist(), u.dst.tolist(), u.weight.tolist()))
    back = sorted(zip(u.dst.tolist(), u.src.tolist(), u.weight.tolist()))
    assert fwd == back                                                       # symmetric
    again = u.undirected()
    assert again.m == u.m and (again.src == u.src).all() and (again.dst == u.dst).all()
    # every pair {x, y} of weight w: as many arcs each way as the larger count given
    from collections import Counter
    given_ = Counter(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()))
    got = Counter(zip(u.src.tolist(), u.dst.tolist(), u.weight.tolist()))
    for (x, y, w) in set(given_) | set(got):
        want = given_[(x, y, w)] if x == y else max(given_[(x, y, w)], given_[(y, x, w)])
        assert got[(x, y, w)] == want
