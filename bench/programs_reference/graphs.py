"""The generated graphs of `star run --generate SPEC`, made again with NumPy alone, so that the
reference scripts read the very graph the Star programs read without importing starvm.

R-MAT and G(n, p), undirected (every edge as two arcs), the same random stream as starvm's
generators (starvm/graphs/generators.py: NumPy's default_rng(seed), one uniform per edge and
bit for R-MAT, then the weights 1..wmax): the same spec gives the same arcs in the same order
(tests/test_bench_programs.py checks it against starvm's). A generated undirected graph already
holds both arcs of every edge, so the directed and the undirected readings of the programs
(GRAPH_READING) give it unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Arcs:
    """n vertices 1..n and the arcs src[e] -> dst[e] of weight weight[e], all distinct."""
    n: int
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray

    @property
    def m(self) -> int:
        return int(self.src.size)

    def csr(self):
        """The SciPy CSR matrix of the weights (every weight >= 1, so no entry is an explicit zero)."""
        import scipy.sparse as sp
        return sp.csr_matrix((self.weight.astype(np.float64), (self.src - 1, self.dst - 1)), shape=(self.n, self.n))


def rmat(scale: int, edge_factor: int = 16, seed: int = 0, wmax: int = 100,
         a: float = 0.57, b: float = 0.19, c: float = 0.19) -> Arcs:
    """R-MAT: n = 2^scale, edge_factor * n sampled edges, each end bit by bit from one uniform."""
    rng = np.random.default_rng(seed)
    n, m = 1 << scale, edge_factor << scale
    word = np.uint32 if scale <= 32 else np.uint64
    u, v = np.zeros(m, dtype=word), np.zeros(m, dtype=word)
    r = np.empty(m)
    for bit in range(scale):
        rng.random(out=r)
        down = r >= a + b                                   # quadrants c, d: the source bit is 1
        right = (r >= a) ^ down ^ (r >= a + b + c)          # quadrants b, d: the target bit is 1
        u |= down.astype(word) << word(bit)
        v |= right.astype(word) << word(bit)
    return _undirected(n, u.astype(np.int64), v.astype(np.int64), rng, wmax)


def gnp(n: int, p: float, seed: int = 0, wmax: int = 100) -> Arcs:
    """G(n, p): each unordered pair is an edge with probability p."""
    rng = np.random.default_rng(seed)
    u, v = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
    return _undirected(n, u.astype(np.int64), v.astype(np.int64), rng, wmax)


def _undirected(n: int, u, v, rng, wmax: int) -> Arcs:
    """Self-loops and repeats dropped, each edge once as (low, high) sorted, weights drawn, then
    the arcs low -> high followed by high -> low (starvm's order)."""
    keep = u != v
    u, v = u[keep], v[keep]
    key = np.unique(np.minimum(u, v) * max(n, 1) + np.maximum(u, v))
    lo, hi = key // max(n, 1) + 1, key % max(n, 1) + 1
    w = rng.integers(1, wmax + 1, size=key.size, dtype=np.int64)
    return Arcs(n, np.concatenate([lo, hi]), np.concatenate([hi, lo]), np.concatenate([w, w]))


_KINDS = {"rmat": (rmat, {"scale": int, "ef": int, "edge_factor": int, "seed": int, "wmax": int,
                          "a": float, "b": float, "c": float}),
          "gnp": (gnp, {"n": int, "p": float, "seed": int, "wmax": int})}


def generate(spec: str) -> Arcs:
    """The graph of a `--generate` spec (rmat:scale=12,ef=16,seed=7 or gnp:n=100,p=0.05,seed=1).
    ValueError for another generator, a directed one (directed=1) or a bad item."""
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in _KINDS:
        raise ValueError(f"the reference makes rmat and gnp graphs, not '{kind}' ({spec})")
    fn, types = _KINDS[kind]
    kw = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, _, val = item.partition("=")
        key = key.strip().lower()
        if key not in types:
            raise ValueError(f"the reference does not take '{item}' in '{spec}' ({kind} takes {', '.join(types)})")
        kw["edge_factor" if key == "ef" else key] = types[key](val)
    return fn(**kw)
