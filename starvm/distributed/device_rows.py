"""The rank-local part of the row moves (distributed/rows.py) on ranks whose tables and vectors
are device word arrays: the CuPy backend, and the emulated device (NumPy arrays in device
style) that runs the same code in CI.

rows.py's algorithm asks its local backend's ``LocalRows`` for four things, all on the rank's
own rows and in its own array module (``xp``), so that nothing but what crosses ranks leaves
the device:

  marked      the rows a vector marks (ascending row numbers);
  values      the numbers some rows of a table hold (at most 64 columns, column 1 the most
              significant bit), or all of its rows;
  write_rows  rows of a table := numbers, merged into its words (the other rows keep theirs);
  largest_source  SCATTER's winner per target among this rank's rows;
  slice_of    a vector from bools (GROUPMIN's result).

``LocalRows`` does them with array operations of ``xp`` only (NumPy on the emulated device,
CuPy on a GPU); ``CupyRows`` reads rows' numbers and lists the marked rows with the row kernels
of native/shared/cuda_rows.py instead (one pass, no 64-entries-per-row temporaries). rows.py's
``HostRows`` is the NumPy ranks' (Python-int vectors, byte-wise unpacking).
"""
from __future__ import annotations

import numpy as np

from ..backends.codes import pack_xp, unpack_xp
from .vectors import Shard, _host

_CHUNK = 1 << 22            # rows decoded at a time: a few tens of MiB of temporaries


def stable_argsort(xp, a):
    """A stable argsort on either module (CuPy's argsort is a stable radix sort)."""
    return np.argsort(a, kind="stable") if xp is np else xp.argsort(a)


class LocalRows:
    """The local primitives with array operations of ``xp`` on device-style word vectors."""

    def __init__(self, xp):
        self.xp = xp

    # ------------------------------------------------------------ transfers
    def host(self, a) -> np.ndarray:
        """A NumPy copy of a local array (device -> host)."""
        return _host(a)

    def local(self, a):
        """A host array on the device (host -> device)."""
        return self.xp.asarray(a)

    def is_vector(self, v) -> bool:
        return isinstance(v, self.xp.ndarray)

    # ------------------------------------------------------------ rows
    def _words(self, B, x, n: int):
        """x's words on this rank's rows, the bits past them cleared."""
        xp = self.xp
        local_n = B.layout(n).local_n
        words = xp.array(B.local_part(x, n), dtype=xp.uint64).reshape(-1)[:(local_n + 63) // 64]
        if local_n % 64:
            words[-1] &= np.uint64((1 << (local_n % 64)) - 1)
        return words, local_n

    def marked(self, B, x, n: int):
        """The rows (local, ascending, int64) vector x of n bits marks on this rank."""
        xp = self.xp
        words, local_n = self._words(B, x, n)
        shifts = xp.arange(64, dtype=xp.uint64)
        parts = []
        for lo in range(0, words.size, _CHUNK // 64):
            bits = (words[lo:lo + _CHUNK // 64, None] >> shifts) & np.uint64(1)
            parts.append(xp.flatnonzero(bits.reshape(-1)) + lo * 64)
        return xp.concatenate(parts).astype(xp.int64) if parts else xp.zeros(0, dtype=xp.int64)

    def values(self, data, n: int, rows=None):
        """The numbers rows ``rows`` (all when None) of a table's words ``data`` (k <= 64
        columns, n rows) hold, as uint64."""
        xp = self.xp
        k = data.shape[0]
        if rows is None:
            return unpack_xp(xp, data, n, k)
        out = xp.zeros(rows.size, dtype=xp.uint64)
        one = np.uint64(1)
        for lo in range(0, rows.size, _CHUNK):
            r = rows[lo:lo + _CHUNK]
            w, sh = r >> 6, (r & 63).astype(xp.uint64)
            acc = xp.zeros(r.size, dtype=xp.uint64)
            for c in range(k):
                acc <<= one
                acc |= (data[c][w] >> sh) & one
            out[lo:lo + r.size] = acc
        return out

    def _pack(self, codes, k: int, width: int):
        """k x width words of n codes (pack_xp: column 1 the most significant bit)."""
        out = self.xp.zeros((k, width), dtype=self.xp.uint64)
        pack_xp(self.xp, codes, k, out)
        return out

    def write_rows(self, t, rows, vals) -> None:
        """Local rows ``rows`` (no repeats) of the local table t := vals ((len(rows), ⌈k/64⌉)
        uint64, as rows.py's _row_values gives them), in place."""
        xp = self.xp
        n, W = t.n, t.data.shape[1]
        if not rows.size or not t.k:
            return
        hit = xp.zeros(n, dtype=xp.uint64)
        hit[rows] = 1
        mask = self._pack(hit, 1, W)
        for c, lo in enumerate(range(0, t.k, 64)):
            hi = min(t.k, lo + 64)
            full = xp.zeros(n, dtype=xp.uint64)
            full[rows] = vals[:, c]
            new = self._pack(full, hi - lo, W)
            old = t.data[lo:hi]
            old[...] = (old & ~mask) | (new & mask)

    def largest_source(self, n: int, dst, src):
        """best[t] = the largest of ``src`` whose ``dst`` is t, -1 where none (int64, n
        entries); src ascends. The last of a target's run in a stable sort by target is its
        largest source (no ufunc.at: CuPy has no maximum.at of int64)."""
        xp = self.xp
        best = xp.full(n, -1, dtype=xp.int64)
        if dst.size:
            o = stable_argsort(xp, dst)
            ds = dst[o]
            last = xp.ones(ds.size, dtype=bool)
            last[:-1] = ds[1:] != ds[:-1]
            best[ds[last]] = src[o[last]]
        return best

    def slice_of(self, B, z, n: int) -> Shard:
        """The partitioned n-bit vector whose bits on this rank are the bools z."""
        local_n = B.layout(n).local_n
        words = self._pack(z.astype(self.xp.uint64), 1, (local_n + 63) // 64)[0]
        return Shard(B.L.from_words(words, local_n), n)


class CupyRows(LocalRows):
    """LocalRows on a GPU, reading rows' numbers and listing marked rows with the row kernels of
    native/shared/cuda_rows.py."""

    def __init__(self):
        import cupy
        super().__init__(cupy)

    def marked(self, B, x, n: int):
        from ..native.shared import cuda_rows
        cp = self.xp
        words, _ = self._words(B, x, n)
        W = int(words.size)
        if not W:
            return cp.zeros(0, dtype=cp.int64)
        ends = cuda_rows.ends(words, W)
        c = int(ends[-1])                      # the one read: the output's size
        return cuda_rows.list_marked(words, W, c, ends)[:c]

    def values(self, data, n: int, rows=None):
        from ..native.shared import cuda_rows
        cp = self.xp
        k = data.shape[0]
        c = n if rows is None else int(rows.size)
        if not c or not k:
            return cp.zeros(c, dtype=cp.uint64)
        listed = rows is not None
        rows = cp.ascontiguousarray(rows, dtype=cp.int64) if listed else cp.zeros(1, dtype=cp.int64)
        return cuda_rows.row_values(data, data.shape[1], rows, listed, c)


def local_rows(local):
    """The LocalRows of a device-style local backend (CuPy, the emulated device)."""
    if local.gpu:
        return CupyRows()
    return LocalRows(local.xp)
