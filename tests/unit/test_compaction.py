"""COMPACT and EXPAND (stdlib/rows.star): the native kernels (native/compact/, expand/: CUDA, the emulated
device's) agree bit for bit with the Star bodies and a plain Python model, report the Star
bodies' steps, and leave unusual arguments to the Star body (same errors). The NumPy backend
has no kernel for them (its compiled Star body is as fast): there both machines run the body,
checked against the model here."""
from __future__ import annotations

import numpy as np
import pytest

from starvm.errors import StarError
from test_native_rows import call_both, control, machines

SIZES = [(1, 1), (5, 3), (63, 2), (64, 7), (65, 20), (130, 1), (300, 66)]
X_MODES = ["zeros", "ones", "sparse", "half"]


def has_kernel(side: str) -> bool:
    """Where the tables end (auto: its host, the NumPy side, or its device) runs a kernel."""
    return side != "numpy"


def model_compact(T, X, R):
    R = R.copy()
    marked = T[X]
    R[:len(marked)] = marked
    return R


def model_expand(T, X, R):
    R = R.copy()
    R[X] = T[:int(X.sum())]
    return R


def bits(rng, n, k):
    return rng.random((n, k)) < 0.5


@pytest.mark.parametrize("n,k", SIZES)
@pytest.mark.parametrize("mode", X_MODES)
def test_compact(backend, n, k, mode):
    rng = np.random.default_rng(n * 7 + k)
    T, X = bits(rng, n, k), control(rng, n, mode)
    R0 = bits(rng, int(X.sum()) + int(rng.integers(0, 70)), k)
    fa, ba = call_both(backend, "COMPACT", lambda m: (m.table(T), m.slice(X), m.table(R0)), has_kernel)
    want = model_compact(T, X, R0)
    assert np.array_equal(fa[2].to_numpy(), want) and np.array_equal(ba[2].to_numpy(), want)
    assert np.array_equal(fa[0].to_numpy(), T)                   # T is not changed


@pytest.mark.parametrize("n,k", SIZES)
@pytest.mark.parametrize("mode", X_MODES)
def test_expand(backend, n, k, mode):
    rng = np.random.default_rng(n * 11 + k)
    X, R0 = control(rng, n, mode), bits(rng, n, k)
    T = bits(rng, int(X.sum()) + int(rng.integers(0, 70)), k)
    fa, ba = call_both(backend, "EXPAND", lambda m: (m.table(T), m.slice(X), m.table(R0)), has_kernel)
    want = model_expand(T, X, R0)
    assert np.array_equal(fa[2].to_numpy(), want) and np.array_equal(ba[2].to_numpy(), want)


@pytest.mark.parametrize("n,k", [(70, 5), (300, 64)])
def test_compact_in_place_then_expand(backend, n, k):
    """COMPACT(T, X, T) packs the marked rows to the top of T itself; EXPAND puts them back."""
    rng = np.random.default_rng(n)
    T, X = bits(rng, n, k), rng.random(n) < 0.4

    def build(m):
        t = m.table(T)
        return (t, m.slice(X), t)
    fa, ba = call_both(backend, "COMPACT", build, has_kernel)
    want = model_compact(T, X, T)
    assert np.array_equal(fa[0].to_numpy(), want) and np.array_equal(ba[0].to_numpy(), want)
    back = np.zeros_like(T)
    fa, ba = call_both(backend, "EXPAND", lambda m: (m.table(want), m.slice(X), m.table(back)), has_kernel)
    assert np.array_equal(fa[2].to_numpy()[X], T[X]) and not fa[2].to_numpy()[~X].any()


def test_expand_in_place_runs_the_body(backend):
    rng = np.random.default_rng(2)
    T, X = bits(rng, 50, 4), rng.random(50) < 0.5
    fast, body = machines(backend)
    results = []
    for m in (fast, body):
        t = m.table(T)
        m.call("EXPAND", t, m.slice(X), t)
        results.append(t.to_numpy())
    assert np.array_equal(*results)


@pytest.mark.parametrize("name,rows", [("COMPACT", 3), ("EXPAND", 3)])
def test_too_few_rows_same_error(backend, name, rows):
    """Five marked rows, three rows to hold them: the Star body's error on both machines."""
    X = np.zeros(80, bool)
    X[[1, 10, 20, 64, 79]] = True
    msgs = []
    for m in machines(backend):
        if name == "COMPACT":
            args = (m.table(np.ones((80, 4), bool)), m.slice(X), m.table(rows=rows, cols=4))
        else:
            args = (m.table(rows=rows, cols=4), m.slice(X), m.table(rows=80, cols=4))
        with pytest.raises(StarError) as info:
            m.call(name, *args)
        msgs.append(info.value.message)
    assert msgs[0] == msgs[1] and "row" in msgs[0].lower()


