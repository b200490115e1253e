"""GROUPMIN in NumPy. G of at most 24 columns: the least K of every group and then its first
row, by np.minimum.at into arrays indexed by G's value (no sort); wider G: a stable sort of
the marked rows by G and K (one sort of G alone when K is G, of one combined number when G and
K fit 64 bits together, else two), then the first row of every G group. It also counts the
groups and their G values' 1 bits (the step report). Results equal the Star body's bit for bit
(tests/unit/test_native_rows.py)."""
from __future__ import annotations

import numpy as np

from ..shared.numpy_rows import STORAGE, bools_vec, numb, popcount_sum, values, vec_bools
from . import routine


def group_order(g, key, group_bits: int, key_bits: int, xp=np):
    """The order of the marked rows by (G, K, row): stable sorts of 64-bit numbers (radix
    sorts on a GPU: cupy.argsort is stable), never a lexsort of three keys. ``key`` None: K is
    G itself. ``xp``: NumPy, or CuPy for device arrays."""
    def stable(a):
        return np.argsort(a, kind="stable") if xp is np else xp.argsort(a)
    if key is None:
        return stable(g)
    if group_bits + key_bits <= 64:                   # one combined number: G above K
        return stable((g << np.uint64(key_bits)) | key)
    by_key = stable(key)
    return by_key[stable(g[by_key])]


GROUP_BITS_SCRATCH = 24     # up to here GROUPMIN uses scratch arrays of 2^NCOLS(G) entries


def _groupmin_scratch(g, key, rows, group_bits: int, n: int):
    """GROUPMIN by scratch arrays indexed by G's value (as the GPU's kernels do): the least K
    of every group (np.minimum.at), then the first marked row of the group holding it; no
    sort (BORUVKA's rounds: G = the components' labels)."""
    gi = g.astype(np.int64)
    least = np.full(1 << group_bits, np.iinfo(np.uint64).max, dtype=np.uint64)
    np.minimum.at(least, gi, key)
    cand = key == least[gi]
    first = np.full(1 << group_bits, n, dtype=np.int64)
    np.minimum.at(first, gi[cand], rows[cand])
    found = np.flatnonzero(first < n)                  # the groups, by their G value
    z = np.zeros(n, dtype=bool)
    z[first[found]] = True
    return bools_vec(z), int(found.size), popcount_sum(found.astype(np.uint64))


def groupmin_counted(G, K, X_v):
    """(Z, the groups, the 1 bits of the groups' G values): Z marks the first row of every G
    value among the marked rows whose K is least."""
    n = G.n
    rows = np.flatnonzero(vec_bools(X_v, n))
    z = np.zeros(n, dtype=bool)
    if not rows.size:
        return bools_vec(z), 0, 0
    g = values(G.data, n, rows)
    key = None if G.data is K.data else values(K.data, n, rows)
    if key is not None and G.k <= GROUP_BITS_SCRATCH:
        return _groupmin_scratch(g, key, rows, G.k, n)
    order = group_order(g, key, G.k, K.k)
    gs = g[order]
    first = np.ones(rows.size, dtype=bool)
    first[1:] = gs[1:] != gs[:-1]
    z[rows[order[first]]] = True
    chosen = gs[first]
    return bools_vec(z), int(chosen.size), popcount_sum(chosen)


def groupmin(G, K, X_v) -> int:
    return groupmin_counted(G, K, X_v)[0]


make = routine(groupmin_counted, numb, STORAGE, group_bits_max=64)
