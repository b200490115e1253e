"""IOTA, GATHER, SCATTER, GROUPMIN, COMPACT and EXPAND of stdlib/rows.star on the distributed
backend: the rows move between ranks by all-to-all exchanges, each rank's part done with NumPy.

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

A row number out of range on any rank (one all-reduction decides) runs the Star body on
every rank, as on one machine. The local backend must be the NumPy one (the kernels read
its words); on another (CuPy) the Star bodies run. Step counts are the Star bodies' (the
routines around the kernels, native/rows_routines.py, report them).
"""
from __future__ import annotations

import inspect

import numpy as np

from ..native.rows_numpy import _bools_vec, _columns, _vec_bools
from ..native.rows_routines import Unusual, factories
from .backend import DistributedBackend
from .vectors import Fill, Shard


def _values(data: np.ndarray, n: int, rows=slice(None), chunk: int = 1 << 15) -> np.ndarray:
    """The numbers the given rows hold (column 0 the most significant bit; at most 64
    columns), as uint64: what native.rows_numpy._values gives, a block of rows at a time so
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
    """The bits of vector x on this rank's rows, as bools."""
    lay = B.layout(n)
    return _vec_bools(B.local_part(x, n), lay.local_n)


def _row_values(t, rows: np.ndarray) -> np.ndarray:
    """The given local rows of t as numbers, 64 columns at a time: (len(rows), ⌈k/64⌉) uint64."""
    data, n = t.aux.data, t.aux.n
    chunks = [_values(data[lo:min(t.k, lo + 64)], n, rows) for lo in range(0, t.k, 64)]
    return np.stack(chunks, axis=1) if chunks else np.zeros((rows.size, 0), dtype=np.uint64)


def _write_rows(t, rows: np.ndarray, vals: np.ndarray) -> None:
    """Local rows ``rows`` (no repeats) of t := vals (as _row_values gives them), in place."""
    n = t.aux.n
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
        new = _columns(full, hi - lo, n)
        old = t.aux.data[lo:hi]
        old[...] = (old & ~mask) | (new & mask)


def _marked(B, IX, X_v, limit: int):
    """This rank's marked rows of IX (local, ascending), the global rows (0-based) they name,
    and the marked rows on all ranks (one all-reduction of two numbers); Unusual on every rank
    when any rank finds one outside 1..limit."""
    lay = B.layout(IX.n)
    rows = np.flatnonzero(_local_bools(B, X_v, IX.n))
    named = _values(IX.aux.data, lay.local_n, rows).astype(np.int64)
    bad = int(rows.size > 0 and (named.min() < 1 or named.max() > limit))
    B.bytes_moved[0] += 1
    B.bytes_moved[1] += 16
    bad, marked = (int(x) for x in B.comm.allreduce_array(np.array([bad, rows.size], dtype=np.int64), "sum"))
    if bad:
        raise Unusual
    return rows, named - 1, marked


def _by_owner(B, n: int, targets: np.ndarray):
    """A stable order of ``targets`` (global rows of an n-row table) grouped by owning rank,
    and the count going to each rank."""
    lay = B.layout(n)
    owners = targets // lay.per if lay.per else np.zeros_like(targets)
    order = np.argsort(owners, kind="stable")
    counts = np.bincount(owners, minlength=B.size)
    return order, counts


def _answer(T, asked: list[np.ndarray], start: int) -> list[np.ndarray]:
    """The rows each rank asked for (global numbers), read from T's words in one pass."""
    vals = _row_values(T, np.concatenate(asked) - start)
    return [v.ravel() for v in _split(vals, [a.size for a in asked])]


def _split(a: np.ndarray, counts) -> list[np.ndarray]:
    return np.split(a, np.cumsum(counts)[:-1])


def iota(T) -> None:
    B = T.backend
    lay = B.layout(T.n)
    B.L.table_set_ints(T.aux, np.arange(lay.start + 1, lay.stop + 1, dtype=np.uint64))


