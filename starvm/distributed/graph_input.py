"""Graph input on the ranks of a distributed run: each rank generates or reads a share of the
graph and keeps only the rows of GRAPH_EDGES' tables (L, R, W) it holds; no rank builds the
whole arc list. The graph is the one a single process makes from the same spec or file, arc
for arc, in the same order (tests/distributed check it).

  R-MAT (--generate rmat:...)  rank r draws samples [m·r/P, m·(r+1)/P) of the m = ef·2^scale
        samples: the same NumPy stream as graphs.rmat, jumped to its place (PCG64.advance: one
        64-bit draw per uniform, ``scale`` blocks of m). Self-loops go; the pairs (the smaller vertex
        first when undirected) are made distinct and sorted across the ranks by a sample
        sort: each rank one range of pair keys, rank order the global order, as
        graphs.generators.unique_pairs gives it. The weights follow the samples in the stream
        (jumped to as well); bounded integers are drawn in pairs from one 64-bit draw with
        rejections, so the stream cannot be entered in the middle: a rank draws the weights up
        to its last pair (the last rank all of them, 8 bytes each: the one part not divided).
  edge lists (--graph FILE, 'U V [W]')  rank r parses bytes [size·r/P, size·(r+1)/P), moved to
        line starts; the ranks agree on the fields per line, the smallest vertex number (0-
        or 1-based) and the largest (n). Arcs keep their file order.

Then every arc goes to the rank holding its row of the m-row tables (one all-to-all, when a
table is filled: the table's layout decides). An undirected R-MAT graph has both arcs of every
edge (its undirected reading is itself); a directed list read undirected gets the reverse
arcs it lacks by a sort of the arcs by edge across the ranks (``RankGraph.undirected``). What
this does not cover is read or generated whole on every rank, as before (``rank_graph``
returns None): other generators and formats, files the vectorised reader finds unusual (the
line reader then names the bad line). GRAPH_ADJ builds each rank's rows alone
(``fill_adjacency``: the arcs go to the owners of their sources).

Before any of this the ranks compare a digest of their graph input (``same_input``: the
sha256 of the file's bytes, or the generator spec, with the format and weight mode), as
they compare the program text: a stale copy of the file on one host stops every rank with
one error instead of a run on two different graphs.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat

import numpy as np

from ..errors import GraphFileError
from ..graphs.generators import _KINDS, RMAT_BYTES_PER_SAMPLE


class RankCodes:
    """One column of the arc list (sources, targets or weights): this rank's share, as
    (global positions, values). ``local(lay)`` gives the values of the rows [lay.start,
    lay.stop) of a table laid out by ``lay`` (a collective: an all-to-all between the ranks)."""

    def __init__(self, graph: "RankGraph", column: int):
        self.graph, self.column = graph, column

    @property
    def size(self) -> int:
        return self.graph.m

    def local(self, lay) -> np.ndarray:
        return self.graph.rows_for(lay)[:, self.column]

    def whole(self) -> np.ndarray:
        """Every value, in arc order, on every rank (an all-gather)."""
        return self.graph.whole_arcs()[:, self.column]

    # what computes with the whole columns (a Graph's users) gets them gathered
    def __array__(self, dtype=None, copy=None):
        a = self.whole()
        return a.astype(dtype) if dtype is not None else a

    def __sub__(self, other):
        return self.whole() - other

    def __len__(self) -> int:
        return self.graph.m


class RankGraph:
    """A graph of which this rank holds a share of the arcs: ``arcs`` (k, 4) int64 rows
    (position, source, target, weight), positions 0..m-1 in arc order."""

    def __init__(self, comm, n: int, m: int, arcs: np.ndarray, *, name: str, directed: bool, both_ways: bool,
                 meta: dict | None = None):
        self.comm = comm
        self.n, self.m = int(n), int(m)
        self.arcs = arcs
        self.name, self.directed, self.both_ways = name, directed, both_ways
        self.meta = meta or {}
        top = int(arcs[:, 3].max()) if len(arcs) else 0
        self.max_weight = int(comm.allreduce(top, "max"))
        self.src, self.dst, self.weight = (RankCodes(self, c) for c in (1, 2, 3))
        self._rows: dict = {}

    @property
    def vbits(self) -> int:
        return max(1, int(self.n).bit_length())

    @property
    def wbits(self) -> int:
        return max(1, self.max_weight.bit_length())

    def rows_for(self, lay) -> np.ndarray:
        """(source, target, weight ...) columns 1..3 of the arcs at rows [lay.start, lay.stop),
        as (rows, 4) int64: every arc sent to the rank that holds its row (one all-to-all)."""
        key = (lay.start, lay.stop, lay.per)
        if key not in self._rows:
            pos = self.arcs[:, 0]
            owner = pos // lay.per if lay.per else np.zeros_like(pos)
            order = np.argsort(owner, kind="stable")
            counts = np.bincount(owner, minlength=self.comm.size)
            parts = np.split(self.arcs[order].ravel(), np.cumsum(counts * 4)[:-1])
            got = np.concatenate(self.comm.alltoallv(parts)).reshape(-1, 4)
            got = got[np.argsort(got[:, 0], kind="stable")]
            assert got.shape[0] == lay.local_n and (got[:, 0] == np.arange(lay.start, lay.stop)).all()
            self._rows = {key: got}
        return self._rows[key]

    def adjacency_rows(self, lay) -> np.ndarray:
        """GRAPH_ADJ's rows [lay.start, lay.stop) as packed words, n columns x ⌈rows/64⌉:
        every arc goes to the rank holding its source's row (one all-to-all), which sets the
        bits (graphs.star.adjacency_words on its rows alone)."""
        src = self.arcs[:, 1] - 1
        owner = src // lay.per if lay.per else np.zeros_like(src)
        order = np.argsort(owner, kind="stable")
        counts = np.bincount(owner, minlength=self.comm.size)
        pairs = np.stack([src, self.arcs[:, 2] - 1], axis=1)[order]
        got = np.concatenate(self.comm.alltoallv(np.split(pairs.ravel(), np.cumsum(counts * 2)[:-1]))).reshape(-1, 2)
        rows = lay.local_n
        words = (rows + 63) // 64
        out = np.zeros((self.n, words), dtype=np.uint64)
        if len(got) and words:
            pos = np.unique(got[:, 1] * (words * 64) + (got[:, 0] - lay.start))   # repeated arcs: one bit
            word = pos >> 6
            bit = np.left_shift(np.uint64(1), (pos & 63).astype(np.uint64))
            starts = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])
            out.reshape(-1)[word[starts]] = np.bitwise_or.reduceat(bit, starts)
        return out

    def fill_adjacency(self, P) -> None:
        """GRAPH_ADJ(P) on the distributed backend: each rank builds and keeps its rows."""
        B = P.backend
        words = self.adjacency_rows(B.layout(P.n))
        if P.aux.data.size:
            P.aux.data[...] = B.xp.asarray(words).reshape(P.aux.data.shape)

    def whole_arcs(self) -> np.ndarray:
        """All arcs in order on every rank, (m, 4) (an all-gather)."""
        every = self.comm.allgatherv(np.ascontiguousarray(self.arcs).ravel()).reshape(-1, 4)
        return every[np.argsort(every[:, 0], kind="stable")]

    def whole(self):
        """The Graph a single process holds (an all-gather)."""
        from ..graphs.graph import Graph
        a = self.whole_arcs()
        return Graph(self.n, a[:, 1], a[:, 2], a[:, 3], name=self.name, directed=self.directed, meta=self.meta)

    def undirected(self):
        """The undirected reading (Graph.undirected, arc for arc): itself when it has both arcs
        of every edge already (an undirected R-MAT graph); else the arcs as given, then the
        reverse arcs the list lacks, per edge and weight, in the order of (smaller vertex,
        larger vertex, weight): the arcs are sorted by their edge across the ranks (a sample
        sort on smaller·(n+1) + larger; each edge's arcs meet on one rank), each rank counts its
        edges' arcs each way and adds the missing ones after all the given arcs."""
        if self.both_ways:
            return self
        if self.n >= 1 << 31:          # smaller·(n+1) + larger would not fit 64 bits
            return from_whole(self.comm, self.whole().undirected())
        comm, n = self.comm, self.n + 1                 # vertex numbers 1..n: digits of base n + 1
        a = self.arcs[self.arcs[:, 1] != self.arcs[:, 2]]
        lo, hi = np.minimum(a[:, 1], a[:, 2]), np.maximum(a[:, 1], a[:, 2])
        rows = np.stack([lo * n + hi, a[:, 3], (a[:, 1] < a[:, 2]).astype(np.int64)], axis=1)
        rows = _by_key_range(comm, rows)
        added = np.zeros((0, 3), dtype=np.int64)
        if len(rows):
            rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))]
            new = np.r_[True, (rows[1:, 0] != rows[:-1, 0]) | (rows[1:, 1] != rows[:-1, 1])]
            start = np.flatnonzero(new)
            forward = np.add.reduceat(rows[:, 2], start)
            missing = 2 * forward - np.diff(np.r_[start, len(rows)])   # > 0: reverse arcs lacking
            key, w = rows[start, 0], rows[start, 1]
            g_lo, g_hi = key // n, key % n
            count = np.abs(missing)
            src = np.where(missing > 0, g_hi, g_lo)
            dst = np.where(missing > 0, g_lo, g_hi)
            added = np.stack([np.repeat(src, count), np.repeat(dst, count), np.repeat(w, count)], axis=1)
        counts = comm.allgather(int(len(added)))
        total = sum(counts)
        if total == 0:                 # every edge has its arcs both ways already: the same list
            return RankGraph(comm, self.n, self.m, self.arcs, name=self.name, directed=False, both_ways=True,
                             meta=self.meta)
        off = self.m + sum(counts[:comm.rank])
        arcs = np.concatenate([self.arcs, np.concatenate([np.arange(off, off + len(added))[:, None], added], axis=1)])
        return RankGraph(comm, self.n, self.m + total, arcs.astype(np.int64), name=self.name, directed=False,
                         both_ways=True, meta=self.meta)

    def read_as(self, directed: bool):
        return self if directed else self.undirected()

    def __repr__(self) -> str:
        return f"RankGraph({self.name}: n={self.n}, m={self.m} arcs, {len(self.arcs)} here, rank {self.comm.rank})"


