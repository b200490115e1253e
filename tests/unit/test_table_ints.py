"""Tables from integer codes and back (backends/codes.py, Backend.table_set_ints /
table_get_ints, Machine.table_from_ints, Table.to_ints), checked against the old path through
an n x k bool array and a plain-Python model, on every backend."""
from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import starvm
import starvm.graphs as sg
from starvm.backends import codes
from starvm.backends import get_backend
from starvm.graphs.graph import _bits

ROWS = [0, 1, 63, 64, 65, 130, 1000]
WIDTHS = [1, 2, 7, 8, 9, 31, 63, 64]


def random_codes(rng, n: int, width: int) -> np.ndarray:
    """n codes of ``width`` bits (at most 64), a few extremes among them."""
    hi = (1 << min(width, 64)) - 1
    x = rng.integers(0, 1 << 62, size=n, dtype=np.uint64) * np.uint64(4) + rng.integers(0, 4, size=n).astype(np.uint64)
    x &= np.uint64(hi)
    if n >= 2:
        x[0], x[-1] = 0, hi
    return x


def model_bits(values, width: int) -> np.ndarray:
    """The plain-Python model: row i is the binary string of values[i], width bits, column 1
    the most significant (bits of columns beyond the 64 bits of a code are 0)."""
    out = np.zeros((len(values), width), dtype=bool)
    for i, v in enumerate(int(x) for x in values):
        s = format(v, f"0{width}b")[-width:] if width else ""
        out[i] = [ch == "1" for ch in s]
    return out


def old_path(values, width: int) -> np.ndarray:
    """What GRAPH_EDGES wrote before: Graph.edges_bits' m x k bool array (width <= 63)."""
    return _bits(np.asarray(values, dtype=np.int64), width)


# ------------------------------------------------------------------ the packing routines
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("width", WIDTHS + [65, 70])
def test_pack_routines_against_model(n, width):
    rng = np.random.default_rng(n * 131 + width)
    vals = random_codes(rng, n, width)
    want = model_bits(vals, width)
    ref = get_backend("numpy").table(n, width, want).data          # the bool path's packed words
    W = (n + 63) // 64
    for pack in (codes.pack_numpy, lambda v, k, d: codes.pack_xp(np, v, k, d)):
        data = np.full((width, W), 0xFFFF, dtype=np.uint64)          # stale contents are overwritten
        pack(vals, width, data)
        assert np.array_equal(data, ref)
    assert np.array_equal(codes.unpack_numpy(ref, n, width), vals)
    assert np.array_equal(codes.unpack_xp(np, ref, n, width), vals)


@pytest.mark.parametrize("width", [1, 5, 20, 33, 63])
def test_pack_matches_old_bool_path(width):
    rng = np.random.default_rng(width)
    vals = random_codes(rng, 777, width)
    data = np.zeros((width, 13), dtype=np.uint64)
    codes.pack_numpy(vals, width, data)
    assert np.array_equal(data, get_backend("numpy").table(777, width, old_path(vals, width)).data)


def test_chunk_borders(monkeypatch):
    """Several chunks, the last one short: the words at the borders are right."""
    monkeypatch.setattr(codes, "CHUNK_NUMPY", 128)
    monkeypatch.setattr(codes, "CHUNK_XP", 192)
    rng = np.random.default_rng(5)
    vals = random_codes(rng, 1000, 17)
    ref = get_backend("numpy").table(1000, 17, model_bits(vals, 17)).data
    for pack in (codes.pack_numpy, lambda v, k, d: codes.pack_xp(np, v, k, d)):
        data = np.zeros_like(ref)
        pack(vals, 17, data)
        assert np.array_equal(data, ref)
    assert np.array_equal(codes.unpack_numpy(ref, 1000, 17), vals)
    assert np.array_equal(codes.unpack_xp(np, ref, 1000, 17), vals)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=150), st.integers(1, 64))
