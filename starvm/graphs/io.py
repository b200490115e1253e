"""Graph file readers and writers: Matrix Market, DIMACS .gr, whitespace edge lists, NumPy .npy.

A text file is first read by the vectorised reader of its format (fast_io.py); where that
one declines (an unusual or a malformed file, a number beyond 64 bits), by the line-by-line
reader below, which parses exactly (Python integers) the whole file into local lists and
builds the Graph only at the end: a malformed file raises GraphFileError (file name, 1-based
line) and nothing is loaded. How weights become integers is the weight mode (weights.py).
A file is read only where it fits the available memory (input_files.py: a device or an
endless pipe is not read to the end); a leading UTF-8 byte order mark is skipped.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import numpy as np

from ..errors import GraphFileError
from ..input_files import check_fits, read_input
from .fast_io import fast_dimacs, fast_edgelist, fast_mtx
from .graph import Graph
from .weights import EXACT, HINT, WeightMode, parse_mode, weight_of_token
from .fields import shown

FORMATS = ("mtx", "dimacs", "edgelist", "npy")
_BY_SUFFIX = {".mtx": "mtx", ".gr": "dimacs", ".npy": "npy"}
_INT = re.compile(r"[+-]?[0-9]+\Z")     # ASCII digits only (not int()'s '1_000' or other scripts)
BOM = b"\xef\xbb\xbf"
MAX_VERTICES = 1 << 62              # vertex numbers and sizes stay below this (int64 arithmetic on them)
TEXT_EXPANSION = 8                  # memory the parse of a text file needs, in times its size


def guess_format(path: str | Path) -> str:
    """mtx for .mtx, dimacs for .gr, npy for .npy, edgelist for anything else."""
    return _BY_SUFFIX.get(Path(path).suffix.lower(), "edgelist")


def load(path: str | Path, fmt: str | None = None, *, name: str | None = None,
         weights: "str | WeightMode" = "exact") -> Graph:
    """Read a graph file; ``fmt`` is one of FORMATS (default: from the suffix); ``weights``
    a weight mode (weights.py: exact, auto, ignore, round, scale=K). A file that cannot be
    read (missing, a device, too large for the memory) raises OSError; a malformed one
    GraphFileError; a bad ``fmt`` or ``weights`` ValueError."""
    path = Path(path)
    fmt = (fmt or guess_format(path)).lower()
    if fmt in ("gr", "dimacs"):
        fmt = "dimacs"
    elif fmt in ("snap", "edges", "el", "txt"):
        fmt = "edgelist"
    if fmt not in FORMATS:
        raise ValueError(f"unknown graph format '{fmt}' (choose from {', '.join(FORMATS)})")
    mode = parse_mode(weights)
    label = str(path)
    if fmt == "npy":
        g = _read_npy(path, label, mode)
    else:
        data = read_input(path, expansion=TEXT_EXPANSION)
        if data.startswith(BOM):
            data = data[len(BOM):]
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise GraphFileError(f"not a text file ({e.reason})", label) from None
        # the vectorised reader for the usual file; the line reader for anything else, which
        # reads an unusual file or names its first bad line
        g = {"mtx": fast_mtx, "dimacs": fast_dimacs, "edgelist": fast_edgelist}[fmt](data, mode)
        if g is None:
            text = data.decode("utf-8")
            g = {"mtx": _read_mtx, "dimacs": _read_dimacs, "edgelist": _read_edgelist}[fmt](text, label, mode)
    return Graph(g.n, g.src, g.dst, g.weight, name=name or path.stem, directed=g.directed, meta=g.meta)


def _lines(text: str):
    for i, line in enumerate(text.split("\n"), 1):
        yield i, line.rstrip("\r")


def _int(tok: str, label: str, line: int, what: str) -> int:
    if not _INT.match(tok):
        raise GraphFileError(f"{what} must be an integer, got '{shown(tok)}'", label, line)
    return int(tok)


def _size(tok: str, label: str, line: int, what: str) -> int:
    x = _int(tok, label, line, what)
    if x >= MAX_VERTICES:
        raise GraphFileError(f"{what} {tok} is too large (a graph has fewer than 2^62 vertices and arcs)",
                             label, line)
    return x


class _Weights:
    """The weights of one file as the line reader meets them, under one weight mode: a bad
    one raises GraphFileError at once, or (mode auto) the first is kept and every weight
    becomes 1 (Graph.meta["weights_error"])."""

    def __init__(self, mode: WeightMode, label: str):
        self.mode, self.label = mode, label
        self.error: tuple | None = None      # (message, file, line) for GraphFileError

    def read(self, tok: str, line: int) -> int:
        if not self.mode.reads:
            return 1
        w = weight_of_token(tok, self.mode)
        if isinstance(w, int):
            return w
        self.fail(w, line)
        return 1

    def fail(self, reason: str, line: int | None) -> None:
        if not self.mode.deferred:
            raise GraphFileError(reason, self.label, line)
        if self.error is None:       # what a program that reads weights gets (graphs/star.py)
            self.error = (f"{reason}; this program reads the weights: {HINT}", self.label, line)

    def graph(self, n, src, dst, wt, *, directed=True) -> Graph:
        if self.error is None:
            return Graph(n, src, dst, wt, directed=directed)
        return Graph(n, src, dst, np.ones(len(src), dtype=np.int64), directed=directed,
                     meta={"weights_error": self.error})


def _vertex(tok: str, n: int, label: str, line: int, base: int = 1) -> int:
    v = _int(tok, label, line, "a vertex") - base + 1
    if not 1 <= v <= n:
        lo, hi = base, n + base - 1
        raise GraphFileError(f"vertex {tok} out of range {lo}..{hi}", label, line)
    return v


# ---------------------------------------------------------------------------------- Matrix Market
def _read_mtx(text: str, label: str, mode: WeightMode = EXACT) -> Graph:
    lines = _lines(text)
    lineno, head = next(lines, (1, ""))
    parts = head.split()
    if len(parts) != 5 or parts[0] != "%%MatrixMarket" or parts[1].lower() != "matrix":
        raise GraphFileError("bad header: expected '%%MatrixMarket matrix coordinate FIELD SYMMETRY'", label, lineno)
    layout, field, symmetry = (p.lower() for p in parts[2:])
    if layout != "coordinate":
        raise GraphFileError(f"bad header: only 'coordinate' matrices are graphs, not '{layout}'", label, lineno)
    if field not in ("real", "integer", "pattern"):
        raise GraphFileError(f"bad header: field '{field}' is not real, integer or pattern", label, lineno)
    if symmetry not in ("general", "symmetric"):
        raise GraphFileError(f"bad header: symmetry '{symmetry}' is not general or symmetric", label, lineno)
    n = nnz = None
    src, dst, wt = [], [], []
    weights = _Weights(mode, label)
    entries = 0
    size_line = last = lineno
    for lineno, line in lines:
        s = line.strip()
        if not s or s.startswith("%"):
            continue
        tok = s.split()
        last = lineno
        if n is None:
            if len(tok) != 3:
                raise GraphFileError("bad size line: expected 'ROWS COLUMNS ENTRIES'", label, lineno)
            rows, cols, nnz = (_size(t, label, lineno, "a size") for t in tok)
            if rows != cols:
                raise GraphFileError(f"the matrix is {rows} x {cols}; a graph needs a square one", label, lineno)
            if rows < 0 or nnz < 0:
                raise GraphFileError("sizes must be >= 0", label, lineno)
            n, size_line = rows, lineno
            continue
        want = 2 if field == "pattern" else 3
        if len(tok) != want:
            raise GraphFileError(f"expected {want} fields ('ROW COL{'' if want == 2 else ' VALUE'}'), got {len(tok)}",
                                 label, lineno)
        if entries == nnz:
            raise GraphFileError(f"more entries than the {nnz} the size line (line {size_line}) announces",
                                 label, lineno)
        u, v = _vertex(tok[0], n, label, lineno), _vertex(tok[1], n, label, lineno)
        w = 1 if field == "pattern" else weights.read(tok[2], lineno)
        entries += 1
        src.append(u), dst.append(v), wt.append(w)
        if symmetry == "symmetric" and u != v:
            src.append(v), dst.append(u), wt.append(w)     # the mirrored arc
    if n is None:
        raise GraphFileError("truncated file: no size line", label, last)
    if entries != nnz:
        raise GraphFileError(f"truncated file: the size line (line {size_line}) announces {nnz} entries, "
                             f"the file has {entries}", label, last)
    return weights.graph(n, src, dst, wt, directed=symmetry != "symmetric")


def write_mtx(g: Graph, path: str | Path, *, symmetric: bool = False, comment: str = "") -> None:
    """Write ``g`` as a coordinate integer Matrix Market file; with ``symmetric`` only the arcs
    u >= v are written (the graph must be symmetric)."""
    keep = g.src >= g.dst if symmetric else np.ones(g.m, dtype=bool)
    out = [f"%%MatrixMarket matrix coordinate integer {'symmetric' if symmetric else 'general'}"]
    out += [f"% {c}" for c in comment.splitlines()]
    out.append(f"{g.n} {g.n} {int(keep.sum())}")
    out += [f"{u} {v} {w}" for u, v, w in zip(g.src[keep], g.dst[keep], g.weight[keep])]
    Path(path).write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------- DIMACS .gr
def _read_dimacs(text: str, label: str, mode: WeightMode = EXACT) -> Graph:
    n = m = None
    p_line = last = 0
    src, dst, wt = [], [], []
    weights = _Weights(mode, label)
    for lineno, line in _lines(text):
        tok = line.split()
        if not tok or tok[0] == "c":
            continue
        last = lineno
        if tok[0] == "p":
            if n is not None:
                raise GraphFileError(f"a second problem line (the first is line {p_line})", label, lineno)
            if len(tok) != 4 or tok[1] != "sp":
                raise GraphFileError("bad header: expected 'p sp NODES ARCS'", label, lineno)
            n, m = _size(tok[2], label, lineno, "NODES"), _size(tok[3], label, lineno, "ARCS")
            if n < 0 or m < 0:
                raise GraphFileError("bad header: NODES and ARCS must be >= 0", label, lineno)
            p_line = lineno
        elif tok[0] == "a":
            if n is None:
                raise GraphFileError("an arc before the problem line 'p sp NODES ARCS'", label, lineno)
            if len(tok) != 4:
                raise GraphFileError(f"expected 'a U V WEIGHT', got {len(tok) - 1} fields after 'a'", label, lineno)
            if len(src) == m:
                raise GraphFileError(f"more arcs than the {m} the problem line (line {p_line}) announces", label, lineno)
            src.append(_vertex(tok[1], n, label, lineno))
            dst.append(_vertex(tok[2], n, label, lineno))
            wt.append(weights.read(tok[3], lineno))
        else:
            raise GraphFileError(f"unknown line type '{shown(tok[0])}' (expected c, p or a)", label, lineno)
    if n is None:
        raise GraphFileError("no problem line 'p sp NODES ARCS'", label, last or 1)
    if len(src) != m:
        raise GraphFileError(f"truncated file: the problem line (line {p_line}) announces {m} arcs, "
                             f"the file has {len(src)}", label, last)
    return weights.graph(n, src, dst, wt)


def write_dimacs(g: Graph, path: str | Path, *, comment: str = "") -> None:
    out = [f"c {c}" for c in comment.splitlines()]
    out.append(f"p sp {g.n} {g.m}")
    out += [f"a {u} {v} {w}" for u, v, w in zip(g.src, g.dst, g.weight)]
    Path(path).write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------- edge lists
def _read_edgelist(text: str, label: str, mode: WeightMode = EXACT) -> Graph:
    """'U V' or 'U V W' per line; '#' or '%' starts a comment. Vertex numbers are 0-based
    when the smallest one in the file is 0 (SNAP), else 1-based; n is the largest vertex
    number (+1 when 0-based). A missing weight is 1."""
    us, vs, ws = [], [], []
    weights = _Weights(mode, label)
    for lineno, line in _lines(text):
        s = re.split(r"[#%]", line, maxsplit=1)[0].replace(",", " ").split()
        if not s:
            continue
        if len(s) not in (2, 3):
            raise GraphFileError(f"expected 'U V' or 'U V WEIGHT', got {len(s)} fields", label, lineno)
        u, v = (_int(t, label, lineno, "a vertex") for t in s[:2])
        if u < 0 or v < 0:
            raise GraphFileError(f"vertex {min(u, v)} out of range (vertex numbers are >= 0)", label, lineno)
        if max(u, v) >= MAX_VERTICES - 1:
            raise GraphFileError(f"vertex {max(u, v)} is too large (vertex numbers are below 2^62 - 1)",
                                 label, lineno)
        w = weights.read(s[2], lineno) if len(s) == 3 else 1
        us.append(u), vs.append(v), ws.append(w)
    if not us:
        return Graph(0, [], [], [])
    u, v = np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64)
    base = 0 if min(u.min(), v.min()) == 0 else 1
    n = int(max(u.max(), v.max())) + 1 - base
    return weights.graph(n, u + 1 - base, v + 1 - base, ws)


def write_edgelist(g: Graph, path: str | Path, *, comment: str = "", weights: bool = True) -> None:
    out = [f"# {c}" for c in comment.splitlines()]
    out += [f"{u} {v} {w}" if weights else f"{u} {v}" for u, v, w in zip(g.src, g.dst, g.weight)]
    Path(path).write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------- NumPy
def _read_npy(path: Path, label: str, mode: WeightMode) -> Graph:
    """The n x n matrix of a .npy file: a nonzero entry [i, j] is an arc i+1 -> j+1 of that
    weight. The header is checked against the file's size and the available memory before
    the array is touched; the array is mapped, not read whole."""
    shape, dtype = _npy_header(path, label)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise GraphFileError(f"the array has shape {shape}; a graph needs a square 2-D one", label)
    if not (dtype == bool or np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
        raise GraphFileError(f"dtype {dtype} is not bool, integer or float", label)
    n = shape[0]
    if n == 0:
        return Graph(0, [], [], [])
    try:
        a = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, EOFError) as e:
        raise GraphFileError(f"not a readable .npy array ({e})", label) from None
    check_fits(48 * _count_nonzero(a), f"the arcs of {label}")     # their indices, values, weights
    i, j = np.nonzero(a)
    vals = np.asarray(a[i, j])
    weights = _Weights(mode, label)
    w, bad = _npy_weights(vals, mode)
    if bad is not None:
        k = int(bad)
        tok = repr(vals[k].item())
        why = weight_of_token(tok, mode)
        if isinstance(why, int):          # the float is not the number its text says (rounding)
            why = f"weight {tok} is not an integer 0 .. 2^64 - 1"
        weights.fail(f"[{i[k]}, {j[k]}]: {why}", None)
        w = np.ones(len(i), dtype=np.int64)
    return weights.graph(n, i + 1, j + 1, w)


def _npy_header(path: Path, label: str):
    """(shape, dtype) of a .npy file; GraphFileError where the header is bad or announces
    more data than the file holds."""
    from numpy.lib import format as npf
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(22, "a .npy graph must be a regular file")
    with open(path, "rb") as fh:
        try:
            version = npf.read_magic(fh)
            shape, fortran, dtype = (npf.read_array_header_1_0(fh) if version == (1, 0)
                                     else npf.read_array_header_2_0(fh))
        except Exception as e:   # noqa: BLE001 - NumPy's header parse raises what its tokenizer raises
            raise GraphFileError(f"not a readable .npy header ({type(e).__name__}: {e})", label) from None
        start = fh.tell()
    if dtype.hasobject:
        raise GraphFileError(f"dtype {dtype} holds Python objects; a graph needs bool, integer or float", label)
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if st.st_size - start < need:
        raise GraphFileError(f"truncated file: the header announces shape {shape} of {dtype} ({need} bytes), "
                             f"the file holds {st.st_size - start}", label)
    return shape, dtype


def _count_nonzero(a) -> int:
    """The nonzero entries of a mapped array, a block of rows at a time (no copy of it whole)."""
    step = max(1, (1 << 24) // max(1, a.shape[1]))
    return sum(int(np.count_nonzero(a[r:r + step])) for r in range(0, a.shape[0], step))


def _npy_weights(vals: np.ndarray, mode: WeightMode):
    """(weights, None), or (None, the index of the first bad value)."""
    if not mode.reads or vals.dtype == bool:
        return np.ones(vals.size, dtype=np.int64), None
    if np.issubdtype(vals.dtype, np.integer):
        if vals.dtype.kind == "i" and vals.size and vals.min() < 0:
            return None, int(np.argmax(vals < 0))
        return vals.astype(np.uint64 if vals.dtype == np.uint64 else np.int64), None
    x = vals.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if mode.kind == "scale":
            x = x * mode.factor
        if mode.converts:
            x = np.rint(x)
        ok = np.isfinite(x) & (x == np.floor(x)) & (x >= 0) & (x < 2.0 ** 64)
    if not ok.all():
        return None, int(np.argmin(ok))
    return x.astype(np.uint64), None


def write_npy(g: Graph, path: str | Path) -> None:
    """The n x n weight matrix (int64; 0 = no arc, so zero-weight arcs are lost)."""
    a = np.zeros((g.n, g.n), dtype=g.weight.dtype)
    a[g.src - 1, g.dst - 1] = g.weight
    np.save(path, a)
