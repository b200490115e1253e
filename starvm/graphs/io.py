"""Graph file readers and writers: Matrix Market, DIMACS .gr, whitespace edge lists, NumPy .npy.

A text file is first read by the vectorised reader of its format (fast_io.py); where that
one declines (an unusual or a malformed file), by the line-by-line reader below, which parses
the whole file into local lists and builds the Graph only at the end: a malformed file raises
GraphFileError (file name, 1-based line) and nothing is loaded.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import GraphFileError
from .fast_io import fast_dimacs, fast_edgelist, fast_mtx
from .graph import Graph

FORMATS = ("mtx", "dimacs", "edgelist", "npy")
_BY_SUFFIX = {".mtx": "mtx", ".gr": "dimacs", ".npy": "npy"}
_INT = re.compile(r"[+-]?\d+\Z")


def guess_format(path: str | Path) -> str:
    """mtx for .mtx, dimacs for .gr, npy for .npy, edgelist for anything else."""
    return _BY_SUFFIX.get(Path(path).suffix.lower(), "edgelist")


def load(path: str | Path, fmt: str | None = None, *, name: str | None = None) -> Graph:
    """Read a graph file; ``fmt`` is one of FORMATS (default: from the suffix)."""
    path = Path(path)
    fmt = (fmt or guess_format(path)).lower()
    if fmt in ("gr", "dimacs"):
        fmt = "dimacs"
    elif fmt in ("snap", "edges", "el", "txt"):
        fmt = "edgelist"
    if fmt not in FORMATS:
        raise ValueError(f"unknown graph format '{fmt}' (choose from {', '.join(FORMATS)})")
    label = str(path)
    if fmt == "npy":
        g = _read_npy(path, label)
    else:
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise GraphFileError(f"not a text file ({e.reason})", label) from None
        # the vectorised reader for the usual file; the line reader for anything else, which
        # reads an unusual file or names its first bad line
        g = {"mtx": fast_mtx, "dimacs": fast_dimacs, "edgelist": fast_edgelist}[fmt](data)
        if g is None:
            text = data.decode("utf-8")
            g = {"mtx": _read_mtx, "dimacs": _read_dimacs, "edgelist": _read_edgelist}[fmt](text, label)
    return Graph(g.n, g.src, g.dst, g.weight, name=name or path.stem, directed=g.directed)


def _lines(text: str):
    for i, line in enumerate(text.split("\n"), 1):
        yield i, line.rstrip("\r")


def _int(tok: str, label: str, line: int, what: str) -> int:
    if not _INT.match(tok):
        raise GraphFileError(f"{what} must be an integer, got '{tok}'", label, line)
    return int(tok)


def _weight(tok: str, label: str, line: int) -> int:
    if _INT.match(tok):
        w = int(tok)
    else:
        try:
            x = float(tok)
        except ValueError:
            raise GraphFileError(f"weight must be a number, got '{tok}'", label, line) from None
        if not np.isfinite(x) or x != int(x):
            raise GraphFileError(f"weight {tok} is not a whole number (weights are integers >= 0)", label, line)
        w = int(x)
    if w < 0:
        raise GraphFileError(f"negative weight {tok} (weights are integers >= 0)", label, line)
    return w


def _vertex(tok: str, n: int, label: str, line: int, base: int = 1) -> int:
    v = _int(tok, label, line, "a vertex") - base + 1
    if not 1 <= v <= n:
        lo, hi = base, n + base - 1
        raise GraphFileError(f"vertex {tok} out of range {lo}..{hi}", label, line)
    return v


# ---------------------------------------------------------------------------------- Matrix Market
def _read_mtx(text: str, label: str) -> Graph:
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
            rows, cols, nnz = (_int(t, label, lineno, "a size") for t in tok)
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
        w = 1 if field == "pattern" else _weight(tok[2], label, lineno)
        entries += 1
        src.append(u), dst.append(v), wt.append(w)
        if symmetry == "symmetric" and u != v:
            src.append(v), dst.append(u), wt.append(w)     # the mirrored arc
    if n is None:
        raise GraphFileError("truncated file: no size line", label, last)
    if entries != nnz:
        raise GraphFileError(f"truncated file: the size line (line {size_line}) announces {nnz} entries, "
                             f"the file has {entries}", label, last)
    return Graph(n, src, dst, wt, directed=symmetry != "symmetric")


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
def _read_dimacs(text: str, label: str) -> Graph:
    n = m = None
    p_line = last = 0
    src, dst, wt = [], [], []
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
            n, m = _int(tok[2], label, lineno, "NODES"), _int(tok[3], label, lineno, "ARCS")
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
            wt.append(_weight(tok[3], label, lineno))
        else:
            raise GraphFileError(f"unknown line type '{tok[0]}' (expected c, p or a)", label, lineno)
    if n is None:
        raise GraphFileError("no problem line 'p sp NODES ARCS'", label, last or 1)
    if len(src) != m:
        raise GraphFileError(f"truncated file: the problem line (line {p_line}) announces {m} arcs, "
                             f"the file has {len(src)}", label, last)
    return Graph(n, src, dst, wt)


def write_dimacs(g: Graph, path: str | Path, *, comment: str = "") -> None:
    out = [f"c {c}" for c in comment.splitlines()]
    out.append(f"p sp {g.n} {g.m}")
    out += [f"a {u} {v} {w}" for u, v, w in zip(g.src, g.dst, g.weight)]
    Path(path).write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------- edge lists
def _read_edgelist(text: str, label: str) -> Graph:
    """'U V' or 'U V W' per line; '#' or '%' starts a comment. Vertex numbers are 0-based
    when the smallest one in the file is 0 (SNAP), else 1-based; n is the largest vertex
    number (+1 when 0-based). A missing weight is 1."""
    rows, lines_of = [], []
    for lineno, line in _lines(text):
        s = re.split(r"[#%]", line, maxsplit=1)[0].replace(",", " ").split()
        if not s:
            continue
        if len(s) not in (2, 3):
            raise GraphFileError(f"expected 'U V' or 'U V WEIGHT', got {len(s)} fields", label, lineno)
        u, v = (_int(t, label, lineno, "a vertex") for t in s[:2])
        if u < 0 or v < 0:
            raise GraphFileError(f"vertex {min(u, v)} out of range (vertex numbers are >= 0)", label, lineno)
        w = _weight(s[2], label, lineno) if len(s) == 3 else 1
        rows.append((u, v, w))
        lines_of.append(lineno)
    if not rows:
        return Graph(0, [], [], [])
    a = np.array(rows, dtype=np.int64)
    base = 0 if a[:, :2].min() == 0 else 1
    n = int(a[:, :2].max()) + 1 - base
    return Graph(n, a[:, 0] + 1 - base, a[:, 1] + 1 - base, a[:, 2])


def write_edgelist(g: Graph, path: str | Path, *, comment: str = "", weights: bool = True) -> None:
    out = [f"# {c}" for c in comment.splitlines()]
    out += [f"{u} {v} {w}" if weights else f"{u} {v}" for u, v, w in zip(g.src, g.dst, g.weight)]
    Path(path).write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------- NumPy
def _read_npy(path: Path, label: str) -> Graph:
    try:
        a = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise GraphFileError(f"not a readable .npy array ({e})", label) from None
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise GraphFileError(f"the array has shape {a.shape}; a graph needs a square 2-D one", label)
    if a.dtype == bool:
        w = a.astype(np.int64)
    elif np.issubdtype(a.dtype, np.integer):
        w = a.astype(np.int64)
    elif np.issubdtype(a.dtype, np.floating):
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            raise GraphFileError("weights must be whole numbers", label)
        w = a.astype(np.int64)
    else:
        raise GraphFileError(f"dtype {a.dtype} is not bool, integer or float", label)
    if w.size and w.min() < 0:
        i, j = np.argwhere(w < 0)[0]
        raise GraphFileError(f"negative weight {w[i, j]} at [{i}, {j}]", label)
    i, j = np.nonzero(a)
    return Graph(a.shape[0], i + 1, j + 1, w[i, j])


def write_npy(g: Graph, path: str | Path) -> None:
    """The n x n weight matrix (int64; 0 = no arc, so zero-weight arcs are lost)."""
    a = np.zeros((g.n, g.n), dtype=np.int64)
    a[g.src - 1, g.dst - 1] = g.weight
    np.save(path, a)
