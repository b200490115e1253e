"""The GPU tier on CuPy ranks of the distributed backend (docs/scale.md, "Compiled code on GPU
ranks"): a routine or main-block part runs as one kernel over the rank's rows on every rank,
its cross-rank steps posted to the host while it runs (targets/cuda/ranks.py, the kernel's side;
targets/mpi/mailbox.py, the host's).

``RankGpuRoutine`` is the GPU tier's ``GpuRoutine`` with the rank's forms of its arguments and
results: a table is the rank's block of rows (``Table.aux`` of the distributed backend) with its
global n, a slice the rank's words of it (``Shard``), a word whole on every rank; a launch's
shape comes from the largest block (rank 0's), so every rank builds and launches the same
instance but for its #defines (its rank); the mailbox is page-locked host memory beside the
Ctrl-C word, served by ``mailbox.Server`` (Numba without the GIL, MPI by symbol) around each
launch. Every rank must take the same path for every call, or the ranks' collectives would not
meet: what depends on a rank alone is agreed (that a routine compiled, that a new shape built,
that an earlier run compiled it, room for more output records), and a launch refused on one
rank stops the run (an internal error: MPI_Abort, distributed/launch.py) rather than leaving
the others waiting in their kernels.
"""
from __future__ import annotations

import contextlib
from collections import namedtuple

import numpy as np

from ..distributed.partition import layout
from ..execution.values import Table, Unassigned
from ..targets.mailbox_layout import M_PAYLOAD
from ..types import T
from .call import _Decline
from .cuda_runtime import GpuRoutine, _TooLarge, _pow2, _SLICE, _TABLE, _WORD

# a table as the rank's kernel takes it: its block's words, the global n, the columns
Block = namedtuple("Block", "data n k")


def agree_compiled_before(tier, before: set) -> None:
    """After the GPU tier's install for the ranks' kernels (cuda_tier.install_gpu, ranks=True;
    ``before``: the routines the tier had): the ranks agree which of the new ones an earlier run
    compiled (auto compiles those at their first call), so that every rank compiles alike."""
    made = [r for p, r in tier.routines.items() if p not in before and isinstance(r, RankGpuRoutine)]
    if made:
        from . import background
        mine = [bool(background.compiled_before(r)) for r in made]
        every = tier.context.backend.comm.allgather(mine)
        for i, r in enumerate(made):
            r._compiled_before = all(m[i] for m in every)


def unavailable(backend) -> str | None:
    """Why a distributed backend's ranks cannot run the GPU tier's kernels (None: they can), the
    same answer on every rank (one all-gather: a rank refusing alone would leave the others
    waiting in their kernels)."""
    why = _local_reason(backend) or ""
    whys = backend.comm.allgather(why)
    bad = [(r, w) for r, w in enumerate(whys) if w]
    if not bad:
        return None
    rank, why = bad[0]
    return why if all(w == why for _r, w in bad) and len(bad) == len(whys) else f"on rank {rank}: {why}"


def _local_reason(backend) -> str | None:
    L = backend.L
    if not (L.gpu and L.is_device) or L.mixed:
        return f"the ranks' {L.name} backend keeps tables where the GPU tier's kernels do not run"
    if backend.align % 64:
        return (f"blocks of {backend.align} rows split words between ranks (the GPU tier's rank kernels "
                "take blocks of whole words)")
    peers = shared_gpu(backend)
    if len(peers) > 1:
        return (f"ranks {', '.join(map(str, peers))} share one GPU: a rank's kernel (a grid that may hold every "
                "SM) would wait in its collectives for another's, which cannot start; the ranks' kernels need a "
                "GPU each (CUDA_VISIBLE_DEVICES, one rank per GPU)")
    try:
        from ..distributed import jit_comm
        jit_comm.load()
    except Exception as e:  # noqa: BLE001 - no mpi4py or no libmpi: the mailbox's host cannot call MPI
        return f"the kernels' collectives cannot call MPI here: {e}"
    return None


