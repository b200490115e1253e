"""IOTA, GATHER, SCATTER and GROUPMIN: the native kernels (starvm/native/rows_*.py) agree bit
for bit with the Star bodies of stdlib/rows.star and with a plain Python model; unusual
arguments run the Star body (same results, same errors)."""
from __future__ import annotations

import numpy as np
import pytest

import starvm
from starvm.native import native_for

# ---------------------------------------------------------------- helpers
_MACHINES: dict = {}


def machines(backend):
    """(native, Star bodies) machines of a backend, made once (loading the library is slow)."""
    if backend not in _MACHINES:
        _MACHINES[backend] = (starvm.Machine(backend=backend, native=True),
                              starvm.Machine(backend=backend, native=False))
    return _MACHINES[backend]


def as_bits(values, width):
    """Unsigned numbers (< 2^64) -> (len, width) bool rows, column 0 the most significant bit."""
    v = np.asarray(values, dtype=np.uint64).reshape(-1)
    shifts = np.arange(width - 1, -1, -1)
    out = np.zeros((v.size, width), bool)
    low = shifts < 64                                   # columns for bits 64 and up stay 0
    out[:, low] = (v[:, None] >> shifts[low].astype(np.uint64)) & np.uint64(1)
    return out


def value(row) -> int:
    return int("".join("1" if b else "0" for b in row), 2) if len(row) else 0


def control(rng, n, mode):
    return {"zeros": np.zeros(n, bool), "ones": np.ones(n, bool),
            "sparse": rng.random(n) < 0.05, "half": rng.random(n) < 0.5}[mode]


X_MODES = ["zeros", "ones", "sparse", "half"]
CASES = [(1, 1), (1, 7), (63, 3), (64, 7), (65, 20), (200, 1), (200, 20), (1000, 3)]


def call_both(backend, name, build, native_ok=lambda side: True):
    """Run ``name`` on both machines with the arguments ``build(machine)`` makes; returns the
    two argument tuples. Checks that the fast machine ran the native kernel where the side
    that held the tables has one (and ``native_ok(side)``: its limits allow the arguments),
    and that it reported the Star body's steps, kind by kind."""
    fast, body = machines(backend)
    out = []
    for m in (fast, body):
        args = build(m)
        before = m.native_timing[0]
        m.call(name, *args)
        out.append((args, m.native_timing[0] - before, m.last_call_stats))
    (fa, fast_calls, fast_steps), (ba, body_calls, body_steps) = out
    # the side the tables ended on (auto: the CPU, or the device: the GPU or the emulated
    # one, which has kernels of its own) decides whether the native kernel ran
    side = fa[0].backend.name
    expect = native_for(name.lower(), side, enabled=True) is not None and native_ok(side)
    assert body_calls == 0
    assert fast_calls == expect
    if native_ok(backend if backend != "auto" else side):
        assert expect
    assert fast_steps == body_steps
    return fa, ba


# ---------------------------------------------------------------- models
def model_iota(n, k):
    return as_bits([(i % (1 << k)) for i in range(1, n + 1)], k)


def model_gather(T, IX, X, R):
    R = R.copy()
    for i in range(len(X)):
        if X[i]:
            R[i] = T[value(IX[i]) - 1]
    return R


def model_scatter(T, IX, X, R):
    R = R.copy()
    for i in range(len(X)):          # top-down: the larger i is written last
        if X[i]:
            R[value(IX[i]) - 1] = T[i]
    return R


def model_groupmin(G, K, X):
    best = {}
    for i in range(len(X)):
        if X[i]:
            g, key = value(G[i]), value(K[i])
            if g not in best or key < best[g][0]:
                best[g] = (key, i)
    Z = np.zeros(len(X), bool)
    for _, i in best.values():
        Z[i] = True
    return Z


# ---------------------------------------------------------------- usual arguments
@pytest.mark.parametrize("n,k", CASES + [(130, 64), (70, 66)])
def test_iota(backend, n, k):
    rng = np.random.default_rng([n, k])
    start = rng.random((n, k)) < 0.5              # IOTA overwrites every row
    fa, ba = call_both(backend, "IOTA", lambda m: (m.table(start),))
    np.testing.assert_array_equal(fa[0].to_numpy(), ba[0].to_numpy())
    np.testing.assert_array_equal(fa[0].to_numpy(), model_iota(n, k))


