"""The one graph value every loader and generator returns."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class Graph:
    """n vertices numbered 1..n and m arcs ``src[e] -> dst[e]`` (1-based) with integer
    weights ``weight[e] >= 0``. An undirected edge is two arcs, one each way (a self-loop
    one arc). Duplicate arcs are kept as the file gives them."""
    n: int
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    name: str = ""
    directed: bool = True          # informational: False when every edge was given both ways
                                   # (undirected() makes it so)
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        for a in ("src", "dst"):
            object.__setattr__(self, a, np.ascontiguousarray(np.asarray(getattr(self, a), dtype=np.int64)))
        object.__setattr__(self, "weight", np.ascontiguousarray(weight_array(self.weight)))
        if not (self.src.shape == self.dst.shape == self.weight.shape) or self.src.ndim != 1:
            raise ValueError("src, dst and weight must be 1-D arrays of one length")
        if self.n < 0:
            raise ValueError("n must be >= 0")
        if self.m and (min(self.src.min(), self.dst.min()) < 1 or max(self.src.max(), self.dst.max()) > self.n):
            raise ValueError(f"arc endpoints must lie in 1..{self.n}")
        if self.m and self.weight.dtype == np.int64 and self.weight.min() < 0:
            raise ValueError("weights must be >= 0")

    @property
    def m(self) -> int:
        """The number of arcs (rows of GRAPH_EDGES)."""
        return int(self.src.size)

    @property
    def vbits(self) -> int:
        """Bits of a vertex code: the least c with 2^c > n (spec §9)."""
        return max(1, int(self.n).bit_length())

    @property
    def max_weight(self) -> int:
        return int(self.weight.max()) if self.m else 0

    @property
    def wbits(self) -> int:
        """Bits of the largest weight, at least 1."""
        return max(1, self.max_weight.bit_length())

    def adjacency(self) -> np.ndarray:
        """The n x n bool adjacency matrix: A[i-1, j-1] for an arc i -> j."""
        a = np.zeros((self.n, self.n), dtype=bool)
        a[self.src - 1, self.dst - 1] = True
        return a

    def weight_matrix(self):
        """A SciPy CSR matrix of the arc weights, the least weight where arcs repeat (zero
        weights are kept as explicit entries). A graph whose ``meta`` says its arcs are
        distinct (the generators' graphs: ``meta["distinct_arcs"]``) needs no sort to find
        the repeats: its CSR is built directly (R-MAT scale 25's billion arcs in seconds,
        not the minutes of a three-key lexsort)."""
        import scipy.sparse as sp
        if self.meta.get("distinct_arcs"):
            return sp.csr_matrix((self.weight.astype(float), (self.src - 1, self.dst - 1)), shape=(self.n, self.n))
        order = np.lexsort((self.weight, self.dst, self.src))
        s, d, w = self.src[order], self.dst[order], self.weight[order]
        first = np.ones(s.size, dtype=bool)
        first[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
        return sp.csr_matrix((w[first].astype(float), (s[first] - 1, d[first] - 1)), shape=(self.n, self.n))

    def edges_bits(self, vbits: int | None = None, wbits: int | None = None):
        """(L, R, W) as bool arrays, m x vbits, m x vbits, m x wbits: the binary codes, column 1
        the most significant bit (what GRAPH_EDGES writes)."""
        c = self.vbits if vbits is None else vbits
        b = self.wbits if wbits is None else wbits
        return _bits(self.src, c), _bits(self.dst, c), _bits(self.weight, b)

    def undirected(self) -> "Graph":
        """The undirected reading: both arcs of every edge. Each arc u -> v (u != v) is an edge
        {u, v} of its weight; the arcs as given come first, then, for every edge and weight,
        the reverse arcs the list lacks (so that u -> v and v -> u appear equally often), in
        the order of (smaller vertex, larger vertex, weight). A list that already has both
        arcs of every edge comes back with the same arcs in the same order; a self-loop stays
        one arc. A graph whose ``meta`` says so (``both_ways``: a generated undirected graph,
        or one this made) is that list without a look. Vectorised: one sort of the arcs."""
        if self.meta.get("both_ways") and not self.directed:
            return self
        pair = self.src != self.dst
        if not pair.any():
            return self._with(self.src, self.dst, self.weight)
        groups = _edge_groups(self.n, self.src[pair], self.dst[pair], self.weight[pair])
        del pair
        g_lo, g_hi, g_w, missing = groups
        if not missing.any():
            return self._with(self.src, self.dst, self.weight)
        count = np.abs(missing)
        add_src = np.where(missing > 0, g_hi, g_lo)
        add_dst = np.where(missing > 0, g_lo, g_hi)
        return self._with(np.concatenate([self.src, np.repeat(add_src, count)]),
                          np.concatenate([self.dst, np.repeat(add_dst, count)]),
                          np.concatenate([self.weight, np.repeat(g_w, count)]))

    def read_as(self, directed: bool) -> "Graph":
        """This graph in one reading: directed (the arcs as given) or undirected (undirected())."""
        return self if directed else self.undirected()

    def _with(self, src, dst, weight) -> "Graph":
        meta = self.meta
        if src is not self.src:            # arcs added: they may repeat arcs of the list
            meta = {k: v for k, v in meta.items() if k != "distinct_arcs"}
        meta = {**meta, "both_ways": True}   # read undirected again, it is the same list
        return Graph(self.n, src, dst, weight, name=self.name, directed=False, meta=meta)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"Graph({self.name or '?'}: n={self.n}, m={self.m} arcs, {kind}, max weight {self.max_weight})"


def weight_array(w) -> np.ndarray:
    """Weights as int64, or as uint64 when one is 2^63 .. 2^64 - 1 (NumPy would make a list
    holding such a number float64, losing its low bits: the list is converted exactly)."""
    a = w if isinstance(w, np.ndarray) else None
    if a is None:
        try:
            a = np.asarray(w, dtype=np.int64)
        except OverflowError:
            try:
                a = np.asarray(w, dtype=np.uint64)
            except OverflowError:
                raise ValueError("weights must be integers 0 .. 2^64 - 1") from None
    if a.dtype == np.uint64:
        if a.size == 0 or int(a.max()) < 1 << 63:
            return a.astype(np.int64)
        return a
    return a.astype(np.int64, copy=False)


def _edge_groups(n: int, src, dst, weight):
    """The arcs u -> v (u != v) grouped by edge and weight: for each (smaller, larger, weight)
    in ascending order, those three and how many more arcs run smaller -> larger than back
    (> 0: reverse arcs lacking; < 0: forward arcs lacking)."""
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    forward = src < dst
    wbits = int(weight.max()).bit_length()
    if weight.dtype == np.int64 and (n * n) << (wbits + 1) <= 1 << 63:
        # one key, one sort: ((lo - 1) * n + hi - 1, weight, forward) as the digits of an int64
        key = lo - 1
        key *= n
        key += hi
        key -= 1
        key <<= wbits + 1
        key |= weight << 1
        key |= forward
        del lo, hi, forward
        key.sort()
        group = key >> 1
        first = np.empty(key.size, dtype=bool)
        first[0] = True
        np.not_equal(group[1:], group[:-1], out=first[1:])
        start = np.flatnonzero(first)
        del first
        n_fw = np.add.reduceat(key & 1, start)
        g = group[start]
        del group, key
        g_w = g & ((1 << wbits) - 1)
        g >>= wbits
        g_lo, g_hi = np.divmod(g, n)
        g_lo += 1
        g_hi += 1
    else:                   # weights of 2^63 or more, or keys past 63 bits: three keys
        order = np.lexsort((weight, hi, lo))
        lo, hi, w, fw = lo[order], hi[order], weight[order], forward[order]
        start = np.flatnonzero(np.r_[True, (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1]) | (w[1:] != w[:-1])])
        n_fw = np.add.reduceat(fw.astype(np.int64), start)
        g_lo, g_hi, g_w = lo[start], hi[start], w[start]
    n_all = np.diff(np.r_[start, src.size])
    return g_lo, g_hi, g_w, n_fw - (n_all - n_fw)


def _bits(values: np.ndarray, width: int) -> np.ndarray:
    if not width:
        return np.zeros((values.size, 0), bool)
    shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)
    return ((values.astype(np.uint64, copy=False)[:, None] >> shifts[None, :]) & np.uint64(1)).astype(bool)


def from_edges(n: int, edges, weights=None, *, directed: bool = True, name: str = "") -> Graph:
    """A Graph from (u, v) pairs, 1-based; an undirected graph gets both arcs of each edge."""
    e = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges, dtype=np.int64).reshape(-1, 2)
    w = np.ones(len(e), dtype=np.int64) if weights is None else weight_array(weights)
    src, dst = e[:, 0], e[:, 1]
    if not directed:
        loop = src == dst
        src, dst, w = (np.concatenate([src, dst[~loop]]), np.concatenate([dst, src[~loop]]),
                       np.concatenate([w, w[~loop]]))
    return Graph(int(n), src, dst, w, name=name, directed=directed)