def shared_gpu(backend) -> tuple:
    """The ranks (this one among them) on this rank's GPU where it shares one (collectives.py)."""
    return tuple(getattr(backend.coll, "gpu_peers", ()) or ())


class RankGpuRoutine(GpuRoutine):
    """A GPU-tier routine on one rank of several: the same kernel on every rank, each over its rows."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.mailbox = None          # int64 words of page-locked host memory (mailbox_layout)
        self.agreed_shapes = set()   # (slice words, word words) whose kernels every rank built
        self.served = 0              # posts the host answered, all calls
        self.server = None           # mailbox.Server of the mailbox (its thread kept between launches)

    @property
    def backend(self):
        return self.tier.context.backend

    def rank_defines(self):
        B = self.backend
        return (B.rank, B.size, B.align)

    # ------------------------------------------------------------------ agreeing
    def agree(self, mine: str) -> list:
        """Every rank's ``mine`` ('' where all went well), in rank order (one all-gather)."""
        return self.backend.comm.allgather(mine)

    def compile(self, converted) -> bool:
        ok = super().compile(converted)
        whys = self.agree("" if ok else (self.why or "not compiled"))
        failed = [(r, why) for r, why in enumerate(whys) if why]
        if failed and (ok or len({w for _r, w in failed}) > 1 or len(failed) < len(whys)):
            # not every rank declined alike: none runs it compiled from now on, alike
            rank, why = failed[0]
            self.state, self.why = "failed", f"on rank {rank}: {why}"
        return not failed

    def kernel_for(self, caps: int, kw: int):
        """The kernel for this shape; built on every rank, or on none (a shape new to this
        routine is agreed once)."""
        if (caps, kw) in self.agreed_shapes:
            return super().kernel_for(caps, kw)
        got, err = None, None
        try:
            got = super().kernel_for(caps, kw)
        except Exception as e:  # noqa: BLE001 - agreed below, then raised alike on every rank
            err = e
        whys = self.agree("" if err is None else f"{'too large' if isinstance(err, _TooLarge) else 'error'}|"
                                                 f"{type(err).__name__}: {err}")
        bad = [(r, why) for r, why in enumerate(whys) if why]
        if not bad:
            self.agreed_shapes.add((caps, kw))
            return got
        rank, why = bad[0]
        _kind, _, text = why.partition("|")
        if all(w.startswith("too large|") for _r, w in bad):
            raise _TooLarge(text if err is None else str(err))
        raise RuntimeError(f"on rank {rank}: {text}")

    def more_output(self, need: int) -> bool:
        """Room for more output records on every rank, and the same room: a kernel stops for
        more room where its records pass it (E_RERUN), which must happen on every rank alike."""
        ok = super().more_output(need)
        sizes = self.backend.comm.allgather(self.ob_words if ok else 0)
        if min(sizes) == 0:
            return False
        self.ob_words = min(sizes)
        self._buffers = None
        return True

    def launch_failed(self, e: Exception) -> None:
        # the other ranks' kernels run, waiting for this one's posts: no rank may go on alone
        raise RuntimeError(f"the GPU tier's launch of {self.display} failed on rank {self.backend.rank} of "
                           f"{self.backend.size} (the others' kernels wait for it): {type(e).__name__}: {e}")

    # ------------------------------------------------------------------ the rank's forms
    def to_native(self, value, type_, memo):
        import cupy as cp
        B = self.backend
        if type_ is T.TABLE:
            if not isinstance(value, Table) or value.backend is not B or value.aux is None:
                raise _Decline
            data = value.aux.data
            if not isinstance(data, cp.ndarray) or not data.flags.c_contiguous:
                raise _Decline
            return Block(data, value.n, value.k)
        if type_.is_vector:
            if isinstance(value, Unassigned):
                return (None, -1 - self.unit.name_id(value.name))
            n = value.n
            v = B.local_part(value.v, n) if type_ is T.SLICE else B.whole(value.v, n)
            if isinstance(v, cp.ndarray) and v.dtype == cp.uint64 and v.flags.c_contiguous:
                return (v, n)        # the kernel only reads it: no copy (to_words makes one)
            words = B.L.to_words(v, B.layout(n).local_n if type_ is T.SLICE else n)
            if not isinstance(words, cp.ndarray):
                words = cp.asarray(np.ascontiguousarray(words, dtype=np.uint64))
            return (words, n)
        return super().to_native(value, type_, memo)

    def shape(self, converted):
        """(slice words, word words) every rank's kernel holds: its slices' words from the
        largest block (rank 0's), so that all build and launch the same shape."""
        B = self.backend
        largest = lambda n: (layout(n, B.size, 0, B.align).largest() + 63) // 64 if n > 0 else 0  # noqa: E731
        caps, kbits = 1, max(1, self.plan.literal_bits)
        as_word = self.plan.slice_as_word
        for kind, value in zip(self.kinds, converted):
            if kind is _TABLE:
                caps = max(caps, largest(value.n))
                kbits = max(kbits, value.k, value.n if as_word else 0)
            elif kind is _SLICE:
                caps = max(caps, largest(value[1]))
                if as_word:
                    kbits = max(kbits, value[1])
            elif kind is _WORD:
                kbits = max(kbits, value[1])
        return max(caps, self.min_caps), max(_pow2((kbits + 63) // 64), self.min_kw)

    def out_words(self, type_, n: int) -> int:
        if type_ is T.SLICE:
            return (self.backend.layout(n).local_n + 63) // 64
        return (n + 63) // 64

    def device_vector(self, words, n: int, type_):
        from ..distributed.vectors import Shard
        return Shard(words, n) if type_ is T.SLICE else words

    # ------------------------------------------------------------------ the mailbox
    def kernel_args(self, converted, io, ob, scr, vcap: int, left: int, vout, intr: int = 0,
                    base: int = 0, graph=()) -> tuple:
        kargs = list(super().kernel_args(converted, io, ob, scr, vcap, left, vout, intr, base, graph))
        # (its payload holds a word of the kernel, vcap >= KW: a row broadcast, a slice all-gathered)
        kargs.insert(len(kargs) - 8, np.uint64(self.mailbox_words(vcap).ctypes.data))
        return tuple(kargs)

    def mailbox_words(self, payload: int) -> np.ndarray:
        import cupy as cp
        size = M_PAYLOAD + max(payload, 1)
        if self.mailbox is None or self.mailbox.size < size:
            if self.server is not None:      # its thread serves the mailbox before: ended
                self.server.close()
                self.server = None
            try:
                mem = cp.cuda.alloc_pinned_memory(size * 8)
                self.mailbox = np.frombuffer(mem, np.int64, size)     # (keeps ``mem`` alive)
            except Exception as e:  # noqa: BLE001 - the kernel reads it through unified addressing: it must be pinned
                raise RuntimeError(f"no page-locked host memory for the GPU tier's mailbox on rank "
                                   f"{self.backend.rank}: {e}") from e
            self.mailbox[:] = 0
        return self.mailbox

    def serving(self):
        if self.plan.barrier_free:       # no grid reduction, no post (routine.py: marks): nothing to serve
            return contextlib.nullcontext()
        if self.server is None:          # one server (its thread waiting between launches) for every launch
            from ..targets.mpi.mailbox import Server
            self.server = Server(self.mailbox, self.backend)
        return _Served(self, self.server)

    def report_lines(self) -> list[str]:
        lines = super().report_lines()
        if self.state == "compiled" and self.compiled_calls:
            lines.append(f"    on rank {self.backend.rank} of {self.backend.size}: {self.served} cross-rank step(s) "
                         "posted from its kernels")
        return lines


class _Served:
    """``Server`` around a launch, its posts counted for --profile."""

    def __init__(self, routine, server):
        self.routine, self.server = routine, server

    def __enter__(self):
        self.server.__enter__()
        return self

    def __exit__(self, *exc):
        self.server.__exit__(*exc)
        self.routine.served += self.server.served
        return False


__all__ = ["RankGpuRoutine", "agree_compiled_before", "unavailable", "Block"]
