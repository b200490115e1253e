"""The distributed backend: the Backend protocol over a local backend plus collectives.

Every rank runs the same control program (scalars, loops, calls: replicated) and holds a
block of rows of every table (partition.py). Vectors come in three forms, chosen by where
they come from; an operation on two of them brings them to a common form first:

  * a ``Shard``: this rank's block of a partitioned vector (COL(i, T) and what is computed
    from it: slices of row-partitioned tables);
  * a plain local vector of the wrapped backend, the whole vector on every rank
    (replicated: ROW(i, T), BITS literals, words built bit by bit);
  * a ``Fill``: all zeros or all ones (CLR, SET, a fresh variable), in no form until an
    operation needs one.

Column and slice logic is local. SOME, NUMB, FND, STEP, EQ and the comparisons of slices
are one all-reduction of one integer; ROW(i, T) is read on the owning rank and broadcast,
ROW(i, T) := w and X(i) := b are done by the owner alone; X(i) of a slice is broadcast from
its owner. TRIM, REP, ADD and SUBT of partitioned vectors, and output, gather the whole
vector (an all-gather): they are word operations, rare on slices.

Nothing above the protocol knows it is distributed: ``runtime/ops.py`` checks and counts as
before, on every rank alike, so step counts are the machine's, not multiplied by P.
"""
from __future__ import annotations

import numpy as np

from ..backends.base import Backend
from ..errors import StarRuntimeError
from ..execution.values import Table
from .partition import layout
from .collectives import choose as _choose
from .collectives import cupy_access, mps_running
from .graph_input import RankCodes
from .vectors import REPLICATE_MAX, Fill, Shard, _host

_NONE = 1 << 62          # "no 1 here" in a min-reduction of positions


