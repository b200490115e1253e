"""The fast paths of graph input give what their plain definitions give, bit for bit: R-MAT's
threaded, chunked draw (the bit-by-bit stream of one generator), the threaded one-key sort, the
undirected reading's packed sort key (and its shortcut for graphs made both ways), and
pack_numpy's byte planes. Each is compared with a plain implementation kept here."""
from __future__ import annotations

import numpy as np
import pytest

from starvm.backends import codes
from starvm.graphs import generators, rmat
from starvm.graphs.graph import Graph


# ------------------------------------------------------------------ plain references
def rmat_reference(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0, wmax=100, directed=False):
    """R-MAT as first written: one uniform per sample and bit, bit after bit, from one
    generator; pairs deduplicated with np.unique; weights drawn after."""
    rng = np.random.default_rng(seed)
    n, m = 1 << scale, edge_factor << scale
    u, v = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        r = rng.random(m)
        down = r >= a + b
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)
        u |= down.astype(np.int64) << bit
        v |= right.astype(np.int64) << bit
    keep = u != v
    u, v = u[keep], v[keep]
    if not directed:
        u, v = np.minimum(u, v), np.maximum(u, v)
    pairs = np.unique(np.stack([u, v], axis=1), axis=0).reshape(-1, 2)
    u, v = pairs[:, 0] + 1, pairs[:, 1] + 1
    w = rng.integers(1, wmax + 1, size=u.size, dtype=np.int64)
    if not directed:
        u, v, w = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
    return u, v, w


def undirected_reference(g: Graph):
    """The undirected reading by its definition, one edge group at a time in Python: the arcs
    as given, then per (smaller, larger, weight) ascending the reverse arcs lacking."""
    count: dict = {}
    for s, d, w in zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()):
        if s != d:
            key = (min(s, d), max(s, d), w)
            count[key] = count.get(key, 0) + (1 if s < d else -1)
    src, dst, wt = g.src.tolist(), g.dst.tolist(), g.weight.tolist()
    for (lo, hi, w), more in sorted(count.items()):
        for _ in range(abs(more)):
            src.append(hi if more > 0 else lo), dst.append(lo if more > 0 else hi), wt.append(w)
    return src, dst, wt