def _whole_table(T) -> np.ndarray:
    """All of T's rows as numbers on every rank, (T.n, ⌈k/64⌉) uint64 (one all-gather). In
    blocks of whole words and up to 64 columns the columns' words travel (k bits a row, not
    64: BFS-adapt's 1-column frontier table is 64 times smaller) and every rank decodes them."""
    B = T.backend
    B.bytes_moved[0] += 1
    if B.layout(T.n).align % 64 == 0 and 0 < T.k <= 64:
        words = np.ascontiguousarray(T.aux.data.T)          # this rank's words, a row of k per word
        B.bytes_moved[1] += words.nbytes
        every = B.comm.allgatherv(words.ravel()).reshape(-1, T.k).T    # k x ⌈n/64⌉: the global columns
        return _values(np.ascontiguousarray(every), T.n)[:, None]
    mine = _row_values(T, np.arange(T.aux.n))
    B.bytes_moved[1] += mine.nbytes
    return B.comm.allgatherv(mine.ravel()).reshape(T.n, -1)


def decode(IX, X_v, limit: int):
    """((this rank's marked rows of IX, the global rows they name, 0-based), the marked rows
    on all ranks); Unusual on every rank when one names a row outside 1..limit."""
    rows, named, marked = _marked(IX.backend, IX, X_v, limit)
    return (rows, named, marked), marked


def gather(T, IX, X_v, R) -> None:
    gather_apply(T, IX, decode(IX, X_v, T.n)[0], X_v, R)


def scatter(T, IX, X_v, R) -> None:
    scatter_apply(T, IX, decode(IX, X_v, R.n)[0], X_v, R)


def gather_apply(T, IX, plan, X_v, R) -> None:
    B = IX.backend
    rows, src, _ = plan
    if not T.k:
        return
    nc = (T.k + 63) // 64
    if T.n * nc <= 2 * IX.n:
        # a small source (BFS-adapt's frontier column, BORUVKA's vertex labels): every rank
        # takes the whole of it, cheaper than asking for one row per marked row of IX
        _write_rows(R, rows, _whole_table(T)[src])
        return
    order, counts = _by_owner(B, T.n, src)
    asked = B.comm.alltoallv(_split(src[order], counts))                 # rows others need from here
    lay = B.layout(T.n)
    answers = _answer(T, asked, lay.start)
    got = B.comm.alltoallv(answers)                                       # in the order asked
    vals = np.empty((rows.size, nc), dtype=np.uint64)
    vals[order] = np.concatenate(got).reshape(-1, nc) if rows.size else vals
    B.bytes_moved[0] += 2
    B.bytes_moved[1] += 8 * (src.size + sum(a.size for a in answers))
    _write_rows(R, rows, vals)


def scatter_apply(T, IX, plan, X_v, R) -> None:
    B = IX.backend
    rows, dst, marked = plan
    if not T.k:
        return
    lay = B.layout(IX.n)
    nc = (T.k + 63) // 64
    vals = _row_values(T, rows)
    if R.n * (nc + 1) <= marked * (nc + 2):
        return _scatter_reduced(B, R, rows + lay.start, dst, vals)
    order, counts = _by_owner(B, R.n, dst)
    # each message: target row, source row (global), the row's numbers
    msg = np.concatenate([dst[:, None].astype(np.uint64), (rows + lay.start)[:, None].astype(np.uint64), vals], axis=1)
    got = B.comm.alltoallv(_split(msg[order].ravel(), counts * (nc + 2)))
    B.bytes_moved[0] += 1
    B.bytes_moved[1] += msg.nbytes
    recv = np.concatenate(got).reshape(-1, nc + 2)
    if not recv.size:
        return
    # the largest source row wins each target: sort by (target, source), keep each target's last
    o = np.lexsort((recv[:, 1], recv[:, 0]))
    recv = recv[o]
    last = np.ones(recv.shape[0], dtype=bool)
    last[:-1] = recv[1:, 0] != recv[:-1, 0]
    win = recv[last]
    _write_rows(R, win[:, 0].astype(np.int64) - B.layout(R.n).start, win[:, 2:])


