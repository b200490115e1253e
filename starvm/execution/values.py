"""Runtime values of the STAR-machine: bit vectors (slices and words) and tables.

Their storage belongs to the backend that made them: ``Bits.v`` is the backend's vector
(a Python int on the NumPy backend, a device array on CuPy) and ``Table.data`` is a
k × ⌈n/64⌉ array of uint64 (row r is bit (r-1) mod 64 of word (r-1) div 64 of each column).
"""
from __future__ import annotations

import numpy as np

from ..errors import StarRuntimeError


def host_array(x, dtype=None) -> np.ndarray:
    """A NumPy view or copy of array-like input, CuPy arrays included (copied to the host;
    the backend uploads them again where it keeps its data on the GPU)."""
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):
        x = x.get()
    return np.asarray(x, dtype=dtype)


class Bits:
    """A slice or a word: ``n`` bits, bit 1 first. Backend vectors are immutable values:
    an operation that changes a variable (STEP, SET, Y(i) := b) stores a new one in ``v``."""
    __slots__ = ("v", "n")

    def __init__(self, v, n: int):
        self.v = v
        self.n = n

    def __repr__(self) -> str:
        return f"Bits(n={self.n})"


class Unassigned:
    """The value of a bare `slice` / `word` variable before its first assignment."""
    __slots__ = ("name",)
    n = -1

    def __init__(self, name: str):
        self.name = name

    @property
    def v(self):
        raise StarRuntimeError(f"'{self.name}' is used before it is assigned a value")


class Table:
    """An n × k binary table stored column by column (bit-sliced)."""
    __slots__ = ("data", "n", "k", "aux", "backend")

    def __init__(self, data, n: int, k: int, backend, aux=None):
        self.data = data
        self.n = n
        self.k = k
        self.backend = backend
        self.aux = aux          # backend-private (the NumPy backend keeps a byte view here)

    def __repr__(self) -> str:
        return f"Table({self.n}x{self.k}, {self.backend.name})"

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.k)

    def to_numpy(self):
        """The table as an (n, k) bool array."""
        return self.backend.table_to_bools(self)

    def __array__(self, dtype=None, copy=None):
        a = self.to_numpy()
        return a.astype(dtype) if dtype is not None else a

    def to_ints(self) -> np.ndarray:
        """Every row as an unsigned number, column 1 the most significant bit: a host uint64
        array of n codes (``Machine.table_from_ints`` is the inverse); at most 64 columns."""
        if self.k > 64:
            raise ValueError(f"to_ints needs a table of at most 64 columns, this one has {self.k}")
        return host_array(self.backend.table_get_ints(self), np.uint64)

    @property
    def words(self):
        """The storage itself, zero-copy: the backend's k × ⌈n/64⌉ uint64 array (a NumPy or
        CuPy array); column c is ``words[c]``, row r is bit (r-1) mod 64 of word (r-1) div 64.
        Writing into it changes the table; bits past row n must stay 0."""
        return self.data

    def __dlpack__(self, *args, **kwargs):
        """DLPack export of ``words`` (zero-copy): ``np.from_dlpack(T)``, ``cupy.from_dlpack(T)``,
        ``torch.from_dlpack(T)``."""
        return self.data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.data.__dlpack_device__()

    # _repr_png_ (Jupyter's picture of a table) is ui/pictures.py's png_or_none, put here by
    # starvm/__init__.py: values know nothing of the user interfaces that import them
