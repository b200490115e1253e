"""Associative search on the GPU in one or two kernels: MATCH, MIN, MAX of stdlib/search.star.

MIN and MAX are native kernels of the CuPy backend (native/__init__.py's registry): the GPU
tier's compiled Star body takes a grid barrier per column and is past 2x of them. MATCH is not:
its compiled body (no barrier) is within 2x (bench/bench_natives_gpu.py, docs/architecture.md),
so a MATCH call on one GPU runs that; ``match`` here serves the distributed GPU ranks
(distributed/search.py), where the compiled tier does not run.

The Star bodies run one step per bit column, each a kernel launch over the whole slice
(and MIN/MAX a SOME, i.e. a reduction and a host read, per column). Here a thread takes one
64-row word of the table and walks the k columns itself, in registers. The kernels are C++
templates specialised on k (compiled once per k, on first use: cp.RawModule with
name_expressions), so the column loop is unrolled: a thread issues a batch of B column loads
at once (their addresses do not depend on the data), then runs the bit-serial rule on
registers, branch-free, and goes on to the next batch only while the word can still matter:

  MATCH  one kernel: Z[w] = X[w] & AND_c not(T[c][w] xor v_c), v_c read from the pattern
         word on the device (no host copy). A word whose Z is already 0 stops loading.
  MIN    kernel 1 (extreme_local): each word finds the minimum of its active rows by the
         Star body's bit-serial rule (Y := Z and not COL; if SOME(Y) then Z := Y), giving
         its candidate rows and a key, its local minimum (for MAX the complement of the
         local maximum, so that smaller is better for both). The key is built from the
         most significant bit down, so after each batch its bits so far, with zeros below,
         bound it from below: a word whose bound is above the global key g (read once when
         the thread starts; g only decreases) cannot hold the result and stops loading.
         The block reduces its keys to m (warp shuffles + shared memory). A block with
         m > g writes zeros; otherwise it makes one atomicMin on g, writes the candidates of
         its words whose key is m, and enters (m, block) in a list.
         kernel 2 (extreme_fix): the listed blocks whose m is not the final g (a few: those
         that were the best so far when they ran) are zeroed, and the last block of kernel 2
         resets g, the list length and its own counter, so that the scratch (one per device,
         stream and thread) is ready for the next call with no host work. Asked for
         (extreme_with_value, a distributed rank's MIN / MAX), that block also writes
         (found, g) to a 16-byte buffer: the extreme itself, copied to the host in one copy.
  MAX    mirrors MIN.

Each call: one allocation (Z), one or two launches, no host synchronisation, no copy.
The results are the Star bodies' results bit for bit (tests/unit/test_native_search.py,
bench/check_search_gpu.py). Words of more than 64 bits (k > 64) run the Star body.
"""
from __future__ import annotations

import threading

import cupy as cp
import numpy as np

from .search_routines import extreme_factory

