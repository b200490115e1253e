"""WARSHALL-adapt's transitive closure of a square table on the GPU: blocked bit-packed Warshall
(the kernels of warshall_adapt.cu).

``data`` (k × W uint64, row c = column c of P) is the reversed graph packed by rows, and
Warshall on it gives the columns of closure(P) (see numpy.py). Pivots are taken
64 at a time (one 64-bit word b of every row):

  1. ``pivots_close`` (64 blocks, one per pivot row j): find the pivots reachable from j
     inside the 64 x 64 pivot sub-matrix (word b of the pivot rows), then
     S[j] = M[p_j] | OR{M[p_k] : k reachable}: the pivot rows closed under the block's pivots;
  2. ``rows_update`` (all SMs, one warp per row c): wb' = M[c][b] | OR{S[k][b] : k in M[c][b]}
     (S is closed, so one pass reaches the fixed point), then M[c] |= OR{S[k] : k in wb'}.
     S sits in shared memory when it fits.

Each step only adds pairs joined by a real path, and after block b every row holds at least
what Warshall's row holds after pivot 64b+63, so the end result is the transitive closure.
Two launches per 64 pivots instead of the paper's one launch per pivot.

The Star body's OR steps (``body_steps``: for every pivot k, the rows holding bit k
just before pivot k) are counted by a third launch per 64 pivots, ``pivot_steps``, before
``rows_update``: bit k of a row before pivot k depends only on word b of that row and of the
pivot rows, so every thread replays the sequential pivots of the block on its row's word b
(the pivot rows' words as they stand before their own pivot come from a 64-step Warshall on
the 64 x 64 sub-matrix, done by each thread block; tests/unit/test_native_steps.py checks
this replay in NumPy) and counts the pivots it meets.
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..shared import cuda_text
from . import routine

_kernels = {}


def _get():
    if not _kernels:
        mod = cp.RawModule(code=cuda_text.source("warshall_adapt"))
        _kernels["close"] = mod.get_function("pivots_close")
        _kernels["update"] = mod.get_function("rows_update")
        _kernels["steps"] = mod.get_function("pivot_steps")
        dev = cp.cuda.Device()
        _kernels["sms"] = dev.attributes["MultiProcessorCount"]
        _kernels["smem_max"] = dev.attributes.get("MaxSharedMemoryPerBlockOptin", 48 * 1024)
    return _kernels


def closure_in_place(table) -> int:
    """The closure, in place; returns the Star body's OR steps (see the module's doc)."""
    n = table.n
    if n == 0:
        return 0
    k = _get()
    M = table.data
    W = M.shape[1]
    S = cp.empty(64 * W, dtype=cp.uint64)
    smem = 64 * W * 8
    use_smem = smem <= k["smem_max"]
    update = k["update"]
    if use_smem and smem > 48 * 1024:
        update.max_dynamic_shared_size_bytes = smem
    threads = 1024 if smem > 64 * 1024 else 256
    blocks = max(1, min((n * 32 + threads - 1) // threads, k["sms"] * (2048 // threads)))
    ors = cp.zeros(1, dtype=cp.uint64)
    step_blocks = max(1, min((n + 255) // 256, k["sms"] * 4))
    for kb in range((n + 63) // 64):
        cnt = min(64, n - 64 * kb)
        k["close"]((64,), (128,), (M, S, np.int32(W), np.int32(kb), np.int32(cnt)))
        k["steps"]((step_blocks,), (256,), (M, np.int32(n), np.int32(W), np.int32(kb), np.int32(cnt), ors))
        update((blocks,), (threads,), (M, S, np.int32(n), np.int32(W), np.int32(kb), np.int32(use_smem)),
               shared_mem=smem if use_smem else 0)
    return int(ors.get()[0])


make = routine(closure_in_place)
