"""Transitive closure of a square table on the GPU: blocked bit-packed Warshall.

``data`` (k × W uint64, row c = column c of P) is the reversed graph packed by rows, and
Warshall on it gives the columns of closure(P) (see warshall_numpy.py). Pivots are taken
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

The Star body's OR steps (steps.warshall_adapt: for every pivot k, the rows holding bit k
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

from . import closure_routine

_SRC = r"""
extern "C" __global__ void pivots_close(const unsigned long long* M, unsigned long long* S,
                                        int W, int kb, int cnt) {
    // block j: S[j] = M[p_j] | OR{ M[p_k] : pivot k reachable from pivot j through the block }
    __shared__ unsigned long long sub[64];
    __shared__ unsigned long long reach_s;
    int j = blockIdx.x;
    for (int t = threadIdx.x; t < 64; t += blockDim.x)
        sub[t] = (t < cnt) ? M[(long long)(64 * kb + t) * W + kb] : 0ULL;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long reach = (j < cnt) ? sub[j] : 0ULL, todo = reach;
        while (todo) {                       // a search over the 64 x 64 pivot sub-matrix
            int k = __ffsll((long long)todo) - 1;
            todo &= todo - 1;
            unsigned long long fresh = sub[k] & ~reach;
            reach |= fresh;
            todo |= fresh;
        }
        reach_s = reach;
    }
    __syncthreads();
    unsigned long long reach = reach_s;
    for (int w = threadIdx.x; w < W; w += blockDim.x) {
        unsigned long long acc = (j < cnt) ? M[(long long)(64 * kb + j) * W + w] : 0ULL, m = reach;
        while (m) { int k = __ffsll((long long)m) - 1; m &= m - 1; acc |= M[(long long)(64 * kb + k) * W + w]; }
        S[j * W + w] = acc;
    }
}

extern "C" __global__ void pivot_steps(const unsigned long long* M, int n, int W, int kb, int cnt,
                                       unsigned long long* total) {
    // total += sum over the pivots p of block kb of the rows holding bit p just before pivot p
    __shared__ unsigned long long sub[64];
    __shared__ unsigned long long pre[64];
    __shared__ unsigned long long warp_sums[32];
    for (int t = threadIdx.x; t < 64; t += blockDim.x)
        sub[t] = (t < cnt) ? M[(long long)(64 * kb + t) * W + kb] : 0ULL;
    __syncthreads();
    // pre[t]: pivot row t's word as it stands before pivot t (a Warshall on the 64 x 64
    // sub-matrix, thread r updating row r; row t itself does not change at pivot t)
    for (int t = 0; t < cnt; ++t) {
        unsigned long long pt = sub[t];
        if (threadIdx.x == 0) pre[t] = pt;
        if (threadIdx.x < cnt && threadIdx.x != t && ((sub[threadIdx.x] >> t) & 1ULL)) sub[threadIdx.x] |= pt;
        __syncthreads();
    }
    unsigned long long mine = 0ULL;
    for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < n;
         c += (long long)gridDim.x * blockDim.x) {
        unsigned long long w = M[c * W + kb];
        for (int t = 0; t < cnt; ++t)
            if ((w >> t) & 1ULL) { ++mine; w |= pre[t]; }
    }
    for (int off = 16; off > 0; off >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, off);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long sum = 0ULL;
        for (int i = 0; i < (int)(blockDim.x >> 5); ++i) sum += warp_sums[i];
        atomicAdd(total, sum);
    }
}

extern "C" __global__ void rows_update(unsigned long long* M, const unsigned long long* S,
                                       int n, int W, int kb, int use_smem) {
    extern __shared__ unsigned long long sS[];
    const unsigned long long* P = S;
    if (use_smem) {
        for (int idx = threadIdx.x; idx < 64 * W; idx += blockDim.x) sS[idx] = S[idx];
        __syncthreads();
        P = sS;
    }
    int lane = threadIdx.x & 31;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int nwarps = (gridDim.x * blockDim.x) >> 5;
    for (int c = warp; c < n; c += nwarps) {
        unsigned long long* row = M + (long long)c * W;
        unsigned long long wb = row[kb];
        if (wb == 0ULL) continue;
        unsigned long long bits = wb, m = wb;
        while (m) { int k = __ffsll((long long)m) - 1; m &= m - 1; bits |= P[k * W + kb]; }
        __syncwarp();   // every lane has read row[kb] before any lane rewrites it
        for (int w = lane; w < W; w += 32) {
            unsigned long long acc = row[w], mm = bits;
            while (mm) { int k = __ffsll((long long)mm) - 1; mm &= mm - 1; acc |= P[k * W + w]; }
            row[w] = acc;
        }
    }
}
"""

_kernels = {}


def _get():
    if not _kernels:
        mod = cp.RawModule(code=_SRC)
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


make = closure_routine(closure_in_place)
