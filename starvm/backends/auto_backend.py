"""The auto backend: every table lives where its work runs faster, on the CPU or the GPU.

A step on the GPU costs a kernel launch from Python (15-60 µs whatever the size, measured
in bench/results/auto_*.md); the same step on the CPU (NumPy backend, Python-int vectors)
costs well under a microsecond for a short column and grows with its length. So:

  * a table of at least ``gpu_rows`` rows is made on the GPU (``device``); a smaller one on
    the CPU (``host``). A vector made from nothing (SET/CLR, BITS, input from Python)
    follows the same rule by its length, so the slices of a table sit where the table is;
  * a CPU table moves to the GPU, once and for good, the first time one whole-table
    operation (a fused `parallel for` or a native kernel) processes ``gpu_bits`` table bits
    or more: one launch then does the work of thousands of host calls;
  * a word read from a GPU table (ROW) that is shorter than ``gpu_rows`` comes to the host,
    where the scalar-like work done on words (bit tests, STEP, comparisons) is cheap;
  * an operation on a host and a device vector runs on the device; a vector written into a
    table moves to the table's side.

Host vectors are Python ints (the NumPy backend's), device vectors anything else (CuPy
arrays), so the placement of a vector is its type. The hot host cases are written inline
(``a | b`` is what the NumPy backend computes) because this layer sits under every step.
"""
from __future__ import annotations

from ..execution.values import Bits, Table, host_array
from .base import Backend


def _words(n: int) -> int:
    return (n + 63) // 64


