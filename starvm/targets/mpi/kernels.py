"""Base operations of compiled code on MPI ranks: kernels.py's, plus those that cross ranks.

A compiled routine on a rank of the distributed backend sees what the interpreter's
DistributedBackend holds: a table is ``(this rank's block of rows, global n)``; a **slice**
is ``(this rank's words of it, global n)`` (partition.py's blocks), a **word** the whole
value on every rank (replicated), integers and booleans likewise. So the lengths every check
reads are global and the same on all ranks: a check fails alike everywhere, before any
collective, and every rank stops with the same message (no rank is left waiting).

Slice and word are told apart statically (lower.py here picks an ``mp_*`` kernel where the
operand is a slice): column and slice logic stay targets/numba/kernels.py's (local), and

* SOME, NUMB: the local answer, then MPI_Allreduce (MAX, SUM);
* FND, STEP, FRST: the first local 1 as a global row, MPI_Allreduce MIN; STEP and FRST
  change the owner's words only;
* X(i) of a slice: the owner reads, MPI_Allreduce MAX; X(i) := b: the owner writes;
* `=`, `<>` of slices: local equality, MPI_Allreduce MIN;
* ROW(i, T): the owner reads, MPI_Bcast of ⌈k/64⌉ words; ROW(i, T) := w: the owner writes;
* SET, NOT of a slice: the tail mask of the rank's block; a BITS literal used as a slice
  is cut to the rank's bits (mp_local).
* writeln of a slice or table, CONVERT of a slice: the whole value, MPI_Allgatherv (mp_whole).
* a local table: this rank's block of rows; from 16 MB on, refused when some rank's block
  does not fit its free memory, all ranks agreeing (three all-reductions), as
  DistributedBackend.check_table refuses it (mp_new_table).

The MPI functions are called by name from nopython mode (distributed/jit_comm.py loads the
library and keeps the context: rank, size, alignment, C handles). Step counts are kernels.py's
on every rank: the machine's, not multiplied by the ranks.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import config as numba_config
from numba.core.extending import intrinsic
from numba.cpython.unsafe.numbers import trailing_zeros

from ...distributed import jit_comm
from ...distributed.jit_comm import (CTX_LEN, X_ALIGN, X_COMM, X_INT64, X_MAX, X_MIN, X_NBYTES, X_NCOLL,
                                    X_RANK, X_SHORT, X_SIZE, X_SUM)
from ..numba.kernels import *  # noqa: F401,F403 - generated code finds every kernel here
from ..numba.kernels import POLL_EVERY, flush_output, interrupt_pending  # noqa: F811 - tick, tick_out: their own here
from ..numba.kernels import ALL, U0, U1, asg, cmp_prologue, compare, extract, fail, first_one, nwords, popcount, \
    row_get_check, row_set_check, tail_mask, unassigned
from ..layout import (C_BIT_GET, C_BIT_SET, C_EQ, C_FND, C_FRST, C_NOT, C_NOTEQ, C_NUMB,
                     C_SET, C_SOME, C_STEP, E_BIT_INDEX, E_BIT_VALUE, E_TABLE_MEM,
                     E_TABLE_NEG, S_FREE)
from ..layout import E_INTERRUPT, E_STEPS, S_INTR, S_LEFT

LIBRARY = jit_comm.load()          # libmpi visible to LLVM before anything here is linked
# Numba keys a cached kernel by its bytecode, not by the globals it reads: the handle type
# below (int for MPICH, a pointer for Open MPI) would be taken from another MPI's cache
# entry. The kernels of this module are cached per MPI library (restored at its end).
_NUMBA_CACHE_DIR = numba_config.CACHE_DIR
numba_config.CACHE_DIR = jit_comm.kernel_cache_dir()
_H = types.int32 if jit_comm.handle_size() == 4 else types.int64
_h = np.int32 if jit_comm.handle_size() == 4 else np.int64
_mpi_allreduce = types.ExternalFunction("MPI_Allreduce", types.int32(
    types.voidptr, types.voidptr, types.int32, _H, _H, _H))
_mpi_bcast = types.ExternalFunction("MPI_Bcast", types.int32(types.voidptr, types.int32, _H, types.int32, _H))
_NONE = np.int64(1 << 62)          # "no 1 here" in a MIN reduction of positions


@intrinsic
def _ctx_address(typingctx):
    """The address of jit_comm.CTX (the symbol starvm_mpi_ctx, resolved when linked)."""
    sig = types.CPointer(types.int64)()

    def codegen(context, builder, signature, args):
        mod = builder.module
        try:
            gv = mod.get_global(jit_comm.SYMBOL)
        except KeyError:
            gv = ir.GlobalVariable(mod, ir.ArrayType(ir.IntType(64), CTX_LEN), name=jit_comm.SYMBOL)
            gv.linkage = "external"
        return builder.bitcast(gv, ir.IntType(64).as_pointer())
    return sig, codegen


@njit(cache=True, inline="always")
def ctx():
    return carray(_ctx_address(), CTX_LEN)


@njit(cache=True)
def allreduce(x, which):
    """x reduced over the ranks; which: X_SUM, X_MIN or X_MAX."""
    c = ctx()
    if c[X_SIZE] == 1:
        return np.int64(x)
    buf = np.empty(2, np.int64)
    buf[0] = x
    _mpi_allreduce(buf.ctypes.data, buf[1:].ctypes.data, np.int32(1), _h(c[X_INT64]), _h(c[which]), _h(c[X_COMM]))
    c[X_NCOLL] += 1
    c[X_NBYTES] += 8
    return buf[1]


# ------------------------------------------------------------------ Ctrl-C on every rank
# kernels.tick's poll with the ranks agreeing: every rank steps alike (the same control flow),
# so all reach each POLL_EVERY-th step together and stop there together when Ctrl-C reached any
# of them (mpiexec forwards it to all, or one rank was sent it); one rank stopping alone would
# leave the others waiting in their next collective.
@njit(cache=True)
def mp_interrupted(st):
    """1 where Ctrl-C reached this rank or another one (an all-reduction, not counted as
    the program's collectives), else 0."""
    local = np.int64(1 if interrupt_pending() != 0 or st[S_INTR] != 0 else 0)
    c = ctx()
    if c[X_SIZE] == 1:
        return local
    buf = np.empty(2, np.int64)
    buf[0] = local
    _mpi_allreduce(buf.ctypes.data, buf[1:].ctypes.data, np.int32(1), _h(c[X_INT64]), _h(c[X_MAX]), _h(c[X_COMM]))
    return buf[1]


@njit(cache=True, forceinline=True)
def tick(st, nid):
    left = st[S_LEFT] - 1
    st[S_LEFT] = left
    if left < 0:
        fail(st, nid, E_STEPS, 0, 0, 0, 0)
    if (left & (POLL_EVERY - 1)) == 0:
        if mp_interrupted(st) != 0:
            interrupt_pending()      # mpiexec's copy of the signal to this rank, if it came after the vote: taken
            st[S_INTR] = 1
            fail(st, nid, E_INTERRUPT, 0, 0, 0, 0)


@njit(cache=True, forceinline=True)
def tick_out(st, nid):
    tick(st, nid)
    if (st[S_LEFT] & (POLL_EVERY - 1)) == 0:
        flush_output(st, nid)


@njit(cache=True)
def bcast_words(words, root):
    c = ctx()
    if c[X_SIZE] == 1 or words.shape[0] == 0:
        return
    _mpi_bcast(words.ctypes.data, np.int32(words.shape[0]), _h(c[X_INT64]), np.int32(root), _h(c[X_COMM]))
    c[X_NCOLL] += 1
    c[X_NBYTES] += 8 * words.shape[0]


@njit(cache=True, inline="always")
def block(n):
    """(start, stop, per): this rank's rows [start, stop) of an n-row table or slice, and
    the rows per rank (partition.Layout)."""
    c = ctx()
    align, size, rank = c[X_ALIGN], c[X_SIZE], c[X_RANK]
    units = (n + align - 1) // align
    per = align * ((units + size - 1) // size) if units else np.int64(0)
    return min(n, rank * per), min(n, (rank + 1) * per), per


# ------------------------------------------------------------------ forms
@njit(cache=True)
def mp_vzeros(n):
    """A fresh slice variable of n bits: this rank's words."""
    start, stop, _per = block(n)
    return (np.zeros(nwords(stop - start), np.uint64), np.int64(n))


@njit(cache=True)
def mp_local(x):
    """A whole (replicated) vector used as a slice: this rank's bits of it."""
    if x[1] < 0:
        return x
    start, stop, _per = block(x[1])
    return (extract(x[0], start, stop - start), x[1])


# ------------------------------------------------------------------ slices
@njit(cache=True)
def mp_set(x, cnt, st, nid):
    if x[1] < 0:
        unassigned(st, nid, x[1])
    cnt[C_SET] += 1
    start, stop, _per = block(x[1])
    w = x[0]
    for t in range(w.shape[0]):
        w[t] = ALL
    if w.shape[0]:
        w[w.shape[0] - 1] = tail_mask(stop - start)


@njit(cache=True)
def mp_not(x, cnt, st, nid):
    counted(x, C_NOT, cnt, st, nid)
    start, stop, _per = block(x[1])
    w = x[0]
    out = np.empty(w.shape[0], np.uint64)
    for t in range(w.shape[0]):
        out[t] = ~w[t]
    if w.shape[0]:
        out[w.shape[0] - 1] &= tail_mask(stop - start)
    return (out, x[1])


@njit(cache=True)
def mp_bit_get(x, i, cnt, st, nid):
    n = x[1]
    if not (0 < i <= n):
        if n < 0:
            unassigned(st, nid, n)
        fail(st, nid, E_BIT_INDEX, i, n, 0, 0)
    cnt[C_BIT_GET] += 1
    start, stop, _per = block(n)
    bit = np.int64(0)
    if start <= i - 1 < stop:
        p = i - 1 - start
        bit = np.int64((x[0][p >> 6] >> np.uint64(p & 63)) & U1)
    return allreduce(bit, X_MAX)


@njit(cache=True)
def mp_bit_set(x, i, b, cnt, st, nid):
    n = x[1]
    if not (0 < i <= n):
        if n < 0:
            unassigned(st, nid, n)
        fail(st, nid, E_BIT_INDEX, i, n, 0, 0)
    if b != 0 and b != 1:
        fail(st, nid, E_BIT_VALUE, b, 0, 0, 0)
    cnt[C_BIT_SET] += 1
    start, stop, _per = block(n)
    if start <= i - 1 < stop:
        p = i - 1 - start
        m = U1 << np.uint64(p & 63)
        if b:
            x[0][p >> 6] |= m
        else:
            x[0][p >> 6] &= ~m


@njit(cache=True, inline="always")
def counted(x, op, cnt, st, nid):
    """What every reducing slice kernel does first: count the step, reject an unassigned x."""
    cnt[op] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])