_SRC = r"""
typedef unsigned long long u64;

// A coherent read of a word other blocks update atomically (served by L2, not L1).
__device__ __forceinline__ u64 load_relaxed(const u64* p) {
#if __CUDA_ARCH__ >= 700
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return *(volatile const u64*)p;
#endif
}

// Launch shape: a block of BLOCK threads covers BLOCK * WPT consecutive words; thread t takes
// words w0 + t + i * BLOCK (i < WPT), coalesced across the warp. Columns are loaded in
// batches of B (B = 0: all K at once, no early exit). Bits past row n are 0 in T and X.
template <int K, int B>
struct Batch {
    static const int size = (B <= 0 || B > K) ? K : B;
    static const int count = (K + size - 1) / size;
};

// Z[w] = X[w] and, for every column c, not (T[c][w] xor v_c); v_c is bit c of v[0].
template <int K, int B, int WPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
match_rows(const u64* __restrict__ T, const u64* __restrict__ X, const u64* __restrict__ v,
           long long W, u64* __restrict__ Z) {
    typedef Batch<K, B> Bt;
    const u64 pat = __ldg(v);
    const long long base = (long long)blockIdx.x * (BLOCK * WPT) + threadIdx.x;
#pragma unroll
    for (int i = 0; i < WPT; ++i) {
        const long long w = base + (long long)i * BLOCK;
        if (w >= W) break;
        u64 z = X[w];
        const u64* t = T + w;
#pragma unroll
        for (int b = 0; b < Bt::count; ++b) {
            if (!z) break;                              // no row left: the rest cannot matter
            u64 col[Bt::size];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j)
                if (b * Bt::size + j < K) col[j] = t[(long long)(b * Bt::size + j) * W];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j) {
                const int c = b * Bt::size + j;
                if (c < K) z &= ~(col[j] ^ (0ULL - ((pat >> c) & 1ULL)));   // v_c = 1: and COL
            }
        }
        Z[w] = z;
    }
}

// ctrl[0]: the global key g (~0 when idle), ctrl[1]: list length, ctrl[2]: kernel-2 counter.
// Column 0 is the most significant bit. MAX_ = false: minimum, true: maximum.
template <int K, int B, bool MAX_, int WPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
extreme_local(const u64* __restrict__ T, const u64* __restrict__ X, long long W,
              u64* __restrict__ Z, u64* ctrl, u64* __restrict__ list_key,
              u64* __restrict__ list_block) {
    typedef Batch<K, B> Bt;
    __shared__ u64 red[BLOCK / 32];
    __shared__ int keep_s;
    const u64 g0 = load_relaxed(ctrl);      // a value g has had: >= the final g
    const long long base = (long long)blockIdx.x * (BLOCK * WPT) + threadIdx.x;
    u64 z[WPT], key[WPT];
    u64 m = ~0ULL;
    bool any = false;
#pragma unroll
    for (int i = 0; i < WPT; ++i) {
        const long long w = base + (long long)i * BLOCK;
        u64 zz = w < W ? X[w] : 0ULL, kk = 0ULL;
        const u64* t = T + w;
#pragma unroll
        for (int b = 0; b < Bt::count; ++b) {
            if (!zz) break;
            u64 col[Bt::size];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j)
                if (b * Bt::size + j < K) col[j] = t[(long long)(b * Bt::size + j) * W];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j) {
                const int c = b * Bt::size + j;
                if (c < K) {
                    // Star body: Y := Z and not COL (MIN) / Z and COL (MAX); if SOME(Y) then Z := Y.
                    const u64 y = MAX_ ? (zz & col[j]) : (zz & ~col[j]);
                    // key bit: 1 where no candidate qualified (MIN: the value's bit is 1;
                    // MAX: the value's bit is 0, so the key is the complement of the maximum).
                    kk |= (y == 0ULL) ? (1ULL << (K - 1 - c)) : 0ULL;
                    zz = y ? y : zz;
                }
            }
            // kk (the lower bits still 0) bounds the word's key from below
            if (b + 1 < Bt::count && kk > g0) zz = 0ULL;
        }
        z[i] = zz;
        key[i] = zz ? kk : ~0ULL;           // no row left: never selected (and Z is 0)
        m = key[i] < m ? key[i] : m;
        any |= zz != 0ULL;
    }
#pragma unroll
    for (int off = 16; off; off >>= 1) {
        const u64 o = __shfl_xor_sync(0xffffffffu, m, off);
        m = o < m ? o : m;
    }
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
    const int block_any = __syncthreads_or(any);
    if (threadIdx.x < 32) {
        u64 bm = threadIdx.x < BLOCK / 32 ? red[threadIdx.x] : ~0ULL;
#pragma unroll
        for (int off = 16; off; off >>= 1) {
            const u64 o = __shfl_xor_sync(0xffffffffu, bm, off);
            bm = o < bm ? o : bm;
        }
        if (threadIdx.x == 0) {
            int keep = 0;
            if (block_any) {
                const u64 seen = load_relaxed(ctrl);
                if (bm <= seen) {
                    const u64 old = bm < seen ? atomicMin(ctrl, bm) : seen;
                    keep = bm <= old;
                }
                if (keep) {
                    const u64 slot = atomicAdd(ctrl + 1, 1ULL);
                    list_key[slot] = bm;
                    list_block[slot] = blockIdx.x;
                }
            }
            red[0] = bm;
            keep_s = keep;
        }
    }
    __syncthreads();
    const int keep = keep_s;
    const u64 best = red[0];
#pragma unroll
    for (int i = 0; i < WPT; ++i) {
        const long long w = base + (long long)i * BLOCK;
        if (w < W) Z[w] = (keep && key[i] == best) ? z[i] : 0ULL;
    }
}

// One warp per listed block: zero its words unless its key is the final g. The last block
// to finish writes (found, g) to out (when not null) and resets ctrl for the next call.
extern "C" __global__ void extreme_fix(u64* ctrl, const u64* __restrict__ list_key,
                                       const u64* __restrict__ list_block, long long W,
                                       long long span, u64* __restrict__ Z, u64* out) {
    const u64 g = load_relaxed(ctrl);
    const u64 count = load_relaxed(ctrl + 1);
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < (long long)count;
         i += warps) {
        if (list_key[i] != g) {
            const long long lo = (long long)list_block[i] * span;
            const long long hi = lo + span < W ? lo + span : W;
            for (long long w = lo + lane; w < hi; w += 32) Z[w] = 0ULL;
        }
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const u64 done = atomicAdd(ctrl + 2, 1ULL);
        if (done == gridDim.x - 1) {                    // every block has read g and the list
            if (out) {                                  // a block listed itself iff a row was marked
                out[0] = count ? 1ULL : 0ULL;
                out[1] = g;
            }
            ctrl[0] = ~0ULL;
            ctrl[1] = 0ULL;
            ctrl[2] = 0ULL;
            __threadfence();
        }
    }
}
"""

