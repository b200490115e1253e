"""The NumPy kernels' shared handling of bit-sliced rows: vectors (Python ints, bit r = row r+1)
as words and bools, a table's columns unpacked and packed, rows read as numbers and written
back, and the storage a NumPy kernel takes (``STORAGE``)."""
from __future__ import annotations

import numpy as np

from ..guard import Storage


def words(n: int) -> int:
    return (n + 63) // 64


def vec_words(v: int, n: int) -> np.ndarray:
    """A NumPy-backend vector (a Python int, bit r = row r+1) as ceil(n/64) uint64 words."""
    return np.frombuffer(v.to_bytes(words(n) * 8, "little"), dtype=np.uint64)


def vec_bools(v: int, n: int) -> np.ndarray:
    raw = np.frombuffer(v.to_bytes(words(n) * 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=n, bitorder="little").astype(bool)


def bools_vec(b: np.ndarray) -> int:
    return int.from_bytes(np.packbits(b, bitorder="little").tobytes(), "little")


def unpack(data: np.ndarray, n: int) -> np.ndarray:
    """k x W uint64 columns -> k x n uint8 array of 0/1 (row r of column c at [c, r])."""
    k = data.shape[0]
    if k == 0 or n == 0:
        return np.zeros((k, n), dtype=np.uint8)
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(k, -1)
    return np.unpackbits(raw, axis=1, count=n, bitorder="little")


def pack(bits: np.ndarray, n: int) -> np.ndarray:
    """k x n array of 0/1 -> k x ceil(n/64) uint64 words (bits past row n are 0)."""
    k = bits.shape[0]
    out = np.zeros((k, words(n) * 8), dtype=np.uint8)
    if k and n:
        packed = np.packbits(bits.astype(bool), axis=1, bitorder="little")
        out[:, :packed.shape[1]] = packed
    return out.view(np.uint64).reshape(k, words(n))


def values(data: np.ndarray, n: int, rows=slice(None)) -> np.ndarray:
    """The unsigned numbers held by the given rows (all by default; column 0 the most
    significant bit) of a table of at most 64 columns, as uint64. Eight columns at a time:
    their bits make one byte per row (work on bytes), and only one shift and one OR per
    byte are on the 64-bit numbers."""
    k = data.shape[0]
    bits = unpack(data, n)               # every row: indexing k x n bits by rows is slower
    vals = np.zeros(n, dtype=np.uint64)
    byte = np.empty(n, dtype=np.uint8)
    first = k % 8 or 8                   # the top group: the columns above whole bytes
    for lo in [0, *range(first, k, 8)]:
        hi = min(k, first if lo == 0 else lo + 8)
        byte[...] = 0
        for c in range(lo, hi):
            np.left_shift(byte, np.uint8(1), out=byte)
            np.bitwise_or(byte, bits[c], out=byte)
        np.left_shift(vals, np.uint64(hi - lo), out=vals)
        np.bitwise_or(vals, byte, out=vals, casting="unsafe")
    return vals[rows]


def columns(vals: np.ndarray, k: int, n: int) -> np.ndarray:
    """The inverse of values: n row values (uint64, k <= 64 bits) -> k x W words (the
    bytes of the numbers, most significant first, unpacked across the columns)."""
    nb = (k + 7) // 8
    by = np.ascontiguousarray(vals.astype(">u8").view(np.uint8).reshape(n, 8)[:, 8 - nb:].T)
    bits = np.unpackbits(by, axis=0) if nb else np.zeros((0, n), dtype=np.uint8)
    return pack(bits[nb * 8 - k:], n)


def move_rows(T, src: np.ndarray, R, dst: np.ndarray, mask: np.ndarray) -> None:
    """ROW(dst[j], R) := ROW(src[j], T) for every j (dst without repeats), merged into R's
    words under ``mask`` (1 x W: the rows that take a new value), in place (the NumPy backend
    keeps a memoryview of ``data``: it must stay the same array). T's rows move as numbers,
    64 columns at a time: one uint64 per row."""
    for lo in range(0, T.k, 64):
        hi = min(T.k, lo + 64)
        vals = np.zeros(R.n, dtype=np.uint64)
        vals[dst] = values(T.data[lo:hi], T.n)[src]
        new = columns(vals, hi - lo, R.n)
        old = R.data[lo:hi]
        old[...] = (old & ~mask) | (new & mask)


def popcount_sum(vals: np.ndarray) -> int:
    """The 1 bits of uint64 values, together."""
    return int(np.unpackbits(np.ascontiguousarray(vals).view(np.uint8)).sum())


def numb(X_v) -> int:
    return X_v.bit_count()


def _is_table(t) -> bool:
    return hasattr(t, "data") and hasattr(t, "k") and isinstance(getattr(t, "data"), np.ndarray)


def _vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and type(getattr(x, "v", None)) is int


STORAGE = Storage(_is_table, _vec_ok, nonempty=False)
