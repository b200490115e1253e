"""IOTA, GATHER, SCATTER, GROUPMIN, COMPACT and EXPAND of stdlib/rows.star on the distributed
backend: the rows move between ranks by all-to-all exchanges; each rank's own part (which rows
are marked, the numbers rows hold, writing rows) runs where its tables live, through the
local backend's ``LocalRows`` (device_rows.py): NumPy on NumPy ranks (``HostRows`` below),
CuPy array operations and the row kernels of native/shared/cuda_rows.py on CuPy ranks, NumPy in device style on the
emulated device (so CI runs the device code). Only what must cross ranks (the asked row
numbers, the answered rows, counts) leaves a device: the all-to-alls stage through the host
(there is no device all-to-all), the all-gathers and all-reductions of arrays take the rank's
array collectives (NCCL, CUDA-aware MPI or host staging: collectives.py).

  GATHER   every rank sends, to the owner of each source row its marked rows name, the
           row numbers it needs; the owners answer with the rows (as 64-bit numbers, 64
           columns at a time); two all-to-alls. A source table of at most 2 x IX's rows
           numbers (BFS-adapt's frontier, BORUVKA's labels) is all-gathered instead;
  SCATTER  every rank sends each marked row with its source row number to the owner of its
           target row; the owner keeps, per target, the largest source row (the Star body's
           last write); one all-to-all. Into a small R (R's rows x (words + 1) at most the
           marked rows x (words + 2)) two all-reductions over R's rows instead: the largest
           source row per target (MAX), then its value from the rank holding it (SUM);
  GROUPMIN every rank reduces its marked rows to one candidate per G value (smallest K, then
           first row), sends it to the rank that G value hashes to (G mod P), which keeps the
           winner and sends it to the owner of its row; two all-to-alls;
  COMPACT  the marked rows' new places come from an exclusive prefix sum of the ranks' counts
           (an all-gather of one integer); each row goes to the owner of its place (one all-to-all);
  EXPAND   the same places, the rows asked for as in GATHER (two all-to-alls);
  IOTA     local: each rank writes the numbers of its own rows.

Sorting is by stable argsorts only (no lexsort, no ufunc.at), so the same code runs on NumPy
and CuPy arrays. A rank alone exchanges nothing: its arrays stay where they are.

A row number out of range on any rank (one all-reduction decides) runs the Star body on
every rank, as on one machine. Step counts are the Star bodies' (each routine's guard,
native/<routine>/__init__.py, reports them around these kernels).
"""
from __future__ import annotations

import numpy as np

from ..native import compact as compact_routine
from ..native import expand as expand_routine
from ..native import gather as gather_routine
from ..native import groupmin as groupmin_routine
from ..native import iota as iota_routine
from ..native import scatter as scatter_routine
from ..native.guard import Storage, Unusual
from ..native.shared.numpy_rows import bools_vec, columns, vec_bools
from .backend import DistributedBackend
from .device_rows import LocalRows, local_rows, stable_argsort
from .staging import ROUTINES as NAMES
from .staging import allgatherv, allreduce, counts_by_rank, exchange
from .vectors import Fill, Shard


