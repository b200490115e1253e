"""IOTA, GATHER, SCATTER and GROUPMIN of stdlib/rows.star on the GPU: a few plain kernels.

Tables are k x W uint64 device arrays (column c = row c of the array, row r = bit r%64 of
word r//64); row numbers in an index table are unsigned, column 1 the most significant bit.
Every kernel is written for clarity: a thread owns whole output words, so no two threads
write the same word, and the only atomics are on scratch arrays.

  IOTA      thread per (word, column): column c holds bit k-1-c of the row number r+1.
  GATHER    rows_decode (thread per word of IX): the row number named by every marked row
            (0-based, -1 for unmarked rows) into a scratch int64 array, and a flag set when
            one is out of 1..NROWS(T); the host reads the flag (the only synchronisation) and
            runs the Star body when it is set, before anything is written. Then rows_gather
            (thread per (word of R, column)): for the marked rows of the word, the bit of T's
            column at the source row; the word is merged with R's old word under X's mask.
  SCATTER   rows_decode as for GATHER (limit NROWS(R)); rows_scatter_win (thread per row):
            atomicMax of the source row into win[target] (init -1), so the largest i wins as
            in the Star body; rows_scatter_write (thread per (word of R, column)): the rows of
            the word that have a winner take the bit of T at the winner, the others keep theirs.
  GROUPMIN  with NCOLS(G) <= 26 (a scratch of 2^NCOLS(G) entries): pass 1 atomicMin of K
            into gmin[G] (init all ones), pass 2 atomicMin of the row number into grow[G]
            among the marked rows whose K equals gmin[G], pass 3 (thread per word) Z's bit is
            1 for the rows that are grow of their group. Wider groups (up to 64 bits, e.g.
            BORUVKA's edge keys grouped by themselves) sort the marked rows by (G, K, row)
            with cupy.lexsort and keep the first row of every group, as the NumPy kernel does.

Unusual arguments (see rows_numpy.py; also empty tables or zero columns here) run the Star
body. Results equal the NumPy kernels' and the Star bodies' bit for bit
(tests/unit/test_native_rows.py, bench/check_rows_gpu.py).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from .rows_routines import Unusual, factories

_SRC = r"""
typedef unsigned long long u64;
typedef long long i64;

// The unsigned number held by row (word w, bit t) of a table of k columns with W words per
// column; column 0 is the most significant bit (k <= 64).
__device__ __forceinline__ u64 row_value(const u64* T, int k, i64 W, i64 w, int t) {
    u64 v = 0ULL;
    for (int c = 0; c < k; ++c)
        v = (v << 1) | ((T[(i64)c * W + w] >> t) & 1ULL);
    return v;
}

// Bit r (0-based row) of one column.
__device__ __forceinline__ u64 bit_at(const u64* col, i64 r) {
    return (col[r >> 6] >> (r & 63)) & 1ULL;
}

// Thread (x: word w, y: column c): T's column c, word w, holds bit k-1-c of the row numbers.
extern "C" __global__ void rows_iota(u64* T, int k, i64 W, i64 n) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    for (int c = blockIdx.y; c < k; c += gridDim.y) {
        const int b = k - 1 - c;
        u64 out = 0ULL;
        if (b < 64) {
            for (int t = 0; t < 64; ++t) {
                const i64 r = w * 64 + t;
                if (r < n) out |= (((u64)(r + 1) >> b) & 1ULL) << t;
            }
        }
        T[(i64)c * W + w] = out;
    }
}

// Thread per word w of IX: idx[r] = (the number in row r of IX) - 1 for the rows X marks,
// -1 for the others; *bad = 1 when a marked row's number is not in 1..limit.
extern "C" __global__ void rows_decode(const u64* IX, int ixk, i64 W, i64 n, const u64* X,
                                       i64 limit, i64* idx, int* bad) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    const u64 xm = X[w];
    for (int t = 0; t < 64; ++t) {
        const i64 r = w * 64 + t;
        if (r >= n) break;
        i64 s = -1;
        if ((xm >> t) & 1ULL) {
            const u64 v = row_value(IX, ixk, W, w, t);        // ixk <= 63: fits an i64
            if (v < 1ULL || v > (u64)limit) atomicOr(bad, 1);
            else s = (i64)v - 1;
        }
        idx[r] = s;
    }
}