def from_whole(comm, g) -> RankGraph:
    """A RankGraph of a whole Graph every rank holds (each keeps its positions' share)."""
    lo, hi = g.m * comm.rank // comm.size, g.m * (comm.rank + 1) // comm.size
    arcs = np.stack([np.arange(lo, hi), g.src[lo:hi], g.dst[lo:hi], g.weight[lo:hi]], axis=1).astype(np.int64)
    return RankGraph(comm, g.n, g.m, arcs, name=g.name, directed=g.directed, both_ways=False, meta=g.meta)


# ------------------------------------------------------------------ R-MAT
def _advanced(seed: int, draws: int) -> np.random.Generator:
    """graphs.rmat's generator after ``draws`` 64-bit draws."""
    bits = np.random.default_rng(seed).bit_generator
    bits.advance(draws)
    return np.random.Generator(bits)


def rank_rmat(comm, scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
              d: float | None = None, seed: int = 0, *, wmax: int = 100, directed: bool = False) -> RankGraph:
    """This rank's share of graphs.rmat(scale, ...) (the same arguments, the same graph)."""
    d = 1 - a - b - c if d is None else d
    if scale < 0 or edge_factor < 0 or min(a, b, c, d) < 0 or abs(a + b + c + d - 1) > 1e-9 or wmax < 1:
        raise ValueError("rmat needs scale >= 0, edge_factor >= 0, a, b, c, d >= 0 summing to 1, wmax >= 1")
    P, r = comm.size, comm.rank
    n, m = 1 << scale, edge_factor << scale
    lo, hi = m * r // P, m * (r + 1) // P
    from ..input_files import available_memory
    free = available_memory()
    short = int(free is not None and RMAT_BYTES_PER_SAMPLE * (hi - lo) > free)
    if comm.allreduce(short, "max"):   # every rank takes the same decision: graphs.rmat then says why
        raise ValueError(f"rmat scale={scale} does not fit the ranks' memory")
    u = np.zeros(hi - lo, dtype=np.int64)
    v = np.zeros(hi - lo, dtype=np.int64)
    for bit in range(scale):          # the quadrant rule of graphs.generators._rmat_keys_numpy
        x = _advanced(seed, bit * m + lo).random(hi - lo)
        down = x >= a + b
        right = (x >= a) ^ down ^ (x >= a + b + c)
        u |= down.astype(np.int64) << bit
        v |= right.astype(np.int64) << bit
    keep = u != v
    u, v = u[keep], v[keep]
    if not directed:
        u, v = np.minimum(u, v), np.maximum(u, v)
    keys = _sorted_distinct(comm, u * max(n, 1) + v)
    counts = comm.allgather(int(keys.size))
    off, pairs = sum(counts[:r]), sum(counts)
    w = _advanced(seed, scale * m).integers(1, wmax + 1, size=off + keys.size, dtype=np.int64)[off:]
    src, dst = keys // max(n, 1) + 1, keys % max(n, 1) + 1
    pos = np.arange(off, off + keys.size, dtype=np.int64)
    arcs = np.stack([pos, src, dst, w], axis=1)
    if not directed:                   # both arcs of every edge: the reverse ones after all the others
        arcs = np.concatenate([arcs, np.stack([pos + pairs, dst, src, w], axis=1)])
    meta = dict(scale=scale, edge_factor=edge_factor, a=a, b=b, c=c, d=d, seed=seed)
    return RankGraph(comm, n, pairs if directed else 2 * pairs, arcs, name=f"rmat-{scale}-{edge_factor}-{seed}",
                     directed=directed, both_ways=not directed, meta=meta)


