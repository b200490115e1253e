"""The NumPy reference model of MATCH, MIN and MAX (stdlib/search.star) on bit-sliced data and
on bool tables: the one copy that tests/unit/test_native_search.py and
bench/check_search_gpu.py check the kernels and the routines against.

Bit-sliced data is what the backends store: a k x W uint64 table (row c = column c + 1, row r
of the table = bit r % 64 of word r // 64) and W-word control slices.
"""
from __future__ import annotations

import numpy as np

M64 = (1 << 64) - 1


def row_mask(n):
    """The W words of an all-ones slice of n rows (bits past row n are 0)."""
    W = (n + 63) // 64
    m = np.full(W, M64, dtype=np.uint64)
    if n % 64:
        m[-1] = np.uint64((1 << (n % 64)) - 1)
    return m


def values(T, n):
    """Row values of a k x W bit-sliced table, column 0 the most significant bit."""
    k = T.shape[0]
    bits = np.unpackbits(T.view(np.uint8).reshape(k, -1), axis=1, count=n, bitorder="little")
    vals = np.zeros(n, dtype=np.uint64)
    for c in range(k):
        vals |= bits[c].astype(np.uint64) << np.uint64(k - 1 - c)
    return vals


def pack(rows):
    """bool rows -> the words of a slice."""
    b = np.packbits(rows, bitorder="little")
    out = np.zeros(((rows.size + 63) // 64) * 8, dtype=np.uint8)
    out[:b.size] = b
    return out.view(np.uint64)


def word_of(value, k):
    """The pattern word of a row value: bit c of the word is column c + 1 (bit k-1-c of the value)."""
    return np.array([sum(((value >> (k - 1 - c)) & 1) << c for c in range(k))], dtype=np.uint64)


def reference(name, vals, X, n, probe=0):
    """Z words of MATCH / MIN / MAX over row values ``vals`` (from values()) and control words X."""
    act = np.unpackbits(X.view(np.uint8), count=n, bitorder="little").astype(bool)
    if name == "MATCH":
        return pack(act & (vals == np.uint64(probe)))
    if not act.any():
        return pack(np.zeros(n, bool))
    best = vals[act].min() if name == "MIN" else vals[act].max()
    return pack(act & (vals == best))


def model_bools(name, T, X, v):
    """Z of MATCH / MIN / MAX for a bool table T (rows x columns), bool slice X, bool word v
    (rows as Python ints: 64-bit rows included)."""
    n, k = T.shape
    vals = [int("".join("1" if b else "0" for b in r), 2) if k else 0 for r in T]
    act = [i for i in range(n) if X[i]]
    if name == "MATCH":
        pat = int("".join("1" if b else "0" for b in v), 2) if len(v) else 0
        return np.array([bool(X[i]) and vals[i] == pat for i in range(n)], dtype=bool)
    if not act:
        return np.zeros(n, bool)
    best = (min if name == "MIN" else max)(vals[i] for i in act)
    return np.array([bool(X[i]) and vals[i] == best for i in range(n)], dtype=bool)