def test_compact_set_of_tables(backend):
    """An arc list (L, R, W) compacted with one X, then its rows scattered back."""
    rng = np.random.default_rng(9)
    n = 200
    cols = [bits(rng, n, k) for k in (8, 8, 5)]
    X = rng.random(n) < 0.3
    c = int(X.sum())
    fast, _ = machines(backend)
    packed = []
    for t in cols:
        out = fast.table(rows=c, cols=t.shape[1])
        fast.call("COMPACT", fast.table(t), fast.slice(X), out)
        packed.append(out)
        assert np.array_equal(out.to_numpy(), t[X])
    for t, p in zip(cols, packed):
        back = fast.table(rows=n, cols=t.shape[1])
        fast.call("EXPAND", p, fast.slice(X), back)
        assert np.array_equal(back.to_numpy()[X], t[X])


# ---------------------------------------------------------------- BORUVKA on the live arcs
@pytest.mark.parametrize("native", [False, True])
def test_boruvka_compacts_live_arcs(backend, native):
    """On a grid the live arcs thin out round by round: BORUVKA contracts the graph to its live
    components and arcs (BORUVKA_LIVE runs, each level smaller) and still finds the minimum
    spanning forest (SciPy's weight, n - 1 edges, one arc of each tree edge)."""
    import io

    import starvm
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree
    side = 12
    n = side * side
    rng = np.random.default_rng(5)
    ids = np.arange(1, n + 1).reshape(side, side)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    w = rng.integers(1, 60, u.size)
    src, dst, wt = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
    # interpreted, so that the hook below sees BORUVKA_LIVE's calls (since the ERROR statement
    # compiles, compiled BORUVKA_ROUNDS calls it directly)
    m = starvm.Machine(backend=backend, out=io.StringIO(), native=native, jit="off")
    L, R, W = m.table_from_ints(src, 8), m.table_from_ints(dst, 8), m.table_from_ints(wt, 6)
    tree = m.slice(np.zeros(src.size, bool))
    m.call("NUMOF", m.word(np.zeros(3, bool)))               # loads graphs.star
    levels = []
    live = m.ns["r_boruvka_live"]
    m.ns["r_boruvka_live"] = lambda *a: levels.append((a[0], a[2])) or live(*a)     # (components, arcs)
    m.call("BORUVKA", n, L, R, W, tree)
    chosen = np.asarray(tree)
    ref = minimum_spanning_tree(csr_matrix((w, (u - 1, v - 1)), shape=(n, n)))
    assert int(wt[chosen].sum()) == int(ref.sum()) and chosen.sum() == n - 1
    edge_of = np.r_[np.arange(u.size), np.arange(u.size)]
    assert len(set(edge_of[chosen].tolist())) == n - 1          # never both arcs of one edge
    # each level at most half the arcs of the one before, and fewer vertices
    sizes = [(n, src.size)] + levels
    assert levels and all(2 * b[1] <= a[1] and b[0] < a[0] for a, b in zip(sizes, sizes[1:])), sizes


# ---------------------------------------------------------------- auto: where a call runs
@pytest.mark.parametrize("cols,kernel", [(10, False), (40, True)])
def test_auto_host_calls_run_compiled_or_move_as_the_kernel_would(cols, kernel):
    """On auto the NumPy side has no COMPACT kernel: a call whose tables are on the host runs the
    compiled Star body there, unless its tables reach STARVM_AUTO_GPU_BITS (4096 in the tests),
    where AutoBackend.place moves them to the device kernel, as before the NumPy kernel went."""
    import starvm
    rng = np.random.default_rng(cols)
    T, X = bits(rng, 60, cols), rng.random(60) < 0.5               # 60 rows: the host side
    R0 = bits(rng, 60, cols)
    m = starvm.Machine(backend="auto", native=True, jit="on")
    t, r = m.table(T), m.table(R0)
    assert t.backend is m.backend.host
    m.call("COMPACT", t, m.slice(X), r)
    assert np.array_equal(r.to_numpy(), model_compact(T, X, R0))
    routine = m.ns["r_compact"]
    assert m.native_timing[0] == kernel and routine.host.compiled_calls == (not kernel)
    assert (r.backend is m.backend.dev) == kernel
