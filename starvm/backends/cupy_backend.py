"""The CuPy backend: tables, slices and words live in GPU memory as uint64 words.

A slice or word is a 1-D device array of ⌈n/64⌉ uint64 (bit i-1 of the vector is bit
(i-1) mod 64 of word (i-1) div 64); a table is a k × ⌈n/64⌉ device array, one column per
row of the array, so COL is one contiguous copy and ROW a gather/scatter kernel.
FND, STEP, FRST, SOME and NUMB are device reductions: only the resulting integer comes
back to the host (the control unit), never a whole slice.

Vectors are immutable values (see base.py): every operation writes a fresh array.
TRIM, REP, the word comparisons and ADD/SUBT act on one row-sized word and run on the
host through Python ints (they are O(len(word)) either way).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..execution.values import Table
from .base import Backend
from .cuda_backend_kernels import SOURCE as _KERNELS
from .codes import pack_xp, unpack_xp
from .numpy_backend import add_ints, compare_ints, numpy_backend, subt_ints

_U64 = np.uint64
_NONE = np.iinfo(np.int64).max



def _words(n: int) -> int:
    return (n + 63) // 64


class CupyBackend(Backend):
    name = "cupy"
    xp = cp
    is_device = True
    gpu = True

    @property
    def host(self) -> Backend:
        return numpy_backend()

    def __init__(self):
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
        dev = cp.cuda.Device()
        props = cp.cuda.runtime.getDeviceProperties(dev.id)
        self.device = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        mod = cp.RawModule(code=_KERNELS)
        self._first_one = mod.get_function("first_one")
        self._clear_bit = mod.get_function("clear_bit")
        self._only_bit = mod.get_function("only_bit")
        self._row_gather = mod.get_function("row_gather")
        self._copy_set_bit = mod.get_function("copy_set_bit")
        self._row_scatter = mod.get_function("row_scatter")
        self._popcount = cp.ReductionKernel("uint64 x", "int64 y", "__popcll(x)", "a + b", "y = a", "0",
                                            "star_popcount")
        self._pos = cp.empty(1, dtype=cp.uint64)
        cp.zeros(1, dtype=cp.uint64).sum()   # compile / warm up now, not inside a timed step

    @staticmethod
    def _grid(n: int, block: int = 256):
        return (max(1, (n + block - 1) // block),), (block,)

    # ---------------- host <-> device
    def _to_int(self, v) -> int:
        return int.from_bytes(cp.asnumpy(v).tobytes(), "little")

    def _from_int(self, x: int, n: int):
        return cp.asarray(np.frombuffer(x.to_bytes(_words(n) * 8, "little"), dtype=_U64))

    def _mask(self, n: int) -> int:
        return (1 << (n % 64)) - 1 if n % 64 else (1 << 64) - 1

    # ---------------- vectors
    def zeros(self, n):
        return cp.zeros(_words(n), dtype=cp.uint64)

    def ones(self, n):
        v = cp.full(_words(n), np.iinfo(_U64).max, dtype=cp.uint64)
        if n % 64:
            v[-1] = _U64(self._mask(n))
        return v

    def from_bools(self, bits):
        bits = np.asarray(bits, dtype=bool).ravel()
        n = bits.size
        buf = np.zeros(_words(n) * 8, dtype=np.uint8)
        packed = np.packbits(bits, bitorder="little")
        buf[:packed.size] = packed
        return cp.asarray(buf.view(_U64))

    def to_bools(self, v, n):
        raw = cp.asnumpy(v).view(np.uint8)
        return np.unpackbits(raw, count=n, bitorder="little").astype(bool)

    def to_words(self, v, n):
        return v.copy()

    def from_words(self, words, n):
        return cp.ascontiguousarray(words, dtype=cp.uint64).copy()

    def get_bit(self, v, i):
        return (int(v[i >> 6].get()) >> (i & 63)) & 1       # one word to the host

    def set_bit(self, v, i, b):
        out = cp.empty_like(v)
        grid, block = self._grid(v.size)
        self._copy_set_bit(grid, block, (v, np.int64(v.size), np.int64(i), np.int32(1 if b else 0), out))
        return out

    def _first(self, v) -> None:
        self._pos.fill(_NONE)
        grid, block = self._grid(v.size)
        self._first_one(grid, block, (v, np.int64(v.size), self._pos))

    def fnd(self, v):
        if v.size == 0:
            return 0
        self._first(v)
        p = int(self._pos.get()[0])
        return 0 if p == _NONE else p + 1

    def step(self, v):
        if v.size == 0:
            return 0, v
        self._first(v)
        out = cp.empty_like(v)
        grid, block = self._grid(v.size)
        self._clear_bit(grid, block, (v, np.int64(v.size), self._pos, out))
        p = int(self._pos.get()[0])
        return (0, v) if p == _NONE else (p + 1, out)

    def numb(self, v):
        return int(self._popcount(v)) if v.size else 0

    def some(self, v):
        return bool(v.any()) if v.size else False

    def frst(self, v):
        if v.size == 0:
            return v
        self._first(v)
        out = cp.empty_like(v)
        grid, block = self._grid(v.size)
        self._only_bit(grid, block, (np.int64(v.size), self._pos, out))
        return out

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def xor(self, a, b):
        return a ^ b

    def not_(self, v, n):
        r = ~v
        if n % 64:
            r[-1] &= _U64(self._mask(n))
        return r

    def equal(self, a, b):
        return bool(cp.array_equal(a, b))

    # word operations on one row-sized word: through Python ints on the host
    def _via_host(self, fn, n_out, *vecs):
        return self._from_int(fn(*(self._to_int(v) for v in vecs)), n_out)

    def trim(self, v, i, j):
        m = j - i + 1
        return self._via_host(lambda x: (x >> i) & ((1 << m) - 1), m, v)

    def rep(self, w, i, v, m):
        mask = ((1 << m) - 1) << i
        return self._via_host(lambda a, b: (a & ~mask) | (b << i), w.size * 64, w, v)

    def compare(self, a, b):
        return compare_ints(self._to_int(a), self._to_int(b))

    def add(self, a, b, n):
        return self._via_host(lambda x, y: add_ints(x, y, n), n, a, b)

    def subt(self, a, b, n):
        return self._via_host(lambda x, y: subt_ints(x, y, n), n, a, b)

    # ---------------- tables
    def table(self, n, k, bools=None):
        words = _words(n)
        if bools is None:
            data = cp.zeros((k, words), dtype=cp.uint64)
        else:
            b = np.asarray(bools, dtype=bool).reshape(n, k)
            host = np.zeros((k, words * 8), dtype=np.uint8)
            packed = np.packbits(b.T, axis=1, bitorder="little")
            host[:, :packed.shape[1]] = packed
            data = cp.asarray(host.view(_U64).reshape(k, words))
        return Table(data, n, k, self)

    def table_to_bools(self, t):
        if t.n == 0 or t.k == 0:
            return np.zeros((t.n, t.k), dtype=bool)
        host = cp.asnumpy(t.data).view(np.uint8).reshape(t.k, -1)
        return np.unpackbits(host, axis=1, count=t.n, bitorder="little").T.astype(bool)

    def table_copy(self, dst, src):
        cp.copyto(dst.data, src.data)

    def col_get(self, t, j):
        return t.data[j].copy()

    def col_set(self, t, j, v):
        t.data[j] = v

    def row_get(self, t, i):
        out = cp.empty(_words(t.k), dtype=cp.uint64)
        if t.k:
            grid, block = self._grid(out.size)
            self._row_gather(grid, block, (t.data, np.int64(t.k), np.int64(t.data.shape[1]), np.int64(i), out))
        return out

    def row_set(self, t, i, v):
        if t.k:
            grid, block = self._grid(t.k)
            self._row_scatter(grid, block, (t.data, np.int64(t.k), np.int64(t.data.shape[1]), np.int64(i), v))

    def table_set_ints(self, t, values):
        # codes.pack_xp: the same array operations as on the host, run on the device
        codes = cp.asarray(values).ravel()
        # non-negative int64 codes have the bits of their uint64 selves: a view, not a copy
        codes = codes.view(cp.uint64) if codes.dtype == cp.int64 else codes.astype(cp.uint64, copy=False)
        pack_xp(cp, codes, t.k, t.data)

    def table_get_ints(self, t):
        return unpack_xp(cp, t.data, t.n, t.k)

    def forall_kernel(self, loop, counts, symbols, timing):
        """A fusable `parallel for` as one generated CUDA kernel (cupy_forall.py)."""
        from .cupy_forall import CudaForallKernel
        return CudaForallKernel(loop, self, counts, symbols, timing)

    def synchronize(self):
        cp.cuda.Device().synchronize()
