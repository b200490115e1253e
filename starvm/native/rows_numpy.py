"""IOTA, GATHER, SCATTER and GROUPMIN of stdlib/rows.star on the NumPy backend (and the
COMPACT and EXPAND kernels of the emulated device, see below).

The Star bodies take one step per row (one per group for GROUPMIN); here each call is a few
whole-array NumPy operations:

  IOTA      column j (1-based) of T holds bit k-j of the row number i = r+1;
  GATHER    decode IX into row numbers (np.unpackbits over the byte view of the columns,
            then shifts), check them, take T's rows at the marked ones as numbers (64
            columns at a time: one uint64 a row, moved with fancy indexing), split them into
            columns again (np.packbits, little bit order) and merge into R's words under the
            X mask, so the rows X does not mark keep their value;
  SCATTER   the same the other way round; where several marked rows name one target row the
            largest source row i wins (the Star body's last write), made explicit with
            np.unique on the reversed index array (the first occurrence there is the last one);
  GROUPMIN  G of at most 24 columns: the least K of every group and then its first row, by
            np.minimum.at into arrays indexed by G's value (no sort); wider G:
            a stable sort of the marked rows by G and K (one sort of G alone when K is G, of
            one combined number when G and K fit 64 bits together, else two), then the
            first row of every G group; it also counts the groups and their G values' 1 bits
            (the step report).

Anything unusual (shapes that do not match, index tables wider than 63 columns, G or K wider
than 64, a row number out of range, R the same table as T or IX) runs the Star body, which
is the definition (its errors included). Results equal the Star bodies' bit for bit
(tests/unit/test_native_rows.py).
"""
from __future__ import annotations

import numpy as np

from .rows_routines import Unusual, factories

_ONE = np.uint64(1)




def _words(n: int) -> int:
    return (n + 63) // 64


def _vec_words(v: int, n: int) -> np.ndarray:
    """A NumPy-backend vector (a Python int, bit r = row r+1) as ceil(n/64) uint64 words."""
    return np.frombuffer(v.to_bytes(_words(n) * 8, "little"), dtype=np.uint64)


