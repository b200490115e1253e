"""SCATTER on the GPU (scatter.cu; its check: GATHER's decode, gather/cuda.py).

  SCATTER   rows_check as for GATHER (limit NROWS(R)); rows_scatter_win_warp (warp per word of
            IX, FOR_WORDS): atomicMax of the source row into win[target] (init -1), so the largest i
            wins as in the Star body (32-bit: 1 + the row, 0 for none; an IX of 2^32 - 1 rows or
            more runs the Star body); rows_scatter_write_warp (warp per 32 rows of R): the rows
            that have a winner take T's row at the winner (lane_value, warp_write). SCATTER_WARP
            = 0 selects the thread-per-word kernels they replace (rows_scatter_win/_write).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..gather.cuda import decode
from ..shared import cuda_rows
from . import routine

SCATTER_WARP = 1            # SCATTER by the warp kernels (0: the thread-per-word ones)


def scatter_apply(T, IX, plan, X_v, R) -> None:
    fns, u64 = cuda_rows.kernels(), cuda_rows.u64
    win = cp.zeros(R.n, dtype=cp.uint32)
    WI = IX.data.shape[1]
    W = R.data.shape[1]
    if SCATTER_WARP:
        fns["rows_scatter_win_warp"](*cuda_rows.word_grid(WI), (u64(IX.data), np.int32(IX.k), np.int64(WI), u64(X_v),
                                                                win))
        fns["rows_scatter_write_warp"](*cuda_rows.rows_grid(W * 64), (u64(T.data), np.int64(T.data.shape[1]),
                                                                       np.int32(T.k), win, np.int64(R.n), R.data,
                                                                       np.int64(W)))
        return
    fns["rows_scatter_win"](*cuda_rows.grid(WI), (u64(IX.data), np.int32(IX.k), np.int64(WI), u64(X_v), win))
    fns["rows_scatter_write"](*cuda_rows.grid(W), (u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                                   win, np.int64(R.n), R.data, np.int64(W)))


def scatter(T, IX, X_v, R) -> None:
    scatter_apply(T, IX, decode(IX, X_v, R.n)[0], X_v, R)


make = routine(decode, scatter_apply, cuda_rows.STORAGE)
