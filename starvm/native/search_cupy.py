"""Associative search on the GPU in one or two kernels: MATCH, MIN, MAX of stdlib/search.star.

The Star bodies run one step per bit column, each a kernel launch over the whole slice
(and MIN/MAX a SOME, i.e. a reduction and a host read, per column). Here a thread takes one
64-row word of the table and walks all k columns itself, in registers:

  MATCH  one kernel: Z[w] = X[w] & AND_j not(T[j][w] xor v_j)
  MIN    kernel 1: each word finds the minimum of its active rows by the same bit-serial
         rule as the Star body, keeps its candidate rows and its local minimum, and takes
         part in a global atomicMin; kernel 2: Z[w] = candidates[w] where the local minimum
         equals the global one. The table is read once. MAX mirrors it.

The results are the Star bodies' results bit for bit (tests/unit/test_native_search.py).
Words of more than 64 bits (k > 64) run the Star body.
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from . import timed_call

_SRC = r"""
extern "C" __global__ void match_rows(const unsigned long long* T, const unsigned long long* X,
                                      const unsigned long long* vmask, int k, long long W,
                                      unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w >= W) return;
    unsigned long long z = X[w];
    for (int j = 0; j < k && z; ++j) z &= ~(T[(long long)j * W + w] ^ vmask[j]);
    Z[w] = z;
}

// want_max = 0: minimum, 1: maximum. A word's value is k bits, column 1 the most significant.
extern "C" __global__ void extreme_local(const unsigned long long* T, const unsigned long long* X,
                                         int k, long long W, int want_max,
                                         unsigned long long* cand, unsigned long long* local,
                                         unsigned long long* global) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    unsigned long long z = 0ULL, val = ~0ULL;       // ~0: no active row (never the extreme)
    if (w < W) {
        z = X[w];
        if (z) {
            val = 0ULL;
            for (int j = 0; j < k; ++j) {
                unsigned long long col = T[(long long)j * W + w];
                unsigned long long y = want_max ? (z & col) : (z & ~col);
                unsigned long long bit = 1ULL << (k - 1 - j);
                if (y) { z = y; if (want_max) val |= bit; }
                else if (!want_max) val |= bit;
            }
            // for the maximum, order by the complement so that atomicMin finds it
            if (want_max) val = (k == 64 ? ~val : (~val & ((1ULL << k) - 1)));
        }
        cand[w] = z;
        local[w] = val;
    }
    for (int off = 16; off; off >>= 1) {
        unsigned long long o = __shfl_down_sync(0xffffffffu, val, off);
        val = o < val ? o : val;
    }
    if ((threadIdx.x & 31) == 0 && val != ~0ULL) atomicMin(global, val);
}

extern "C" __global__ void extreme_select(const unsigned long long* cand, const unsigned long long* local,
                                          const unsigned long long* global, long long W,
                                          unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w < W) Z[w] = (local[w] == global[0]) ? cand[w] : 0ULL;
}
"""

_k = {}
_BLOCK = 256


def _kernels():
    if not _k:
        mod = cp.RawModule(code=_SRC)
        for name in ("match_rows", "extreme_local", "extreme_select"):
            _k[name] = mod.get_function(name)
    return _k


def _grid(words: int):
    return (max(1, (words + _BLOCK - 1) // _BLOCK),), (_BLOCK,)


def match(T, X, v, k: int):
    """Z words for MATCH; v: the pattern word (a device vector of k bits)."""
    W = T.data.shape[1]
    bits = np.unpackbits(cp.asnumpy(v).view(np.uint8), count=k, bitorder="little")
    vmask = cp.asarray(np.where(bits.astype(bool), np.uint64(~np.uint64(0)), np.uint64(0)))
    Z = cp.empty(W, dtype=cp.uint64)
    _kernels()["match_rows"](*_grid(W), (T.data, X, vmask, np.int32(k), np.int64(W), Z))
    return Z


def extreme(T, X, want_max: bool):
    W = T.data.shape[1]
    kk = _kernels()
    cand = cp.empty(W, dtype=cp.uint64)
    local = cp.empty(W, dtype=cp.uint64)
    glob = cp.full(1, np.iinfo(np.uint64).max, dtype=cp.uint64)
    kk["extreme_local"](*_grid(W), (T.data, X, np.int32(T.k), np.int64(W), np.int32(want_max),
                                    cand, local, glob))
    Z = cp.empty(W, dtype=cp.uint64)
    kk["extreme_select"](*_grid(W), (cand, local, glob, np.int64(W), Z))
    return Z


def _usable(T, X, Z) -> bool:
    return 0 < T.k <= 64 and T.n > 0 and X.n == T.n and Z.n == T.n


def make_match(star_body, backend, timing):
    def routine(T, X, v, Z):
        if not (_usable(T, X, Z) and v.n == T.k):
            return star_body(T, X, v, Z)
        Z.v = timed_call(match, backend, timing, T, X.v, v.v, T.k)
        return (Z,)
    return routine


def _make_extreme(want_max: bool):
    def make(star_body, backend, timing):
        def routine(T, X, Z):
            if not _usable(T, X, Z):
                return star_body(T, X, Z)
            Z.v = timed_call(extreme, backend, timing, T, X.v, want_max)
            return (Z,)
        return routine
    return make


make_min = _make_extreme(False)
make_max = _make_extreme(True)
