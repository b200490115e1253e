"""Seeded random graphs: G(n, p), R-MAT, SSCA#2-like. Same arguments, same graph.

All three make undirected graphs by default (every edge as two arcs, one each way) without
self-loops or duplicate edges; ``directed=True`` keeps one arc per generated pair. Weights are
uniform integers in 1..wmax (``wmax=1``: unweighted).
"""
from __future__ import annotations

import numpy as np

from .graph import Graph


def unique_pairs(u, v, n: int, xp=np):
    """The distinct pairs (u, v) of vertex numbers 0..n-1, sorted by u then v: one sort of
    the 64-bit keys u * n + v (what np.unique(axis=0) on the stacked pairs gives, without
    its row-by-row comparisons)."""
    if u.size == 0:
        return u, v
    key = sorted_distinct(u * n + v, xp)
    return key // n, key % n


def sorted_distinct(keys, xp=np):
    """np.unique of a 1-D integer array as one in-place sort and a neighbour comparison
    (NumPy 2's np.unique hashes first: 6x slower on millions of keys)."""
    keys = xp.sort(keys)
    if keys.size < 2:
        return keys
    keep = xp.empty(keys.size, dtype=bool)
    keep[0] = True
    xp.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def check_memory(need: int, what: str, xp=np) -> None:
    """ValueError (a bad spec: `--generate` reports it, exit 2) unless ``need`` bytes fit the
    available memory, checked before anything is allocated. On a device module the device's
    free memory is not known here: the host's stands for it."""
    from ..input_files import available_memory, describe_size
    free = available_memory()
    if free is not None and need > free:
        raise ValueError(f"{what} needs about {describe_size(need)} of memory; only {describe_size(free)} "
                         "is available")


def _finish(n, u, v, rng, wmax, directed, name, meta, xp=np) -> Graph:
    u, v = xp.asarray(u, dtype=xp.int64), xp.asarray(v, dtype=xp.int64)
    keep = u != v
    u, v = u[keep], v[keep]
    if not directed:
        u, v = xp.minimum(u, v), xp.maximum(u, v)
    u, v = unique_pairs(u, v, max(int(n), 1), xp)
    w = _weights(rng, wmax, int(u.size), xp)
    u, v = u + 1, v + 1
    if not directed:
        u, v, w = xp.concatenate([u, v]), xp.concatenate([v, u]), xp.concatenate([w, w])
    if xp is not np:                       # a Graph holds host arrays
        u, v, w = (xp.asnumpy(a) for a in (u, v, w))
    # no repeated arc by construction: Graph.weight_matrix needs no sort to find them
    return Graph(int(n), u, v, w, name=name, directed=directed, meta={**meta, "distinct_arcs": True})


def _rng(seed, xp):
    """NumPy's Generator on the host; on a device module (CuPy) its RandomState, whose
    stream differs from NumPy's: the same seed gives another graph there."""
    return np.random.default_rng(seed) if xp is np else xp.random.RandomState(seed)


def _uniform(rng, m: int, xp):
    return rng.random(m) if xp is np else rng.random_sample(m)


def _weights(rng, wmax: int, size: int, xp):
    if xp is np:
        return rng.integers(1, wmax + 1, size=size, dtype=np.int64)
    return rng.randint(1, wmax + 1, size=size, dtype=np.int64)


def gnp(n: int, p: float, seed: int = 0, *, wmax: int = 100, directed: bool = False) -> Graph:
    """Erdős–Rényi G(n, p): each pair (each ordered pair when directed) is an edge with probability p."""
    if n < 0 or not 0 <= p <= 1 or wmax < 1:
        raise ValueError("gnp needs n >= 0, 0 <= p <= 1, wmax >= 1")
    check_memory(10 * n * n + 64 * int(p * n * n), f"gnp n={n} (an n x n draw)")
    rng = np.random.default_rng(seed)
    mask = rng.random((n, n)) < p
    if not directed:
        mask = np.triu(mask, 1)
    u, v = np.nonzero(mask)
    return _finish(n, u, v, rng, wmax, directed, f"gnp-{n}-{p}-{seed}", dict(n=n, p=p, seed=seed))


