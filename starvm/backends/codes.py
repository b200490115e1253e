"""Tables from integer codes and back, straight into the packed words (no n x k bool array).

Row r of an n x k table holds an unsigned k-bit code, column 1 the most significant bit: so
column c (0-based) holds bit s = k-1-c of every code, and word w of the column packs the rows
64w .. 64w+63 (row r at bit r % 64, base.py). A column whose bit s is 64 or more is 0 (codes
have 64 bits); bits of a code above bit k-1 are dropped.

Two implementations of the same thing:
  * ``pack_numpy`` / ``unpack_numpy`` (the NumPy backend): the byte of each code that holds
    bit s, masked, goes through ``np.packbits(bitorder="little")`` -- one byte of temporary
    per row, not eight; packing copies each byte of the codes into a contiguous plane once
    and masks that plane per bit (4x faster than masking the strided byte per bit);
  * ``pack_xp`` / ``unpack_xp`` (any array module; the CuPy backend runs it on the device):
    word-level shifts, the 64 rows of a word combined with a sum of distinct powers of two.
Both work through the rows in chunks, so the temporaries stay a few MiB (NumPy) or a few
hundred MiB (device) whatever the table's size.
"""
from __future__ import annotations

import numpy as np

CHUNK_NUMPY = 1 << 18        # rows per chunk (a multiple of 64): its byte planes stay in cache
CHUNK_XP = 1 << 23

_ONE = np.uint64(1)


def _chunks(n: int, size: int):
    for lo in range(0, n, size):
        yield lo, min(n, lo + size)


# ------------------------------------------------------------------ NumPy
def pack_numpy(values: np.ndarray, k: int, data: np.ndarray) -> None:
    """data (k x W uint64, W >= ceil(n/64)) := the columns of the n codes ``values`` (uint64)."""
    data[...] = 0
    n = values.size
    if n == 0 or k == 0:
        return
    code_bytes = np.ascontiguousarray(values, dtype=np.uint64).view(np.uint8).reshape(n, 8)  # little-endian
    table_bytes = data.view(np.uint8).reshape(k, -1)
    plane_bytes = min(8, (k + 7) // 8)          # the bytes of a code that hold bits 0 .. k-1
    size = min(n, CHUNK_NUMPY)
    plane, masked = np.empty(size, dtype=np.uint8), np.empty(size, dtype=np.uint8)
    for lo, hi in _chunks(n, CHUNK_NUMPY):
        part = code_bytes[lo:hi]
        p, mk = plane[:hi - lo], masked[:hi - lo]
        for byte in range(plane_bytes):
            p[...] = part[:, byte]        # one strided copy a byte, then contiguous passes a bit
            for bit in range(8):
                s = 8 * byte + bit
                if s >= k:
                    break
                np.bitwise_and(p, np.uint8(1 << bit), out=mk)      # nonzero where bit s is 1
                packed = np.packbits(mk, bitorder="little")
                table_bytes[k - 1 - s, lo // 8:lo // 8 + packed.size] = packed


def unpack_numpy(data: np.ndarray, n: int, k: int) -> np.ndarray:
    """The n codes (uint64) held by the last min(k, 64) columns of data (k x W uint64)."""
    out = np.zeros(n, dtype=np.uint64)
    if n == 0 or k == 0:
        return out
    out_bytes = out.view(np.uint8).reshape(n, 8)
    table_bytes = np.ascontiguousarray(data).view(np.uint8).reshape(k, -1)
    for lo, hi in _chunks(n, CHUNK_NUMPY):
        for c in range(max(0, k - 64), k):
            s = k - 1 - c
            bits = np.unpackbits(table_bytes[c, lo // 8:(hi + 7) // 8], count=hi - lo, bitorder="little")
            out_bytes[lo:hi, s >> 3] |= bits << np.uint8(s & 7)
    return out


# ------------------------------------------------------------------ any array module (CuPy)
def pack_xp(xp, values, k: int, data) -> None:
    """pack_numpy with array operations of ``xp`` only (numpy or cupy): data and values are
    arrays of xp; nothing leaves the device."""
    data[...] = 0
    n = int(values.size)
    if n == 0 or k == 0:
        return
    values = xp.ascontiguousarray(values, dtype=xp.uint64)
    shifts = xp.arange(64, dtype=xp.uint64)
    for lo, hi in _chunks(n, CHUNK_XP):
        words = (hi - lo + 63) // 64
        rows = xp.zeros(words * 64, dtype=xp.uint64)
        rows[:hi - lo] = values[lo:hi]
        rows = rows.reshape(words, 64)               # row r of the chunk: word r // 64, bit r % 64
        for c in range(k):
            s = k - 1 - c
            if s >= 64:
                continue
            bits = (rows >> np.uint64(s)) & _ONE
            # distinct powers of two: their sum is their OR
            data[c, lo // 64:lo // 64 + words] = (bits << shifts).sum(axis=1, dtype=xp.uint64)


def unpack_xp(xp, data, n: int, k: int):
    """unpack_numpy with array operations of ``xp`` only; the codes stay on the device."""
    out = xp.zeros(n, dtype=xp.uint64)
    if n == 0 or k == 0:
        return out
    shifts = xp.arange(64, dtype=xp.uint64)
    for lo, hi in _chunks(n, CHUNK_XP):
        words = (hi - lo + 63) // 64
        acc = xp.zeros(hi - lo, dtype=xp.uint64)
        for c in range(max(0, k - 64), k):
            s = k - 1 - c
            col = data[c, lo // 64:lo // 64 + words]
            bits = ((col[:, None] >> shifts[None, :]) & _ONE).reshape(-1)[:hi - lo]
            acc |= bits << np.uint64(s)
        out[lo:hi] = acc
    return out


def check_codes(values, width: int, what: str = "values"):
    """ValueError unless ``values`` is a 1-D array of integers in 0 .. 2^width - 1 (any
    array module); returns it."""
    if values.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of integers, got {values.ndim}-D")
    if values.dtype.kind not in "iu":
        raise ValueError(f"{what} must be integers, got dtype {values.dtype}")
    if values.size:
        lo, hi = int(values.min()), int(values.max())
        if lo < 0:
            raise ValueError(f"{what} must be >= 0, got {lo}")
        if width < 64 and hi >> width:
            raise ValueError(f"{what}: {hi} does not fit {width} bits")
    return values
