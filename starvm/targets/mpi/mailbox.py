"""Collectives for a kernel that keeps running: the host half of in-kernel collectives on GPU ranks.

A GPU-tier kernel on one rank of several (docs/scale.md, "Compiled code on GPU ranks") reaches
a cross-rank step (SOME, NUMB, FND, STEP, FRST, a slice's bit, `=` of slices, ROW(i, T), a
slice made whole) with its grid-wide local answer in hand. It cannot call MPI or NCCL, and a
cooperative grid that holds every SM cannot wait for another kernel; so one thread posts the
request in a *mailbox* of page-locked host memory the kernel maps, and a host thread of the
rank, this module's ``serve``, answers it with MPI while the kernel spins on the answer (the
grid waits at its barrier, registers and all, as for its own reductions). The server is
Numba code without the GIL (``nogil``): no Python runs per collective.

The protocol (int64 slots; the kernel is block 0's thread 0, after the grid's reduction):

  kernel  writes the payload (M_OP, M_VALUE, M_FLAGS, M_ROOT, M_COUNT, words at M_PAYLOAD),
          then stores request number q in M_REQ with release order (``__threadfence_system``
          then a volatile store, on a GPU);
  server  sees M_REQ = q (acquire load), runs the collective, writes the answer (M_VALUE,
          M_FLAGS, the payload's words), then stores q in M_DONE with release order;
  kernel  spins until M_DONE = q (acquire / volatile loads), reads the answer, and passes it
          to the grid at the barrier it waits at anyway.

Every rank's kernel runs the same control flow (the program's scalars are replicated), so all
post the same requests in the same order and the MPI calls match. Each scalar answer carries
the OR of the ranks' interrupt flags (M_FLAGS: Ctrl-C seen by this rank's kernel), so that all
kernels stop at the same collective. The host ends ``serve`` by storing 1 in M_STOP after the
kernel has ended. Operations:

  OP_SUM, OP_MIN, OP_MAX  M_VALUE reduced over the ranks (NUMB; FND/STEP/FRST's first global
  OP_OR                   row, `=`; SOME, a slice's word), with M_FLAGS' OR: one MPI_Allreduce
                          of two int64 (OP_OR: MPI_BOR, the word's bits);
  OP_BCAST                M_COUNT words of the payload from rank M_ROOT (ROW(i, T)'s owner);
  OP_GATHER               the payload's words of this rank's block of an M_VALUE-bit slice in,
                          the whole slice's words out (writeln, CONVERT; MPI_Allgatherv).

A broadcast or a whole slice past the payload's room runs no collective: M_COUNT answers minus
the words it needs (the same on every rank: the room and the lengths are).

The kernel's side is targets/cuda/ranks.cu's ``rk_post`` (the GPU tier's kernels on CuPy
ranks, jit/cuda_ranks.py, which runs a ``Server`` around each launch); ``post`` is the same as
Numba code, which tests/distributed/test_mailbox.py runs in a thread of each rank against NumPy
over 1-3 ranks (tests/distributed/test_gpu_ranks.py runs the CUDA side on the emulated device).
"""
from __future__ import annotations

import threading
import time

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic

from ...distributed import jit_comm
from ...distributed.jit_comm import X_BOR, X_COMM, X_INT64, X_MAX, X_MIN, X_NBYTES, X_NCOLL, X_SIZE, X_SUM
from .kernels import _h, _mpi_allreduce, bcast_words, ctx, gather_words

from ..mailbox_layout import (M_COUNT, M_DONE, M_FLAGS, M_OP, M_PAYLOAD, M_READY, M_REQ, M_ROOT,  # noqa: F401
                             M_SERVED, M_STOP, M_VALUE, OP_BCAST, OP_GATHER, OP_MAX, OP_MIN, OP_OR, OP_SUM)

_sched_yield = types.ExternalFunction("sched_yield", types.int32())


@intrinsic
def load_acquire(typingctx, arr, idx):
    """arr[idx] (int64) read with acquire order: never hoisted out of a spin loop."""
    sig = types.int64(arr, idx)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, [args[1]])
        return builder.load_atomic(ptr, "acquire", 8)
    return sig, codegen


@intrinsic
def store_release(typingctx, arr, idx, value):
    """arr[idx] := value (int64) with release order: what was written before is seen first."""
    sig = types.void(arr, idx, value)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, [args[1]])
        builder.store_atomic(args[2], ptr, "release", 8)
        return context.get_dummy_value()
    return sig, codegen


@njit(cache=True)
def _reduce2(value, flag, op):
    """(value reduced by op, OR of flag) over the ranks: one MPI_Allreduce of two int64 (the
    flag rides as -flag under MIN, as itself under SUM, MAX and OR)."""
    c = ctx()
    buf = np.empty(4, np.int64)
    buf[0] = value
    buf[1] = -flag if op == OP_MIN else flag
    if c[X_SIZE] == 1:
        return value, flag
    which = X_SUM if op == OP_SUM else X_MIN if op == OP_MIN else X_BOR if op == OP_OR else X_MAX
    _mpi_allreduce(buf.ctypes.data, buf[2:].ctypes.data, np.int32(2), _h(c[X_INT64]), _h(c[which]), _h(c[X_COMM]))
    c[X_NCOLL] += 1
    c[X_NBYTES] += 16
    flags = -buf[3] if op == OP_MIN else buf[3]
    return buf[2], np.int64(1 if flags != 0 else 0)


