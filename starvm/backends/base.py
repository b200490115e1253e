"""The backend protocol: the bit-column primitives every backend implements.

Nothing above this protocol knows which backend runs. A backend chooses its vector type
(the value stored in ``Bits.v``) and the type of ``Table.data``; the machine layer
(``starvm/runtime/ops.py``) does all checking (indices, lengths) and counting, so the
primitives below get valid, 0-based arguments and only compute.

Rules every backend follows:
  * Vectors are immutable values: an operation returns a new vector and never changes
    its arguments; a vector never aliases table storage (a later table write must not
    change a vector read from it).
  * Bits past a vector's length are 0 (``not_`` and ``ones`` must mask them).
  * Bit 1 of a word is the most significant when a word is read as a number (spec §2).
  * Tables are k × ⌈n/64⌉ arrays of uint64: column c is ``data[c]``, row r is bit r % 64
    of word r // 64 (0-based).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

Vector = Any


class Backend(ABC):
    name: str = "?"                  # for messages, reports and cache keys; never tested to tell backends apart
    device: str = "cpu"              # where it computes, in words (a GPU's name, ...)

    # ---------------- capabilities: what code above the protocol asks instead of the name
    is_device: bool = False          # vectors and tables are device-style word arrays (CuPy, the emulated device)
    gpu: bool = False                # a real CUDA GPU holds (some of) its tables (CuPy; auto or MPI ranks over it)
    mixed: bool = False              # each table on the host or the device, chosen per table (auto_backend.py)
    distributed: bool = False        # tables split by rows over MPI ranks (starvm/distributed)

    @property
    def host(self) -> "Backend | None":
        """The host-side backend: the one whose tables are host arrays that CPU code (NumPy,
        Numba) reads. Itself for a host backend (``b.host is b`` asks "host only?"), the NumPy
        backend for a device backend, auto's host side on auto; None for MPI ranks over a
        device (no distributed host side exists)."""
        return self

    # ---------------- vectors: construction and exchange
    @abstractmethod
    def zeros(self, n: int) -> Vector: ...
    @abstractmethod
    def ones(self, n: int) -> Vector: ...
    @abstractmethod
    def from_bools(self, bits: np.ndarray) -> Vector:
        """A host bool array (element 0 = bit 1) -> vector."""
    @abstractmethod
    def to_bools(self, v: Vector, n: int) -> np.ndarray:
        """Vector -> host bool array of length n."""

    # ---------------- vectors as arrays of words (for fused `parallel for` loops)
    xp: Any = np                     # the array module tables live in (numpy, cupy)

    @abstractmethod
    def to_words(self, v: Vector, n: int):
        """Vector -> 1-D uint64 array (of module xp) of ⌈n/64⌉ words; may not alias v."""
    @abstractmethod
    def from_words(self, words, n: int) -> Vector:
        """1-D uint64 array of xp -> vector (the inverse of to_words)."""

    # ---------------- vectors: base operations (spec §3)
    @abstractmethod
    def get_bit(self, v: Vector, i: int) -> int: ...
    @abstractmethod
    def set_bit(self, v: Vector, i: int, b: int) -> Vector: ...
    @abstractmethod
    def fnd(self, v: Vector) -> int:
        """1-based position of the first 1, 0 if none."""
    @abstractmethod
    def step(self, v: Vector) -> tuple[int, Vector]:
        """(FND(v), v with that bit cleared)."""
    @abstractmethod
    def numb(self, v: Vector) -> int: ...
    @abstractmethod
    def some(self, v: Vector) -> bool: ...
    @abstractmethod
    def frst(self, v: Vector) -> Vector: ...
    @abstractmethod
    def and_(self, a: Vector, b: Vector) -> Vector: ...
    @abstractmethod
    def or_(self, a: Vector, b: Vector) -> Vector: ...
    @abstractmethod
    def xor(self, a: Vector, b: Vector) -> Vector: ...
    @abstractmethod
    def not_(self, v: Vector, n: int) -> Vector: ...
    @abstractmethod
    def equal(self, a: Vector, b: Vector) -> bool: ...
    @abstractmethod
    def trim(self, v: Vector, i: int, j: int) -> Vector:
        """Bits i..j (0-based, inclusive) as a vector of length j - i + 1."""
    @abstractmethod
    def rep(self, w: Vector, i: int, v: Vector, m: int) -> Vector:
        """w with bits i..i+m-1 replaced by the m bits of v."""
    @abstractmethod
    def compare(self, a: Vector, b: Vector) -> int:
        """-1, 0, 1 comparing a and b as unsigned numbers, bit 1 most significant."""
    @abstractmethod
    def add(self, a: Vector, b: Vector, n: int) -> Vector:
        """a + b modulo 2^n."""
    @abstractmethod
    def subt(self, a: Vector, b: Vector, n: int) -> Vector:
        """a - b modulo 2^n."""

    # ---------------- tables
    @abstractmethod
    def table(self, n: int, k: int, bools: np.ndarray | None = None):
        """A new Table (starvm.execution.values.Table), zero or from an (n, k) bool array."""
    @abstractmethod
    def table_to_bools(self, t) -> np.ndarray: ...
    @abstractmethod
    def table_copy(self, dst, src) -> None: ...
    @abstractmethod
    def col_get(self, t, j: int) -> Vector: ...
    @abstractmethod
    def col_set(self, t, j: int, v: Vector) -> None: ...
    @abstractmethod
    def row_get(self, t, i: int) -> Vector: ...
    @abstractmethod
    def row_set(self, t, i: int, v: Vector) -> None: ...

    # ---------------- tables from integer codes (codes.py): no n x k bool array on the way
    @abstractmethod
    def table_set_ints(self, t, values) -> None:
        """Every row of t := its code from ``values`` (n unsigned integers, a host array or
        one of xp), k bits, column 1 the most significant; columns for bits 64 and up are 0."""
    @abstractmethod
    def table_get_ints(self, t):
        """The inverse: t's n codes (uint64, an array of xp) read from its last min(k, 64) columns."""

    def forall_kernel(self, loop, counts, symbols, timing):
        """The callable that runs a fusable `parallel for` (targets/numpy/forall.py) on this backend."""
        from ..targets.numpy.forall import ForallKernel
        return ForallKernel(loop, self, counts, symbols, timing)

    def table_snapshot(self, t):
        """A copy of t (for the forall rule of `parallel for`)."""
        c = self.table(t.n, t.k)
        self.table_copy(c, t)
        return c

    def synchronize(self) -> None:
        """Wait for queued device work (timing); nothing to do on the CPU."""

    def owns(self, t) -> bool:
        """Is table t one of this backend's (a machine refuses tables of other backends)?"""
        return t.backend is self

    def placement(self, n: int) -> "Backend":
        """The backend that would hold a new table of n rows (the auto backend chooses)."""
        return self