def _scatter_reduced(B, R, src, dst, vals) -> None:
    """SCATTER into a small R by two all-reductions over R's rows instead of an all-to-all of
    the marked rows: the largest source row per target (MAX), then its value from the rank
    that holds it (SUM of zeros and the one value)."""
    best = np.full(R.n, -1, dtype=np.int64)
    np.maximum.at(best, dst, src)
    best = B.comm.allreduce_array(best, "max")
    mine = best[dst] == src                        # this rank holds the winner of these targets
    nc = vals.shape[1]
    won = np.zeros((R.n, nc), dtype=np.uint64)
    won[dst[mine]] = vals[mine]
    won = B.comm.allreduce_array(won.ravel(), "sum").reshape(R.n, nc)
    B.bytes_moved[0] += 2
    B.bytes_moved[1] += best.nbytes + won.nbytes
    lay = B.layout(R.n)
    hit = np.flatnonzero(best[lay.start:lay.stop] >= 0)
    _write_rows(R, hit, won[lay.start + hit])


def groupmin(G, K, X_v):
    return groupmin_counted(G, K, X_v)[0]


def groupmin_counted(G, K, X_v):
    """(Z, the groups on all ranks, the 1 bits of their G values): each rank counts the
    groups it decided (those hashed to it), one all-reduction sums them."""
    B = G.backend
    lay = B.layout(G.n)
    rows = np.flatnonzero(_local_bools(B, X_v, G.n))
    g = _values(G.aux.data, lay.local_n, rows)
    key = _values(K.aux.data, lay.local_n, rows)
    glob = (rows + lay.start).astype(np.uint64)
    cand = _group_winners(g, key, glob)                        # (g, key, row) per local group
    dest = (cand[:, 0] % np.uint64(B.size)).astype(np.int64)
    order = np.argsort(dest, kind="stable")
    counts = np.bincount(dest, minlength=B.size)
    got = np.concatenate(B.comm.alltoallv(_split(cand[order].ravel(), counts * 3))).reshape(-1, 3)
    win = _group_winners(got[:, 0], got[:, 1], got[:, 2]) if got.size else got
    wrows = win[:, 2].astype(np.int64)
    order, counts = _by_owner(B, G.n, wrows)
    mine = np.concatenate(B.comm.alltoallv(_split(wrows[order], counts)))
    B.bytes_moved[0] += 2
    B.bytes_moved[1] += cand.nbytes + wrows.nbytes
    z = np.zeros(lay.local_n, dtype=bool)
    z[mine - lay.start] = True
    ones = int(np.unpackbits(np.ascontiguousarray(win[:, 0]).view(np.uint8)).sum()) if win.size else 0
    counts = B.comm.allreduce_array(np.array([win.shape[0], ones], dtype=np.int64), "sum")
    B.bytes_moved[0] += 1
    return Shard(_bools_vec(z), G.n), int(counts[0]), int(counts[1])



def _group_winners(g, key, row) -> np.ndarray:
    """One (g, key, row) per distinct g: the smallest key, then the smallest row."""
    if not len(g):
        return np.zeros((0, 3), dtype=np.uint64)
    order = np.lexsort((row, key, g))
    gs = g[order]
    first = np.ones(gs.size, dtype=bool)
    first[1:] = gs[1:] != gs[:-1]
    pick = order[first]
    return np.stack([g[pick], key[pick], row[pick]], axis=1).astype(np.uint64)


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
    rows = np.flatnonzero(_local_bools(B, X_v, T.n))
    dest = _offset(B, rows.size) + np.arange(rows.size, dtype=np.int64)
    if not T.k:
        return
    nc = (T.k + 63) // 64
    msg = np.concatenate([dest[:, None].astype(np.uint64), _row_values(T, rows)], axis=1)
    order, counts = _by_owner(B, R.n, dest)
    got = np.concatenate(B.comm.alltoallv(_split(msg[order].ravel(), counts * (nc + 1)))).reshape(-1, nc + 1)
    B.bytes_moved[0] += 1
    B.bytes_moved[1] += msg.nbytes
    _write_rows(R, got[:, 0].astype(np.int64) - B.layout(R.n).start, got[:, 1:])