@njit(cache=True, inline="always")
def hinted(w, h):
    """The first nonzero local word at or after the hint h[0] (kernels.op_step_h's: leading
    words known to be 0), the hint moved there; w.shape[0] if none."""
    t = h[0]
    while t < w.shape[0] and w[t] == U0:
        t += 1
    h[0] = t
    return t


@njit(cache=True, inline="always")
def agreed_first(w, t, start):
    """(the global row of the first 1 of all ranks, _NONE if none; this rank's candidate):
    this rank's is in its word t (none where t is out of range), agreed by MPI_Allreduce MIN."""
    mine = _NONE
    if 0 <= t < w.shape[0]:
        mine = np.int64(start + t * 64 + trailing_zeros(w[t]) + 1)
    return allreduce(mine, X_MIN), mine


@njit(cache=True, inline="always")
def step_from(w, t, start):
    """STEP from local word t: the global first 1 found and cleared by its owner."""
    pos, mine = agreed_first(w, t, start)
    if pos == _NONE:
        return np.int64(0)
    if mine == pos:
        w[t] &= w[t] - U1
    return pos


@njit(cache=True)
def mp_fnd(x, cnt, st, nid):
    counted(x, C_FND, cnt, st, nid)
    start, stop, _per = block(x[1])
    pos, _mine = agreed_first(x[0], first_one(x[0]), start)
    return np.int64(0) if pos == _NONE else pos


