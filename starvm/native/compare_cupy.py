"""Row-by-row comparison of two tables on the GPU in one kernel: HIT and SETMIN of
stdlib/search.star.

The Star bodies take three or four steps per bit column (a kernel launch each). Here a
thread takes one 64-row word and walks the k columns of both tables in registers:

  HIT     Z[w] = X[w] & AND_j not(T[j][w] xor F[j][w])                       (T(i) = F(i))
  SETMIN  column 1 first: lt |= eq & F_j & ~T_j;  eq &= ~(T_j xor F_j);  Z = X & lt   (T(i) < F(i))

which is the Star bodies' own column recurrence, so the results are theirs bit for bit
(tests/unit/test_native_search.py).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from .search_routines import compare_factory

_SRC = r"""
extern "C" __global__ void hit_rows(const unsigned long long* T, const unsigned long long* F,
                                    const unsigned long long* X, int k, long long W,
                                    unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w >= W) return;
    unsigned long long z = X[w];
    for (int j = 0; j < k && z; ++j) z &= ~(T[(long long)j * W + w] ^ F[(long long)j * W + w]);
    Z[w] = z;
}
extern "C" __global__ void less_rows(const unsigned long long* T, const unsigned long long* F,
                                     const unsigned long long* X, int k, long long W,
                                     unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w >= W) return;
    unsigned long long eq = X[w], lt = 0ULL;
    for (int j = 0; j < k && eq; ++j) {
        unsigned long long t = T[(long long)j * W + w], f = F[(long long)j * W + w];
        lt |= eq & f & ~t;
        eq &= ~(t ^ f);
    }
    Z[w] = lt;
}
"""

_k: dict = {}
_BLOCK = 256


def _kernel(name: str):
    if not _k:
        mod = cp.RawModule(code=_SRC)
        for n in ("hit_rows", "less_rows"):
            _k[n] = mod.get_function(n)
    return _k[name]


def compare_rows(name: str, T, F, X):
    W = T.data.shape[1]
    Z = cp.empty(W, dtype=cp.uint64)
    grid = (max(1, (W + _BLOCK - 1) // _BLOCK),)
    _kernel(name)(grid, (_BLOCK,), (T.data, F.data, X, np.int32(T.k), np.int64(W), Z))
    return Z


make_hit = compare_factory(compare_rows, "hit_rows")
make_setmin = compare_factory(compare_rows, "less_rows")