def expand(T, X_v, R, marked: int | None = None) -> None:
    """Row j of T to the j-th marked row of R: every rank asks the owners of the rows of T
    its marked rows take (two all-to-alls, as GATHER)."""
    B = R.backend
    rows = np.flatnonzero(_local_bools(B, X_v, R.n))
    src = _offset(B, rows.size) + np.arange(rows.size, dtype=np.int64)
    if not T.k:
        return
    nc = (T.k + 63) // 64
    order, counts = _by_owner(B, T.n, src)
    asked = B.comm.alltoallv(_split(src[order], counts))
    answers = _answer(T, asked, B.layout(T.n).start)
    got = B.comm.alltoallv(answers)
    vals = np.empty((rows.size, nc), dtype=np.uint64)
    if rows.size:
        vals[order] = np.concatenate(got).reshape(-1, nc)
    B.bytes_moved[0] += 2
    B.bytes_moved[1] += 8 * (src.size + sum(a.size for a in answers))
    _write_rows(R, rows, vals)


def _is_table(t) -> bool:
    return isinstance(getattr(t, "backend", None), DistributedBackend) and isinstance(getattr(t.aux, "data", None), np.ndarray)


def _vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and isinstance(getattr(x, "v", None), (Shard, Fill, int))


def _factories(backend):
    """The registry's factories for one distributed backend: ``numb`` (the marked rows on all
    ranks) is its own. rows_routines.factories and compact_factories take the split kernels
    (decode / apply, the counted GROUPMIN, numb) in their newer form, the whole kernels in the
    older one: either is served."""
    from ..native.compact_routines import compact_factories
    if "decode" in inspect.signature(factories).parameters:
        rows = factories(iota, decode, gather_apply, scatter_apply, groupmin_counted, backend.numb,
                         is_table=_is_table, vec_ok=_vec_ok, nonempty=False, group_bits_max=64)
    else:
        rows = factories(iota, gather, scatter, groupmin, is_table=_is_table, vec_ok=_vec_ok, nonempty=False,
                         group_bits_max=64)
    if "numb" in inspect.signature(compact_factories).parameters:
        moves = compact_factories(compact, expand, backend.numb, is_table=_is_table, vec_ok=_vec_ok, nonempty=False)
    else:
        moves = compact_factories(compact, expand, is_table=_is_table, vec_ok=_vec_ok, nonempty=False)
    return dict(zip(("iota", "gather", "scatter", "groupmin", "compact", "expand"), (*rows, *moves)))


def _registered(name: str):
    def make(star_body, backend, meter):
        return _factories(backend)[name](star_body, backend, meter)
    return make


make_iota, make_gather, make_scatter, make_groupmin, make_compact, make_expand = (
    _registered(n) for n in ("iota", "gather", "scatter", "groupmin", "compact", "expand"))


def register() -> None:
    """Put these kernels (and WARSHALL-adapt's, warshall.py) in the native registry for the
    distributed backend over NumPy."""
    from .. import native
    for name in ("iota", "gather", "scatter", "groupmin", "compact", "expand"):
        native._REGISTRY[(name, "mpi:numpy")] = f"starvm.distributed.rows:make_{name}"
    native._REGISTRY[("warshall_adapt", "mpi:numpy")] = "starvm.distributed.warshall:make"