def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         d: float | None = None, seed: int = 0, *, wmax: int = 100, directed: bool = False, xp=None) -> Graph:
    """R-MAT (Chakrabarti, Zhan, Faloutsos 2004; the Graph500 generator): n = 2^scale vertices,
    edge_factor * n sampled edges, each placed by ``scale`` recursive quadrant choices with
    probabilities a, b, c, d (d = 1 - a - b - c). Self-loops and repeats are dropped, so m is
    a little below edge_factor * n. Vertex numbers are not permuted.

    ``xp=cupy`` generates on the GPU (the same algorithm with CuPy's RandomState: another
    random stream, so the same seed gives a different graph from NumPy's) and copies the
    arcs to the host at the end."""
    xp = np if xp is None else xp
    d = 1 - a - b - c if d is None else d
    if scale < 0 or edge_factor < 0 or min(a, b, c, d) < 0 or abs(a + b + c + d - 1) > 1e-9 or wmax < 1:
        raise ValueError("rmat needs scale >= 0, edge_factor >= 0, a, b, c, d >= 0 summing to 1, wmax >= 1")
    check_memory(RMAT_BYTES_PER_SAMPLE * (edge_factor << scale),
                 f"rmat scale={scale}, ef={edge_factor} ({edge_factor << scale} samples)", xp)
    rng = _rng(seed, xp)
    n, m = 1 << scale, edge_factor << scale
    if xp is np:
        u, v = _rmat_ends_numpy(rng, scale, m, a, b, c)
    else:
        u = xp.zeros(m, dtype=xp.int64)
        v = xp.zeros(m, dtype=xp.int64)
        for bit in range(scale):
            r = _uniform(rng, m, xp)
            down = r >= a + b                       # quadrants c, d: the source bit is 1
            right = ((r >= a) & (r < a + b)) | (r >= a + b + c)   # quadrants b, d: the target bit is 1
            u |= down.astype(xp.int64) << bit
            v |= right.astype(xp.int64) << bit
            del r, down, right
    return _finish(n, u, v, rng, wmax, directed, f"rmat-{scale}-{edge_factor}-{seed}",
                   dict(scale=scale, edge_factor=edge_factor, a=a, b=b, c=c, d=d, seed=seed), xp)


# the peak of rmat's arrays per sample: the ends (4 + 4 bytes, then 8 + 8), the uniforms (8),
# the masks and shift buffer (7), the pair keys and their sort (16), and the Graph's arcs both
# ways (48, an undirected graph)
RMAT_BYTES_PER_SAMPLE = 100


def _rmat_ends_numpy(rng, scale: int, m: int, a: float, b: float, c: float):
    """The R-MAT ends on the host: the same draws and quadrants as the array version above
    (one uniform per edge and bit), computed into preallocated buffers (about half the time
    and no 8-byte temporaries per bit)."""
    word = np.uint32 if scale <= 32 else np.uint64
    u, v = np.zeros(m, dtype=word), np.zeros(m, dtype=word)
    r = np.empty(m)
    down, right, more = (np.empty(m, dtype=bool) for _ in range(3))
    shifted = np.empty(m, dtype=word)
    for bit in range(scale):
        rng.random(out=r)
        np.greater_equal(r, a + b, out=down)            # quadrants c, d: the source bit is 1
        # quadrants b, d: [a, a+b) or [a+b+c, 1), i.e. (r >= a) xor (r >= a+b) xor (r >= a+b+c)
        np.greater_equal(r, a, out=right)
        np.logical_xor(right, down, out=right)
        np.greater_equal(r, a + b + c, out=more)
        np.logical_xor(right, more, out=right)
        np.left_shift(down, word(bit), out=shifted, dtype=word)
        u |= shifted
        np.left_shift(right, word(bit), out=shifted, dtype=word)
        v |= shifted
    return u.astype(np.int64), v.astype(np.int64)