def _values(data: np.ndarray, n: int, rows=slice(None), chunk: int = 1 << 15) -> np.ndarray:
    """The numbers the given rows hold (column 0 the most significant bit; at most 64
    columns), as uint64: what native/shared/numpy_rows.values gives, a block of rows at a time so
    that the unpacked bits stay in cache, in 32-bit lanes up to 32 columns (2-5x faster: the
    decoding of the index tables was 3/4 of BFS-adapt's time on 2 ranks)."""
    k = data.shape[0]
    out = np.zeros(n, dtype=np.uint64)
    if k == 0 or n == 0:
        return out[rows]
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(k, -1)
    acc = np.empty(min(chunk, n), dtype=np.uint32 if k <= 32 else np.uint64)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        bits = np.unpackbits(raw[:, lo // 8:(hi + 7) // 8], axis=1, count=hi - lo, bitorder="little")
        a = acc[:hi - lo]
        a[...] = bits[0]
        for c in range(1, k):
            a <<= 1
            a |= bits[c]
        out[lo:hi] = a
    return out[rows]


def _local_bools(B: DistributedBackend, x, n: int) -> np.ndarray:
    """The bits of vector x on this rank's rows, as bools (NumPy ranks)."""
    lay = B.layout(n)
    return vec_bools(B.local_part(x, n), lay.local_n)


class HostRows(LocalRows):
    """The local primitives of NumPy ranks (vectors are Python ints): byte-wise unpacking
    (_values) instead of LocalRows' word shifts."""

    def __init__(self):
        super().__init__(np)

    def host(self, a) -> np.ndarray:
        return a

    def is_vector(self, v) -> bool:
        return isinstance(v, int)

    def marked(self, B, x, n: int) -> np.ndarray:
        return np.flatnonzero(_local_bools(B, x, n))

    def values(self, data, n: int, rows=None) -> np.ndarray:
        return _values(data, n, slice(None) if rows is None else rows)

    def write_rows(self, t, rows: np.ndarray, vals: np.ndarray) -> None:
        n = t.n
        if not rows.size or not t.k:
            return
        hit = np.zeros(n, dtype=bool)
        hit[rows] = True
        mask = np.zeros((1, (n + 63) // 64 * 8), dtype=np.uint8)
        packed = np.packbits(hit, bitorder="little")
        mask[0, :packed.size] = packed
        mask = mask.view(np.uint64)
        for c, lo in enumerate(range(0, t.k, 64)):
            hi = min(t.k, lo + 64)
            full = np.zeros(n, dtype=np.uint64)
            full[rows] = vals[:, c]
            new = columns(full, hi - lo, n)
            old = t.data[lo:hi]
            old[...] = (old & ~mask) | (new & mask)

    def largest_source(self, n: int, dst: np.ndarray, src: np.ndarray) -> np.ndarray:
        best = np.full(n, -1, dtype=np.int64)
        np.maximum.at(best, dst, src)              # no sort: one pass
        return best

    def slice_of(self, B, z: np.ndarray, n: int) -> Shard:
        return Shard(bools_vec(z), n)


def _ops(B) -> LocalRows:
    """The local primitives of B's ranks, made once per backend."""
    ops = getattr(B, "_local_rows", None)
    if ops is None:
        ops = B._local_rows = local_rows(B.L) if B.L.is_device else HostRows()
    return ops


# ------------------------------------------------------------ the kernels
def _row_values(t, ops: LocalRows, rows):
    """The given local rows of t as numbers, 64 columns at a time: (len(rows), ⌈k/64⌉) uint64."""
    xp = ops.xp
    data, n = t.aux.data, t.aux.n
    chunks = [ops.values(data[lo:min(t.k, lo + 64)], n, rows) for lo in range(0, t.k, 64)]
    return xp.stack(chunks, axis=1) if chunks else xp.zeros((int(rows.size), 0), dtype=xp.uint64)


def _marked(B, IX, X_v, limit: int):
    """This rank's marked rows of IX (local, ascending), the global rows (0-based) they name,
    and the marked rows on all ranks (one all-reduction of two numbers); Unusual on every rank
    when any rank finds one outside 1..limit."""
    ops = _ops(B)
    lay = B.layout(IX.n)
    rows = ops.marked(B, X_v, IX.n)
    named = ops.values(IX.aux.data, lay.local_n, rows).astype(ops.xp.int64)
    bad = int(bool(((named < 1) | (named > limit)).any())) if rows.size else 0
    B.bytes_moved[0] += 1
    B.bytes_moved[1] += 16
    bad, marked = (int(x) for x in B.comm.allreduce_array(np.array([bad, int(rows.size)], dtype=np.int64), "sum"))
    if bad:
        raise Unusual
    return rows, named - 1, marked


def _by_owner(B, ops: LocalRows, n: int, targets):
    """A stable order of ``targets`` (global rows of an n-row table) grouped by owning rank,
    and the count going to each rank (host ints)."""
    xp = ops.xp
    if B.size == 1:
        return xp.arange(int(targets.size)), [int(targets.size)]
    lay = B.layout(n)
    owners = targets // lay.per if lay.per else xp.zeros_like(targets)
    return stable_argsort(xp, owners), counts_by_rank(ops, owners, B.size)


def iota(T) -> None:
    B = T.backend
    lay = B.layout(T.n)
    xp = _ops(B).xp
    B.L.table_set_ints(T.aux, xp.arange(lay.start + 1, lay.stop + 1, dtype=xp.uint64))


def _whole_table(T, ops: LocalRows):
    """All of T's rows as numbers on every rank, (T.n, ⌈k/64⌉) uint64 (one all-gather). In
    blocks of whole words and up to 64 columns the columns' words travel (k bits a row, not
    64: BFS-adapt's 1-column frontier table is 64 times smaller) and every rank decodes them."""
    B, xp = T.backend, ops.xp
    B.bytes_moved[0] += 1
    if B.layout(T.n).align % 64 == 0 and 0 < T.k <= 64:
        words = xp.ascontiguousarray(T.aux.data.T)          # this rank's words, a row of k per word
        B.bytes_moved[1] += words.nbytes
        every = allgatherv(B, ops, words.ravel()).reshape(-1, T.k).T    # k x ⌈n/64⌉: the global columns
        return ops.values(xp.ascontiguousarray(every), T.n)[:, None]
    mine = _row_values(T, ops, xp.arange(T.aux.n))
    B.bytes_moved[1] += mine.nbytes
    return allgatherv(B, ops, mine.ravel()).reshape(T.n, -1)


def decode(IX, X_v, limit: int):
    """((this rank's marked rows of IX, the global rows they name, 0-based), the marked rows
    on all ranks); Unusual on every rank when one names a row outside 1..limit."""
    rows, named, marked = _marked(IX.backend, IX, X_v, limit)
    return (rows, named, marked), marked


def gather(T, IX, X_v, R) -> None:
    gather_apply(T, IX, decode(IX, X_v, T.n)[0], X_v, R)


def scatter(T, IX, X_v, R) -> None:
    scatter_apply(T, IX, decode(IX, X_v, R.n)[0], X_v, R)


def _fetch_rows(B, ops: LocalRows, T, src):
    """T's global rows ``src`` (0-based), asked of their owners: the row numbers go to the
    owners, the rows come back (two all-to-alls); (len(src), ⌈k/64⌉) uint64 in src's order."""
    xp = ops.xp
    nc = (T.k + 63) // 64
    order, counts = _by_owner(B, ops, T.n, src)
    asked, came = exchange(B, ops, src[order], counts)                 # rows others need from here
    answers = _row_values(T, ops, asked - B.layout(T.n).start)
    got, _ = exchange(B, ops, answers, came)                            # in the order asked
    vals = xp.empty((int(src.size), nc), dtype=xp.uint64)
    if src.size:
        vals[order] = got.reshape(-1, nc)
    B.bytes_moved[0] += 2
    B.bytes_moved[1] += 8 * (int(src.size) + int(answers.size))
    return vals


def gather_apply(T, IX, plan, X_v, R) -> None:
    B = IX.backend
    ops = _ops(B)
    rows, src, _ = plan
    if not T.k:
        return
    nc = (T.k + 63) // 64
    if T.n * nc <= 2 * IX.n:
        # a small source (BFS-adapt's frontier column, BORUVKA's vertex labels): every rank
        # takes the whole of it, cheaper than asking for one row per marked row of IX
        ops.write_rows(R.aux, rows, _whole_table(T, ops)[src])
        return
    ops.write_rows(R.aux, rows, _fetch_rows(B, ops, T, src))


def scatter_apply(T, IX, plan, X_v, R) -> None:
    B = IX.backend
    ops, xp = _ops(B), _ops(B).xp
    rows, dst, marked = plan
    if not T.k:
        return
    lay = B.layout(IX.n)
    nc = (T.k + 63) // 64
    vals = _row_values(T, ops, rows)
    src = rows + lay.start
    if R.n * (nc + 1) <= marked * (nc + 2):
        return _scatter_reduced(B, ops, R, src, dst, vals)
    order, counts = _by_owner(B, ops, R.n, dst)
    # each message: target row, source row (global), the row's numbers
    msg = xp.concatenate([dst[:, None].astype(xp.uint64), src[:, None].astype(xp.uint64), vals], axis=1)
    recv, _ = exchange(B, ops, msg[order], counts)
    B.bytes_moved[0] += 1
    B.bytes_moved[1] += msg.nbytes
    if not recv.shape[0]:
        return
    # the largest source row wins each target: sort by (target, source), keep each target's last
    o = stable_argsort(xp, recv[:, 1])
    o = o[stable_argsort(xp, recv[o, 0])]
    recv = recv[o]
    last = xp.ones(recv.shape[0], dtype=bool)
    last[:-1] = recv[1:, 0] != recv[:-1, 0]
    win = recv[last]
    ops.write_rows(R.aux, win[:, 0].astype(xp.int64) - B.layout(R.n).start, win[:, 2:])


def _scatter_reduced(B, ops: LocalRows, R, src, dst, vals) -> None:
    """SCATTER into a small R by two all-reductions over R's rows instead of an all-to-all of
    the marked rows: the largest source row per target (MAX), then its value from the rank
    that holds it (SUM of zeros and the one value)."""
    xp = ops.xp
    best = allreduce(B, ops, ops.largest_source(R.n, dst, src), "max")
    mine = best[dst] == src                        # this rank holds the winner of these targets
    nc = vals.shape[1]
    won = xp.zeros((R.n, nc), dtype=xp.uint64)
    won[dst[mine]] = vals[mine]
    won = allreduce(B, ops, won.ravel(), "sum").reshape(R.n, nc)
    B.bytes_moved[0] += 2
    B.bytes_moved[1] += best.nbytes + won.nbytes
    lay = B.layout(R.n)
    hit = xp.flatnonzero(best[lay.start:lay.stop] >= 0)
    ops.write_rows(R.aux, hit, won[lay.start + hit])


def groupmin(G, K, X_v):
    return groupmin_counted(G, K, X_v)[0]


def groupmin_counted(G, K, X_v):
    """(Z, the groups on all ranks, the 1 bits of their G values): each rank counts the
    groups it decided (those hashed to it), one all-reduction sums them."""
    B = G.backend
    ops, xp = _ops(B), _ops(B).xp
    lay = B.layout(G.n)
    rows = ops.marked(B, X_v, G.n)
    g = ops.values(G.aux.data, lay.local_n, rows)
    key = ops.values(K.aux.data, lay.local_n, rows)
    glob = (rows + lay.start).astype(xp.uint64)
    cand = _group_winners(xp, g, key, glob)                      # (g, key, row) per local group
    dest = (cand[:, 0] % np.uint64(B.size)).astype(xp.int64)
    order = stable_argsort(xp, dest)
    got, _ = exchange(B, ops, cand[order], counts_by_rank(ops, dest, B.size))
    win = _group_winners(xp, got[:, 0], got[:, 1], got[:, 2]) if got.shape[0] else got
    wrows = win[:, 2].astype(xp.int64)
    order, counts = _by_owner(B, ops, G.n, wrows)
    mine, _ = exchange(B, ops, wrows[order], counts)
    B.bytes_moved[0] += 2
    B.bytes_moved[1] += cand.nbytes + wrows.nbytes
    z = xp.zeros(lay.local_n, dtype=bool)
    z[mine - lay.start] = True
    ones = int(np.unpackbits(np.ascontiguousarray(ops.host(win[:, 0])).view(np.uint8)).sum()) if win.shape[0] else 0
    counts = B.comm.allreduce_array(np.array([win.shape[0], ones], dtype=np.int64), "sum")
    B.bytes_moved[0] += 1
    return ops.slice_of(B, z, G.n), int(counts[0]), int(counts[1])


def _group_winners(xp, g, key, row):
    """One (g, key, row) per distinct g: the smallest key, then the smallest row (stable
    sorts by row, key, g: a lexsort on either module)."""
    if not len(g):
        return xp.zeros((0, 3), dtype=xp.uint64)
    order = stable_argsort(xp, row)
    order = order[stable_argsort(xp, key[order])]
    order = order[stable_argsort(xp, g[order])]
    gs = g[order]
    first = xp.ones(gs.size, dtype=bool)
    first[1:] = gs[1:] != gs[:-1]
    pick = order[first]
    return xp.stack([g[pick], key[pick], row[pick]], axis=1).astype(xp.uint64)


def _offset(B, count: int) -> int:
    """The marked rows on the ranks before this one (an exclusive prefix sum)."""
    counts = B.comm.allgather(int(count))
    B.bytes_moved[0] += 1
    return sum(counts[:B.rank])


def compact(T, X_v, R, marked: int | None = None) -> None:
    """The j-th marked row of T (in global order) to row j of R: every rank sends its marked
    rows to the owners of their new places (one all-to-all). R may be T: all rows are read
    before any is written."""
    B = T.backend
    ops, xp = _ops(B), _ops(B).xp
    rows = ops.marked(B, X_v, T.n)
    dest = _offset(B, int(rows.size)) + xp.arange(int(rows.size), dtype=xp.int64)
    if not T.k:
        return
    msg = xp.concatenate([dest[:, None].astype(xp.uint64), _row_values(T, ops, rows)], axis=1)
    order, counts = _by_owner(B, ops, R.n, dest)
    got, _ = exchange(B, ops, msg[order], counts)
    B.bytes_moved[0] += 1
    B.bytes_moved[1] += msg.nbytes
    ops.write_rows(R.aux, got[:, 0].astype(xp.int64) - B.layout(R.n).start, got[:, 1:])


def expand(T, X_v, R, marked: int | None = None) -> None:
    """Row j of T to the j-th marked row of R: every rank asks the owners of the rows of T
    its marked rows take (two all-to-alls, as GATHER)."""
    B = R.backend
    ops, xp = _ops(B), _ops(B).xp
    rows = ops.marked(B, X_v, R.n)
    src = _offset(B, int(rows.size)) + xp.arange(int(rows.size), dtype=xp.int64)
    if not T.k:
        return
    ops.write_rows(R.aux, rows, _fetch_rows(B, ops, T, src))


def _factories(backend):
    """The registry's factories for one distributed backend: ``numb`` (the marked rows on all
    ranks) is its own; a table or vector is taken when it is stored as its local backend stores
    them."""
    ops = _ops(backend)

    def is_table(t) -> bool:
        return isinstance(getattr(t, "backend", None), DistributedBackend) \
            and isinstance(getattr(t.aux, "data", None), ops.xp.ndarray)

    def vec_ok(x, n: int) -> bool:
        v = getattr(x, "v", None)
        return getattr(x, "n", -1) == n and (isinstance(v, (Shard, Fill)) or ops.is_vector(v))

    storage = Storage(is_table, vec_ok, nonempty=False)
    return {"iota": iota_routine.routine(iota, storage),
            "gather": gather_routine.routine(decode, gather_apply, storage),
            "scatter": scatter_routine.routine(decode, scatter_apply, storage),
            "groupmin": groupmin_routine.routine(groupmin_counted, backend.numb, storage, group_bits_max=64),
            "compact": compact_routine.routine(compact, backend.numb, storage),
            "expand": expand_routine.routine(expand, backend.numb, storage)}


def _registered(name: str):
    def make(star_body, backend, meter):
        return _factories(backend)[name](star_body, backend, meter)
    return make


make_iota, make_gather, make_scatter, make_groupmin, make_compact, make_expand = (_registered(n) for n in NAMES)