class DistributedBackend(Backend):
    """Backend ``local`` on this rank's rows, with ``comm`` (comm.py) between the ranks."""
    device = "cpu"
    distributed = True

    # the other capabilities are the local backend's
    @property
    def is_device(self) -> bool:
        return self.L.is_device

    @property
    def gpu(self) -> bool:
        return self.L.gpu

    @property
    def mixed(self) -> bool:
        return self.L.mixed

    @property
    def host(self):
        """Itself over a host-only local backend (mpi:numpy, whose ranks' tables CPU code reads);
        None over a device one."""
        return self if self.L.host is self.L else None

    def __init__(self, local: Backend, comm, align: int = 64, collectives=None):
        self.L = local
        self.comm = comm
        self.rank, self.size = comm.rank, comm.size
        self.align = align
        self.name = f"mpi:{local.name}"
        self.device = local.device
        self.xp = local.xp
        self.bytes_moved = [0, 0]      # collectives run, bytes they carried from this rank
        # array collectives: NCCL, CUDA-aware MPI or host staging on CuPy ranks, mpi4py on host
        # ones; chosen once, here, the same on every rank (collectives.py)
        self.coll = collectives if collectives is not None else choose_collectives(comm, local)
        # device arrays go to the collectives as they are on a device path (CuPy ranks, whose
        # arrays are alike on every rank); on the host path (NumPy, auto: an auto rank's tables
        # may sit on either side) they are brought to the host first
        self.device_arrays = self.coll.path != "host"

    @property
    def collective_path(self) -> str:
        """The path of the array collectives and, for a fallback, why (collectives.py)."""
        return self.coll.describe()

    def profile_lines(self) -> list[str]:
        """What --profile says of the ranks (Machine.profile_report)."""
        lines = [f"{self.size} rank(s); {self.bytes_moved[0]} collectives carried {self.bytes_moved[1]} bytes "
                 f"from this rank; array collectives: {self.collective_path}"]
        peers = getattr(self.coll, "gpu_peers", ())
        if peers:
            lines.append(f"ranks {', '.join(map(str, peers))} share one GPU; CUDA MPS " +
                         ("runs: their kernels run at once" if mps_running() else
                          "does not run: the GPU takes turns between them (start nvidia-cuda-mps-control -d "
                          "before mpiexec, docs/scale.md)"))
        return lines

    def __repr__(self) -> str:
        return f"<DistributedBackend {self.name}, rank {self.rank} of {self.size}>"

    def layout(self, n: int):
        return layout(n, self.size, self.rank, self.align)

    # ------------------------------------------------------------ forms
    def local_part(self, x, n: int):
        """x's bits on this rank's rows, as a local vector."""
        if isinstance(x, Shard):
            return x.v
        lay = self.layout(n)
        if isinstance(x, Fill):
            return self.L.ones(lay.local_n) if x.bit else self.L.zeros(lay.local_n)
        if lay.local_n == 0:
            return self.L.zeros(0)
        return self.L.trim(x, lay.start, lay.stop - 1)

    def whole(self, x, n: int):
        """x as a replicated local vector (an all-gather for a Shard)."""
        if isinstance(x, Shard):
            return self._gather(x.v, n)
        if isinstance(x, Fill):
            return self.L.ones(n) if x.bit else self.L.zeros(n)
        return x

    def _gather(self, v, n: int):
        lay = self.layout(n)
        self.bytes_moved[0] += 1
        if lay.align % 64 == 0:       # whole words: the blocks' words side by side are the vector's
            words = self.L.to_words(v, lay.local_n)
            if not self.device_arrays:
                words = _host(words)
            self.bytes_moved[1] += words.nbytes
            return self.L.from_words(self.xp.asarray(self.coll.allgatherv(words)), n)
        bools = np.ascontiguousarray(self.L.to_bools(v, lay.local_n), dtype=np.uint8)
        self.bytes_moved[1] += bools.nbytes
        return self.L.from_bools(self.comm.allgatherv(bools).astype(bool))

    def materialize(self, x, n: int):
        """A Fill given a form (replicated if small, else partitioned); others unchanged."""
        if not isinstance(x, Fill):
            return x
        if n <= REPLICATE_MAX:
            return self.whole(x, n)
        return Shard(self.local_part(x, n), n)

    def _pair(self, a, b):
        """(a, b, n) in one form: both Shard-local parts if either is a Shard (n its length),
        else both replicated (n None)."""
        if isinstance(a, Shard) or isinstance(b, Shard):
            n = a.n if isinstance(a, Shard) else b.n
            return self.local_part(a, n), self.local_part(b, n), n
        return a, b, None

    def _allreduce(self, x: int, op: str) -> int:
        self.bytes_moved[0] += 1
        self.bytes_moved[1] += 8
        return self.comm.allreduce(x, op)

    # ------------------------------------------------------------ construction and exchange
    def zeros(self, n):
        return Fill(0, n)

    def ones(self, n):
        return Fill(1, n)

    def from_bools(self, bits):
        return self.L.from_bools(bits)

    def to_bools(self, v, n):
        return _host(self.L.to_bools(self.whole(v, n), n))

    def to_words(self, v, n):
        return self.L.to_words(self.whole(v, n), n)

    def from_words(self, words, n):
        return self.L.from_words(words, n)

    # ------------------------------------------------------------ base operations
    def get_bit(self, v, i):
        if isinstance(v, Fill):
            return v.bit
        if not isinstance(v, Shard):
            return self.L.get_bit(v, i)
        lay = self.layout(v.n)
        bit = self.L.get_bit(v.v, i - lay.start) if lay.has(i) else 0
        return self._allreduce(int(bit), "max")

    def set_bit(self, v, i, b):
        v = self.materialize(v, v.n) if isinstance(v, Fill) else v
        if not isinstance(v, Shard):
            return self.L.set_bit(v, i, b)
        lay = self.layout(v.n)
        if lay.has(i):
            return Shard(self.L.set_bit(v.v, i - lay.start, b), v.n)
        return v

    def _first(self, v: Shard) -> int:
        """The 1-based global position of the first 1 of a Shard, 0 if none."""
        lay = self.layout(v.n)
        local = self.L.fnd(v.v)
        pos = self._allreduce(lay.start + local if local else _NONE, "min")
        return 0 if pos == _NONE else pos

    def fnd(self, v):
        if isinstance(v, Fill):
            return 1 if v.bit and v.n else 0
        if not isinstance(v, Shard):
            return self.L.fnd(v)
        return self._first(v)

    def step(self, v):
        v = self.materialize(v, v.n) if isinstance(v, Fill) else v
        if not isinstance(v, Shard):
            return self.L.step(v)
        pos = self._first(v)
        lay = self.layout(v.n)
        if pos and lay.has(pos - 1):
            return pos, Shard(self.L.set_bit(v.v, pos - 1 - lay.start, 0), v.n)
        return pos, v

    def numb(self, v):
        if isinstance(v, Fill):
            return v.n if v.bit else 0
        if not isinstance(v, Shard):
            return self.L.numb(v)
        return self._allreduce(int(self.L.numb(v.v)), "sum")

    def some(self, v):
        if isinstance(v, Fill):
            return bool(v.bit and v.n)
        if not isinstance(v, Shard):
            return self.L.some(v)
        return bool(self._allreduce(int(bool(self.L.some(v.v))), "max"))

    def frst(self, v):
        if isinstance(v, Fill):
            if not v.bit or v.n == 0:
                return v
            v = self.materialize(v, v.n)
        if not isinstance(v, Shard):
            return self.L.frst(v)
        pos = self._first(v)
        lay = self.layout(v.n)
        return Shard(self.L.frst(v.v) if pos and lay.has(pos - 1) else self.L.zeros(lay.local_n), v.n)

    def _logic(self, a, b, prim, fills):
        if isinstance(a, Fill) and isinstance(b, Fill):
            return Fill(fills(a.bit, b.bit), a.n)
        for x, y in ((a, b), (b, a)):   # a Fill and a vector: most cases need no form
            if isinstance(x, Fill):
                out = _fill_rule(prim.__name__, x.bit)
                if out == "keep":
                    return y
                if out in (0, 1):
                    return Fill(out, x.n)
                n = y.n if isinstance(y, Shard) else x.n
                return self.not_(y, n)                     # 1 xor y
        la, lb, n = self._pair(a, b)
        out = prim(la, lb)
        return Shard(out, n) if n is not None else out

    def and_(self, a, b):
        return self._logic(a, b, self.L.and_, lambda x, y: x & y)

    def or_(self, a, b):
        return self._logic(a, b, self.L.or_, lambda x, y: x | y)

    def xor(self, a, b):
        return self._logic(a, b, self.L.xor, lambda x, y: x ^ y)

    def not_(self, v, n):
        if isinstance(v, Fill):
            return Fill(1 - v.bit, n)
        if isinstance(v, Shard):
            return Shard(self.L.not_(v.v, self.layout(n).local_n), n)
        return self.L.not_(v, n)

    def equal(self, a, b):
        if isinstance(a, Fill) and isinstance(b, Fill):
            return a.bit == b.bit or a.n == 0
        if isinstance(a, Shard) or isinstance(b, Shard):
            la, lb, _ = self._pair(a, b)
            return bool(self._allreduce(int(bool(self.L.equal(la, lb))), "min"))
        n = a.n if isinstance(a, Fill) else b.n if isinstance(b, Fill) else None
        return self.L.equal(self.whole(a, n), self.whole(b, n))

    def trim(self, v, i, j):
        if isinstance(v, Fill):
            return Fill(v.bit, j - i + 1)
        return self.L.trim(self.whole(v, v.n) if isinstance(v, Shard) else v, i, j)

    def rep(self, w, i, v, m):
        if isinstance(w, Fill):
            w = self.materialize(w, w.n)
        if not isinstance(w, Shard):
            return self.L.rep(w, i, self.whole(v, m), m)
        lay = self.layout(w.n)
        lo, hi = max(i, lay.start), min(i + m, lay.stop)      # the replaced bits held here
        if lo >= hi:
            if isinstance(v, Shard):
                self.whole(v, m)                             # a collective: every rank joins
            return w
        part = self.L.trim(self.whole(v, m), lo - i, hi - 1 - i)
        return Shard(self.L.rep(w.v, lo - lay.start, part, hi - lo), w.n)

    def compare(self, a, b):
        if isinstance(a, Shard) or isinstance(b, Shard):
            la, lb, n = self._pair(a, b)
            lay = self.layout(n)
            d = self.L.fnd(self.L.xor(la, lb))
            key = _NONE
            if d:   # the first differing bit here, and whether a holds the 1 there
                key = 2 * (lay.start + d) + (0 if self.L.get_bit(la, d - 1) else 1)
            key = self._allreduce(key, "min")
            return 0 if key == _NONE else (1 if key % 2 == 0 else -1)
        n = a.n if isinstance(a, Fill) else b.n if isinstance(b, Fill) else None
        return self.L.compare(self.whole(a, n), self.whole(b, n))

    def _arith(self, prim, a, b, n):
        if isinstance(a, Shard) or isinstance(b, Shard):
            out = prim(self.whole(a, n), self.whole(b, n), n)
            return Shard(self.local_part(out, n), n)
        return prim(self.whole(a, n), self.whole(b, n), n)

    def add(self, a, b, n):
        return self._arith(self.L.add, a, b, n)

    def subt(self, a, b, n):
        return self._arith(self.L.subt, a, b, n)

    # ------------------------------------------------------------ tables
    def table(self, n, k, bools=None):
        lay = self.layout(n)
        part = None if bools is None else np.asarray(bools, dtype=bool).reshape(n, k)[lay.start:lay.stop]
        local = self.L.table(lay.local_n, k, part)
        return Table(local.data, n, k, self, aux=local)

    def table_set_words(self, t, words) -> None:
        """t := the k x ⌈n/64⌉ global words ``words`` (a host array); this rank keeps its rows."""
        lay = self.layout(t.n)
        if lay.local_n == 0 or t.k == 0:
            return
        words = _host(words)
        if lay.start % 64 == 0:
            part = words[:, lay.start // 64:(lay.stop + 63) // 64].copy()
            if lay.stop % 64:
                part[:, -1] &= np.uint64((1 << (lay.stop % 64)) - 1)
        else:
            bits = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=1, bitorder="little")
            bits = bits[:, lay.start:lay.stop]
            part = np.zeros((t.k, (lay.local_n + 63) // 64 * 8), dtype=np.uint8)
            packed = np.packbits(bits, axis=1, bitorder="little")
            part[:, :packed.shape[1]] = packed
            part = part.view(np.uint64)
        t.aux.data[...] = self.xp.asarray(part)

    def table_set_ints(self, t, values):
        lay = self.layout(t.n)
        if isinstance(values, RankCodes):      # graph input made per rank: its rows come to it
            self.L.table_set_ints(t.aux, values.local(lay))
            return
        self.L.table_set_ints(t.aux, _host(values).ravel()[lay.start:lay.stop])

    def table_get_ints(self, t):
        local = _host(self.L.table_get_ints(t.aux)).astype(np.uint64)
        self.bytes_moved[0] += 1
        self.bytes_moved[1] += local.nbytes
        return self.xp.asarray(self.comm.allgatherv(local))

    def table_to_bools(self, t):
        local = _host(self.L.table_to_bools(t.aux)).astype(np.uint8)
        self.bytes_moved[0] += 1
        self.bytes_moved[1] += local.nbytes
        return self.comm.allgatherv(local.ravel()).reshape(t.n, t.k).astype(bool)

    def table_copy(self, dst, src):
        self.L.table_copy(dst.aux, src.aux)

    def col_get(self, t, j):
        return Shard(self.L.col_get(t.aux, j), t.n)

    def col_set(self, t, j, v):
        self.L.col_set(t.aux, j, self.local_part(v, t.n))

    def row_get(self, t, i):
        lay = self.layout(t.n)
        owner = lay.owner(i)
        words = np.zeros((t.k + 63) // 64, dtype=np.uint64)
        if owner == self.rank:
            words[:] = _host(self.L.to_words(self.L.row_get(t.aux, i - lay.start), t.k))
        self.bytes_moved[0] += 1
        self.bytes_moved[1] += words.nbytes
        words = self.comm.bcast_array(words, owner)
        return self.L.from_words(self.xp.asarray(words), t.k)

    def row_set(self, t, i, v):
        w = self.whole(v, t.k)
        lay = self.layout(t.n)
        if lay.has(i):
            self.L.row_set(t.aux, i - lay.start, w)

    # ------------------------------------------------------------ the rest of the protocol
    def forall_kernel(self, loop, counts, symbols, timing):
        from .forall import DistributedForall
        return DistributedForall(loop, self, counts, symbols, timing)

    def synchronize(self) -> None:
        self.L.synchronize()

    def placement(self, n: int):
        return self

    # ------------------------------------------------------------ the same program everywhere
    def same_program(self, text: str, filename: str) -> None:
        """Every rank must load the same Star text: compare digests (one all-gather); on a
        difference every rank raises the same error."""
        import hashlib
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        digests = self.comm.allgather(digest)
        if len(set(digests)) > 1:
            from ..errors import StarTypeError
            odd = [r for r, d in enumerate(digests) if d != digests[0]]
            raise StarTypeError(f"the ranks load different program texts: {filename} on rank 0 (sha256 {digests[0]}) "
                                f"differs from rank{'s' if len(odd) > 1 else ''} {', '.join(map(str, odd))} "
                                f"(sha256 {digests[odd[0]]})",
                                hint="every rank of a distributed run must load the same text (the same file "
                                     "on every host)")

    # ------------------------------------------------------------ memory (execution/limits.py)
    def check_table(self, n: int, k: int, table_bytes, free_bytes) -> None:
        """Refuse a table that does not fit in some rank's free memory; every rank takes the
        same decision (one all-reduction), so all raise the same error or none does."""
        need = table_bytes(self.layout(n).local_n, k)
        free = free_bytes(self.L)
        short = 1 if free is not None and need > free else 0
        worst = self._allreduce(short * (self.size - self.rank), "max")   # the lowest rank short of memory
        if worst:
            r = self.size - worst
            info = self.comm.bcast((need, free), root=r)
            where = "GPU memory" if self.L.is_device and self.L.gpu else "memory"
            raise StarRuntimeError(f"table({n}, {k}) needs {info[0]} bytes on rank {r} of {self.size} "
                                   f"(its block of rows) but only {info[1]} bytes of {where} are free there")


def choose_collectives(comm, local: Backend):
    """The array collectives of ranks over ``local`` (collectives.choose): a CuPy rank offers
    its GPU, others none; STARVM_MPI_DEVICE_PATH may ask for a path."""
    from .. import config
    return _choose(comm, cupy_access() if local.is_device and local.gpu else None, config.mpi_device_path())


def _fill_rule(prim: str, bit: int):
    """What `Fill(bit) prim y` is: "keep" (y), a Fill bit, or "not" (not y)."""
    if prim.startswith("and"):
        return "keep" if bit else 0
    if prim.startswith("or"):
        return 1 if bit else "keep"
    return "not" if bit else "keep"
