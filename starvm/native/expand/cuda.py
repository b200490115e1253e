"""EXPAND on the GPU (expand.cu; expand_bits: shared/rows.cuh; rows_popc: shared/rows.cu).

  EXPAND    rows_expand_words (a thread per word of R and a few columns): the m marked rows
            of word w take rows j0 .. j0+m-1 of T (j0 from the prefix sum), at most two words
            of T's column, spread to the marked positions (expand); COMPACT_WORDS = 0: the warp
            kernel rows_expand.

COMPACT's switch COMPACT_WORDS (compact/cuda.py) chooses EXPAND's kernels too.
"""
from __future__ import annotations

import numpy as np

from ..compact import cuda as compact_cuda
from ..shared import cuda_rows
from ..shared.cuda_rows import col_groups, grid, rows_grid, u64
from . import routine


def expand(T, X_v, R, marked: int) -> None:
    """Rows 1..marked of T back to the marked rows of R, in order."""
    if not marked:
        return
    W = R.data.shape[1]
    ends = cuda_rows.ends(X_v, W)
    if compact_cuda.COMPACT_WORDS:
        cuda_rows.kernels()["rows_expand_words"](*grid(W, col_groups(T.k, 8)), (u64(T.data), np.int64(T.data.shape[1]),
                                                                                np.int32(T.k), u64(X_v), ends, R.data,
                                                                                np.int64(W)))
        return
    cuda_rows.kernels()["rows_expand"](*rows_grid(W * 64), (u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                                            u64(X_v), ends, R.data, np.int64(W)))


make = routine(expand, cuda_rows.numb, cuda_rows.STORAGE)