// Thread (x: word w of R, y: column c): the rows of word w marked by X take bit idx[r] of
// T's column c; the other rows of the word keep R's old bits.
extern "C" __global__ void rows_gather(const u64* T, i64 WT, int k, const i64* idx,
                                       const u64* X, u64* R, i64 W) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    const u64 xm = X[w];
    if (!xm) return;
    for (int c = blockIdx.y; c < k; c += gridDim.y) {
        const u64* col = T + (i64)c * WT;
        u64 out = 0ULL, m = xm;
        while (m) {
            const int t = __ffsll((long long)m) - 1;
            m &= m - 1;
            out |= bit_at(col, idx[w * 64 + t]) << t;
        }
        u64* dst = R + (i64)c * W + w;
        *dst = (*dst & ~xm) | out;
    }
}

// Thread per source row r: win[target] = the largest marked row naming that target.
extern "C" __global__ void rows_scatter_win(const i64* idx, i64 n, long long* win) {
    const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    const i64 d = idx[r];
    if (d >= 0) atomicMax(&win[d], (long long)r);
}

// Thread (x: word w of R, y: column c): the rows d of word w with a winner (win[d] >= 0)
// take bit win[d] of T's column c; the other rows keep R's old bits.
extern "C" __global__ void rows_scatter_write(const u64* T, i64 WT, int k, const long long* win,
                                              i64 nR, u64* R, i64 W) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    u64 mask = 0ULL;
    for (int t = 0; t < 64; ++t) {
        const i64 d = w * 64 + t;
        if (d < nR && win[d] >= 0) mask |= 1ULL << t;
    }
    if (!mask) return;
    for (int c = blockIdx.y; c < k; c += gridDim.y) {
        const u64* col = T + (i64)c * WT;
        u64 out = 0ULL, m = mask;
        while (m) {
            const int t = __ffsll((long long)m) - 1;
            m &= m - 1;
            out |= bit_at(col, (i64)win[w * 64 + t]) << t;
        }
        u64* dst = R + (i64)c * W + w;
        *dst = (*dst & ~mask) | out;
    }
}

// Pass 1, thread per word: gmin[g] = the smallest K among the marked rows of group g.
extern "C" __global__ void rows_groupmin_key(const u64* G, int gk, const u64* K, int kk, i64 W,
                                             const u64* X, u64* gmin) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    u64 m = X[w];
    while (m) {
        const int t = __ffsll((long long)m) - 1;
        m &= m - 1;
        atomicMin(&gmin[row_value(G, gk, W, w, t)], row_value(K, kk, W, w, t));
    }
}

// Pass 2, thread per word: grow[g] = the first marked row of group g whose K is gmin[g].
extern "C" __global__ void rows_groupmin_row(const u64* G, int gk, const u64* K, int kk, i64 W,
                                             const u64* X, const u64* gmin, u64* grow) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    u64 m = X[w];
    while (m) {
        const int t = __ffsll((long long)m) - 1;
        m &= m - 1;
        const u64 g = row_value(G, gk, W, w, t);
        if (row_value(K, kk, W, w, t) == gmin[g]) atomicMin(&grow[g], (u64)(w * 64 + t));
    }
}