# Launch shape: BLOCK threads a block, WPT words a thread, column batches of BATCH (0: all
# k columns in one batch). bench/check_search_gpu.py times alternatives; set them through
# configure().
_BLOCK = 256
_WPT = 1
_BATCH = 8
_FIX_BLOCK = 256
_FIX_GRID_MAX = 128

_modules: dict = {}      # (device, k, batch, wpt, block) -> {"match", "min", "max", "fix"} kernels
# (device, stream, thread) -> [ctrl, list_key, list_block]: ranks that are threads of one
# process (tests) share a stream, and each call needs its own ctrl
_scratch: dict = {}
_values: dict = {}       # (device, stream, thread) -> (device (found, key), pinned host copy)


def configure(block: int = 256, words_per_thread: int = 1, batch: int = 8) -> None:
    """Set the launch shape of the MATCH/MIN/MAX kernels (bench/check_search_gpu.py)."""
    global _BLOCK, _WPT, _BATCH
    if block % 32 or not 32 <= block <= 1024 or words_per_thread not in (1, 2, 4) or not 0 <= batch <= 64:
        raise ValueError("block: a multiple of 32 in 32..1024; words_per_thread: 1, 2 or 4; batch: 0..64")
    _BLOCK, _WPT, _BATCH = block, words_per_thread, batch


def launch_shape() -> dict:
    return {"block": _BLOCK, "words_per_thread": _WPT, "batch": _BATCH}


def _kernels(k: int) -> dict:
    key = (cp.cuda.runtime.getDevice(), k, _BATCH, _WPT, _BLOCK)
    fns = _modules.get(key)
    if fns is None:
        args = f"{k}, {_BATCH}"
        names = {"match": f"match_rows<{args}, {_WPT}, {_BLOCK}>",
                 "min": f"extreme_local<{args}, false, {_WPT}, {_BLOCK}>",
                 "max": f"extreme_local<{args}, true, {_WPT}, {_BLOCK}>"}
        mod = cp.RawModule(code=_SRC, options=("-std=c++14",), name_expressions=list(names.values()))
        fns = {kind: mod.get_function(expr) for kind, expr in names.items()}
        fns["fix"] = mod.get_function("extreme_fix")
        _modules[key] = fns
    return fns