def _index_width(rng, rows):
    return max(1, rows.bit_length()) + int(rng.integers(0, 3))      # leading zeros too


@pytest.mark.parametrize("n,k", CASES + [(65, 70), (130, 129)])       # > 64 columns: in parts
def test_gather(backend, n, k):
    rng = np.random.default_rng([n, k, 1])
    for trial, xmode in enumerate(X_MODES):
        m_rows = [n, max(1, n // 3), n + 5, 1][trial]                 # NROWS(T)
        T = rng.random((m_rows, k)) < 0.5
        c = _index_width(rng, m_rows)
        IX = as_bits(rng.integers(1, m_rows + 1, n), c)
        X = control(rng, n, xmode)
        R0 = rng.random((n, k)) < 0.5                                  # unmarked rows keep these
        fa, ba = call_both(backend, "GATHER",
                           lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(R0)))
        np.testing.assert_array_equal(fa[3].to_numpy(), ba[3].to_numpy(), err_msg=xmode)
        np.testing.assert_array_equal(fa[3].to_numpy(), model_gather(T, IX, X, R0), err_msg=xmode)


@pytest.mark.parametrize("n,k", CASES + [(65, 70), (130, 129)])       # > 64 columns: in parts
def test_scatter(backend, n, k):
    rng = np.random.default_rng([n, k, 2])
    for trial, xmode in enumerate(X_MODES):
        r_rows = [n, max(1, n // 4), n + 7, 2 * n][trial]             # NROWS(R)
        T = rng.random((n, k)) < 0.5
        c = _index_width(rng, r_rows)
        hi = r_rows if trial % 2 else max(1, r_rows // 8)             # many duplicates
        IX = as_bits(rng.integers(1, hi + 1, n), c)
        X = control(rng, n, xmode)
        R0 = rng.random((r_rows, k)) < 0.5
        fa, ba = call_both(backend, "SCATTER",
                           lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(R0)))
        np.testing.assert_array_equal(fa[3].to_numpy(), ba[3].to_numpy(), err_msg=xmode)
        np.testing.assert_array_equal(fa[3].to_numpy(), model_scatter(T, IX, X, R0), err_msg=xmode)


@pytest.mark.parametrize("n,k", CASES + [(100, 64)])
def test_groupmin(backend, n, k):
    rng = np.random.default_rng([n, k, 3])
    for trial, xmode in enumerate(X_MODES):
        gk = [k, 1, min(k, 5), 26][trial]                              # NCOLS(G)
        groups = [3, 2, 1 << min(gk, 5), n][trial]                     # few groups ... all distinct
        G = as_bits(rng.integers(0, min(groups, 1 << gk), n), gk)
        if trial % 2:                                                  # few K values: many ties
            K = as_bits(rng.integers(0, 3, n), k) if k >= 2 else rng.random((n, 1)) < 0.5
        else:
            K = rng.random((n, k)) < 0.5
        X = control(rng, n, xmode)
        fa, ba = call_both(backend, "GROUPMIN",
                           lambda m: (m.table(G), m.table(K), m.slice(X), m.slice(np.ones(n, bool))),
                           native_ok=lambda side: True)
        np.testing.assert_array_equal(fa[3].to_numpy(), ba[3].to_numpy(), err_msg=xmode)
        np.testing.assert_array_equal(fa[3].to_numpy(), model_groupmin(G, K, X), err_msg=xmode)


@pytest.mark.parametrize("n,gk", [(1, 27), (65, 40), (200, 53), (300, 63), (130, 64)])
def test_groupmin_of_a_table_by_itself(backend, n, gk):
    """GROUPMIN(G, G, X) with one table as both arguments (BORUVKA's dedupe of its edge keys:
    on the GPU a hash table of the keys, no sort, up to 63 columns): the first marked row of
    every distinct value."""
    rng = np.random.default_rng([n, gk, 11])
    for xmode in X_MODES:
        wide = rng.integers(0, np.iinfo(np.uint64).max, 1 + n // 4, dtype=np.uint64, endpoint=True)
        wide >>= np.uint64(64 - gk)
        G = as_bits(wide[rng.integers(0, wide.size, n)], gk)           # repeats of a few values
        X = control(rng, n, xmode)

        def build(m):
            g = m.table(G)
            return g, g, m.slice(X), m.slice(np.ones(n, bool))
        fa, ba = call_both(backend, "GROUPMIN", build)
        np.testing.assert_array_equal(fa[3].to_numpy(), ba[3].to_numpy(), err_msg=xmode)
        np.testing.assert_array_equal(fa[3].to_numpy(), model_groupmin(G, G, X), err_msg=xmode)


@pytest.mark.parametrize("n,gk", [(1, 27), (65, 40), (300, 64)])
def test_groupmin_wide_groups(backend, n, gk):
    """Groups wider than the GPU's scratch kernels (26 bits) are sorted on the device."""
    rng = np.random.default_rng([n, gk, 5])
    for xmode in X_MODES:
        wide = rng.integers(0, np.iinfo(np.uint64).max, 1 + n // 3, dtype=np.uint64, endpoint=True)
        wide >>= np.uint64(64 - gk)                                    # gk-bit group values
        G = as_bits(wide[rng.integers(0, wide.size, n)], gk)           # a few rows per group
        K = as_bits(rng.integers(0, 3, n), 8)
        X = control(rng, n, xmode)
        fa, ba = call_both(backend, "GROUPMIN",
                           lambda m: (m.table(G), m.table(K), m.slice(X), m.slice(np.ones(n, bool))))
        np.testing.assert_array_equal(fa[3].to_numpy(), ba[3].to_numpy(), err_msg=xmode)
        np.testing.assert_array_equal(fa[3].to_numpy(), model_groupmin(G, K, X), err_msg=xmode)


# ---------------------------------------------------------------- unusual arguments
def both_fail(backend, name, build):
    """Both machines raise the same StarError; on the fast one the Star body ran too (it counted
    steps: a native kernel counts none, though the body may call other routines' kernels, e.g.
    GROUPMIN's MATCH and MIN on the GPU); the tables it changed before failing are the same."""
    fast, body = machines(backend)
    got = []
    for m in (fast, body):
        args = build(m)
        before = m.native_timing[0]
        with pytest.raises(starvm.StarError) as info:
            m.call(name, *args)
        # no kernel ran, or the Star body did after it (the body's error: a kernel raises none)
        assert m.native_timing[0] == before or m.last_call_stats
        got.append((info.value.render(), [a.to_numpy() for a in args]))
    assert got[0][0] == got[1][0]
    for a, b in zip(got[0][1], got[1][1]):
        np.testing.assert_array_equal(a, b)
    return got[0][0]


def both_body(backend, name, build, inner_kernels: bool = False):
    """Both machines run the Star body (no native call) and agree; returns the fast one's args.
    With ``inner_kernels`` the body may call other routines' kernels (GROUPMIN's MATCH and MIN
    on the GPU), so native calls are not counted."""
    fast, body = machines(backend)
    out = []
    for m in (fast, body):
        args = build(m)
        before = m.native_timing[0]
        m.call(name, *args)
        if not inner_kernels:
            assert m.native_timing[0] == before, "the Star body ran, not the routine's kernel"
        out.append(args)
    for a, b in zip(*out):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    return out[0]


@pytest.mark.parametrize("bad", [0, 9])
def test_gather_index_out_of_range(backend, bad):
    rng = np.random.default_rng(bad)
    T = rng.random((8, 5)) < 0.5
    idx = rng.integers(1, 9, 70)
    idx[40] = bad
    IX, X, R0 = as_bits(idx, 4), np.ones(70, bool), rng.random((70, 5)) < 0.5
    msg = both_fail(backend, "GATHER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(R0)))
    assert f"row index {bad} out of range 1..8" in msg


def test_scatter_index_out_of_range(backend):
    rng = np.random.default_rng(11)
    T = rng.random((70, 3)) < 0.5
    idx = rng.integers(1, 11, 70)
    idx[[5, 50]] = 11
    IX, X, R0 = as_bits(idx, 4), rng.random(70) < 0.8, rng.random((10, 3)) < 0.5
    X[[5, 50]] = True
    msg = both_fail(backend, "SCATTER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(R0)))
    assert "row index 11 out of range 1..10" in msg


def test_unmarked_out_of_range_is_fine(backend):
    """A row number out of range in a row X does not mark is never read."""
    rng = np.random.default_rng(12)
    T = rng.random((9, 4)) < 0.5
    idx = rng.integers(1, 10, 66)
    idx[3] = 0
    idx[64] = 15
    IX, X, R0 = as_bits(idx, 4), np.ones(66, bool), rng.random((66, 4)) < 0.5
    X[[3, 64]] = False
    fa, ba = call_both(backend, "GATHER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(R0)))
    np.testing.assert_array_equal(fa[3].to_numpy(), model_gather(T, IX, X, R0))
    R1 = rng.random((9, 4)) < 0.5
    T2 = rng.random((66, 4)) < 0.5
    fa, ba = call_both(backend, "SCATTER", lambda m: (m.table(T2), m.table(IX), m.slice(X), m.table(R1)))
    np.testing.assert_array_equal(fa[3].to_numpy(), model_scatter(T2, IX, X, R1))


@pytest.mark.parametrize("name", ["GATHER", "SCATTER"])
def test_r_is_t_runs_the_body(backend, name):
    """R the same table as T: the Star body's row-by-row order matters, so it runs."""
    rng = np.random.default_rng(13)
    n = 40
    T0 = rng.random((n, 6)) < 0.5
    IX = as_bits(rng.integers(1, n + 1, n), 6)
    X = rng.random(n) < 0.7

    def build(m):
        t = m.table(T0)
        return (t, m.table(IX), m.slice(X), t)
    both_body(backend, name, build)


@pytest.mark.parametrize("name", ["GATHER", "SCATTER"])
def test_r_is_ix_runs_the_body(backend, name):
    rng = np.random.default_rng(14)
    n = 30
    IX0 = as_bits(rng.integers(1, n + 1, n), 5)
    T = rng.random((n, 5)) < 0.5
    X = rng.random(n) < 0.7

    def build(m):
        ix = m.table(IX0)
        return (m.table(T), ix, m.slice(X), ix)
    both_body(backend, name, build)


def test_wide_index_runs_the_body(backend):
    """An index table of 64 columns (wider than the kernels decode) runs the Star body."""
    rng = np.random.default_rng(15)
    T = rng.random((20, 3)) < 0.5
    IX = as_bits(rng.integers(1, 21, 30), 64)
    X, R0 = rng.random(30) < 0.5, rng.random((30, 3)) < 0.5
    fa = both_body(backend, "GATHER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(R0)))
    np.testing.assert_array_equal(fa[3].to_numpy(), model_gather(T, IX, X, R0))


def test_groupmin_wide_key_runs_the_body(backend):
    rng = np.random.default_rng(16)
    n = 50
    G = as_bits(rng.integers(0, 4, n), 2)
    K = rng.random((n, 65)) < 0.5
    K[:, :60] = False                                       # small values, many ties
    X = rng.random(n) < 0.6
    fa = both_body(backend, "GROUPMIN", lambda m: (m.table(G), m.table(K), m.slice(X), m.slice(np.zeros(n, bool))),
                   inner_kernels=backend in ("cupy", "auto"))
    np.testing.assert_array_equal(fa[3].to_numpy(), model_groupmin(G, K, X))


def test_shape_mismatches_fail_as_the_body_does(backend):
    rng = np.random.default_rng(17)
    T = rng.random((10, 3)) < 0.5
    IX = as_bits(rng.integers(1, 11, 70), 4)
    X = np.ones(70, bool)
    # R has 4 columns, T 3: the body fails on its first row write
    both_fail(backend, "GATHER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(np.zeros((70, 4), bool))))
    # X of the wrong length
    T70 = rng.random((70, 3)) < 0.5
    both_fail(backend, "SCATTER", lambda m: (m.table(T70), m.table(IX),
                                             m.slice(np.ones(69, bool)), m.table(np.zeros((10, 3), bool))))
    # R with fewer rows than IX: fine while no marked row is beyond it, else the body's error
    both_fail(backend, "GATHER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(np.zeros((50, 3), bool))))
    # K with other rows than G: nothing marked is no error, something marked is
    G = as_bits(rng.integers(0, 3, 70), 2)
    K = rng.random((60, 4)) < 0.5
    both_body(backend, "GROUPMIN", lambda m: (m.table(G), m.table(K), m.slice(np.zeros(70, bool)),
                                              m.slice(np.ones(70, bool))))
    both_fail(backend, "GROUPMIN", lambda m: (m.table(G), m.table(K), m.slice(X), m.slice(np.zeros(70, bool))))


def test_native_runs_from_star_code(backend):
    """Called from a program (not Machine.call): the var table and var slice come back."""
    src = """var T: table(5, 3); IX, R: table(5, 3); X, Z: slice(T);
begin
  IOTA(T);
  ROW(1, IX) := BITS('101'); ROW(2, IX) := BITS('001'); ROW(3, IX) := BITS('001');
  ROW(4, IX) := BITS('010'); ROW(5, IX) := BITS('101');
  X := BITS('11011');
  GATHER(T, IX, X, R);
  writeln(R);
  SCATTER(T, IX, X, R);
  writeln(R);
  GROUPMIN(IX, T, X, Z);
  writeln(Z);
end."""
    import io
    outs = []
    for native in (True, False):
        out = io.StringIO()
        m = starvm.Machine(backend=backend, out=out, native=native)
        m.run(src, "t.star")
        outs.append(out.getvalue())
        if native and backend == "numpy":
            assert m.native_timing[0] == 4
    assert outs[0] == outs[1]
    assert outs[0] == "101\n001\n000\n010\n101\n" + "010\n100\n000\n010\n101\n" + "11010\n"


# ---------------------------------------------------------------- the GPU kernels themselves
def _cupy_or_skip():
    from conftest import cupy_or_skip
    cupy_or_skip()          # skips only without CuPy or a CUDA device; any other error fails
    import cupy as cp
    from gpu_sources.native_kernels import cuda_rows
    return cp, cuda_rows()


def test_cupy_kernels_equal_numpy_kernels():
    """The CUDA row kernels against the NumPy ones on sizes the Star bodies would take too long for."""
    cp, rc = _cupy_or_skip()
    from starvm.backends import get_backend
    from gpu_sources.native_kernels import numpy_rows
    rn = numpy_rows()
    hb, db = get_backend("numpy"), get_backend("cupy")
    rng = np.random.default_rng(21)
    for n in (1, 64, 65, 4097, 70_001):
        for k in (1, 7, 45):
            m_rows = max(1, n // 2)
            c = max(1, m_rows.bit_length())
            T = rng.random((m_rows, k)) < 0.5
            IX = as_bits(rng.integers(1, m_rows + 1, n), c)
            X = rng.random(n) < 0.5
            R0 = rng.random((n, k)) < 0.5
            tables = {}
            for b in (hb, db):
                t, ix, r = b.table(m_rows, k, T), b.table(n, c, IX), b.table(n, k, R0)
                rn_or_rc = rn if b is hb else rc
                rn_or_rc.gather(t, ix, b.from_bools(X), r)
                tables[b.name] = b.table_to_bools(r)
            np.testing.assert_array_equal(tables["numpy"], tables["cupy"], err_msg=f"gather {n} {k}")
            # scatter: T and IX of n rows into R of m_rows rows, many duplicates
            T2 = rng.random((n, k)) < 0.5
            IX2 = as_bits(rng.integers(1, m_rows + 1, n), c)
            R1 = rng.random((m_rows, k)) < 0.5
            for b in (hb, db):
                r = b.table(m_rows, k, R1)
                (rn if b is hb else rc).scatter(b.table(n, k, T2), b.table(n, c, IX2), b.from_bools(X), r)
                tables[b.name] = b.table_to_bools(r)
            np.testing.assert_array_equal(tables["numpy"], tables["cupy"], err_msg=f"scatter {n} {k}")
            # groupmin: G of 20 columns, K of k columns with ties
            G = as_bits(rng.integers(0, max(1, n // 10), n), 20)
            K = as_bits(rng.integers(0, 4, n), k) if k > 2 else rng.random((n, k)) < 0.5
            zh = rn.groupmin(hb.table(n, 20, G), hb.table(n, k, K), hb.from_bools(X))
            zd = rc.groupmin(db.table(n, 20, G), db.table(n, k, K), db.from_bools(X))
            np.testing.assert_array_equal(hb.to_bools(zh, n), db.to_bools(zd, n), err_msg=f"groupmin {n} {k}")
            # iota
            th, td = hb.table(n, k), db.table(n, k)
            rn.iota(th)
            rc.iota(td)
            np.testing.assert_array_equal(hb.table_to_bools(th), db.table_to_bools(td), err_msg=f"iota {n} {k}")


def test_cupy_groupmin_ties_and_packing_limit():
    """The GPU's GROUPMIN (warp kernels: one packed atomic pass when K's bits and the row number fit
    64 bits, else K then the row) against the NumPy kernel: many ties, one giant group (every lane
    of a warp in one group), widths of K on both sides of the packing limit, row counts that are
    not multiples of 32 or 64, and the sorted path for wide groups."""
    cp, rc = _cupy_or_skip()
    from starvm.backends import get_backend
    from gpu_sources.native_kernels import numpy_rows
    rn = numpy_rows()
    hb, db = get_backend("numpy"), get_backend("cupy")
    rng = np.random.default_rng(77)
    for n in (1, 31, 33, 100, 1000, 40_003):
        rowbits = max(1, (n - 1).bit_length())
        for kk in sorted({1, 7, 53, 64 - rowbits - 1, 64 - rowbits, 64 - rowbits + 1, 64} - {0}):
            if not 1 <= kk <= 64:
                continue
            for gk, groups in ((1, 1), (8, 3), (26, max(1, n // 5)), (40, max(1, n // 7)), (64, 5)):
                G = as_bits(rng.integers(0, min(groups, 1 << min(gk, 62)), n, dtype=np.uint64) << np.uint64(
                    gk - min(gk, 62)), gk)
                ties = rng.integers(0, 3, n, dtype=np.uint64) << np.uint64(kk - 2 if kk > 2 else 0)
                K = as_bits(ties, kk)                                 # three K values: many ties
                for X in (np.ones(n, bool), rng.random(n) < 0.3):
                    _groupmin_agrees(rn, rc, hb, db, n, G, gk, X,
                                     f"groupmin n={n} gk={gk} kk={kk} marked={int(X.sum())}", K, kk)


def _groupmin_agrees(rn, rc, hb, db, n, G, gk, X, what, K=None, kk=0):
    """GROUPMIN(G, K, X)'s Z, groups and their 1 bits by the CUDA kernels (rc) and the NumPy
    kernel (rn) on the same bits; K None: G itself (the same table, as BORUVKA's dedupe)."""
    gh, gd = hb.table(n, gk, G), db.table(n, gk, G)
    kh, kd = (gh, gd) if K is None else (hb.table(n, kk, K), db.table(n, kk, K))
    zh, ch, oh = rn.groupmin_counted(gh, kh, hb.from_bools(X))
    zd, cd, od = rc.groupmin_counted(gd, kd, db.from_bools(X))
    np.testing.assert_array_equal(hb.to_bools(zh, n), db.to_bools(zd, n), err_msg=what)
    assert (ch, oh) == (cd, od), what


def test_cupy_groupmin_by_itself_hashed():
    """GROUPMIN(G, G, X) on the GPU (a hash table of the keys: 8-byte slots where they fit,
    rows_dedupe_insert_packed and rows_dedupe_mark_packed, else rows_dedupe_insert, rows_dedupe_mark)
    against the NumPy kernel: widths up to 63 columns (64: sorted), all rows distinct, one value
    for every row, a few values, control slices all ones (BORUVKA's dedupe), random, sparse,
    none, row counts not multiples of 32 or 64; Z, the groups and their 1 bits."""
    cp, rc = _cupy_or_skip()
    from starvm.backends import get_backend
    from gpu_sources.native_kernels import numpy_rows
    rn = numpy_rows()
    hb, db = get_backend("numpy"), get_backend("cupy")
    rng = np.random.default_rng(78)
    for n in (1, 33, 100, 1000, 40_003, 300_001):
        for gk in (27, 40, 53, 63, 64):
            for distinct in (1, 5, max(1, n // 3), n):
                vals = rng.integers(0, np.iinfo(np.uint64).max, distinct, dtype=np.uint64, endpoint=True)
                vals >>= np.uint64(64 - gk)
                G = as_bits(vals[rng.integers(0, distinct, n)], gk)
                for X in (np.ones(n, bool), rng.random(n) < 0.5, rng.random(n) < 0.01, np.zeros(n, bool)):
                    _groupmin_agrees(rn, rc, hb, db, n, G, gk, X,
                                     f"groupmin G=K n={n} gk={gk} distinct={distinct} marked={int(X.sum())}")
    # the 8-byte slots' hand-over to the 16-byte ones: a key more than DEDUPE_PROBES_MAX slots from home
    plain = rc.DEDUPE_PROBES_MAX
    try:
        for probes in (0, 1, 3):
            rc.DEDUPE_PROBES_MAX = probes
            for n, gk in ((1000, 53), (40_003, 40), (40_003, 63)):
                G = as_bits(rng.integers(0, 1 << 62, n, dtype=np.uint64) >> np.uint64(62 - min(gk, 62)), gk)
                X = rng.random(n) < 0.7
                _groupmin_agrees(rn, rc, hb, db, n, G, gk, X, f"groupmin G=K n={n} gk={gk} probes={probes}")
    finally:
        rc.DEDUPE_PROBES_MAX = plain


def test_cupy_compact_expand_and_moves_by_width():
    """COMPACT, EXPAND and GATHER's warp kernels against the NumPy kernels for widths around 32
    and 64 columns (the warp writes half-words, 64 columns at a time), sparse or dense X, and
    runs of 32 marked rows (copied as shifted words) at every offset."""
    cp, rc = _cupy_or_skip()
    from starvm.backends import get_backend
    from gpu_sources.native_kernels import numpy_rows
    rn = numpy_rows()
    hb, db = get_backend("numpy"), get_backend("cupy")
    rng = np.random.default_rng(78)
    for n in (1, 33, 64, 65, 2049, 30_001):
        for k in (1, 31, 32, 33, 53, 64, 65, 129):
            T = rng.random((n, k)) < 0.5
            # every row, a few, many; runs of marked rows that start off a word's edge (a shifted copy
            # of 32 rows at a time, straddling two words of the source)
            # (0.02, 0.003: COMPACT by the list of rows; the word kernels need 1 marked row in 8)
            for X in (np.ones(n, bool), rng.random(n) < 0.02, rng.random(n) < 0.6, np.arange(n) >= 17,
                      np.arange(n) % 100 != 5, rng.random(n) < 0.003, np.arange(n) < n // 2 + 3,
                      rng.random(n) < 0.15):
                c = int(X.sum())
                R0 = rng.random((c + 7, k)) < 0.5
                plain = rc.COMPACT_WORDS
                for words in (1, 0):                 # COMPACT_WORDS: the word kernels, the warp ones
                    rc.COMPACT_WORDS = words
                    out = {}
                    try:
                        for b, mod in ((hb, rn), (db, rc)):
                            r = b.table(c + 7, k, R0)
                            mod.compact(b.table(n, k, T), b.from_bools(X), r, c)
                            e = b.table(n, k, T)
                            mod.expand(b.table(c + 7, k, R0), b.from_bools(X), e, c)
                            s = b.table(n, k, T)             # in place
                            mod.compact(s, b.from_bools(X), s, c)
                            out[b.name] = (b.table_to_bools(r), b.table_to_bools(e), b.table_to_bools(s))
                    finally:
                        rc.COMPACT_WORDS = plain
                    for a, d in zip(out["numpy"], out["cupy"]):
                        np.testing.assert_array_equal(a, d, err_msg=f"compact/expand n={n} k={k} c={c} words={words}")
            if k <= 64 and n > 1:                                       # GATHER by values, IX of many widths
                m_rows = max(1, n // 3)
                cb = max(1, m_rows.bit_length())
                IX = as_bits(rng.integers(1, m_rows + 1, n), cb)
                X = rng.random(n) < 0.5
                T2 = rng.random((m_rows, k)) < 0.5
                got = {}
                for b, mod in ((hb, rn), (db, rc)):
                    r = b.table(n, k, T)
                    mod.gather(b.table(m_rows, k, T2), b.table(n, cb, IX), b.from_bools(X), r)
                    got[b.name] = b.table_to_bools(r)
                np.testing.assert_array_equal(got["numpy"], got["cupy"], err_msg=f"gather n={n} k={k}")


# ---------------------------------------------------------------- --max-steps: the body's partial effects
_LIMITED: dict = {}


def limited_machine(backend: str, native: bool) -> starvm.Machine:
    """One machine with a step limit per backend and natives on / off, shared by the cases
    below: loading the library (rows.star) is most of a case's time; each case sets the limit
    it needs and counts kernel calls and steps from where it starts."""
    if (backend, native) not in _LIMITED:
        _LIMITED[backend, native] = starvm.Machine(backend=backend, native=native, max_steps=1 << 40)
    m = _LIMITED[backend, native]
    m.max_steps = 1 << 40
    return m


@pytest.mark.parametrize("n", [40, 300])            # auto: the CPU side, and the device side
@pytest.mark.parametrize("name", ["GATHER", "SCATTER", "GROUPMIN", "COMPACT", "EXPAND"])
def test_step_limit_leaves_what_the_body_leaves(backend, n, name):
    """Past --max-steps a native row move does not run its kernel (GROUPMIN, whose ticks are
    known after its kernel, leaves its result unused): the Star body runs and stops part way,
    so the error, the rows written and the steps counted are those of natives off."""
    rng = np.random.default_rng(n)
    T, X = rng.random((n, 5)) < 0.5, rng.random(n) < 0.5
    IX = as_bits(rng.integers(1, n + 1, n), 9)
    R0 = rng.random((n, 5)) < 0.5
    side = backend if backend != "auto" else ("numpy" if n < 64 else "emulated")   # where auto puts it
    kernel = int(native_for(name.lower(), side, enabled=True) is not None)
    seen = {}
    for native in (True, False):
        m = limited_machine(backend, native)
        calls = m.native_timing[0]
        build = {"GATHER": lambda: (m.table(T), m.table(IX), m.slice(X), m.table(R0)),
                 "SCATTER": lambda: (m.table(T), m.table(IX), m.slice(X), m.table(R0)),
                 "GROUPMIN": lambda: (m.table(IX), m.table(T), m.slice(X), m.slice(np.zeros(n, bool))),
                 "COMPACT": lambda: (m.table(T), m.slice(X), m.table(R0)),
                 "EXPAND": lambda: (m.table(T), m.slice(X), m.table(R0))}[name]
        m.call(name, *build())                       # the kernel runs
        assert m.native_timing[0] - calls == (kernel if native else 0)
        m.max_steps = 5                              # the body needs one tick per marked row at least
        args = build()
        before = list(m.counts)
        with pytest.raises(starvm.StarError) as info:
            m.call(name, *args)
        assert "step limit" in str(info.value)
        if native and name != "GROUPMIN":
            assert m.native_timing[0] - calls == kernel      # the kernel did not run
        steps = [a - b for a, b in zip(m.counts, before)]
        seen[native] = (str(info.value), steps, [a.to_numpy() for a in args])
    assert seen[True][:2] == seen[False][:2]
    for a, b in zip(seen[True][2], seen[False][2]):
        assert np.array_equal(a, b)
