"""Launching the row moves' CUDA kernels (module "rows" of cuda_text.py: the shared helpers and
kernels of rows.cuh and rows.cu, and every row routine's own .cu) and what several of them do
on the device: the marked rows' count and list, rows' numbers, and the call's one read.

Tables are k x W uint64 device arrays (column c = row c of the array, row r = bit r%64 of
word r//64); row numbers in an index table are unsigned, column 1 the most significant bit.

Most kernels are *warp kernels*: a warp takes 32 consecutive rows (one 32-bit half of a word),
a row per lane. Rows' values (an index, a group, a key: up to 64 columns) are read with
``warp_values``: lane c loads column c's half-word and five shuffle steps turn the 32 x 32 bit
block round (``warp_transpose``), so every lane holds its row's number; results go back the
same way (``warp_write``: lane c writes column c's half-word, merged under the mask of the rows
that change). No thread keeps a 64-entry array, and no two warps write the same 32 bits. The
kernels that sum counters loop over the rows (grid-stride) and add once per warp at the end.
Issue 13's profile (bench/profile_boruvka.py, R-MAT scale 22 on an H100) took BORUVKA from
0.40 s to 0.14 s with them; the per-thread word loops they replace are still used by SCATTER
and by GATHER's column path.

Imported only where CuPy is (the CuPy backend's kernels, distributed GPU ranks)."""
from __future__ import annotations

import cupy as cp
import numpy as np

from ..guard import Storage
from . import cuda_text

BLOCK = 256
MAX_GRID_Y = 65535
STRIDE_BLOCKS = 2048        # grid-stride kernels (the ones that sum counters): 16 K warps, one atomic each
WARP_WRITE_BLIND = 0        # 1: warp_write stores full half-words without reading them (an A/B switch)
_modules: dict = {}         # (device, WARP_WRITE_BLIND) -> {kernel name: kernel}


def kernels() -> dict:
    """The row module's kernels by name, compiled once per device (and switch)."""
    key = (cp.cuda.runtime.getDevice(), int(WARP_WRITE_BLIND))
    fns = _modules.get(key)
    if fns is None:
        mod = cp.RawModule(code=cuda_text.source("rows"), options=(f"-DWARP_WRITE_BLIND={key[1]}",))
        fns = _modules[key] = {name: mod.get_function(name) for name in cuda_text.kernel_names("rows")}
    return fns


def grid(count: int, cols: int = 1):
    return (max(1, -(-count // BLOCK)), max(1, min(cols, MAX_GRID_Y))), (BLOCK,)


def rows_grid(rows: int):
    """Thread per row (warps of 32 rows), ``rows`` rounded up to whole blocks."""
    return (max(1, -(-rows // BLOCK)),), (BLOCK,)


def stride_grid(rows: int):
    """A grid-stride kernel over ``rows`` rows, a warp per 32 rows a step."""
    return (max(1, min(STRIDE_BLOCKS, -(-rows // BLOCK))),), (BLOCK,)


def word_grid(words: int):
    """A FOR_WORDS kernel over ``words`` words: a warp per word a step."""
    return stride_grid(32 * words)


def col_groups(k: int, per_thread: int) -> int:
    """The grid's y: column groups of ``per_thread`` columns (thread y takes y, y + groups, ...)."""
    return max(1, min(-(-k // per_thread), MAX_GRID_Y))


def u64(a):
    return a if (a.dtype == cp.uint64 and a.flags.c_contiguous) else cp.ascontiguousarray(a, dtype=cp.uint64)


def read(stats) -> tuple[int, ...]:
    """The call's one device-to-host transfer: a few counters."""
    return tuple(int(x) for x in stats.get())


def ends(X_v, W: int):
    """The inclusive prefix sum of the popcounts of X's words (int64, one per word)."""
    counts = cp.zeros(W, dtype=cp.int64)
    kernels()["rows_popc"](*grid(W), (u64(X_v), np.int64(W), counts))
    return cp.cumsum(counts)


def list_marked(X_v, W: int, c: int, ends_=None):
    """The c marked rows of X, in order (int64; at least one entry)."""
    ends_ = ends(X_v, W) if ends_ is None else ends_
    rows = cp.empty(max(c, 1), dtype=cp.int64)
    kernels()["rows_list"](*rows_grid(W * 64), (u64(X_v), np.int64(W), ends_, rows))
    return rows


def numb(X_v) -> int:
    W = X_v.size
    return int(ends(X_v, W)[-1]) if W else 0


def row_values(data, W: int, rows, listed: bool, c: int):
    """vals[j] = the number row rows[j] of a table's words ``data`` holds (k <= 64 columns), j < c;
    ``listed`` False: row j itself (``rows`` is not read)."""
    vals = cp.empty(c, dtype=cp.uint64)
    kernels()["rows_values"](*grid(c), (u64(data), np.int32(data.shape[0]), np.int64(W), rows, np.int32(listed),
                                        np.int64(c), vals))
    return vals


def is_table(t) -> bool:
    d = getattr(t, "data", None)
    return isinstance(d, cp.ndarray) and d.dtype == cp.uint64 and d.flags.c_contiguous and d.ndim == 2


def vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and isinstance(getattr(x, "v", None), cp.ndarray) \
        and x.v.shape == ((n + 63) // 64,)


STORAGE = Storage(is_table, vec_ok, nonempty=True)