def pack_reference(values, k: int, words: int) -> np.ndarray:
    """The k x words packed columns bit by bit: column c holds bit k-1-c of every code."""
    out = np.zeros((k, words), dtype=np.uint64)
    for r, x in enumerate(int(x) for x in values):
        for c in range(k):
            s = k - 1 - c
            if s < 64 and (x >> s) & 1:
                out[c, r // 64] |= np.uint64(1 << (r % 64))
    return out


# ------------------------------------------------------------------ R-MAT
@pytest.fixture
def many_threads(monkeypatch):
    """The threaded draw and sort with 5 threads and chunks of 100 samples whatever the machine."""
    monkeypatch.setattr(generators, "_cpu_count", lambda: 5)
    monkeypatch.setattr(generators, "RMAT_THREAD_SAMPLES", 64)
    monkeypatch.setattr(generators, "RMAT_CHUNK", 100)
    monkeypatch.setattr(generators, "SORT_THREAD_KEYS", 64)


@pytest.mark.parametrize("kw", [dict(scale=0), dict(scale=1, seed=3), dict(scale=6, seed=7), dict(scale=9, seed=1),
                                dict(scale=7, edge_factor=0), dict(scale=8, seed=2, directed=True),
                                dict(scale=7, wmax=1, seed=4), dict(scale=8, a=0.25, b=0.25, c=0.25, seed=5)])
@pytest.mark.parametrize("threads", [False, True])
def test_rmat_equals_the_bit_by_bit_draw(kw, threads, request):
    if threads:
        request.getfixturevalue("many_threads")
    g = rmat(**kw)
    u, v, w = rmat_reference(**kw)
    assert np.array_equal(g.src, u) and np.array_equal(g.dst, v) and np.array_equal(g.weight, w)
    assert g.src.dtype == g.dst.dtype == g.weight.dtype == np.int64


def test_rmat_leaves_the_stream_after_every_draw(many_threads):
    """The generator ends where the bit-by-bit draw ends: its next numbers are the same; the
    keys are the pairs' u * 2^scale + v, -1 for a self-loop."""
    rng, ref = np.random.default_rng(11), np.random.default_rng(11)
    keys = generators._rmat_keys_numpy(rng, 5, 700, 0.57, 0.19, 0.19, True)
    r = ref.random(5 * 700).reshape(5, 700)
    u = ((r >= 0.76).astype(np.int64) << np.arange(5)[:, None]).sum(axis=0)
    right = ((r >= 0.57) & (r < 0.76)) | (r >= 0.95)
    v = (right.astype(np.int64) << np.arange(5)[:, None]).sum(axis=0)
    assert np.array_equal(keys, np.where(u == v, -1, u * 32 + v))
    assert np.array_equal(rng.random(10), ref.random(10))


@pytest.mark.parametrize("case", ["random", "skewed", "repeats", "loops", "empty"])
def test_sorted_distinct_keys_in_threads(case, monkeypatch):
    """The threaded sort: np.unique of the non-negative keys, however the values spread."""
    monkeypatch.setattr(generators, "_cpu_count", lambda: 5)
    monkeypatch.setattr(generators, "SORT_THREAD_KEYS", 100)
    rng = np.random.default_rng(3)
    keys = {"random": rng.integers(-1, 1 << 40, 5000), "skewed": rng.geometric(0.01, 5000) - 2,
            "repeats": rng.integers(0, 3, 5000), "loops": np.full(5000, -1), "empty": np.zeros(0, np.int64)}[case]
    want = np.unique(keys[keys >= 0])
    got = generators.sorted_distinct_keys(keys.astype(np.int64))
    assert got.dtype == np.int64 and np.array_equal(got, want)


def test_gnp_and_ssca2_pairs_sorted_and_distinct():
    """_finish's one-key sort on n not a power of two: the pairs of np.unique(axis=0)."""
    rng = np.random.default_rng(0)
    for n in (1, 3, 37, 1000):
        u, v = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
        for directed in (False, True):
            g = generators._finish(n, u, v, np.random.default_rng(1), 9, directed, "t", {})
            uu, vv = u[u != v], v[u != v]
            if not directed:
                uu, vv = np.minimum(uu, vv), np.maximum(uu, vv)
            pairs = np.unique(np.stack([uu, vv], axis=1), axis=0).reshape(-1, 2) + 1
            w = np.random.default_rng(1).integers(1, 10, size=len(pairs), dtype=np.int64)
            if not directed:
                pairs = np.concatenate([pairs, pairs[:, ::-1]])
                w = np.concatenate([w, w])
            assert np.array_equal(g.src, pairs[:, 0]) and np.array_equal(g.dst, pairs[:, 1])
            assert np.array_equal(g.weight, w)
            assert g.meta.get("both_ways", False) == (not directed)


# ------------------------------------------------------------------ the undirected reading
def random_graph(rng, n, m, wmax, loops=True):
    src, dst = rng.integers(1, n + 1, m), rng.integers(1, n + 1, m)
    if not loops:
        dst = np.where(src == dst, src % n + 1, dst)
    return Graph(n, src, dst, rng.integers(0, wmax + 1, m))


def check_reading(g: Graph):
    got = g.undirected()
    src, dst, wt = undirected_reference(g)
    assert got.src.tolist() == src and got.dst.tolist() == dst and got.weight.tolist() == wt
    assert got.weight.dtype == g.weight.dtype and not got.directed
    assert got.undirected() is got          # read again: the same list, no sort
    return got


@pytest.mark.parametrize("seed", range(6))
def test_undirected_equals_its_definition(seed):
    """Random multigraphs: self-loops, arcs repeated either way, weights 0, ties."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    check_reading(random_graph(rng, n, int(rng.integers(0, 300)), int(rng.integers(0, 4))))


def test_undirected_edge_cases():
    rng = np.random.default_rng(5)
    check_reading(Graph(0, [], [], []))                                   # empty
    check_reading(Graph(1, [1, 1], [1, 1], [0, 5]))                       # n = 1 (1-bit codes), only self-loops
    check_reading(Graph(2, [1, 2, 1, 1], [2, 1, 2, 2], [0, 0, 0, 0]))     # repeats, weight 0
    both = Graph(3, [1, 2, 2, 3], [2, 1, 3, 2], [4, 4, 1, 1])
    assert check_reading(both).src is both.src                            # already both ways: the same arcs
    # keys past 63 bits: a weight near 2^62, uint64 weights, a vertex count near 2^31
    check_reading(Graph(5, [1, 2, 3, 3], [2, 1, 4, 4], [1 << 62, 1 << 62, 3, 7]))
    check_reading(Graph(4, [1, 3, 2], [2, 4, 1], np.array([(1 << 64) - 1, 1 << 63, 5], dtype=np.uint64)))
    big = (1 << 31) + 5
    check_reading(Graph(big, [1, big, 7, big - 1], [big, 1, big - 1, 7], [2, 2, 3, 9]))
    check_reading(random_graph(rng, (1 << 32) - 1, 200, 1 << 40))


def test_generated_graph_reads_as_itself():
    """A generated undirected graph is read without a sort, and the general path agrees."""
    g = rmat(7, seed=3)
    assert g.meta["both_ways"] and g.undirected() is g
    plain = Graph(g.n, g.src, g.dst, g.weight)
    u = plain.undirected()
    assert np.array_equal(u.src, g.src) and np.array_equal(u.dst, g.dst) and np.array_equal(u.weight, g.weight)
    directed = rmat(7, seed=3, directed=True)
    assert "both_ways" not in directed.meta
    check_reading(directed)


# ------------------------------------------------------------------ packing codes into columns
@pytest.mark.parametrize("k", [1, 3, 7, 8, 9, 16, 17, 63, 64, 65, 70])
def test_pack_numpy_equals_bit_by_bit(k, monkeypatch):
    monkeypatch.setattr(codes, "CHUNK_NUMPY", 128)        # several chunks, a short last one
    rng = np.random.default_rng(k)
    for n in (0, 1, 63, 64, 65, 300):
        top = min(k, 64)                                      # codes of `top` bits, the top one often set
        values = rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False) >> np.uint64(64 - top)
        words = (n + 63) // 64 + 1                            # a spare word stays 0
        data = np.full((k, words), 0xFFFF, dtype=np.uint64)   # old contents are cleared
        codes.pack_numpy(values, k, data)
        assert np.array_equal(data, pack_reference(values, k, words)), (k, n)
        assert np.array_equal(codes.unpack_numpy(data, n, k), values)


def test_adjacency_words_with_threaded_sort(many_threads):
    """GRAPH_ADJ's packed words (their arcs sorted in threads) against the n x n bool matrix
    packed column by column; repeated arcs and self-loops included."""
    from starvm.graphs.star import adjacency_words
    rng = np.random.default_rng(9)
    for n in (1, 63, 64, 130):
        g = random_graph(rng, n, 600, 3)
        words = (n + 63) // 64
        bits = np.packbits(g.adjacency().T, axis=1, bitorder="little")   # row j: column j's rows
        want = np.ascontiguousarray(np.pad(bits, ((0, 0), (0, words * 8 - bits.shape[1])))).view(np.uint64)
        assert np.array_equal(adjacency_words(g), want), n
