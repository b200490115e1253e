"""GROUPMIN on the GPU (groupmin.cu; rows_list and rows_values: shared/rows.cu).

  GROUPMIN  with NCOLS(G) <= 26 (a scratch of 2^NCOLS(G) entries), warp kernels (a warp per
            64-row word, FOR_WORDS, as rows_check): the lanes of
            one group in a warp combine first (__match_any_sync, then the least value over
            the peers) and one lane does the atomic, after a plain read shows it lowers the
            minimum (a large component holds most arcs: one address for them all). When K's
            bits and the row number fit 64 bits together, pass 1 atomicMin of K << rowbits
            | row into gmin[G] and pass 2 marks the rows equal to their group's gmin; else
            pass 1 atomicMin of K into gmin[G] (init all ones), pass 2 atomicMin of the row
            number into grow[G] among the marked rows whose K equals gmin[G], pass 3 Z's bit
            is 1 for the rows that are grow of their group. The last pass counts the groups
            and the 1 bits of their G values (the step report), read in one transfer. G grouped
            by itself (K is G) of up to 63 bits (BORUVKA's dedupe of its 53-bit edge keys): a hash
            table in device memory, no sort, one transfer besides the marked count. Where the
            bits fit (DEDUPE_PACKED), 2^tbits >= 1.5 per marked row slots of 8 bytes, one number
            [rem | distance from home | row] a slot (the key's bijective mix: home slot and rem),
            so rows_dedupe_insert_packed claims a slot with one atomicCAS and lowers its row with
            an atomicMin of the same number, and rows_dedupe_mark_packed unmixes the keys for the
            count of their 1 bits; else (or a key more than DEDUPE_PROBES_MAX slots from home)
            1.5 slots of 16 bytes, key and least row, per marked row (rows_dedupe_insert: linear
            probing, atomicCAS of the key, atomicMin of the row; rows_dedupe_mark). Other wide groups (up
            to 64 bits) list the marked rows
            (rows_list), read their G (and K) values (rows_values), sort them stably by G and
            K (cupy.argsort: one radix sort of G when K is G, of one combined number when G
            and K fit 64 bits, else two) and mark the first row of every group
            (rows_group_first, which also counts): two transfers (the marked count, the counts).
            With every row marked (BORUVKA's dedupe) the list is the rows themselves: none is
            made. Device memory: about 8 bytes a marked row for G's values, 8 for the order,
            16 for the sort's buffers (and 8 for the list, 8 for K's values when they are needed).

Results equal the NumPy kernel's and the Star body's bit for bit (tests/unit/test_native_rows.py,
bench/check_rows_gpu.py).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..shared import cuda_rows
from ..shared.cuda_rows import grid, rows_grid, stride_grid, u64, word_grid
from . import routine
from .numpy import group_order

GROUP_BITS_SCRATCH = 26      # up to here GROUPMIN's kernels use a scratch of 2^NCOLS(G) entries
GROUP_BITS_MAX = 64          # wider groups are sorted
DEDUPE_BITS_MAX = 63        # GROUPMIN(G, G, X) by a hash table up to here (a key is never all ones)
DEDUPE_SLOTS_X16 = 24       # the dedupe's hash slots per 16 marked rows (24: load at most 2/3)
DEDUPE_PACKED = 1           # the dedupe's slots as one 8-byte number where it fits (0: key and row, 16 bytes)
DEDUPE_PROBES_MAX = 1 << 20  # a key further than this from its home slot: the 16-byte slots instead
_MIX_A, _MIX_B = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB     # splitmix64's odd multipliers



def dedupe_packing(n: int, gk: int, c: int):
    """(tbits, rowbits, dbits) of the 8-byte slots for c marked rows of n, keys of gk bits, or None
    when the distance field would have fewer than 8 bits (the 16-byte slots then)."""
    want = c * max(16, DEDUPE_SLOTS_X16) // 16 + 32
    tbits = min(gk, max(5, (want - 1).bit_length()))   # 2^tbits >= want, or a slot for every key
    rowbits = max(1, (n - 1).bit_length())
    dbits = 64 - (gk - tbits) - rowbits
    return (tbits, rowbits, dbits) if dbits >= 8 else None


def _groupmin_packed(G, X_v, c, Z):
    """_groupmin_hashed by 8-byte slots (rows_dedupe_insert_packed, rows_dedupe_mark_packed);
    None where it does not fit or a key lands too far from home (nothing returned written)."""
    pk = dedupe_packing(G.n, G.k, c)
    if pk is None:
        return None
    tbits, rowbits, dbits = pk
    fns = cuda_rows.kernels()
    W = G.data.shape[1]
    gk = G.k
    m = (1 << gk) - 1
    a, b = (_MIX_A & m) | 1, (_MIX_B & m) | 1
    ainv, binv = pow(a, -1, 1 << gk), pow(b, -1, 1 << gk)
    sh = (gk + 1) // 2
    dmax = min((1 << dbits) - 2, DEDUPE_PROBES_MAX)
    tab = cp.full(1 << tbits, np.iinfo(np.uint64).max, dtype=cp.uint64)
    stats = cp.zeros(3, dtype=cp.uint64)
    fns["rows_dedupe_insert_packed"](*rows_grid(W * 64), (u64(G.data), np.int32(gk), np.int64(W), u64(X_v), tab,
                                                            np.int32(tbits), np.int32(rowbits), np.int32(dbits),
                                                            np.uint64(dmax), np.uint64(a), np.uint64(b), np.int32(sh),
                                                            stats))
    fns["rows_dedupe_mark_packed"](*stride_grid(1 << tbits), (tab, np.int32(gk), np.int32(tbits), np.int32(rowbits),
                                                                np.int32(dbits), np.uint64(ainv), np.uint64(binv),
                                                                np.int32(sh), Z, stats))
    del tab
    groups, ones, far = cuda_rows.read(stats)
    if far:
        return None
    return Z, groups, ones


def _groupmin_hashed(G, X_v):
    """GROUPMIN(G, G, X): the first marked row of every distinct G value, from a hash table of
    the keys (about 1.5 slots of 16 bytes per marked row, or 2^tbits of 8 bytes) instead of a
    sort of them."""
    fns = cuda_rows.kernels()
    W = G.data.shape[1]
    Z = cp.zeros(W, dtype=cp.uint64)
    c = cuda_rows.numb(X_v)
    if not c:
        return Z, 0, 0
    if DEDUPE_PACKED:
        got = _groupmin_packed(G, X_v, c, Z)
        if got is not None:
            return got
        Z = cp.zeros(W, dtype=cp.uint64)
    slots = c * max(16, DEDUPE_SLOTS_X16) // 16 + 32      # at least c + 32: never full
    tab = cp.full(2 * slots, np.iinfo(np.uint64).max, dtype=cp.uint64)   # every slot empty: key and row all ones
    fns["rows_dedupe_insert"](*rows_grid(W * 64), (u64(G.data), np.int32(G.k), np.int64(W), u64(X_v), tab,
                                                     np.int64(slots)))
    stats = cp.zeros(2, dtype=cp.uint64)
    fns["rows_dedupe_mark"](*stride_grid(slots), (tab, np.int64(slots), Z, stats))
    del tab
    groups, ones = cuda_rows.read(stats)
    return Z, groups, ones


def _groupmin_sorted(G, K, X_v):
    """GROUPMIN for any group width: the marked rows sorted stably by G and K; the first row
    of every group is its chosen one."""
    fns = cuda_rows.kernels()
    W = G.data.shape[1]
    Z = cp.zeros(W, dtype=cp.uint64)
    c = cuda_rows.numb(X_v)
    if not c:
        return Z, 0, 0
    listed = c < G.n                 # every row marked (BORUVKA's dedupe): no list of rows
    rows = cuda_rows.list_marked(X_v, W, c) if listed else cp.zeros(1, dtype=cp.int64)

    def values(T):
        v = cp.empty(c, dtype=cp.uint64)
        fns["rows_values"](*grid(c), (u64(T.data), np.int32(T.k), np.int64(W), rows, np.int32(listed),
                                       np.int64(c), v))
        return v
    g = values(G)
    key = None if G.data is K.data else values(K)
    order = group_order(g, key, G.k, K.k, xp=cp)
    del key
    stats = cp.zeros(2, dtype=cp.uint64)
    fns["rows_group_first"](*stride_grid(c), (g, order, rows, np.int32(listed), np.int64(c), Z, stats))
    groups, ones = cuda_rows.read(stats)
    return Z, groups, ones


def groupmin_counted(G, K, X_v):
    """(Z, the groups, the 1 bits of the groups' G values)."""
    if G.k > GROUP_BITS_SCRATCH:
        if G.data is K.data and G.k <= DEDUPE_BITS_MAX:
            return _groupmin_hashed(G, X_v)
        return _groupmin_sorted(G, K, X_v)
    fns = cuda_rows.kernels()
    W = G.data.shape[1]
    groups = 1 << G.k
    gmin = cp.full(groups, np.iinfo(np.uint64).max, dtype=cp.uint64)
    Gd, Kd, Xd = u64(G.data), u64(K.data), u64(X_v)
    grid, block = word_grid(W)
    Z = cp.empty(W, dtype=cp.uint64)
    stats = cp.zeros(2, dtype=cp.uint64)
    rowbits = packed_row_bits(G.n, K.k)
    if rowbits:            # K and the row in one number: one atomic pass, then the marks
        fns["rows_groupmin_packed"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd,
                                                  np.int32(rowbits), gmin))
        fns["rows_groupmin_mark_packed"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd,
                                                       np.int32(rowbits), gmin, Z, stats))
    else:
        grow = cp.full(groups, np.iinfo(np.uint64).max, dtype=cp.uint64)
        fns["rows_groupmin_key"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd, gmin))
        fns["rows_groupmin_row"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd, gmin, grow))
        fns["rows_groupmin_mark"](grid, block, (Gd, np.int32(G.k), np.int64(W), Xd, grow, Z, stats))
    found, ones = cuda_rows.read(stats)
    return Z, found, ones


def packed_row_bits(n: int, key_bits: int) -> int:
    """The bits of a row number 0..n-1 when they fit beside a key of key_bits in 64 bits (GROUPMIN's
    one-pass path), else 0."""
    rowbits = max(1, (n - 1).bit_length())
    return rowbits if key_bits + rowbits <= 64 else 0


def groupmin(G, K, X_v):
    return groupmin_counted(G, K, X_v)[0]


make = routine(groupmin_counted, cuda_rows.numb, cuda_rows.STORAGE, group_bits_max=GROUP_BITS_MAX)
