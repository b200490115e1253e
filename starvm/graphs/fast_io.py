"""Vectorised readers for the common shape of each graph file format.

Each ``fast_*`` reader takes the file's bytes and returns a Graph, or None when anything in
the file is unusual or wrong: then io.py's line-by-line reader runs, which either reads the
unusual-but-valid file or raises GraphFileError at the first bad line (file:line). So a fast
reader must never accept what the line reader rejects, and must return what it returns.

  * Matrix Market: the header and size line by hand, the entries by NumPy (below). Not
    through fast_matrix_market: it reads '2.5' or '2x' in an integer file as 2 and ignores
    extra fields, so its result would need a validation pass over the whole text, and with
    it the NumPy parse is as fast (5 M entries on the 2-core machine: fast_matrix_market
    0.20 s + 0.22 s for a token count alone, the NumPy parse below about 0.6 s).
  * Edge lists and DIMACS .gr: comments cut out with one regex (only when the file has any),
    'a ' prefixes dropped with bytes.replace, then NumPy (below).
  * NumPy parse (``numbers``): every newline becomes ' -1' + newline and the whole body goes
    through one ``np.fromstring(sep=' ')``; the -1 sentinels (valid files hold no negative
    numbers) give the fields of every line, so a short or long line is caught without a
    Python loop over lines. NumPy clamps an integer beyond int64 to 2^63 - 1 without a word:
    a file holding that value is left to the line reader, which reads every number exactly.
  * Weights follow the weight mode (weights.py); a real weight is taken here only where its
    integer is exact in a float (below 2^53), and a real field's row and column numbers only
    where n is below 2^53.
"""
from __future__ import annotations

import re
import warnings

import numpy as np

from .graph import Graph
from .weights import EXACT, FLOAT_EXACT, WeightMode, convert_floats

_WS = b" \t\r\x0b\x0c"
_INT64_MAX = np.iinfo(np.int64).max       # what np.fromstring makes of a larger integer
_MAX_VERTICES = 1 << 62                   # io.MAX_VERTICES: larger sizes are the line reader's error


