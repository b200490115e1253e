"""MIN and MAX on the GPU in two kernels (extreme.cu), for the CuPy backend and distributed GPU
ranks. The GPU tier's compiled Star body takes a grid barrier per column and is past 2x of
them (bench/bench_natives_gpu.py, docs/architecture.md).

The Star bodies run one step per bit column, each a kernel launch over the whole slice and a
SOME (a reduction and a host read) per column. Here a thread takes one 64-row word of the
table and walks the k columns itself, in registers (the template specialised on k:
shared/cuda_search.py); a thread issues a batch of column loads at once, then runs the
bit-serial rule on registers, branch-free, and goes on to the next batch only while the word
can still matter:

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

Each call: one allocation (Z), two launches, no host synchronisation, no copy.
The results are the Star bodies' results bit for bit (tests/unit/test_native_search.py,
bench/check_search_gpu.py). Words of more than 64 bits (k > 64) run the Star body.
"""
from __future__ import annotations

import threading

import cupy as cp
import numpy as np

from ..shared import cuda_search
from . import routine

_FIX_BLOCK = 256
_FIX_GRID_MAX = 128
# (device, stream, thread) -> [ctrl, list_key, list_block]: ranks that are threads of one
# process (tests) share a stream, and each call needs its own ctrl
_scratch: dict = {}
_values: dict = {}       # (device, stream, thread) -> (device (found, key), pinned host copy)


def _kernels(k: int) -> dict:
    return cuda_search.instances("extreme", k, {"min": ("extreme_local", ", false"),
                                                "max": ("extreme_local", ", true")}, ("extreme_fix",))


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
    grid, block = cuda_search.words_grid(W)
    ctrl, list_key, list_block = _scratch_for(grid[0])
    Z = cp.empty(W, dtype=cp.uint64)
    u64 = cuda_search.u64
    fns["max" if want_max else "min"](grid, block, (u64(T.data), u64(X), np.int64(W), Z, ctrl, list_key, list_block))
    fix_grid = max(1, min(_FIX_GRID_MAX, -(-grid[0] // (_FIX_BLOCK // 32))))
    span = cuda_search.BLOCK * cuda_search.WPT       # the words a block of extreme_local covers
    fns["extreme_fix"]((fix_grid,), (_FIX_BLOCK,), (ctrl, list_key, list_block, np.int64(W), np.int64(span), Z,
                                                    np.uint64(0) if value is None else value))
    return Z


make = routine(extreme, False)
make_max = routine(extreme, True)
