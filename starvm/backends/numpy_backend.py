"""The NumPy backend: the reference, always available.

Tables are k × ⌈n/64⌉ uint64 NumPy arrays (column-major bit slices). Slices and words are
Python ints: bit i-1 of the int is bit i of the vector. On a CPU, CPython's big-int
bitwise operations cost tens of nanoseconds where a NumPy call on a small array costs
about a microsecond, and the int's little-endian bytes are exactly a packed column, so
COL read and write are one memcpy each.
"""
from __future__ import annotations

import sys
from functools import lru_cache

import numpy as np

from ..execution.values import Table, host_array
from .base import Backend
from .codes import pack_numpy, unpack_numpy

assert sys.byteorder == "little", "the NumPy backend packs columns little-endian"


def _reverse(v: int, n: int) -> int:
    """The n-bit value of v read with bit 1 as the most significant."""
    if n == 0:
        return 0
    return int(format(v, f"0{n}b")[::-1], 2)


def compare_ints(a: int, b: int) -> int:
    """Compare two vectors held as ints, as unsigned numbers with bit 1 most significant."""
    d = a ^ b
    if not d:
        return 0
    # the first differing bit (lowest index) is the most significant difference
    return 1 if a & d & -d else -1


def add_ints(a: int, b: int, n: int) -> int:
    return _reverse((_reverse(a, n) + _reverse(b, n)) & ((1 << n) - 1), n)


def subt_ints(a: int, b: int, n: int) -> int:
    return _reverse((_reverse(a, n) - _reverse(b, n)) & ((1 << n) - 1), n)


@lru_cache(maxsize=None)
def numpy_backend() -> "NumpyBackend":
    """The one NumPy backend of the process (get_backend("numpy"), the device backends' host)."""
    return NumpyBackend()


class NumpyBackend(Backend):
    name = "numpy"
    device = "cpu"

    # ---------------- vectors
    def zeros(self, n):
        return 0

    def ones(self, n):
        return (1 << n) - 1

    def from_bools(self, bits):
        bits = np.asarray(bits, dtype=bool).ravel()
        return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")

    def to_bools(self, v, n):
        raw = np.frombuffer(v.to_bytes((n + 7) // 8, "little"), dtype=np.uint8)
        return np.unpackbits(raw, count=n, bitorder="little").astype(bool)

    def to_words(self, v, n):
        return np.frombuffer(v.to_bytes(((n + 63) // 64) * 8, "little"), dtype=np.uint64).copy()

    def from_words(self, words, n):
        return int.from_bytes(np.ascontiguousarray(words, dtype=np.uint64).tobytes(), "little")

    def get_bit(self, v, i):
        return (v >> i) & 1

    def set_bit(self, v, i, b):
        return v | (1 << i) if b else v & ~(1 << i)

    def fnd(self, v):
        return (v & -v).bit_length()

    def step(self, v):
        if not v:
            return 0, v
        low = v & -v
        return low.bit_length(), v ^ low

    def numb(self, v):
        return v.bit_count()

    def some(self, v):
        return v != 0

    def frst(self, v):
        return v & -v

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def xor(self, a, b):
        return a ^ b

    def not_(self, v, n):
        return ((1 << n) - 1) ^ v

    def equal(self, a, b):
        return a == b

    def trim(self, v, i, j):
        return (v >> i) & ((1 << (j - i + 1)) - 1)

    def rep(self, w, i, v, m):
        mask = ((1 << m) - 1) << i
        return (w & ~mask) | (v << i)

    def compare(self, a, b):
        return compare_ints(a, b)

    def add(self, a, b, n):
        return add_ints(a, b, n)

    def subt(self, a, b, n):
        return subt_ints(a, b, n)

    # ---------------- tables
    def table(self, n, k, bools=None):
        words = (n + 63) // 64
        data = np.zeros((k, words), dtype=np.uint64)
        if bools is not None:
            b = np.asarray(bools, dtype=bool).reshape(n, k)
            packed = np.packbits(b.T, axis=1, bitorder="little")          # k × ⌈n/8⌉ bytes
            as_bytes = data.view(np.uint8).reshape(k, words * 8)
            as_bytes[:, :packed.shape[1]] = packed
        return self._wrap(data, n, k)

    def wrap_table(self, data, n, k):
        """A Table over existing words (k x ceil(n/64) uint64; compiled code's, jit/call.py)."""
        return self._wrap(data, n, k)

    def _wrap(self, data, n, k):
        return Table(data, n, k, self, aux=memoryview(data).cast("B") if data.size else None)

    def table_to_bools(self, t):
        if t.n == 0 or t.k == 0:
            return np.zeros((t.n, t.k), dtype=bool)
        cols = np.unpackbits(t.data.view(np.uint8).reshape(t.k, -1), axis=1, count=t.n, bitorder="little")
        return cols.T.astype(bool)

    def table_copy(self, dst, src):
        np.copyto(dst.data, src.data)

    def col_get(self, t, j):
        nb = t.data.shape[1] * 8
        if not nb:
            return 0
        return int.from_bytes(t.aux[j * nb:(j + 1) * nb], "little")

    def col_set(self, t, j, v):
        nb = t.data.shape[1] * 8
        if nb:
            t.aux[j * nb:(j + 1) * nb] = v.to_bytes(nb, "little")

    def row_get(self, t, i):
        if t.k == 0:
            return 0
        bits = (t.data[:, i >> 6] >> np.uint64(i & 63)) & np.uint64(1)
        return int.from_bytes(np.packbits(bits.astype(np.uint8), bitorder="little").tobytes(), "little")

    def row_set(self, t, i, v):
        if t.k == 0:
            return
        w, b = i >> 6, np.uint64(i & 63)
        raw = np.frombuffer(v.to_bytes((t.k + 7) // 8, "little"), dtype=np.uint8)
        bits = np.unpackbits(raw, count=t.k, bitorder="little").astype(np.uint64)
        col = t.data[:, w]
        t.data[:, w] = (col & ~(np.uint64(1) << b)) | (bits << b)

    def table_set_ints(self, t, values):
        codes = host_array(values).ravel()
        # non-negative int64 codes have the bits of their uint64 selves: a view, not a copy
        codes = codes.view(np.uint64) if codes.dtype == np.int64 else codes.astype(np.uint64, copy=False)
        pack_numpy(codes, t.k, t.data)

    def table_get_ints(self, t):
        return unpack_numpy(t.data, t.n, t.k)