def ssca2(n: int, max_clique: int = 8, p_inter: float = 0.5, seed: int = 0, *, wmax: int = 100,
          directed: bool = False) -> Graph:
    """SSCA#2-like (the HPCS Scalable Synthetic Compact Application #2 graph, simplified): the
    vertices 1..n are cut into consecutive cliques of random sizes 1..max_clique with all
    edges inside each clique; then every vertex, with probability p_inter, gets one edge to
    a random vertex of the clique 2^k cliques away (k random), as SSCA#2's inter-clique
    edges whose probability falls with distance."""
    if n < 0 or max_clique < 1 or not 0 <= p_inter <= 1 or wmax < 1:
        raise ValueError("ssca2 needs n >= 0, max_clique >= 1, 0 <= p_inter <= 1, wmax >= 1")
    # at most n * max_clique / 2 edges inside the cliques, n between them; 80 bytes an edge
    check_memory(80 * (n * min(max_clique, max(n, 1)) // 2 + n), f"ssca2 n={n}, clique={max_clique}")
    rng = np.random.default_rng(seed)
    starts = [0]
    while starts[-1] < n:
        starts.append(min(n, starts[-1] + int(rng.integers(1, max_clique + 1))))
    us, vs = [], []
    for lo, hi in zip(starts, starts[1:]):
        i, j = np.triu_indices(hi - lo, 1)
        us.append(i + lo), vs.append(j + lo)
    k = len(starts) - 1
    clique_of = np.repeat(np.arange(k), np.diff(starts))
    if k > 1:
        for x in np.nonzero(rng.random(n) < p_inter)[0]:
            hop = 1 << int(rng.integers(0, max(1, int(np.log2(k)) + 1)))
            other = (clique_of[x] + hop) % k
            if other != clique_of[x]:
                us.append([x]), vs.append([int(rng.integers(starts[other], starts[other + 1]))])
    u = np.concatenate(us) if us else np.zeros(0, np.int64)
    v = np.concatenate(vs) if vs else np.zeros(0, np.int64)
    return _finish(n, u, v, rng, wmax, directed, f"ssca2-{n}-{seed}",
                   dict(n=n, max_clique=max_clique, p_inter=p_inter, seed=seed))


_KINDS = {
    "gnp": (gnp, {"n": int, "p": float, "seed": int, "wmax": int, "directed": bool}),
    "rmat": (rmat, {"scale": int, "ef": int, "edge_factor": int, "a": float, "b": float, "c": float,
                    "d": float, "seed": int, "wmax": int, "directed": bool}),
    "ssca2": (ssca2, {"n": int, "clique": int, "max_clique": int, "p": float, "p_inter": float,
                      "seed": int, "wmax": int, "directed": bool}),
}
_ALIASES = {"ef": "edge_factor", "clique": "max_clique", "p": "p_inter"}


def generate(spec: str) -> Graph:
    """A graph from a spec such as ``rmat:scale=10,ef=16,seed=1``, ``gnp:n=100,p=0.05,seed=2``,
    ``ssca2:n=64,clique=8,p=0.3,seed=3`` (also ``wmax=W``, ``directed=1``). Raises ValueError
    with the reason for a bad spec."""
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in _KINDS:
        raise ValueError(f"unknown generator '{kind}' in '{spec}' (choose from {', '.join(_KINDS)})")
    fn, types = _KINDS[kind]
    kw = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, val = item.partition("=")
        key = key.strip().lower()
        if not eq or key not in types:
            raise ValueError(f"bad item '{item}' in '{spec}' ({kind} takes {', '.join(types)} as key=value)")
        try:
            value = (val.strip().lower() in ("1", "true", "yes")) if types[key] is bool else types[key](val)
        except ValueError:
            raise ValueError(f"bad value '{val}' for {key} in '{spec}'") from None
        if kind != "gnp":
            key = _ALIASES.get(key, key)
        kw[key] = value
    try:
        return fn(**kw)
    except TypeError as e:
        raise ValueError(f"bad generator spec '{spec}': {e}") from None
