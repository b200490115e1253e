"""GATHER on the GPU (gather.cu; rows_check, rows_values: shared/rows.cu).

  GATHER    rows_check (warp per 64-row word of IX, FOR_WORDS: lane c loads column c's whole
            word, X's next word is loaded a step ahead): counts the marked rows and flags a row
            number out of 1..NROWS(T); the host reads both in one transfer (the call's only
            synchronisation) and runs the Star body when the flag is set, before anything
            is written. Then, for T of at most 64 columns and at most 64 rows per moved row,
            rows_values reads every row of T as a number (one pass over T) and
            rows_gather_values (warp kernel over R) decodes
            IX's row numbers of the marked rows, loads one number per row and deals its
            bits out to R's columns, merged with R's old words under X's mask: one random load
            per moved row (BORUVKA's GATHER of the vertex labels by the arcs: 128 M loads at
            R-MAT scale 22, not 128 M x 23); for T of at most 32 columns the numbers are 4 bytes
            (rows_values32, rows_gather_values32: 16 MB for 4 M labels, which L2 holds);
            otherwise rows_gather, column by column.

Unusual arguments (see numpy.py; also empty tables or zero columns here) run the Star body.
Results equal the NumPy kernel's and the Star body's bit for bit (tests/unit/test_native_rows.py,
bench/check_rows_gpu.py).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..guard import Unusual
from ..shared import cuda_rows
from . import routine

GATHER_NARROW_COLS = 32     # GATHER's row values as 4-byte numbers up to here, else 8 bytes
GATHER_WORDS = 1            # GATHER by values a warp per 64-row word (0: per 32 rows)
CHECK_SLICED = 1            # GATHER's and SCATTER's check bit-sliced, a thread per word (0: warp transposes)


def decode(IX, X_v, limit: int):
    """(the marked rows as the plan, the marked rows); Unusual when a marked row names one
    outside 1..limit (nothing written). The kernels that move the rows read IX themselves.
    SCATTER's too (scatter/cuda.py)."""
    fns, u64 = cuda_rows.kernels(), cuda_rows.u64
    W = IX.data.shape[1]
    stats = cp.zeros(2, dtype=cp.uint64)
    if CHECK_SLICED:
        fns["rows_check_sliced"](*cuda_rows.stride_grid(W), (u64(IX.data), np.int32(IX.k), np.int64(W), u64(X_v),
                                                             np.int64(limit), stats))
    else:
        fns["rows_check"](*cuda_rows.word_grid(W), (u64(IX.data), np.int32(IX.k), np.int64(W), u64(X_v),
                                                    np.int64(limit), stats))
    marked, bad = cuda_rows.read(stats)
    if bad or IX.n >= (1 << 32) - 1:       # SCATTER's winners are 32-bit row numbers
        raise Unusual
    return marked, marked


def gather_apply(T, IX, plan, X_v, R) -> None:
    fns, u64, grid_of = cuda_rows.kernels(), cuda_rows.u64, cuda_rows.grid
    W = R.data.shape[1]
    # T's rows as numbers first (one pass over T), then one load per moved row; unless T is
    # far larger than what moves (plan: the marked rows), when the column path reads less
    # GATHER_WORDS: a warp per 64-row word of R (whole 8-byte words), else per 32 rows
    suffix, grid = ("_word", cuda_rows.rows_grid(W * 32)) if GATHER_WORDS else ("", cuda_rows.rows_grid(W * 64))
    if T.k <= GATHER_NARROW_COLS and T.n <= 64 * max(plan, 1):
        vals = cp.empty(T.n, dtype=cp.uint32)
        fns["rows_values32"](*grid_of(T.n), (u64(T.data), np.int32(T.k), np.int64(T.data.shape[1]), np.int64(T.n),
                                             vals))
        fns["rows_gather_values32" + suffix](*grid, (vals, np.int32(T.k), u64(IX.data), np.int32(IX.k),
                                                     u64(X_v), R.data, np.int64(W)))
        return
    if T.k <= 64 and T.n <= 64 * max(plan, 1):
        vals = cp.empty(T.n, dtype=cp.uint64)
        none = cp.zeros(1, dtype=cp.int64)
        fns["rows_values"](*grid_of(T.n), (u64(T.data), np.int32(T.k), np.int64(T.data.shape[1]), none, np.int32(0),
                                           np.int64(T.n), vals))
        fns["rows_gather_values" + suffix](*grid, (vals, np.int32(T.k), u64(IX.data), np.int32(IX.k), u64(X_v),
                                                   R.data, np.int64(W)))
        return
    fns["rows_gather"](*grid_of(W), (u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                     u64(IX.data), np.int32(IX.k), u64(X_v), R.data, np.int64(W)))


def gather(T, IX, X_v, R) -> None:
    gather_apply(T, IX, decode(IX, X_v, T.n)[0], X_v, R)


make = routine(decode, gather_apply, cuda_rows.STORAGE)
