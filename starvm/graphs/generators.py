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
    return _distinct_of_sorted(xp.sort(keys), xp)


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
    """The Graph of the sampled pairs (u, v) of vertex numbers 0..n-1: self-loops and repeats
    dropped, undirected pairs as (smaller, larger), in the order of u * n + v; weights drawn
    from ``rng`` after the pairs; an undirected graph's arcs smaller -> larger first, then
    the same edges larger -> smaller."""
    if xp is not np:
        return _finish_xp(n, u, v, rng, wmax, directed, name, meta, xp)
    keep = u != v
    if not keep.all():
        u, v = u[keep], v[keep]
    del keep
    if not directed:
        u, v = np.minimum(u, v), np.maximum(u, v)
    size = max(int(n), 1)
    keys = u.astype(np.int64)                  # u * n + v, in place: one 8-byte array
    del u
    keys *= size
    keys += v
    del v
    return _graph_of_keys(n, keys, rng, wmax, directed, name, meta)


def _graph_of_keys(n, keys, rng, wmax, directed, name, meta) -> Graph:
    """_finish from the pairs' keys u * n + v (int64, -1 for a dropped pair): sorted and
    made distinct (in threads on a big list), weights drawn, the arcs written into their
    final arrays."""
    size = max(int(n), 1)
    keys = sorted_distinct_keys(keys)
    k = int(keys.size)
    w = _weights(rng, wmax, k, np)
    total = k if directed else 2 * k
    src, dst = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    lo, hi = src[:k], dst[:k]
    if size & (size - 1) == 0:                 # n a power of two (R-MAT): a shift and a mask
        np.right_shift(keys, size.bit_length() - 1, out=lo)
        np.bitwise_and(keys, size - 1, out=hi)
    else:
        np.divmod(keys, size, out=(lo, hi))
    del keys
    lo += 1
    hi += 1
    if not directed:
        src[k:], dst[k:] = hi, lo
        w = np.concatenate([w, w])
        meta = {**meta, "both_ways": True}     # every edge both ways: undirected() is the graph itself
    # no repeated arc by construction: Graph.weight_matrix needs no sort to find them
    return Graph(int(n), src, dst, w, name=name, directed=directed, meta={**meta, "distinct_arcs": True})


SORT_THREAD_KEYS = 1 << 20     # at least this many keys a thread, else fewer threads