@njit(cache=True, nogil=True)
def serve(mb):
    """Answer the kernel's requests in ``mb`` until M_STOP is set (the host's thread)."""
    store_release(mb, M_READY, np.int64(1))      # serving, without the GIL (Server.__enter__ waits for it)
    done = mb[M_DONE]
    spins = 0
    while True:
        q = load_acquire(mb, M_REQ)
        if q == done:
            if load_acquire(mb, M_STOP) != 0:
                return
            spins += 1
            if spins > 8:             # ranks may outnumber the cores: give the kernel's thread its turn
                _sched_yield()
            continue
        spins = 0
        op = mb[M_OP]
        need = mb[M_COUNT] if op == OP_BCAST else (mb[M_VALUE] + 63) >> 6 if op == OP_GATHER else 0
        if need > mb.shape[0] - M_PAYLOAD:
            mb[M_COUNT] = -need           # past the payload's room, alike on every rank: no collective
        elif op == OP_BCAST or op == OP_GATHER:
            words = np.empty(mb[M_COUNT], np.uint64)
            for t in range(words.shape[0]):
                words[t] = np.uint64(mb[M_PAYLOAD + t])
            if op == OP_BCAST:
                bcast_words(words, mb[M_ROOT])
            else:
                words = gather_words(words, mb[M_VALUE])
            for t in range(words.shape[0]):
                mb[M_PAYLOAD + t] = np.int64(words[t])
            mb[M_COUNT] = words.shape[0]
        else:
            mb[M_VALUE], mb[M_FLAGS] = _reduce2(mb[M_VALUE], mb[M_FLAGS], op)
        mb[M_SERVED] += 1
        done = q
        store_release(mb, M_DONE, q)


@njit(cache=True, nogil=True)
def post(mb, op, value, flag, root, words):
    """The kernel's side of one request (block 0's thread 0 of a GPU-tier kernel; here the
    reference the CUDA side follows and what the tests run): returns (value, flags), the
    answer's words (a broadcast row, a gathered slice) left in the payload. Words past the
    payload's room are not sent: M_COUNT answers minus the words needed, on every rank alike
    (the GPU tier's kernel then stops for the host to run the call: E_RERUN)."""
    mb[M_OP], mb[M_VALUE], mb[M_FLAGS], mb[M_ROOT], mb[M_COUNT] = op, value, flag, root, words.shape[0]
    room = mb.shape[0] - M_PAYLOAD
    for t in range(min(words.shape[0], room)):
        mb[M_PAYLOAD + t] = np.int64(words[t])
    q = mb[M_REQ] + 1
    store_release(mb, M_REQ, q)
    spins = 0
    while load_acquire(mb, M_DONE) != q:
        spins += 1
        if spins > 8:
            _sched_yield()
    return mb[M_VALUE], mb[M_FLAGS]


@njit(cache=True)
def _stop(mb):
    store_release(mb, M_STOP, np.int64(1))


def mailbox(payload_words: int) -> np.ndarray:
    """A mailbox with room for ``payload_words`` words of payload (host memory; on a GPU rank,
    page-locked memory the kernel maps: cupy.cuda.alloc_pinned_memory, whose address the
    kernel uses as it is under unified addressing, as the Ctrl-C word does)."""
    return np.zeros(M_PAYLOAD + max(payload_words, 1), np.int64)


class Server:
    """``with server:`` a thread serving ``mb`` for a kernel of ``backend``'s rank (a
    DistributedBackend) while the block runs; the collectives it ran are counted in the
    backend's --profile figures. The thread outlives the block, waiting (without spinning) for
    the next one: one server serves every launch of a routine (starting a thread each launch
    took 0.5 ms on a busy 2-core host, beside a launch's tens of µs); ``close`` ends it."""

    def __init__(self, mb: np.ndarray, backend):
        self.mb, self.backend = mb, backend
        self.thread = None
        self._go = threading.Event()        # a block began: serve
        self._idle = threading.Event()      # serve returned
        self._quit = False

    def _loop(self) -> None:
        while True:
            self._go.wait()
            self._go.clear()
            if self._quit:
                return
            try:
                serve(self.mb)
            finally:
                self._idle.set()

    def __enter__(self):
        jit_comm.load()
        jit_comm.prepare(self.backend)
        self.mb[M_REQ] = self.mb[M_DONE] = self.mb[M_STOP] = self.mb[M_SERVED] = self.mb[M_READY] = 0
        if self.thread is None:
            self.thread = threading.Thread(target=self._loop, name="starvm-mailbox", daemon=True)
            self.thread.start()
        self._idle.clear()
        self._go.set()
        # until the thread is inside ``serve`` (no GIL needed from there): the host's wait for the
        # kernel spins in Python at first (cuda_runtime.GpuRoutine.wait), holding the GIL, and a
        # server still on its way in would answer the first post a switch interval (5 ms) late
        while self.mb[M_READY] == 0:
            time.sleep(0)
        return self

    def __exit__(self, *exc):
        _stop(self.mb)
        self._idle.wait()
        jit_comm.account(self.backend)
        return False

    def close(self) -> None:
        """End the thread (between blocks)."""
        if self.thread is not None:
            self._quit = True
            self._go.set()
            self.thread.join()
            self.thread = None

    @property
    def served(self) -> int:
        return int(self.mb[M_SERVED])


__all__ = ["mailbox", "serve", "post", "Server", "load_acquire", "store_release",
           "OP_SUM", "OP_MIN", "OP_MAX", "OP_BCAST", "OP_GATHER", "OP_OR"]