def test_pack_property(values, width):
    vals = np.array(values, dtype=np.uint64) & np.uint64((1 << width) - 1) if values else np.zeros(0, np.uint64)
    n = vals.size
    data = np.zeros((width, (n + 63) // 64), dtype=np.uint64)
    codes.pack_numpy(vals, width, data)
    assert np.array_equal(get_backend("numpy").table_to_bools(get_backend("numpy")._wrap(data, n, width)),
                          model_bits(vals, width))
    assert np.array_equal(codes.unpack_xp(np, data, n, width), vals)


# ------------------------------------------------------------------ the Python API, every backend
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("width", [1, 9, 64])
def test_table_from_ints_round_trip(backend, n, width):
    m = starvm.Machine(backend=backend, out=io.StringIO())
    vals = random_codes(np.random.default_rng(n + width), n, width)
    t = m.table_from_ints(vals, width)
    assert t.shape == (n, width)
    assert np.array_equal(t.to_numpy(), model_bits(vals, width))
    back = t.to_ints()
    assert isinstance(back, np.ndarray) and back.dtype == np.uint64
    assert np.array_equal(back, vals)
    # a table made from bools reads back as the same codes
    assert np.array_equal(m.table(model_bits(vals, width)).to_ints(), vals)


def test_table_from_ints_inputs(backend):
    m = starvm.Machine(backend=backend, out=io.StringIO())
    t = m.table_from_ints([5, 0, 3], 3)
    assert t.to_numpy().astype(int).tolist() == [[1, 0, 1], [0, 0, 0], [0, 1, 1]]
    assert m.table_from_ints([], 4).shape == (0, 4)
    assert m.table_from_ints(np.zeros(3, np.int32), 0).shape == (3, 0)
    assert m.table_from_ints(np.array([7], np.int8), 70).to_numpy()[0, -3:].all()
    with pytest.raises(ValueError, match="does not fit 3 bits"):
        m.table_from_ints([8], 3)
    with pytest.raises(ValueError, match=">= 0"):
        m.table_from_ints([1, -1], 8)
    with pytest.raises(ValueError, match="integers"):
        m.table_from_ints([0.5], 8)
    with pytest.raises(ValueError, match="1-D"):
        m.table_from_ints([[1, 2]], 8)
    with pytest.raises(ValueError, match="width"):
        m.table_from_ints([1], -1)
    with pytest.raises(ValueError, match="at most 64 columns"):
        m.table_from_ints([1], 65).to_ints()


def test_table_from_ints_used_by_star(backend):
    """A table made from codes is an ordinary table: a library routine finds its minimum."""
    m = starvm.Machine(backend=backend, out=io.StringIO())
    vals = np.array([9, 4, 12, 4, 30, 7] * 20, dtype=np.int64)
    T = m.table_from_ints(vals, 5)
    Z = m.slice(np.zeros(vals.size, bool))
    m.call("MIN", T, m.slice(np.ones(vals.size, bool)), Z)
    assert np.array_equal(np.asarray(Z), vals == 4)


# ------------------------------------------------------------------ GRAPH_EDGES and GRAPH_ADJ
EDGES = """
var L, R: table(GRAPH_M, GRAPH_VBITS + 2); W: table(GRAPH_M, GRAPH_WBITS);
    P: table(GRAPH_N, GRAPH_N);
begin GRAPH_EDGES(L, R, W); GRAPH_ADJ(P); end.
"""


@pytest.mark.parametrize("spec", ["rmat:scale=7,ef=4,seed=1", "gnp:n=70,p=0.05,seed=2,wmax=1000",
                                  "ssca2:n=1,seed=1"])
def test_graph_tables_against_old_path(backend, spec):
    g = sg.generate(spec)
    m = starvm.Machine(backend=backend, out=io.StringIO(), graph=g)
    m.run(EDGES)
    L, R, W, P = (m.global_(x) for x in "LRWP")
    bl, br, bw = g.edges_bits(g.vbits + 2, g.wbits)
    assert np.array_equal(L.to_numpy(), bl) and np.array_equal(R.to_numpy(), br)
    assert np.array_equal(W.to_numpy(), bw)
    assert np.array_equal(P.to_numpy(), g.adjacency())
    assert np.array_equal(L.to_ints(), g.src) and np.array_equal(W.to_ints(), g.weight)


def test_adjacency_words_repeats_and_loops():
    g = sg.from_edges(70, [(1, 2), (1, 2), (70, 70), (65, 1), (3, 69)], directed=True)
    from starvm.graphs.star import adjacency_words
    words = adjacency_words(g)
    t = get_backend("numpy")._wrap(words, 70, 70)
    assert np.array_equal(get_backend("numpy").table_to_bools(t), g.adjacency())
    assert adjacency_words(sg.from_edges(0, [])).shape == (0, 0)


# ------------------------------------------------------------------ generators
def test_unique_pairs_is_unique_axis0():
    rng = np.random.default_rng(3)
    for n in (1, 2, 50, 1 << 20):
        u, v = rng.integers(0, n, 500), rng.integers(0, n, 500)
        uu, vv = sg.generators.unique_pairs(u, v, n)
        want = np.unique(np.stack([u, v], axis=1), axis=0)
        assert np.array_equal(np.stack([uu, vv], axis=1), want)


class _DeviceLike:
    """NumPy dressed as a device array module (``xp is not np``): runs the generators' device
    code path, CuPy's RandomState API included, on the CPU."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def asnumpy(a):
        return np.asarray(a)


@pytest.mark.parametrize("directed", [False, True])
def test_rmat_device_path(directed):
    g = sg.rmat(8, 8, seed=4, wmax=9, directed=directed, xp=_DeviceLike())
    assert g.n == 256 and g.m > 0 and g.weight.min() >= 1 and g.weight.max() <= 9
    pairs = set(zip(g.src.tolist(), g.dst.tolist()))
    assert len(pairs) == g.m and all(u != v for u, v in pairs)
    if not directed:
        assert pairs == {(v, u) for u, v in pairs}
    again = sg.rmat(8, 8, seed=4, wmax=9, directed=directed, xp=_DeviceLike())
    assert np.array_equal(again.src, g.src) and np.array_equal(again.weight, g.weight)


def test_rmat_on_gpu():
    """On a GPU: CuPy's stream differs from NumPy's, so the graph is checked for its shape."""
    from conftest import cupy_or_skip
    cupy_or_skip()
    import cupy
    g = sg.rmat(10, 8, seed=1, xp=cupy)
    h = sg.rmat(10, 8, seed=1)
    assert g.n == h.n and 0.8 * h.m < g.m < 1.2 * h.m
    pairs = set(zip(g.src.tolist(), g.dst.tolist()))
    assert len(pairs) == g.m and pairs == {(v, u) for u, v in pairs} and all(u != v for u, v in pairs)
