"""IOTA on the GPU (iota.cu):

  IOTA      thread per (word, column): column c holds bit k-1-c of the row numbers, in closed
            form (the low 6 bits repeat every word; above them one bit of the word number).
"""
from __future__ import annotations

import numpy as np

from ..shared import cuda_rows
from . import routine


def iota(T) -> None:
    W = T.data.shape[1]
    cuda_rows.kernels()["rows_iota"](*cuda_rows.grid(W, T.k), (T.data, np.int32(T.k), np.int64(W), np.int64(T.n)))


make = routine(iota, cuda_rows.STORAGE)
