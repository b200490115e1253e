"""MATCH on a GPU (distributed GPU ranks): one kernel, match_rows of match.cu.

Z[w] = X[w] & AND_c not(T[c][w] xor v_c), a thread per 64-row word walking the k columns in
registers (the template specialised on k: shared/cuda_search.py), v_c read from the pattern
word on the device (no host copy). A word whose Z is already 0 stops loading. The result is
the Star body's bit for bit (tests/unit/test_native_search.py, bench/check_search_gpu.py).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..shared import cuda_search


def match(T, X, v, k: int):
    """Z words for MATCH; v: the pattern word (a device vector of k bits, bit c = column c+1)."""
    W = T.data.shape[1]
    Z = cp.empty(W, dtype=cp.uint64)
    fn = cuda_search.instances("match", k, {"match": ("match_rows", "")})["match"]
    u64 = cuda_search.u64
    fn(*cuda_search.words_grid(W), (u64(T.data), u64(X), u64(v), np.int64(W), Z))
    return Z