def _sorted_distinct(comm, keys: np.ndarray) -> np.ndarray:
    """This rank's range of the distinct keys of all ranks, ranges in rank order (a sample
    sort: R-MAT's pairs crowd the low vertex numbers, so ranges of keys, not of vertices, are
    split evenly: every rank offers 64 evenly spaced keys, the P - 1 splitters are the
    quantiles of all of them, one all-to-all)."""
    keys = np.unique(keys)
    P = comm.size
    picks = keys[np.linspace(0, keys.size - 1, min(64, keys.size)).astype(np.int64)] if keys.size else keys
    offered = np.sort(comm.allgatherv(picks.astype(np.int64)))
    splitters = offered[(np.arange(1, P) * offered.size) // P] if offered.size else np.zeros(P - 1, dtype=np.int64)
    dest = np.searchsorted(splitters, keys, side="right")          # keys are sorted: so is dest
    parts = np.split(keys, np.cumsum(np.bincount(dest, minlength=P))[:-1])
    return np.unique(np.concatenate(comm.alltoallv(parts)))


def _by_key_range(comm, rows: np.ndarray) -> np.ndarray:
    """Rows (int64, column 0 the key) moved so that each rank holds one range of keys, the
    ranges in rank order and every key on one rank (a sample sort's exchange, as
    _sorted_distinct)."""
    P = comm.size
    keys = np.sort(rows[:, 0])
    picks = keys[np.linspace(0, keys.size - 1, min(64, keys.size)).astype(np.int64)] if keys.size else keys
    offered = np.sort(comm.allgatherv(picks.astype(np.int64)))
    splitters = offered[(np.arange(1, P) * offered.size) // P] if offered.size else np.zeros(P - 1, dtype=np.int64)
    dest = np.searchsorted(splitters, rows[:, 0], side="right")
    order = np.argsort(dest, kind="stable")
    parts = np.split(rows[order].ravel(), np.cumsum(np.bincount(dest, minlength=P) * rows.shape[1])[:-1])
    return np.concatenate(comm.alltoallv(parts)).reshape(-1, rows.shape[1])


def _rmat_arguments(spec: str) -> dict | None:
    """The keyword arguments of an rmat spec, or None for another generator (or a bad spec:
    graphs.generate then says what is wrong)."""
    kind, _, rest = spec.partition(":")
    if kind.strip().lower() != "rmat":
        return None
    try:
        generate_check = _KINDS["rmat"][1]
        kw = {}
        for item in filter(None, (x.strip() for x in rest.split(","))):
            key, _, val = item.partition("=")
            key = key.strip().lower()
            typ = generate_check[key]
            value = (val.strip().lower() in ("1", "true", "yes")) if typ is bool else typ(val)
            kw["edge_factor" if key == "ef" else key] = value
        return kw
    except (KeyError, ValueError):
        return None


# ------------------------------------------------------------------ edge lists
def _chunk(data: bytes, rank: int, size: int) -> bytes:
    """Rank's share of the lines of ``data``: bytes [len·r/P, len·(r+1)/P), each end moved to
    the start of a line."""
    def line_start(at: int) -> int:
        if at <= 0:
            return 0
        if at >= len(data):
            return len(data)
        nl = data.rfind(b"\n", 0, at)
        if nl == at - 1:
            return at
        nxt = data.find(b"\n", at)
        return len(data) if nxt < 0 else nxt + 1
    return data[line_start(len(data) * rank // size):line_start(len(data) * (rank + 1) // size)]


def _parse(chunk: bytes):
    """The (lines, 2 or 3) numbers of a chunk of an edge list, or None where the vectorised
    reader would not take it (then every rank reads the file whole: the line reader's errors)."""
    from ..graphs.fast_io import numbers
    chunk = re.sub(rb"[#%][^\n]*", b"", chunk).replace(b",", b" ")
    fields = next((len(line.split()) for line in chunk.split(b"\n") if line.split()), 0)
    if fields == 0:
        return np.zeros((0, 0), dtype=np.int64)
    if fields not in (2, 3):
        return None
    return numbers(chunk, fields)


def rank_edgelist(comm, path, name: str, weights: str = "auto") -> RankGraph | None:
    """This rank's share of an edge list file, or None on every rank when the file is not of
    the usual shape somewhere (graphs.load then reads it whole, or names its bad line).
    ``weights``: the weight mode (graphs/weights.py); integers are read as such by every mode
    but ignore (every weight 1) and scale (the whole read converts them)."""
    try:                               # (a rank that cannot read it says so through the all-gather)
        from ..input_files import read_input
        if weights.startswith("scale"):
            raise OSError("scale: converted by the whole read")
        data = read_input(path, expansion=8)
        data.decode("utf-8")
        table = _parse(_chunk(data, comm.rank, comm.size))
    except (OSError, UnicodeDecodeError):
        table = None
    facts = comm.allgather(None if table is None else
                           (table.shape[1], len(table), int(table[:, :2].min()) if len(table) else None,
                            int(table[:, :2].max()) if len(table) else None))
    if any(f is None for f in facts) or len({f[0] for f in facts if f[1]}) > 1:
        return None
    lows = [f[2] for f in facts if f[1]]
    if not lows:
        return RankGraph(comm, 0, 0, np.zeros((0, 4), dtype=np.int64), name=name, directed=True, both_ways=False)
    base = 0 if min(lows) == 0 else 1
    n = max(f[3] for f in facts if f[1]) + 1 - base
    if n >= (1 << 62) - 1:             # the whole read names the line
        return None
    off, m = sum(f[1] for f in facts[:comm.rank]), sum(f[1] for f in facts)
    k = len(table)
    w = table[:, 2] if k and table.shape[1] == 3 and weights != "ignore" else np.ones(k, dtype=np.int64)
    arcs = np.stack([np.arange(off, off + k), table[:, 0] + 1 - base if k else w[:0],
                     table[:, 1] + 1 - base if k else w[:0], w], axis=1).astype(np.int64)
    return RankGraph(comm, n, m, arcs, name=name, directed=True, both_ways=False)


# ------------------------------------------------------------------ the same input everywhere
def input_digest(generate_spec: str | None, path: str | None, fmt: str | None, weights: str | None) -> str:
    """What a rank's graph input is, in 16 hex digits (sha256): of the generator spec, or of
    the file's bytes (read in blocks, never held whole), with the format and weight mode. A
    file that cannot be read, or is not a regular file, is named by that instead."""
    h = hashlib.sha256(f"{fmt or ''}|{weights or ''}|".encode())
    if generate_spec:
        h.update(b"generate:" + generate_spec.strip().lower().encode())
    elif path:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return "not a regular file"
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        except OSError as e:
            return f"unreadable ({e.strerror or e})"
    return h.hexdigest()[:16]


def same_input(comm, generate_spec, path, fmt, weights) -> None:
    """Every rank must have the same graph input: compare digests (one all-gather); on a
    difference every rank raises the same GraphFileError."""
    digests = comm.allgather(input_digest(generate_spec, path, fmt, weights))
    if len(set(digests)) == 1:
        return
    odd = [r for r, d in enumerate(digests) if d != digests[0]]
    what = path if path else f"--generate {generate_spec}"
    raise GraphFileError(f"the ranks read different graph inputs: on rank 0 {digests[0]}, on rank"
                         f"{'s' if len(odd) > 1 else ''} {', '.join(map(str, odd))} {digests[odd[0]]} "
                         "(sha256 of the file; every rank of a distributed run must read the same file: "
                         "copy it to every host again)", what)


# ------------------------------------------------------------------ the command line
def rank_graph(comm, generate_spec: str | None, path: str | None, fmt: str | None, weights: str | None = None):
    """This rank's share of the graph of --generate SPEC or --graph FILE, or None where the
    graph is to be made whole on every rank (graphs/cli.py's graph_from_args). ``comm``: an
    mpi4py communicator or one of comm.py's. First the ranks check that they have the same
    input (``same_input``)."""
    from .comm import wrap
    comm = wrap(comm)
    if comm.size == 1:
        return None
    if generate_spec or path:
        same_input(comm, generate_spec, path, fmt, weights)
    if generate_spec:
        kw = _rmat_arguments(generate_spec)
        if kw is None:
            return None
        try:
            return rank_rmat(comm, **kw)
        except (TypeError, ValueError):
            return None                # graphs.generate names the problem
    if path:
        from pathlib import Path

        from ..graphs.io import guess_format
        kind = (fmt or guess_format(path)).lower()
        if kind not in ("edgelist", "snap", "edges", "el", "txt"):
            return None
        mode = (weights or "auto").strip().lower()
        return rank_edgelist(comm, path, Path(path).stem, mode)
    return None


__all__ = ["RankGraph", "RankCodes", "rank_rmat", "rank_edgelist", "rank_graph", "from_whole"]