@njit(cache=True)
def mp_step(x, cnt, st, nid):
    counted(x, C_STEP, cnt, st, nid)
    start, stop, _per = block(x[1])
    return step_from(x[0], first_one(x[0]), start)


@njit(cache=True)
def mp_step_h(x, h, cnt, st, nid):
    """mp_step with kernels.op_step_h's hint."""
    counted(x, C_STEP, cnt, st, nid)
    start, stop, _per = block(x[1])
    return step_from(x[0], hinted(x[0], h), start)


@njit(cache=True)
def mp_numb(x, cnt, st, nid):
    counted(x, C_NUMB, cnt, st, nid)
    s = 0
    w = x[0]
    for t in range(w.shape[0]):
        s += popcount(w[t])
    return allreduce(np.int64(s), X_SUM)


@njit(cache=True)
def mp_some(x, cnt, st, nid):
    counted(x, C_SOME, cnt, st, nid)
    return allreduce(np.int64(first_one(x[0]) >= 0), X_MAX) != 0


@njit(cache=True)
def mp_some_h(x, h, cnt, st, nid):
    """mp_some with the hint of a STEPped slice (kernels.op_some_h)."""
    counted(x, C_SOME, cnt, st, nid)
    return allreduce(np.int64(hinted(x[0], h) < x[0].shape[0]), X_MAX) != 0


