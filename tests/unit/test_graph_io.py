"""starvm.graphs: loaders, writers, generators, and the GRAPH_* built-ins of a machine."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
import starvm.graphs as sg
from starvm.errors import GraphFileError, StarRuntimeError, StarTypeError


def arcs(g):
    return sorted(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()))


@pytest.fixture
def sample():
    return sg.from_edges(6, [(1, 2), (2, 3), (3, 1), (4, 5), (5, 5)], [3, 0, 7, 12, 1])


# ------------------------------------------------------------------ round trips
@pytest.mark.parametrize("fmt,suffix", [("mtx", ".mtx"), ("dimacs", ".gr"), ("edgelist", ".txt")])
def test_round_trip(tmp_path, sample, fmt, suffix):
    p = tmp_path / f"g{suffix}"
    {"mtx": sg.write_mtx, "dimacs": sg.write_dimacs, "edgelist": sg.write_edgelist}[fmt](sample, p, comment="hello")
    g = sg.load(p)
    assert arcs(g) == arcs(sample)
    assert g.name == "g"
    if fmt != "edgelist":   # an edge list's n is its largest vertex (5 here)
        assert g.n == 6


def test_round_trip_mtx_symmetric(tmp_path):
    g0 = sg.from_edges(5, [(1, 2), (2, 3), (4, 4)], [2, 5, 9], directed=False)
    sg.write_mtx(g0, tmp_path / "s.mtx", symmetric=True)
    assert "symmetric" in (tmp_path / "s.mtx").read_text().splitlines()[0]
    g = sg.load(tmp_path / "s.mtx")
    assert arcs(g) == arcs(g0) and not g.directed and g.m == 5


def test_round_trip_npy(tmp_path, sample):
    sg.write_npy(sample, tmp_path / "w.npy")
    g = sg.load(tmp_path / "w.npy")
    assert arcs(g) == [a for a in arcs(sample) if a[2] != 0]     # a zero weight is "no arc" in a matrix
    np.save(tmp_path / "b.npy", sample.adjacency())
    assert arcs(sg.load(tmp_path / "b.npy")) == [(u, v, 1) for u, v, _ in arcs(sample)]


def test_mtx_fields(tmp_path):
    p = tmp_path / "a.mtx"
    p.write_text("%%MatrixMarket matrix coordinate pattern general\n% c\n3 3 2\n1 2\n3 1\n")
    assert arcs(sg.load(p)) == [(1, 2, 1), (3, 1, 1)]
    p.write_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n2 1 4.0\n")
    assert arcs(sg.load(p)) == [(1, 2, 4), (2, 1, 4)]


def test_edgelist_base_rule(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("# SNAP style\n0 1\n1 2\t5\n")          # a 0 appears: 0-based
    g = sg.load(p)
    assert g.n == 3 and arcs(g) == [(1, 2, 1), (2, 3, 5)]
    p.write_text("1 2\n2 4 % comment\n")                 # no 0: 1-based as written
    g = sg.load(p)
    assert g.n == 4 and arcs(g) == [(1, 2, 1), (2, 4, 1)]


def test_dimacs_format_option(tmp_path):
    p = tmp_path / "road.data"
    p.write_text("c x\np sp 3 2\na 1 2 10\na 2 3 20\n")
    assert sg.guess_format(p) == "edgelist"
    assert arcs(sg.load(p, "dimacs")) == [(1, 2, 10), (2, 3, 20)]
    with pytest.raises(ValueError, match="unknown graph format"):
        sg.load(p, "xml")


# ------------------------------------------------------------------ malformed files
MTX = "%%MatrixMarket matrix coordinate integer general\n"
BAD = [
    ("a.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n", 1, "bad header"),
    ("a.mtx", "hello\n", 1, "bad header"),
    ("a.mtx", MTX + "3 3 2\n1 2 1\n", 3, "truncated file"),
    ("a.mtx", MTX + "3 3 1\n1 2 1\n2 3 1\n", 4, "more entries"),
    ("a.mtx", MTX + "3 4 1\n1 2 1\n", 2, "square"),
    ("a.mtx", MTX + "3 3 2\n1 2 1\n4 1 1\n", 4, "out of range"),
    ("a.mtx", MTX + "3 3 1\n1 x 1\n", 3, "must be an integer"),
    ("a.mtx", MTX + "3 3 1\n1 2 abc\n", 3, "must be a number"),
    ("a.mtx", MTX + "3 3 1\n1 2 -4\n", 3, "negative weight"),
    ("a.mtx", MTX + "3 3 1\n1 2 2.5\n", 3, "not a whole number"),
    ("a.mtx", MTX, 1, "no size line"),
    ("r.gr", "c c\np sp 3\n", 2, "bad header"),
    ("r.gr", "a 1 2 3\n", 1, "before the problem line"),
    ("r.gr", "p sp 3 2\na 1 2 3\n", 2, "truncated file"),
    ("r.gr", "p sp 3 1\na 1 2 3\na 2 3 1\n", 3, "more arcs"),
    ("r.gr", "p sp 3 1\na 1 9 3\n", 2, "out of range"),
    ("r.gr", "p sp 3 1\na 1 2 -3\n", 2, "negative weight"),
    ("r.gr", "p sp 3 1\na 1 2 w\n", 2, "must be a number"),
    ("r.gr", "p sp 3 1\nx 1 2\n", 2, "unknown line type"),
    ("e.txt", "1 2\n2 3 4 5\n", 2, "fields"),
    ("e.txt", "1 2\n2 -3\n", 2, "out of range"),
    ("e.txt", "1 2\n2 b\n", 2, "must be an integer"),
    ("e.txt", "1 2 -1\n", 1, "negative weight"),
]


@pytest.mark.parametrize("name,text,line,what", BAD, ids=[f"{b[0]}-{b[3]}-{i}" for i, b in enumerate(BAD)])
def test_malformed(tmp_path, name, text, line, what):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(GraphFileError) as info:
        sg.load(p)
    e = info.value
    assert isinstance(e, starvm.StarError)
    assert e.filename == str(p) and e.line == line, (e.filename, e.line, str(e))
    assert what in e.message and f"{p}:{line}:" in e.render()


@pytest.mark.parametrize("arr,what", [(np.zeros((2, 3)), "square"), (np.array([[0, -1], [0, 0]]), "negative"),
                                      (np.array([[0, 0.5], [0, 0]]), "whole"), (np.zeros(3), "square")])
def test_malformed_npy(tmp_path, arr, what):
    np.save(tmp_path / "m.npy", arr)
    with pytest.raises(GraphFileError, match=what) as info:
        sg.load(tmp_path / "m.npy")
    assert info.value.filename == str(tmp_path / "m.npy") and info.value.line is None
    (tmp_path / "t.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(GraphFileError, match="npy"):
        sg.load(tmp_path / "t.npy")


def test_nothing_partially_loaded(tmp_path):
    """A bad line late in the file: the error, and the machine keeps its graph."""
    good = sg.from_edges(2, [(1, 2)])
    m = starvm.Machine(out=io.StringIO(), graph=good)
    p = tmp_path / "late.gr"
    p.write_text("p sp 3 3\na 1 2 1\na 2 3 1\na 3 9 1\n")
    with pytest.raises(GraphFileError):
        m.graph = sg.load(p)
    assert m.graph is good


# ------------------------------------------------------------------ generators
@pytest.mark.parametrize("spec", ["gnp:n=40,p=0.1,seed=3", "rmat:scale=6,ef=4,seed=2", "ssca2:n=50,clique=6,p=0.4,seed=1",
                                  "rmat:scale=5,ef=8,a=0.45,b=0.15,c=0.15,d=0.25,seed=9,wmax=3"])
def test_generators(spec):
    g, h = sg.generate(spec), sg.generate(spec)
    assert arcs(g) == arcs(h) and g.m > 0                      # seeded: the same graph
    a = g.adjacency()
    assert (a == a.T).all() and not a.diagonal().any()         # undirected, no self-loops
    assert len(set(zip(g.src.tolist(), g.dst.tolist()))) == g.m   # no repeats
    assert g.weight.min() >= 1
    w = g.weight_matrix().toarray()
    assert (w == w.T).all()                                    # both arcs of an edge share the weight
    assert arcs(sg.generate(spec.replace("seed=", "seed=1"))) != arcs(g)


def test_generator_shapes():
    assert sg.rmat(7, 4, seed=1).n == 128
    g = sg.rmat(8, 8, seed=1)
    deg = np.bincount(g.src - 1, minlength=g.n)
    assert deg.max() > 4 * np.median(deg[deg > 0])             # skewed degrees
    g = sg.ssca2(60, 5, 0.0, seed=2)
    import scipy.sparse.csgraph as cg
    assert cg.connected_components(g.weight_matrix())[0] >= 60 // 5   # only cliques
    d = sg.gnp(10, 0.5, seed=1, directed=True)
    assert d.directed and not (d.adjacency() == d.adjacency().T).all()


@pytest.mark.parametrize("spec", ["foo:n=3", "gnp:n=3,q=1", "gnp:n=x", "rmat:scale=3,a=0.9", "gnp:n"])
def test_generate_bad_spec(spec):
    with pytest.raises(ValueError):
        sg.generate(spec)


def test_bundled():
    assert set(sg.bundled_names()) >= {"karate", "lesmis", "grid"}
    k = sg.bundled("karate")
    assert (k.n, k.m) == (34, 156) and not k.directed
    with pytest.raises(ValueError):
        sg.bundled("../pyproject")


# ------------------------------------------------------------------ the GRAPH_* built-ins
PROG = """
var P: table(GRAPH_N, GRAPH_N); L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_WBITS + 2);
begin
  writeln(GRAPH_N, ' ', GRAPH_M, ' ', GRAPH_VBITS(), ' ', GRAPH_WBITS);
  GRAPH_ADJ(P); GRAPH_EDGES(L, R, W);
  writeln(P); writeln(L); writeln(R); writeln(W);