def numbers(body: bytes, ncols: int, dtype=np.int64) -> np.ndarray | None:
    """The non-blank lines of ``body`` as a (lines, ncols) array, or None unless every
    non-blank line has exactly ``ncols`` fields, every field is a number of ``dtype``, and
    none is negative."""
    if not body.endswith(b"\n"):
        body += b"\n"
    lines = body.count(b"\n")
    marked = body.replace(b"\n", b" -1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            vals = np.fromstring(marked, dtype=dtype, sep=" ")
        except Exception:                # a field that is not a number (NumPy warns or raises)
            return None
    del marked
    sentinel = vals == -1
    where = np.flatnonzero(sentinel)
    if where.size != lines or (vals.size and vals.min() < -1):
        return None                      # a field stopped the parse, or a negative number
    if vals.dtype == np.int64 and vals.size and vals.max() == _INT64_MAX:
        return None                      # 2^63 - 1, or a larger number clamped to it
    fields = np.diff(where, prepend=-1) - 1
    if not np.all((fields == 0) | (fields == ncols)):
        return None
    return vals[~sentinel].reshape(-1, ncols)


def _next_line(data: bytes, pos: int) -> tuple[bytes, int]:
    end = data.find(b"\n", pos)
    end = len(data) if end < 0 else end
    return data[pos:end], end + 1


_INT = re.compile(rb"[+-]?[0-9]+\Z")


def _ints(tokens) -> list[int] | None:
    """Integers as the line reader reads them (not int()'s '1_000')."""
    if not all(_INT.match(t) for t in tokens):
        return None
    return [int(t) for t in tokens]


def _weights(w: np.ndarray, mode: WeightMode) -> np.ndarray | None:
    """The weight column (int64 or float64, none negative) as int64 codes under ``mode``,
    or None where the line reader is to read them (a bad one, one not exact here)."""
    if not mode.reads:
        return np.ones(w.size, dtype=np.int64)
    if w.dtype.kind == "f" or mode.kind == "scale":
        return convert_floats(w.astype(np.float64), mode)
    return w


def _in_range(a: np.ndarray, lo: int, hi: int) -> bool:
    return a.size == 0 or (int(a.min()) >= lo and int(a.max()) <= hi)


# ------------------------------------------------------------------ Matrix Market
# a line whose first or second field is not written as an integer (parsed as floats, '1.0'
# would pass for 1)
_INDEX_NOT_INT = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*(?:(?![+-]?\d+[ \t\r\x0b\x0c])\S"
                            rb"|\S+[ \t\r\x0b\x0c]+(?![+-]?\d+(?:[ \t\r\x0b\x0c\n]|$))\S)")


def fast_mtx(data: bytes, mode: WeightMode = EXACT) -> Graph | None:
    head, pos = _next_line(data, 0)
    parts = head.split()
    if len(parts) != 5 or parts[0] != b"%%MatrixMarket" or parts[1].lower() != b"matrix":
        return None
    layout, field, symmetry = (p.lower().decode("ascii", "replace") for p in parts[2:])
    if layout != "coordinate" or field not in ("real", "integer", "pattern") \
            or symmetry not in ("general", "symmetric"):
        return None
    size = None
    while pos < len(data):
        line, pos = _next_line(data, pos)
        s = line.strip()
        if s and not s.startswith(b"%"):
            size = _ints(s.split())
            break
    if size is None or len(size) != 3 or size[0] != size[1] or min(size) < 0 or max(size) >= _MAX_VERTICES:
        return None
    n, nnz = size[0], size[2]
    if field == "real" and n >= FLOAT_EXACT:
        return None                              # row numbers parsed as floats would not be exact
    body = data[pos:]
    ncols = 2 if field == "pattern" else 3
    if b"%" in body:
        body = re.sub(rb"(?m)^[ \t\r\x0b\x0c]*%[^\n]*", b"", body)
    table = numbers(body, ncols, np.float64 if field == "real" else np.int64)
    if table is None:
        return None
    u, v = table[:, 0], table[:, 1]
    w = table[:, 2] if ncols == 3 else np.ones(len(table), dtype=np.int64)
    if field == "real":
        if _INDEX_NOT_INT.search(body):
            return None                          # e.g. '1.0' as a row: the line reader's error
        if not (_in_range(u, 1, n) and _in_range(v, 1, n)):
            return None                          # (before the cast: 9.2e18 does not fit int64)
        u, v = u.astype(np.int64), v.astype(np.int64)
    if u.size != nnz or not (_in_range(u, 1, n) and _in_range(v, 1, n)):
        return None
    if field != "pattern":
        w = _weights(w, mode)
        if w is None:
            return None
    u, v, w = (np.asarray(a, dtype=np.int64) for a in (u, v, w))
    if symmetry == "symmetric":
        u, v, w = _with_mirrors(u, v, w)
    return Graph(n, u, v, w, directed=symmetry != "symmetric")


def _with_mirrors(u, v, w):
    """Every entry u != v followed by its mirrored arc, as the line reader lists them."""
    twice = u != v
    counts = 1 + twice
    start = np.cumsum(counts) - counts
    total = int(counts.sum())
    src, dst, wt = (np.empty(total, dtype=np.int64) for _ in range(3))
    src[start], dst[start], wt[start] = u, v, w
    m = start[twice] + 1
    src[m], dst[m], wt[m] = v[twice], u[twice], w[twice]
    return src, dst, wt


# ------------------------------------------------------------------ DIMACS .gr
_COMMENT_C = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*c(?=[ \t\r\x0b\x0c\n]|$)[^\n]*")


def fast_dimacs(data: bytes, mode: WeightMode = EXACT) -> Graph | None:
    pos, header = 0, None
    while pos < len(data):                           # comments, then the problem line
        line, pos = _next_line(data, pos)
        tok = line.split()
        if not tok or tok[0] == b"c":
            continue
        if tok[0] != b"p":
            return None                              # an arc before the problem line, ...
        header = tok
        break
    if header is None or len(header) != 4 or header[1] != b"sp":
        return None
    nm = _ints(header[2:])
    if nm is None or min(nm) < 0 or max(nm) >= _MAX_VERTICES:
        return None
    n, m = nm
    body = b"\n" + data[pos:]
    if b"c" in body:
        body = _COMMENT_C.sub(b"", body)
    arcs = body.count(b"\na ") + body.count(b"\na\t")
    table = numbers(body.replace(b"\na ", b"\n").replace(b"\na\t", b"\n"), 3)   # a stray 'a', 'p', letter: None
    if table is None or len(table) != m or arcs != m:
        return None
    u, v, w = table[:, 0], table[:, 1], _weights(table[:, 2], mode)
    if w is None or not (_in_range(u, 1, n) and _in_range(v, 1, n)):
        return None
    return Graph(n, u, v, w)


# ------------------------------------------------------------------ edge lists
def fast_edgelist(data: bytes, mode: WeightMode = EXACT) -> Graph | None:
    last = max(data.rfind(b"#"), data.rfind(b"%"))
    if last >= 0:                                    # comments: usually a few lines at the top
        end = data.find(b"\n", last)
        end = len(data) if end < 0 else end
        data = re.sub(rb"[#%][^\n]*", b"", data[:end]) + data[end:]
    if b"," in data:
        data = data.replace(b",", b" ")
    first, pos = None, 0
    while first is None and pos < len(data):
        line, pos = _next_line(data, pos)
        first = line.split() or None
    if first is None:
        return Graph(0, [], [], [])
    ncols = len(first)
    if ncols not in (2, 3):
        return None
    table = numbers(data, ncols)
    if table is None:
        return None                                  # mixed 2 and 3 fields: the line reader
    if not table.size:
        return Graph(0, [], [], [])
    uv = table[:, :2]
    if int(uv.max()) >= _MAX_VERTICES - 1:
        return None                                  # the line reader's error
    base = 0 if uv.min() == 0 else 1
    n = int(uv.max()) + 1 - base
    w = _weights(table[:, 2], mode) if ncols == 3 else np.ones(len(table), dtype=np.int64)
    if w is None:
        return None
    return Graph(n, uv[:, 0] + 1 - base, uv[:, 1] + 1 - base, w)