@njit(cache=True)
def mp_frst(x, cnt, st, nid):
    counted(x, C_FRST, cnt, st, nid)
    start, stop, _per = block(x[1])
    w = x[0]
    out = np.zeros(w.shape[0], np.uint64)
    t = first_one(w)
    pos, mine = agreed_first(w, t, start)
    if pos != _NONE and mine == pos:
        out[t] = w[t] & (~w[t] + U1)
    return (out, x[1])


@njit(cache=True)
def mp_eq(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_EQ, cnt, st, nid)
    return allreduce(np.int64(compare(a, b) == 0), X_MIN) != 0


@njit(cache=True)
def mp_noteq(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_NOTEQ, cnt, st, nid)
    return allreduce(np.int64(compare(a, b) == 0), X_MIN) == 0


# ------------------------------------------------------------------ rows
@njit(cache=True, inline="always")
def owned_row(i, t, sv, dirty, cnt, st, nid):
    """ROW(i, T) on every rank: the owner reads it (a column whose ``dirty`` flag is set is
    read from ``sv``: the snapshot a `parallel for` keeps, kernels.cow_*), then MPI_Bcast."""
    row_get_check(i, t, cnt, st, nid)
    data = t[0]
    k = data.shape[0]
    out = np.zeros(nwords(k), np.uint64)
    start, stop, per = block(t[1])
    if start <= i - 1 < stop:
        p = i - 1 - start
        w = p >> 6
        sh = np.uint64(p & 63)
        for c in range(k):
            word = sv[c, w] if dirty[c] else data[c, w]
            out[c >> 6] |= ((word >> sh) & U1) << np.uint64(c & 63)
    bcast_words(out, (i - 1) // per)
    return (out, np.int64(k))


_NO_SNAPSHOT = np.zeros((0, 0), np.uint64)


@njit(cache=True)
def mp_row_get(i, t, cnt, st, nid):
    return owned_row(i, t, _NO_SNAPSHOT, np.zeros(t[0].shape[0], np.bool_), cnt, st, nid)


@njit(cache=True)
def mp_cow_row_get(i, t, sv, dirty, cnt, st, nid):
    """ROW(i, T) of a `parallel for`'s snapshot kept by the cow_* kernels (kernels.cow_row_get)."""
    return owned_row(i, t, sv, dirty, cnt, st, nid)


@njit(cache=True)
def mp_row_get_asg(old, i, t, cnt, st, nid, anid):
    return asg(old, mp_row_get(i, t, cnt, st, nid), st, anid)


@njit(cache=True)
def mp_row_set(i, t, v, cnt, st, nid):
    row_set_check(i, t, v, cnt, st, nid)
    data = t[0]
    k = data.shape[0]
    start, stop, _per = block(t[1])
    if start <= i - 1 < stop:
        p = i - 1 - start
        w = p >> 6
        sh = np.uint64(p & 63)
        m = ~(U1 << sh)
        for c in range(k):
            data[c, w] = (data[c, w] & m) | (((v[0][c >> 6] >> np.uint64(c & 63)) & U1) << sh)


# ------------------------------------------------------------------ whole values (output, CONVERT)
_mpi_allgatherv = types.ExternalFunction("MPI_Allgatherv", types.int32(
    types.voidptr, types.int32, _H, types.voidptr, types.voidptr, types.voidptr, _H, _H))


@njit(cache=True)
def gather_words(w, n):
    """The whole n-bit vector whose blocks the ranks hold (w: this rank's words): one
    MPI_Allgatherv of the blocks' words (their sizes follow from the layout, so no rank asks),
    then each block's bits put at its first row."""
    c = ctx()
    size = c[X_SIZE]
    out = np.zeros(nwords(n), np.uint64)
    if size == 1:
        out[:w.shape[0]] = w
        return out
    align = c[X_ALIGN]
    units = (n + align - 1) // align
    per = align * ((units + size - 1) // size) if units else np.int64(0)
    counts = np.empty(size, np.int32)
    displs = np.empty(size, np.int32)
    total = 0
    for r in range(size):
        counts[r] = nwords(min(n, (r + 1) * per) - min(n, r * per))
        displs[r] = total
        total += counts[r]
    recv = np.zeros(max(total, 1), np.uint64)
    _mpi_allgatherv(w.ctypes.data, counts[c[X_RANK]], _h(c[X_INT64]), recv.ctypes.data, counts.ctypes.data,
                    displs.ctypes.data, _h(c[X_INT64]), _h(c[X_COMM]))
    c[X_NCOLL] += 1
    c[X_NBYTES] += 8 * w.shape[0]
    for r in range(size):
        start = min(n, r * per)
        q0, sh = start >> 6, np.uint64(start & 63)
        for t in range(counts[r]):
            word = recv[displs[r] + t]
            out[q0 + t] |= word << sh
            if sh and q0 + t + 1 < out.shape[0]:
                out[q0 + t + 1] |= word >> (np.uint64(64) - sh)
    return out


@njit(cache=True)
def mp_whole(x):
    """A slice as a whole (replicated) vector; an unassigned one as it is (its user reports it)."""
    if x[1] < 0:
        return x
    return (gather_words(x[0], x[1]), x[1])


@njit(cache=True)
def mp_whole_table(t):
    """A table's rows from every rank, column by column (writeln of a table)."""
    data = t[0]
    out = np.zeros((data.shape[0], nwords(t[1])), np.uint64)
    for col in range(data.shape[0]):
        out[col] = gather_words(data[col], t[1])
    return (out, t[1])


# ------------------------------------------------------------------ local tables
@njit(cache=True)
def mp_new_table(n, k, st, nid):
    """kernels.new_table over this rank's rows; the memory check is every rank's block against
    its own free memory, and the lowest rank short of it is named (ctx[X_SHORT]) on all ranks."""
    if n < 0 or k < 0:
        fail(st, nid, E_TABLE_NEG, n, k, 0, 0)
    start, stop, _per = block(n)
    if k * nwords(n) * 8 >= (16 << 20):
        c = ctx()
        need = k * nwords(stop - start) * 8
        worst = allreduce(c[X_SIZE] - c[X_RANK] if need > st[S_FREE] else np.int64(0), X_MAX)
        if worst:
            r = c[X_SIZE] - worst
            mine = c[X_RANK] == r
            need_r = allreduce(need if mine else np.int64(0), X_MAX)
            free_r = allreduce(st[S_FREE] if mine else np.int64(0), X_MAX)
            c[X_SHORT] = r
            fail(st, nid, E_TABLE_MEM, n, k, need_r, free_r)
    return (np.zeros((k, nwords(stop - start)), np.uint64), np.int64(n))


numba_config.CACHE_DIR = _NUMBA_CACHE_DIR      # kernels defined: Numba's cache folder as it was