// Pass 3, thread per word: Z's bit is 1 for the marked rows chosen for their group.
extern "C" __global__ void rows_groupmin_mark(const u64* G, int gk, i64 W, const u64* X,
                                              const u64* grow, u64* Z) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    u64 m = X[w], z = 0ULL;
    while (m) {
        const int t = __ffsll((long long)m) - 1;
        m &= m - 1;
        if (grow[row_value(G, gk, W, w, t)] == (u64)(w * 64 + t)) z |= 1ULL << t;
    }
    Z[w] = z;
}
"""

_BLOCK = 256
_MAX_GRID_Y = 65535
GROUP_BITS_SCRATCH = 26      # up to here GROUPMIN's kernels use a scratch of 2^NCOLS(G) entries
GROUP_BITS_MAX = 64          # wider groups are sorted

_modules: dict = {}          # device -> {kernel name: kernel}




def _kernels() -> dict:
    dev = cp.cuda.runtime.getDevice()
    fns = _modules.get(dev)
    if fns is None:
        mod = cp.RawModule(code=_SRC)
        names = ("rows_iota", "rows_decode", "rows_gather", "rows_scatter_win", "rows_scatter_write",
                 "rows_groupmin_key", "rows_groupmin_row", "rows_groupmin_mark")
        fns = _modules[dev] = {name: mod.get_function(name) for name in names}
    return fns


def _grid(count: int, cols: int = 1):
    return (max(1, -(-count // _BLOCK)), max(1, min(cols, _MAX_GRID_Y))), (_BLOCK,)


def _u64(a):
    return a if (a.dtype == cp.uint64 and a.flags.c_contiguous) else cp.ascontiguousarray(a, dtype=cp.uint64)


# ---------------------------------------------------------------- kernels
def iota(T) -> None:
    W = T.data.shape[1]
    _kernels()["rows_iota"](*_grid(W, T.k), (T.data, np.int32(T.k), np.int64(W), np.int64(T.n)))


def _decode(IX, X_v, limit: int):
    """The 0-based row named by each row of IX (-1 where X is 0); Unusual when a marked row
    names one outside 1..limit (nothing written yet)."""
    W = IX.data.shape[1]
    idx = cp.empty(IX.n, dtype=cp.int64)
    bad = cp.zeros(1, dtype=cp.int32)
    _kernels()["rows_decode"](*_grid(W), (_u64(IX.data), np.int32(IX.k), np.int64(W), np.int64(IX.n),
                                          _u64(X_v), np.int64(limit), idx, bad))
    if int(bad.get()[0]):
        raise Unusual
    return idx


def gather(T, IX, X_v, R) -> None:
    idx = _decode(IX, X_v, T.n)
    W = R.data.shape[1]
    _kernels()["rows_gather"](*_grid(W, T.k), (_u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                               idx, _u64(X_v), R.data, np.int64(W)))


def scatter(T, IX, X_v, R) -> None:
    idx = _decode(IX, X_v, R.n)
    fns = _kernels()
    win = cp.full(R.n, -1, dtype=cp.int64)
    fns["rows_scatter_win"](*_grid(IX.n), (idx, np.int64(IX.n), win))
    W = R.data.shape[1]
    fns["rows_scatter_write"](*_grid(W, T.k), (_u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                               win, np.int64(R.n), R.data, np.int64(W)))


def _row_values(T_data, k: int, rows):
    """The values of the given rows (int64 row numbers) of a k-column device table, column 1
    the most significant bit."""
    words, shifts = rows >> 6, (rows & 63).astype(cp.uint64)
    v = cp.zeros(rows.size, dtype=cp.uint64)
    for c in range(k):
        v = (v << np.uint64(1)) | ((T_data[c, words] >> shifts) & np.uint64(1))
    return v


def _groupmin_sorted(G, K, X_v):
    """GROUPMIN for any group width: the marked rows sorted by (G, K, row); the first row of
    every group is its chosen one."""
    W = G.data.shape[1]
    rows = cp.flatnonzero(_row_bits(X_v, G.n)).astype(cp.int64)
    z = cp.zeros(W * 64, dtype=cp.uint8)
    if rows.size:
        g = _row_values(_u64(G.data), G.k, rows)
        key = _row_values(_u64(K.data), K.k, rows)
        order = cp.lexsort(cp.stack((rows.astype(cp.uint64), key, g)))   # the last key first
        gs = g[order]
        first = cp.ones(rows.size, dtype=cp.bool_)
        first[1:] = gs[1:] != gs[:-1]
        z[rows[order[first]]] = 1
    return cp.packbits(z, bitorder="little").view(cp.uint64)


def groupmin(G, K, X_v):
    if G.k > GROUP_BITS_SCRATCH:
        return _groupmin_sorted(G, K, X_v)
    fns = _kernels()
    W = G.data.shape[1]
    groups = 1 << G.k
    gmin = cp.full(groups, np.iinfo(np.uint64).max, dtype=cp.uint64)
    grow = cp.full(groups, np.iinfo(np.uint64).max, dtype=cp.uint64)
    Gd, Kd, Xd = _u64(G.data), _u64(K.data), _u64(X_v)
    grid, block = _grid(W)
    fns["rows_groupmin_key"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd, gmin))
    fns["rows_groupmin_row"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd, gmin, grow))
    Z = cp.empty(W, dtype=cp.uint64)
    fns["rows_groupmin_mark"](grid, block, (Gd, np.int32(G.k), np.int64(W), Xd, grow, Z))
    return Z


# ---------------------------------------------------------------- routines
def _is_table(t) -> bool:
    d = getattr(t, "data", None)
    return isinstance(d, cp.ndarray) and d.dtype == cp.uint64 and d.flags.c_contiguous and d.ndim == 2


def _vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and isinstance(getattr(x, "v", None), cp.ndarray) \
        and x.v.shape == ((n + 63) // 64,)


make_iota, make_gather, make_scatter, make_groupmin = factories(
    iota, gather, scatter, groupmin, is_table=_is_table, vec_ok=_vec_ok,
    nonempty=True, group_bits_max=GROUP_BITS_MAX)


# ---------------------------------------------------------------- COMPACT and EXPAND
# Both are a GATHER (rows_gather: the rows of R under a mask take the bits of T at idx[r])
# with the row numbers made by array operations on the device:
#   COMPACT  idx[j] = the j-th marked row of T (cupy.flatnonzero), mask = rows 1..c of R;
#   EXPAND   idx[r] = the rank of marked row r among the marked rows (an exclusive cumsum),
#            mask = X.
_SHIFTS = None


def _row_bits(X_v, n: int):
    """The n bits of a device vector as a 0/1 uint64 array (row r at [r])."""
    global _SHIFTS
    if _SHIFTS is None:
        _SHIFTS = cp.arange(64, dtype=cp.uint64)
    return ((_u64(X_v)[:, None] >> _SHIFTS[None, :]) & np.uint64(1)).reshape(-1)[:n]


def _first_rows(c: int, n: int):
    W = (n + 63) // 64
    full, rest = divmod(c, 64)
    mask = cp.zeros(W, dtype=cp.uint64)
    mask[:full] = np.uint64(0xFFFFFFFFFFFFFFFF)
    if rest:
        mask[full] = np.uint64((1 << rest) - 1)
    return mask


def _gather_rows(T_data, k: int, idx, mask, R) -> None:
    W = R.data.shape[1]
    _kernels()["rows_gather"](*_grid(W, k), (_u64(T_data), np.int64(T_data.shape[1]), np.int32(k),
                                             idx, mask, R.data, np.int64(W)))


def compact(T, X_v, R) -> None:
    rows = cp.flatnonzero(_row_bits(X_v, T.n)).astype(cp.int64)
    c = int(rows.size)
    if not c:
        return
    idx = cp.zeros(R.n, dtype=cp.int64)
    idx[:c] = rows
    # in place: threads would read words others write, so the rows come from a copy
    source = T.data.copy() if R is T else T.data
    _gather_rows(source, T.k, idx, _first_rows(c, R.n), R)


def expand(T, X_v, R) -> None:
    bits = _row_bits(X_v, R.n).astype(cp.int64)
    idx = cp.cumsum(bits) - bits               # rank among the marked rows, 0-based
    _gather_rows(T.data, T.k, idx, _u64(X_v), R)


from .compact_routines import compact_factories  # noqa: E402  (after the kernels it wraps)

make_compact, make_expand = compact_factories(compact, expand, is_table=_is_table, vec_ok=_vec_ok,
                                              nonempty=True)
