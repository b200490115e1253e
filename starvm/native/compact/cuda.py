"""COMPACT on the GPU (compact.cu; compress_bits: shared/rows.cuh; rows_popc and rows_list:
shared/rows.cu).

  COMPACT   by words (COMPACT_WORDS, when X marks at least 1 row in 64): from the inclusive
            prefix sum of the words' popcounts (rows_popc + cupy.cumsum), rows_compact_start
            finds the word of T where each 64 rows of the result begin, and rows_compact_words
            (a thread per word of R and 4 columns) packs the marked bits of T's words down
            (Hacker's Delight's compress) and appends them: T read once and R written once,
            every access coalesced. Sparser X: rows_list, the marked rows of T in order, and
            rows_gather_list (warp kernel over R) takes T's rows at the list (32 rows from a
            run of 32 rows of T: a shifted copy, copy_run). The marked count comes from the
            routine (compact/__init__.py), which reads it once.
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..shared import cuda_rows
from ..shared.cuda_rows import col_groups, grid, rows_grid, u64
from . import routine

COMPACT_WORDS = 1           # COMPACT and EXPAND by words (0: the warp kernels, rows_gather_list and rows_expand)
COMPACT_WORDS_SHARE = 8     # COMPACT by words where X marks at least 1 row in this many (else the list)


def compact(T, X_v, R, marked: int) -> None:
    """The marked rows of T, in order, into rows 1..marked of R (R may be T)."""
    if not marked:
        return
    fns = cuda_rows.kernels()
    WT = T.data.shape[1]
    # in place: threads would read words others write, so the rows come from a copy
    source = T.data.copy() if R is T else T.data
    W = R.data.shape[1]
    # a result word walks ~64 / (marked share) words of T: R-MAT scale 22 on the H100, 2% marked
    # (BORUVKA_LIVE) took 1.6 ms by words against 0.8 by the list, 50% 0.6 ms against 2.5
    if COMPACT_WORDS and COMPACT_WORDS_SHARE * marked >= T.n:
        ends = cuda_rows.ends(X_v, WT)
        D = -(-marked // 64)
        start = cp.empty(D, dtype=cp.int64)
        fns["rows_compact_start"](*grid(WT), (u64(X_v), np.int64(WT), ends, start))
        grid_, block = grid(D, col_groups(T.k, 4))         # 4: COLS_PER_THREAD
        fns["rows_compact_words"](grid_, block, (u64(source), np.int64(WT), np.int32(T.k), u64(X_v), ends, start,
                                                 np.int64(marked), R.data, np.int64(W)))
        return
    rows = cuda_rows.list_marked(X_v, WT, marked)
    fns["rows_gather_list"](*rows_grid(marked), (u64(source), np.int64(WT), np.int32(T.k), rows,
                                                 np.int64(marked), R.data, np.int64(W)))


make = routine(compact, cuda_rows.numb, cuda_rows.STORAGE)