class AutoBackend(Backend):
    name = "auto"
    mixed = True
    host = None                      # the host side, set in __init__ (an instance attribute over Backend.host)

    @property
    def gpu(self) -> bool:
        return self.dev.gpu

    def __init__(self, host: Backend, device: Backend, gpu_rows: int, gpu_bits: int):
        self.host, self.dev = host, device
        self.gpu_rows, self.gpu_bits = gpu_rows, gpu_bits
        self.device = f"{device.device} + cpu"
        self.xp = host.xp
        self.migrations = 0         # tables moved to the device by whole-table operations

    def __repr__(self) -> str:
        return f"AutoBackend(gpu_rows={self.gpu_rows}, gpu_bits={self.gpu_bits}, device={self.dev.device!r})"

    # ---------------- placement
    def _side(self, n: int) -> Backend:
        return self.dev if n >= self.gpu_rows else self.host

    # Device vectors are 1-D arrays of uint64 words (the protocol's to_words / from_words).
    def up(self, v, words: int):
        """A host vector as a device vector of ``words`` words."""
        n = words * 64
        return self.dev.from_words(self.dev.xp.asarray(self.host.to_words(v, n)), n)

    def down(self, v) -> int:
        """A device vector as a host vector."""
        n = v.size * 64
        return self.host.from_words(host_array(self.dev.to_words(v, n)), n)

    def to(self, side: Backend, v, n: int):
        """v (n bits) on ``side``."""
        if side is self.host:
            return v if type(v) is int else self.down(v)
        return self.up(v, _words(n)) if type(v) is int else v

    def migrate(self, t: Table) -> None:
        """Move a host table to the device, in place (every reference to it follows)."""
        if t.backend is self.host:
            moved = self.dev.table(t.n, t.k)
            moved.data[...] = self.dev.xp.asarray(t.data)
            t.data, t.aux, t.backend = moved.data, moved.aux, moved.backend
            self.migrations += 1

    def place(self, values) -> bool:
        """Decide where one whole-table operation over ``values`` (its arguments) runs: on the
        device when a table among them is there already or they hold >= gpu_bits table bits.
        Moves the tables and the vectors among them to that side; True for the device."""
        tables = [v for v in values if isinstance(v, Table)]
        on_dev = any(t.backend is self.dev for t in tables) or \
            sum(t.n * t.k for t in tables) >= self.gpu_bits
        side = self.dev if on_dev else self.host
        for v in values:
            if isinstance(v, Table):
                if on_dev:
                    self.migrate(v)
            elif isinstance(v, Bits) and v.n >= 0:
                v.v = self.to(side, v.v, v.n)
        return on_dev

    def owns(self, t: Table) -> bool:
        return t.backend is self.host or t.backend is self.dev

    def placement(self, n: int) -> Backend:
        return self._side(n)

    def _pair(self, a, b):
        """(backend, a, b) with both operands on one side: the device if either is there."""
        if type(a) is int:
            if type(b) is int:
                return self.host, a, b
            return self.dev, self.up(a, b.size), b
        if type(b) is int:
            return self.dev, a, self.up(b, a.size)
        return self.dev, a, b

    # ---------------- vectors: construction and exchange
    def zeros(self, n):
        return self._side(n).zeros(n)

    def ones(self, n):
        return self._side(n).ones(n)

    def from_bools(self, bits):
        return self._side(len(bits)).from_bools(bits)

    def to_bools(self, v, n):
        return (self.host if type(v) is int else self.dev).to_bools(v, n)

    def to_words(self, v, n):
        return (self.host if type(v) is int else self.dev).to_words(v, n)

    def from_words(self, words, n):
        # host words make a host vector (a valid value wherever it is used); the emulated
        # device's words are an ndarray subclass, so the test is by exact type
        return (self.host if type(words) is self.host.xp.ndarray else self.dev).from_words(words, n)

    # ---------------- vectors: base operations
    def get_bit(self, v, i):
        return (v >> i) & 1 if type(v) is int else self.dev.get_bit(v, i)

    def set_bit(self, v, i, b):
        if type(v) is int:
            return v | (1 << i) if b else v & ~(1 << i)
        return self.dev.set_bit(v, i, b)

    def fnd(self, v):
        return (v & -v).bit_length() if type(v) is int else self.dev.fnd(v)

    def step(self, v):
        return self.host.step(v) if type(v) is int else self.dev.step(v)

    def numb(self, v):
        return v.bit_count() if type(v) is int else self.dev.numb(v)

    def some(self, v):
        return v != 0 if type(v) is int else self.dev.some(v)

    def frst(self, v):
        return v & -v if type(v) is int else self.dev.frst(v)

    def and_(self, a, b):
        if type(a) is int and type(b) is int:
            return a & b
        B, a, b = self._pair(a, b)
        return B.and_(a, b)

    def or_(self, a, b):
        if type(a) is int and type(b) is int:
            return a | b
        B, a, b = self._pair(a, b)
        return B.or_(a, b)

    def xor(self, a, b):
        if type(a) is int and type(b) is int:
            return a ^ b
        B, a, b = self._pair(a, b)
        return B.xor(a, b)

    def not_(self, v, n):
        return ((1 << n) - 1) ^ v if type(v) is int else self.dev.not_(v, n)

    def equal(self, a, b):
        B, a, b = self._pair(a, b)
        return B.equal(a, b)

    def trim(self, v, i, j):
        return (self.host if type(v) is int else self.dev).trim(v, i, j)

    def rep(self, w, i, v, m):
        if type(w) is int:
            return self.host.rep(w, i, self.to(self.host, v, m), m)
        return self.dev.rep(w, i, self.to(self.dev, v, m), m)

    def compare(self, a, b):
        B, a, b = self._pair(a, b)
        return B.compare(a, b)

    def add(self, a, b, n):
        B, a, b = self._pair(a, b)
        return B.add(a, b, n)

    def subt(self, a, b, n):
        B, a, b = self._pair(a, b)
        return B.subt(a, b, n)

    # ---------------- tables
    def table(self, n, k, bools=None):
        return self._side(n).table(n, k, bools)

    def table_to_bools(self, t):
        return t.backend.table_to_bools(t)

    def table_copy(self, dst, src):
        if dst.backend is src.backend:
            dst.backend.table_copy(dst, src)
        elif dst.backend is self.dev:
            dst.data[...] = self.dev.xp.asarray(src.data)
        else:
            dst.data[...] = host_array(src.data)

    def table_snapshot(self, t):
        return t.backend.table_snapshot(t)

    def col_get(self, t, j):
        return t.backend.col_get(t, j)

    def col_set(self, t, j, v):
        t.backend.col_set(t, j, self.to(t.backend, v, t.n))

    def row_get(self, t, i):
        w = t.backend.row_get(t, i)
        return self.down(w) if t.backend is self.dev and t.k < self.gpu_rows else w

    def row_set(self, t, i, v):
        t.backend.row_set(t, i, self.to(t.backend, v, t.k))

    def table_set_ints(self, t, values):
        t.backend.table_set_ints(t, values)

    def table_get_ints(self, t):
        return t.backend.table_get_ints(t)

    def forall_kernel(self, loop, counts, symbols, timing):
        return AutoForall(self, loop, counts, symbols, timing)

    def synchronize(self):
        self.dev.synchronize()


class AutoForall:
    """A fused `parallel for` on the auto backend: the host's array evaluator or the device's
    kernel, chosen per run by ``AutoBackend.place`` (the device kernel is built on first use)."""

    def __init__(self, auto: AutoBackend, loop, counts, symbols, timing):
        self.auto = auto
        self.args = (loop, counts, symbols, timing)
        self.on_host = auto.host.forall_kernel(*self.args)
        self._on_dev = None

    def __call__(self, start: int, stop: int, values: tuple) -> None:
        if not self.auto.place(values):
            return self.on_host(start, stop, values)
        if self._on_dev is None:
            self._on_dev = self.auto.dev.forall_kernel(*self.args)
        return self._on_dev(start, stop, values)