end.
"""


def test_builtins(machine, sample):
    machine.graph = sample
    machine.run(PROG)
    out = machine.out.getvalue().split("\n")
    assert out[0] == "6 5 3 4"
    rows = [r for r in out[1:] if r]
    P = np.array([[c == "1" for c in r] for r in rows[:6]])
    assert (P == sample.adjacency()).all()
    L, R, W = rows[6:11], rows[11:16], rows[16:21]
    assert [int(x, 2) for x in L] == sample.src.tolist()
    assert [int(x, 2) for x in R] == sample.dst.tolist()
    assert [int(x, 2) for x in W] == sample.weight.tolist() and len(W[0]) == 6


def test_no_graph(machine):
    with pytest.raises(StarRuntimeError, match="no graph") as info:
        machine.run("var P: table(GRAPH_N, GRAPH_N);\nbegin end.", "p.star")
    assert info.value.loc is not None and info.value.line == 1 and "--graph" in info.value.render()
    with pytest.raises(StarRuntimeError, match="no graph"):
        machine.run("begin\n writeln(GRAPH_M);\nend.")


def test_default_before_globals_and_user_wins(machine, sample):
    src = "var P: table(GRAPH_N, 1);\nbegin GRAPH_DEFAULT('karate'); writeln(NROWS(P), ' ', GRAPH_M); end."
    machine.run(src)
    assert machine.out.getvalue() == "34 156\n"
    m2 = starvm.Machine(out=io.StringIO(), backend=machine.backend.name, graph=sample)
    m2.run(src)
    assert m2.out.getvalue() == "6 5\n"


def test_wrong_sizes(machine, sample):
    machine.graph = sample
    with pytest.raises(StarRuntimeError, match="GRAPH_ADJ"):
        machine.run("var P: table(5, 6);\nbegin GRAPH_ADJ(P); end.")
    with pytest.raises(StarRuntimeError, match="GRAPH_EDGES: L"):
        machine.run("var L, W: table(5, 2);\nbegin GRAPH_EDGES(L, L, W); end.")


@pytest.mark.parametrize("src,msg", [
    ("begin GRAPH_DEFAULT('nosuch'); end.", "no bundled graph 'nosuch'"),
    ("begin GRAPH_DEFAULT('../../etc/passwd'); end.", "no bundled graph"),
    ("begin GRAPH_DEFAULT('/work/main/data/karate.mtx'); end.", "no bundled graph"),
    ("var s: integer; begin GRAPH_DEFAULT(s); end.", "takes the name of a bundled graph"),
    ("begin GRAPH_DEFAULT('karate'); GRAPH_DEFAULT('grid'); end.", "names one default graph"),
    ("var x: integer; begin x := GRAPH_ADJ; end.", "statement"),
    ("var P: table(2, 2); begin GRAPH_ADJ(COL(1, P)); end.", "table variable"),
    ("var graph_n: integer; begin end.", "built-in"),
])
def test_checked(machine, src, msg):
    with pytest.raises(StarTypeError, match=msg):
        machine.run(src)
    assert machine.graph_default is None


# ------------------------------------------------------------------ vectorised readers (fast_io.py)
from starvm.graphs import fast_io, io as graph_io  # noqa: E402

LINE_READERS = {"mtx": graph_io._read_mtx, "dimacs": graph_io._read_dimacs, "edgelist": graph_io._read_edgelist}
FAST_READERS = {"mtx": fast_io.fast_mtx, "dimacs": fast_io.fast_dimacs, "edgelist": fast_io.fast_edgelist}


def same_graph(a, b):
    return (a.n == b.n and a.directed == b.directed and np.array_equal(a.src, b.src)
            and np.array_equal(a.dst, b.dst) and np.array_equal(a.weight, b.weight))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fmt", ["mtx", "dimacs", "edgelist"])
def test_fast_readers_equal_line_readers(tmp_path, fmt, seed):
    """Random graphs written with comments, CRLF, tabs and blank lines: the vectorised reader
    reads them (it does not decline) and gives exactly what the line reader gives."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    m = int(rng.integers(0, 300))
    g = sg.Graph(n, rng.integers(1, n + 1, m), rng.integers(1, n + 1, m), rng.integers(0, 1000, m))
    p = tmp_path / "g.txt"
    {"mtx": sg.write_mtx, "dimacs": sg.write_dimacs, "edgelist": sg.write_edgelist}[fmt](g, p, comment="made\nby a test")
    text = p.read_text()
    lines = text.split("\n")
    if seed % 2:                                    # blank lines and tabs inside the entries
        lines = [ln.replace(" ", "\t", 1) if i % 3 == 0 and i > 3 else ln for i, ln in enumerate(lines)]
        lines.insert(len(lines) // 2 + 3, "")
    if fmt != "dimacs" and seed % 3 == 0:          # a comment among the entries
        lines.insert(len(lines) - 2, "% late comment" if fmt == "mtx" else "# late comment")
    text = ("\r\n" if seed == 4 else "\n").join(lines)
    data = text.encode()
    fast = FAST_READERS[fmt](data)
    assert fast is not None, text[:200]
    assert same_graph(fast, LINE_READERS[fmt](text, "g"))


@pytest.mark.parametrize("kind", ["pattern symmetric", "real general", "integer symmetric"])
def test_fast_mtx_fields(kind):
    text = f"%%MatrixMarket matrix coordinate {kind}\n% c\n5 5 4\n" + \
        "\n".join(("1 2", "3 3", "5 1", "2 4")[i] + ("" if kind.startswith("pattern") else f" {w}")
                  for i, w in enumerate(["4.0", "2", "1e2", "0"] if kind.startswith("real") else ["4", "2", "100", "0"]))
    fast = fast_io.fast_mtx(text.encode())
    assert fast is not None and same_graph(fast, graph_io._read_mtx(text, "x"))


# (file, text): valid but unusual -- the fast reader may decline, the result is the line reader's
UNUSUAL = [
    ("a.mtx", MTX + "3 3 1\n1 2 +3\n"),
    ("a.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 3.\n"),
    ("e.txt", "1 2\n2 3 4\n"),                     # mixed 2 and 3 fields
    ("e.txt", "1,2,3.0\n"),
    ("r.gr", "p sp 3 1\n  a 1 2 3\n"),
    ("r.gr", "c x\np sp 3 2\na 1 2 3\nc mid\na 2 3 4\n"),
    ("e.txt", ""),
    ("e.txt", "# only a comment\n\n"),
]


@pytest.mark.parametrize("name,text", UNUSUAL)
def test_unusual_files_read_as_before(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    fmt = sg.guess_format(p)
    assert same_graph(sg.load(p), LINE_READERS[fmt](text, str(p)))


# malformed files the vectorised parse would misread if it trusted a lenient parser
MORE_BAD = [
    ("a.mtx", MTX + "3 3 1\n1 2 2.5\n", 3, "not a whole number"),
    ("a.mtx", MTX + "3 3 1\n1 2 2x\n", 3, "must be a number"),
    ("a.mtx", MTX + "3 3 2\n1 2 3 4\n2 3 1\n", 3, "expected 3 fields"),
    ("a.mtx", MTX + "3 3 2\n1 2\n3\n2 3 1\n", 3, "expected 3 fields"),
    ("a.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1.0 2 3\n", 3, "must be an integer"),
    ("a.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 nan\n", 3, "not a finite number"),
    ("a.mtx", MTX + "3 3 2\n1 2 -1\n2 3 1\n", 3, "negative weight"),
    ("r.gr", "p sp 3 2\na 1 2 -1\na 2 3 1\n", 2, "negative weight"),
    ("r.gr", "p sp 3 1\np sp 3 1\na 1 2 1\n", 2, "a second problem line"),
    ("r.gr", "p sp 3 2\na 1 2 1 5\na 2 3 1\n", 2, "expected 'a U V WEIGHT'"),
    ("e.txt", "1 2 -1\n2 3\n", 1, "negative weight"),
    ("e.txt", "1 2 3\n4 5 6\n7 8 9 10\n", 3, "fields"),
]


@pytest.mark.parametrize("name,text,line,what", MORE_BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(MORE_BAD)])
def test_malformed_after_vectorised_parse(tmp_path, name, text, line, what):
    test_malformed(tmp_path, name, text, line, what)


def test_usual_files_skip_the_line_reader(tmp_path, sample, monkeypatch):
    for fmt, write in (("mtx", sg.write_mtx), ("dimacs", sg.write_dimacs), ("edgelist", sg.write_edgelist)):
        write(sample, tmp_path / "s.dat", comment="c")
        monkeypatch.setattr(graph_io, {"mtx": "_read_mtx", "dimacs": "_read_dimacs", "edgelist": "_read_edgelist"}[fmt],
                            lambda *a: pytest.fail("the line reader ran"))
        assert arcs(sg.load(tmp_path / "s.dat", fmt)) == arcs(sample)


# the vectorised readers never accept what the line readers reject, and agree where both read
from hypothesis import given, settings, strategies as st  # noqa: E402

_LINE = st.lists(st.sampled_from(["1", "2", "3", "0", "12", "-1", "2.5", "4.0", "x", "a", "p", "c", "sp",
                                  "#", "%", "+3", "1e2", "", "\t"]), max_size=5).map(" ".join)
_HEADERS = {"mtx": ["%%MatrixMarket matrix coordinate integer general\n3 3 2\n",
                    "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n",
                    "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n"],
            "dimacs": ["p sp 3 2\n", "c hi\np sp 4 3\n", ""],
            "edgelist": ["", "# SNAP\n"]}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["mtx", "dimacs", "edgelist"]), st.integers(0, 2), st.lists(_LINE, max_size=6))
def test_fast_readers_never_disagree(fmt, header, lines):
    heads = _HEADERS[fmt]
    text = heads[header % len(heads)] + "\n".join(("a " + ln) if fmt == "dimacs" and ln[:1].isdigit() else ln
                                                  for ln in lines) + "\n"
    fast = FAST_READERS[fmt](text.encode())
    try:
        slow = LINE_READERS[fmt](text, "f")
    except GraphFileError:
        assert fast is None, text
        return
    assert fast is None or same_graph(fast, slow), text