def _words_grid(W: int):
    per_block = _BLOCK * _WPT
    return (max(1, (W + per_block - 1) // per_block),), (_BLOCK,)


def _here() -> tuple:
    """The key of this call's scratch and value buffers: device, stream and thread."""
    return cp.cuda.runtime.getDevice(), cp.cuda.get_current_stream().ptr, threading.get_ident()


def _scratch_for(blocks: int):
    key = _here()
    s = _scratch.get(key)
    if s is None:
        ctrl = cp.asarray(np.array([np.iinfo(np.uint64).max, 0, 0, 0], dtype=np.uint64))  # g, count, done
        s = _scratch[key] = [ctrl, None, None]
    if s[1] is None or s[1].size < blocks:
        cap = max(blocks, 1024)
        s[1] = cp.empty(cap, dtype=cp.uint64)
        s[2] = cp.empty(cap, dtype=cp.uint64)
    return s


def _value_buffers():
    key = _here()
    v = _values.get(key)
    if v is None:
        pinned = np.ndarray((2,), dtype=np.uint64, buffer=cp.cuda.alloc_pinned_memory(16))
        v = _values[key] = (cp.zeros(2, dtype=cp.uint64), pinned)
    return v


def _u64(a):
    return a if (a.dtype == cp.uint64 and a.flags.c_contiguous) else cp.ascontiguousarray(a, dtype=cp.uint64)


def match(T, X, v, k: int):
    """Z words for MATCH; v: the pattern word (a device vector of k bits, bit c = column c+1)."""
    W = T.data.shape[1]
    Z = cp.empty(W, dtype=cp.uint64)
    _kernels(k)["match"](*_words_grid(W), (_u64(T.data), _u64(X), _u64(v), np.int64(W), Z))
    return Z


def extreme(T, X, want_max: bool):
    """Z words for MIN (want_max False) or MAX (True)."""
    return _extreme(T, X, want_max, None)


def extreme_with_value(T, X, want_max: bool):
    """(Z, finish) for MIN or MAX on a distributed rank, which must tell the other ranks its
    extreme: finish() waits for the stream and returns (1, the extreme of the marked rows,
    column 1 the most significant bit) or (0, 0) where X marks no row. The extreme comes from
    kernel 2 by one 16-byte copy to pinned memory, queued behind it: no other launch."""
    value, pinned = _value_buffers()
    Z = _extreme(T, X, want_max, value)
    stream = cp.cuda.get_current_stream()
    cp.cuda.runtime.memcpyAsync(pinned.ctypes.data, value.data.ptr, 16, _DEVICE_TO_HOST, stream.ptr)
    mask = (1 << T.k) - 1

    def finish() -> tuple[int, int]:
        stream.synchronize()             # the call's one wait
        if not pinned[0]:
            return 0, 0
        key = int(pinned[1])
        return 1, (~key & mask) if want_max else key     # MAX's key is its complement
    return Z, finish


_DEVICE_TO_HOST = 2         # cudaMemcpyDeviceToHost


def _extreme(T, X, want_max: bool, value):
    """Z words for MIN or MAX; kernel 2 also writes (found, key) to ``value`` unless None."""
    W = T.data.shape[1]
    fns = _kernels(T.k)
    grid, block = _words_grid(W)
    ctrl, list_key, list_block = _scratch_for(grid[0])
    Z = cp.empty(W, dtype=cp.uint64)
    fns["max" if want_max else "min"](grid, block, (_u64(T.data), _u64(X), np.int64(W), Z, ctrl,
                                                    list_key, list_block))
    fix_grid = max(1, min(_FIX_GRID_MAX, -(-grid[0] // (_FIX_BLOCK // 32))))
    fns["fix"]((fix_grid,), (_FIX_BLOCK,), (ctrl, list_key, list_block, np.int64(W), np.int64(_BLOCK * _WPT), Z,
                                            np.uint64(0) if value is None else value))
    return Z


make_min = extreme_factory(extreme, False)
make_max = extreme_factory(extreme, True)
