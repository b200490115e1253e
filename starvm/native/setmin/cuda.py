"""SETMIN on the GPU in one kernel (setmin.cu): a thread takes one 64-row word and walks the k
columns of both tables in registers, column 1 first: lt |= eq & F_j & ~T_j; eq &= ~(T_j xor F_j);
Z = X & lt: the Star body's own column recurrence, so the result is its bit for bit
(tests/unit/test_native_search.py)."""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..shared import cuda_text
from . import routine

_k: dict = {}
_BLOCK = 256


def _kernel():
    if not _k:
        _k["less_rows"] = cp.RawModule(code=cuda_text.source("setmin")).get_function("less_rows")
    return _k["less_rows"]


def less_rows(T, F, X):
    W = T.data.shape[1]
    Z = cp.empty(W, dtype=cp.uint64)
    grid = (max(1, (W + _BLOCK - 1) // _BLOCK),)
    _kernel()(grid, (_BLOCK,), (T.data, F.data, X, np.int32(T.k), np.int64(W), Z))
    return Z


make = routine(less_rows)