def _vec_bools(v: int, n: int) -> np.ndarray:
    raw = np.frombuffer(v.to_bytes(_words(n) * 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=n, bitorder="little").astype(bool)


def _bools_vec(b: np.ndarray) -> int:
    return int.from_bytes(np.packbits(b, bitorder="little").tobytes(), "little")


def _unpack(data: np.ndarray, n: int) -> np.ndarray:
    """k x W uint64 columns -> k x n uint8 array of 0/1 (row r of column c at [c, r])."""
    k = data.shape[0]
    if k == 0 or n == 0:
        return np.zeros((k, n), dtype=np.uint8)
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(k, -1)
    return np.unpackbits(raw, axis=1, count=n, bitorder="little")


def _pack(bits: np.ndarray, n: int) -> np.ndarray:
    """k x n array of 0/1 -> k x ceil(n/64) uint64 words (bits past row n are 0)."""
    k = bits.shape[0]
    out = np.zeros((k, _words(n) * 8), dtype=np.uint8)
    if k and n:
        packed = np.packbits(bits.astype(bool), axis=1, bitorder="little")
        out[:, :packed.shape[1]] = packed
    return out.view(np.uint64).reshape(k, _words(n))


def _values(data: np.ndarray, n: int, rows=slice(None)) -> np.ndarray:
    """The unsigned numbers held by the given rows (all by default; column 0 the most
    significant bit) of a table of at most 64 columns, as uint64. Eight columns at a time:
    their bits make one byte per row (work on bytes), and only one shift and one OR per
    byte are on the 64-bit numbers."""
    k = data.shape[0]
    bits = _unpack(data, n)              # every row: indexing k x n bits by rows is slower
    vals = np.zeros(n, dtype=np.uint64)
    byte = np.empty(n, dtype=np.uint8)
    first = k % 8 or 8                   # the top group: the columns above whole bytes
    for lo in [0, *range(first, k, 8)]:
        hi = min(k, first if lo == 0 else lo + 8)
        byte[...] = 0
        for c in range(lo, hi):
            np.left_shift(byte, np.uint8(1), out=byte)
            np.bitwise_or(byte, bits[c], out=byte)
        np.left_shift(vals, np.uint64(hi - lo), out=vals)
        np.bitwise_or(vals, byte, out=vals, casting="unsafe")
    return vals[rows]


def _columns(vals: np.ndarray, k: int, n: int) -> np.ndarray:
    """The inverse of _values: n row values (uint64, k <= 64 bits) -> k x W words (the
    bytes of the numbers, most significant first, unpacked across the columns)."""
    nb = (k + 7) // 8
    by = np.ascontiguousarray(vals.astype(">u8").view(np.uint8).reshape(n, 8)[:, 8 - nb:].T)
    bits = np.unpackbits(by, axis=0) if nb else np.zeros((0, n), dtype=np.uint8)
    return _pack(bits[nb * 8 - k:], n)


def _move_rows(T, src: np.ndarray, R, dst: np.ndarray, mask: np.ndarray) -> None:
    """ROW(dst[j], R) := ROW(src[j], T) for every j (dst without repeats), merged into R's
    words under ``mask`` (1 x W: the rows that take a new value), in place (the NumPy backend
    keeps a memoryview of ``data``: it must stay the same array). T's rows move as numbers,
    64 columns at a time: one uint64 per row."""
    for lo in range(0, T.k, 64):
        hi = min(T.k, lo + 64)
        vals = np.zeros(R.n, dtype=np.uint64)
        vals[dst] = _values(T.data[lo:hi], T.n)[src]
        new = _columns(vals, hi - lo, R.n)
        old = R.data[lo:hi]
        old[...] = (old & ~mask) | (new & mask)


# ---------------------------------------------------------------- kernels
def iota(T) -> None:
    n, k = T.n, T.k
    if n == 0 or k == 0:
        return
    i = np.arange(1, n + 1, dtype=np.uint64)
    bits = np.zeros((k, n), dtype=np.uint8)
    for c in range(k):
        b = k - 1 - c                  # column c+1 holds bit k-(c+1) of i (i mod 2^k)
        if b < 64:
            bits[c] = ((i >> np.uint64(b)) & _ONE).astype(np.uint8)
    T.data[...] = _pack(bits, n)


def decode(IX, X_v, limit: int):
    """((the marked rows of IX, 0-based ascending; the rows they name, 0-based), how many
    rows are marked); Unusual when one names a row outside 1..limit (nothing written)."""
    rows = np.flatnonzero(_vec_bools(X_v, IX.n))
    named = _values(IX.data, IX.n, rows).astype(np.int64)    # IX.k <= 63: no overflow
    if rows.size and (named.min() < 1 or named.max() > limit):
        raise Unusual
    return (rows, named - 1), int(rows.size)


def gather_apply(T, IX, plan, X_v, R) -> None:
    rows, src = plan
    if rows.size and T.k:
        _move_rows(T, src, R, rows, _vec_words(X_v, R.n)[None, :])


def scatter_apply(T, IX, plan, X_v, R) -> None:
    rows, dst = plan
    if rows.size and T.k:
        # rows ascend; reversed, the first occurrence of a target is its largest source
        # row i, the one the Star body writes last
        targets, first = np.unique(dst[::-1], return_index=True)
        winners = rows[::-1][first]
        hit = np.zeros(R.n, dtype=bool)
        hit[targets] = True
        _move_rows(T, winners, R, targets, _pack(hit[None, :], R.n))


def gather(T, IX, X_v, R) -> None:
    gather_apply(T, IX, decode(IX, X_v, T.n)[0], X_v, R)


def scatter(T, IX, X_v, R) -> None:
    scatter_apply(T, IX, decode(IX, X_v, R.n)[0], X_v, R)


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


def popcount_sum(values: np.ndarray) -> int:
    """The 1 bits of uint64 values, together."""
    return int(np.unpackbits(np.ascontiguousarray(values).view(np.uint8)).sum())


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
    return _bools_vec(z), int(found.size), popcount_sum(found.astype(np.uint64))


def groupmin_counted(G, K, X_v):
    """(Z, the groups, the 1 bits of the groups' G values): Z marks the first row of every G
    value among the marked rows whose K is least."""
    n = G.n
    rows = np.flatnonzero(_vec_bools(X_v, n))
    z = np.zeros(n, dtype=bool)
    if not rows.size:
        return _bools_vec(z), 0, 0
    g = _values(G.data, n, rows)
    key = None if G.data is K.data else _values(K.data, n, rows)
    if key is not None and G.k <= GROUP_BITS_SCRATCH:
        return _groupmin_scratch(g, key, rows, G.k, n)
    order = group_order(g, key, G.k, K.k)
    gs = g[order]
    first = np.ones(rows.size, dtype=bool)
    first[1:] = gs[1:] != gs[:-1]
    z[rows[order[first]]] = True
    chosen = gs[first]
    return _bools_vec(z), int(chosen.size), popcount_sum(chosen)


def groupmin(G, K, X_v) -> int:
    return groupmin_counted(G, K, X_v)[0]


def numb(X_v) -> int:
    return X_v.bit_count()


# ---------------------------------------------------------------- routines
def _is_table_arg(t) -> bool:
    return hasattr(t, "data") and hasattr(t, "k") and isinstance(getattr(t, "data"), np.ndarray)


def _vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and type(getattr(x, "v", None)) is int


make_iota, make_gather, make_scatter, make_groupmin = factories(
    iota, decode, gather_apply, scatter_apply, groupmin_counted, numb, is_table=_is_table_arg, vec_ok=_vec_ok,
    nonempty=False, group_bits_max=64)


# ---------------------------------------------------------------- COMPACT and EXPAND
# Not registered for the NumPy backend: the compiled Star bodies are within 2x of these
# (docs/architecture.md). They are the emulated device's kernels (emulated.py, standing in for
# rows_cupy.py's) and the reference the CUDA kernels are tested against.
def _first_rows(c: int, n: int) -> np.ndarray:
    """1 x W words marking rows 1..c of n."""
    hit = np.zeros(n, dtype=bool)
    hit[:c] = True
    return _pack(hit[None, :], n)


def compact(T, X_v, R, marked: int | None = None) -> None:
    """The marked rows of T, in order, into rows 1..c of R (R may be T: every chunk of
    columns is read before it is written)."""
    rows = np.flatnonzero(_vec_bools(X_v, T.n))
    if rows.size and T.k:
        _move_rows(T, rows, R, np.arange(rows.size), _first_rows(rows.size, R.n))


def expand(T, X_v, R, marked: int | None = None) -> None:
    """Rows 1..c of T back to the marked rows of R, in order."""
    rows = np.flatnonzero(_vec_bools(X_v, R.n))
    if rows.size and T.k:
        _move_rows(T, np.arange(rows.size), R, rows, _vec_words(X_v, R.n)[None, :])


