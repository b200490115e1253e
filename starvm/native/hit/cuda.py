"""HIT on the GPU in one kernel (hit.cu): a thread takes one 64-row word and walks the k columns
of both tables in registers, Z[w] = X[w] & AND_j not(T[j][w] xor F[j][w]): the Star body's own
column recurrence, so the result is its bit for bit (tests/unit/test_native_search.py)."""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..shared import cuda_text
from . import routine

_BLOCK = 256


def column_walk(module: str, function: str):
    """The launcher of ``function`` in the CUDA module ``module``: a kernel (T, F, X, k, W, Z)
    where a thread takes one 64-row word and walks the k columns of both tables (HIT's and
    SETMIN's recurrences); it returns Z, one word per 64 rows."""
    kernel: list = []

    def launch(T, F, X):
        if not kernel:
            kernel.append(cp.RawModule(code=cuda_text.source(module)).get_function(function))
        W = T.data.shape[1]
        Z = cp.empty(W, dtype=cp.uint64)
        grid = (max(1, (W + _BLOCK - 1) // _BLOCK),)
        kernel[0](grid, (_BLOCK,), (T.data, F.data, X, np.int32(T.k), np.int64(W), Z))
        return Z
    launch.__name__ = launch.__qualname__ = function
    return launch


hit_rows = column_walk("hit", "hit_rows")
make = routine(hit_rows)
