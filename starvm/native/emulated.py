"""Native kernels of the emulated device (backends/emulated_device.py): what runs when the auto
backend places a standard-library call on its device and no GPU is usable.

So that auto's device dispatch, argument checks, Star-body fallbacks and step reports run
on a CPU exactly as they do on a GPU, the emulated device has a kernel wherever the GPU has
one, behind the same routines (search_routines.py, rows_routines.py):

  MIN, MAX, HIT, SETMIN          the CUDA kernels' rule (search_cupy.py, compare_cupy.py), one
                                 whole-slice NumPy operation per bit column of the words
                                 (``match``, MATCH's rule, serves distributed ranks on the
                                 emulated device only, as its CUDA kernel does on GPUs: on one
                                 device the GPU tier compiles MATCH's body);
  IOTA, GATHER, SCATTER, GROUPMIN   the NumPy backend's kernels (rows_numpy.py), the device's
                                 word vectors converted to and from its Python ints;
  COMPACT, EXPAND                rows_numpy.py's kernels, which the NumPy backend itself no
                                 longer registers (its compiled Star bodies replaced them);
  WARSHALL-adapt                 the NumPy backend's kernel (registered directly: it takes
                                 only the table).
"""
from __future__ import annotations

import numpy as np

from ..backends.emulated_device import DeviceWords, device_words
from . import rows_numpy
from .rows_routines import factories
from .search_routines import compare_factory, extreme_factory


def _int(words) -> int:
    return int.from_bytes(np.asarray(words, dtype=np.uint64).tobytes(), "little")


# ---------------------------------------------------------------- search (words of 64 rows)
def match(T, X, v, k: int):
    pattern = int(np.asarray(v)[0])            # bit c: column c + 1
    z = np.array(X, dtype=np.uint64)
    for c in range(k):
        col = T.data[c]
        z &= col if (pattern >> c) & 1 else ~col
    return device_words(z)


def extreme(T, X, want_max: bool):
    z = np.array(X, dtype=np.uint64)
    for c in range(T.k):
        col = T.data[c]
        y = z & (col if want_max else ~col)
        if y.any():
            z = y
    return device_words(z)


def extreme_with_value(T, X, want_max: bool):
    """(Z, finish) as native/search_cupy.py's: finish() gives (1, the extreme of the rows X
    marks, column 1 the most significant bit) or (0, 0) when X marks none."""
    z = extreme(T, X, want_max)
    words = np.asarray(z, dtype=np.uint64)
    hit = np.flatnonzero(words)
    if not hit.size:
        return z, lambda: (0, 0)
    word = int(words[hit[0]])
    bit = (word & -word).bit_length() - 1       # every row Z marks holds the extreme: take any
    value = 0
    for c in range(T.k):
        value = (value << 1) | ((int(T.data[c][hit[0]]) >> bit) & 1)
    return z, lambda: (1, value)


def compare(name: str, T, F, X):
    z = np.array(X, dtype=np.uint64)
    if name == "hit_rows":
        for c in range(T.k):
            z &= ~(T.data[c] ^ F.data[c])
        return device_words(z)
    lt = np.zeros_like(z)
    for c in range(T.k):                        # column 1 (most significant) first
        t, f = T.data[c], F.data[c]
        lt |= z & f & ~t
        z &= ~(t ^ f)
    return device_words(lt)


make_min = extreme_factory(extreme, False)
make_max = extreme_factory(extreme, True)
make_hit = compare_factory(compare, "hit_rows")
make_setmin = compare_factory(compare, "less_rows")


# ---------------------------------------------------------------- row moves
# The device-to-host reads of the CuPy kernels (rows_cupy.py), one per call, go through
# host_read here too, so that a test can count them per routine and per BORUVKA round.
def host_read(*values: int):
    """What the CuPy kernel copies to the host in its one transfer (a few integers)."""
    return values if len(values) != 1 else values[0]


def _decode(IX, X_v, limit: int):
    plan, marked = rows_numpy.decode(IX, _int(X_v), limit)
    return plan, host_read(marked)          # with the range check, one transfer on CuPy


def _gather_apply(T, IX, plan, X_v, R) -> None:
    rows_numpy.gather_apply(T, IX, plan, _int(X_v), R)


def _scatter_apply(T, IX, plan, X_v, R) -> None:
    rows_numpy.scatter_apply(T, IX, plan, _int(X_v), R)


def _groupmin_counted(G, K, X_v):
    z, groups, ones = rows_numpy.groupmin_counted(G, K, _int(X_v))
    groups, ones = host_read(groups, ones)
    return device_words(np.frombuffer(z.to_bytes(len(X_v) * 8, "little"), dtype=np.uint64)), groups, ones


def _numb(X_v) -> int:
    return host_read(_int(X_v).bit_count())


def _is_table(t) -> bool:
    return hasattr(t, "data") and hasattr(t, "k") and isinstance(getattr(t, "data"), np.ndarray)


def _vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and isinstance(getattr(x, "v", None), DeviceWords)


make_iota, make_gather, make_scatter, make_groupmin = factories(
    rows_numpy.iota, _decode, _gather_apply, _scatter_apply, _groupmin_counted, _numb, is_table=_is_table,
    vec_ok=_vec_ok, nonempty=False, group_bits_max=64)


# ---------------------------------------------------------------- COMPACT and EXPAND
def _compact(T, X_v, R, marked: int) -> None:
    rows_numpy.compact(T, _int(X_v), R)


def _expand(T, X_v, R, marked: int) -> None:
    rows_numpy.expand(T, _int(X_v), R)


from .compact_routines import compact_factories  # noqa: E402

make_compact, make_expand = compact_factories(_compact, _expand, _numb, is_table=_is_table, vec_ok=_vec_ok,
                                              nonempty=False)