def sorted_distinct_keys(keys: np.ndarray) -> np.ndarray:
    """The distinct non-negative values of an int64 array, ascending (``keys`` is reused). On
    a big array, in threads: each sorts one run of the array in place; the runs' evenly
    spaced values (R-MAT's keys crowd the low vertices) cut the values into ranges, and each
    thread gathers one range from every run, sorts it and drops repeats; the ranges are
    joined in order. About one more copy of the keys at a time, however many threads."""
    threads = max(1, min(_cpu_count(), keys.size // SORT_THREAD_KEYS))
    if threads == 1:
        keys.sort()
        return _non_negative(_distinct_of_sorted(keys))
    bounds = [keys.size * t // threads for t in range(threads + 1)]
    runs = [keys[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
    from concurrent.futures import ThreadPoolExecutor   # NumPy's sort and copies let go of the GIL
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(np.ndarray.sort, runs))            # each run in place
        sample = np.sort(np.concatenate([r[np.linspace(0, r.size - 1, 64).astype(np.int64)] for r in runs]))
        cuts = np.unique(sample[(np.arange(1, threads) * sample.size) // threads])
        starts = [np.concatenate([[0], np.searchsorted(r, cuts), [r.size]]) for r in runs]

        def part(i: int) -> np.ndarray:
            mine = np.concatenate([r[at[i]:at[i + 1]] for r, at in zip(runs, starts)])
            mine.sort()
            return _distinct_of_sorted(mine)

        parts = list(pool.map(part, range(cuts.size + 1)))
    return _non_negative(np.concatenate(parts))


def _non_negative(sorted_keys: np.ndarray) -> np.ndarray:
    return sorted_keys[int(np.searchsorted(sorted_keys, 0)):]


def _distinct_of_sorted(keys, xp=np):
    """The distinct values of a sorted 1-D array (the first of each run)."""
    if keys.size < 2:
        return keys
    keep = xp.empty(keys.size, dtype=bool)
    keep[0] = True
    xp.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def _finish_xp(n, u, v, rng, wmax, directed, name, meta, xp) -> Graph:
    """_finish on a device module (CuPy): the same steps as array operations of xp, the arcs
    copied to the host at the end."""
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
        meta = {**meta, "both_ways": True}
    u, v, w = (xp.asnumpy(a) for a in (u, v, w))     # a Graph holds host arrays
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
    meta = dict(scale=scale, edge_factor=edge_factor, a=a, b=b, c=c, d=d, seed=seed)
    if xp is np:
        keys = _rmat_keys_numpy(rng, scale, m, a, b, c, directed)
        return _graph_of_keys(n, keys, rng, wmax, directed, f"rmat-{scale}-{edge_factor}-{seed}", meta)
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
    return _finish(n, u, v, rng, wmax, directed, f"rmat-{scale}-{edge_factor}-{seed}", meta, xp)


# the peak of rmat's arrays per sample: the pair keys (8), their ranges gathered, the distinct
# ranges and their join (8 + 8 + 8), then the weights (8 + 16 both ways) and the Graph's arcs
# both ways (32, an undirected graph), with room to spare
RMAT_BYTES_PER_SAMPLE = 100

RMAT_CHUNK = 1 << 16          # samples a thread works through at a time: its buffers stay in cache
RMAT_THREAD_SAMPLES = 1 << 18  # at least this many samples a thread, else fewer threads


def _rmat_keys_numpy(rng, scale: int, m: int, a: float, b: float, c: float, directed: bool) -> np.ndarray:
    """The R-MAT samples on the host as the keys u * n + v of their pairs (undirected: smaller
    end first; -1 for a self-loop), int64. Sample e's bit ``bit`` comes from the uniform
    number ``bit * m + e`` of ``rng``'s stream (one 64-bit draw each; the array version above
    draws them bit after bit), and ``rng`` is left after all ``scale * m`` draws, where the
    weights come from. The samples are cut into ranges, one a thread; each range keeps one
    generator per bit, advanced to its place in the stream (PCG64.advance), and goes through
    its samples a cache-sized chunk at a time, so the numbers are those of the bit-by-bit draw
    whatever the threads."""
    word = np.uint32 if scale <= 32 else np.uint64
    keys = np.empty(m, dtype=np.int64)
    bits = rng.bit_generator
    start = bits.state
    threads = max(1, min(_cpu_count(), m // RMAT_THREAD_SAMPLES)) if scale else 1
    bounds = [m * t // threads for t in range(threads + 1)]

    def at(position: int) -> np.random.Generator:
        g = type(bits)()
        g.state = start
        g.advance(position)
        return np.random.Generator(g)

    def fill(lo: int, hi: int) -> None:
        draws = [at(bit * m + lo) for bit in range(scale)]
        size = max(1, min(RMAT_CHUNK, hi - lo))
        r = np.empty(size)
        u, v, shifted = (np.empty(size, dtype=word) for _ in range(3))
        down, right, more = (np.empty(size, dtype=bool) for _ in range(3))
        for c_lo in range(lo, hi, size):
            k = min(hi, c_lo + size) - c_lo
            uu, vv, rk, dk, rightk, mk, sk = u[:k], v[:k], r[:k], down[:k], right[:k], more[:k], shifted[:k]
            uu[...] = 0
            vv[...] = 0
            for bit in range(scale):
                draws[bit].random(out=rk)
                np.greater_equal(rk, a + b, out=dk)            # quadrants c, d: the source bit is 1
                # quadrants b, d: [a, a+b) or [a+b+c, 1), i.e. (r >= a) xor (r >= a+b) xor (r >= a+b+c)
                np.greater_equal(rk, a, out=rightk)
                np.logical_xor(rightk, dk, out=rightk)
                np.greater_equal(rk, a + b + c, out=mk)
                np.logical_xor(rightk, mk, out=rightk)
                np.left_shift(dk, word(bit), out=sk, dtype=word)
                uu |= sk
                np.left_shift(rightk, word(bit), out=sk, dtype=word)
                vv |= sk
            out = keys[c_lo:c_lo + k]
            np.equal(uu, vv, out=dk)                           # self-loops
            if not directed:
                np.minimum(uu, vv, out=sk)
                np.maximum(uu, vv, out=vv)
                uu = sk
            np.left_shift(uu, scale, out=out, dtype=np.int64, casting="unsafe")  # u * 2^scale + v
            np.bitwise_or(out, vv, out=out, casting="unsafe")
            out[dk] = -1

    if threads == 1:
        fill(0, m)
    else:
        from concurrent.futures import ThreadPoolExecutor   # NumPy's draws and ufuncs let go of the GIL
        with ThreadPoolExecutor(threads) as pool:
            for done in [pool.submit(fill, lo, hi) for lo, hi in zip(bounds, bounds[1:])]:
                done.result()
    bits.advance(scale * m)
    return keys


def _cpu_count() -> int:
    import os
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        return os.cpu_count() or 1


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
