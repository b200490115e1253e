"""Every graph input gives an answer or one clear error (issue 37): integers beyond 64 bits
read exactly (uint64 weights work, larger ones are an error at file:line), real weights
(1e300, nan, inf, non-whole) and the weight modes (--weights auto | exact | ignore | round
| scale=K), byte order marks, empty and truncated files, devices and pipes, sizes checked
against the memory before anything is allocated, and the ranks' agreement on their input."""
from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse.csgraph import shortest_path

import starvm
import starvm.graphs as sg
import starvm.input_files as input_files
from starvm.errors import GraphFileError
from starvm.graphs import fast_io
from starvm.graphs.io import _read_dimacs, _read_edgelist, _read_mtx
from starvm.graphs.weights import parse_mode
from tests.conftest import ROOT
from tests.graphs.thread_comm import run_ranks

U64 = (1 << 64) - 1
DIJKSTRA = (ROOT / "programs" / "dijkstra.star").read_text()


def write(tmp_path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def mtx(entries: str, n: int = 3, field: str = "integer", count: int | None = None) -> str:
    lines = [x for x in entries.split(";") if x]
    return (f"%%MatrixMarket matrix coordinate {field} general\n{n} {n} {len(lines) if count is None else count}\n"
            + "".join(x.strip() + "\n" for x in lines))


def distances(backend, g) -> list[str]:
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out, graph=g).run(DIJKSTRA, "dijkstra.star")
    return [x.split(": ")[1] for x in out.getvalue().splitlines()[1:]]


def line_reader(fmt: str, data: bytes, mode="exact"):
    reader = {"mtx": _read_mtx, "dimacs": _read_dimacs, "edgelist": _read_edgelist}[fmt]
    return reader(data.decode(), "f", parse_mode(mode))


# ------------------------------------------------------------------ integers beyond int64
BIG_WEIGHTS = [(1 << 63) - 1, 1 << 63, U64]


@pytest.mark.parametrize("w", BIG_WEIGHTS)
@pytest.mark.parametrize("fmt", ["mtx", "dimacs", "edgelist"])
def test_weights_up_to_64_bits_are_exact(tmp_path, fmt, w):
    """The issue's file: an unmodified Matrix Market file with a uint64 weight (and the same
    in .gr and an edge list) gives the exact weight, never 2^63 - 1."""
    text = {"mtx": mtx(f"1 2 {w};2 3 1"), "dimacs": f"p sp 3 2\na 1 2 {w}\na 2 3 1\n",
            "edgelist": f"1 2 {w}\n2 3 1\n"}[fmt]
    g = sg.load(write(tmp_path, "g", text), fmt)
    assert [int(x) for x in g.weight] == [w, 1] and g.max_weight == w
    assert g.wbits == w.bit_length()


def test_uint64_weight_runs_dijkstra_exactly(backend, tmp_path):
    g = sg.load(write(tmp_path, "g.mtx", mtx(f"1 2 {U64};2 3 0;1 3 {U64 - 5}")))
    assert distances(backend, g) == ["0", str(U64), str(U64 - 5)]


@pytest.mark.parametrize("fmt,text,line,message", [
    ("mtx", mtx(f"1 2 {U64 + 1}"), 3, "does not fit 64 bits"),
    ("mtx", mtx("1 2 1e300", field="real"), 3, "weight 1e300 does not fit 64 bits"),
    ("mtx", mtx("1 2 1e300"), 3, "weight 1e300 does not fit 64 bits"),
    ("mtx", mtx("1 2 nan", field="real"), 3, "not a finite number"),
    ("mtx", mtx("1 2 -inf", field="real"), 3, "not a finite number"),
    ("mtx", mtx("1 2 -9223372036854775809"), 3, "negative weight"),
    ("dimacs", "p sp 3 1\na 1 2 99999999999999999999999\n", 2, "does not fit 64 bits"),
    ("edgelist", "1 2 3\n2 3 18446744073709551616\n", 2, "does not fit 64 bits"),
    ("edgelist", "1 9223372036854775808\n", 1, "vertex 9223372036854775808 is too large"),
    ("edgelist", "1 2\n99999999999999999999 1\n", 2, "is too large"),
    ("mtx", "%%MatrixMarket matrix coordinate integer general\n9223372036854775808 9223372036854775808 0\n",
     2, "a size 9223372036854775808 is too large"),
    ("dimacs", "p sp 3 9223372036854775807\n", 1, "ARCS 9223372036854775807 is too large"),
])
def test_numbers_beyond_64_bits_name_file_and_line(tmp_path, fmt, text, line, message):
    p = write(tmp_path, "g", text)
    with pytest.raises(GraphFileError) as info:
        sg.load(p, fmt)
    assert info.value.graph_line == line and message in str(info.value), str(info.value)
    assert info.value.message.startswith(f"{p}:{line}: ")


def test_real_field_integers_beyond_2_53_are_exact(tmp_path):
    """A real file's whole weights between 2^53 and 2^64 are read exactly (as the line reader
    reads their digits), not through a float that drops their low bits."""
    w = (1 << 53) + 1
    g = sg.load(write(tmp_path, "g.mtx", mtx(f"1 2 {w};2 3 2.0", field="real")))
    assert [int(x) for x in g.weight] == [w, 2]
    assert fast_io.fast_mtx(mtx(f"1 2 {w}", field="real").encode(), parse_mode("exact")) is None


# ------------------------------------------------------------------ weight modes
REALS = "1 2 1.5;2 3 2.5;1 3 4.4999;3 1 0.2"


@pytest.mark.parametrize("mode,want", [
    ("round", [2, 2, 4, 0]),                # halves to even
    ("scale=10", [15, 25, 45, 2]),
    ("scale=0.5", [1, 1, 2, 0]),            # 0.75 -> 1, 1.25 -> 1, 2.24995 -> 2, 0.1 -> 0
    ("ignore", [1, 1, 1, 1]),
])
def test_weight_modes_on_real_weights(tmp_path, mode, want):
    data = mtx(REALS, field="real")
    g = sg.load(write(tmp_path, "g.mtx", data), weights=mode)
    assert g.weight.tolist() == want
    assert line_reader("mtx", data.encode(), mode).weight.tolist() == want     # the line reader agrees


def test_exact_mode_refuses_real_weights_auto_defers(tmp_path, backend):
    p = write(tmp_path, "g.mtx", mtx(REALS, field="real"))
    with pytest.raises(GraphFileError, match=r"g.mtx:3: weight 1.5 is not a whole number"):
        sg.load(p)
    g = sg.load(p, weights="auto")           # the arcs load; weights are read only on demand
    assert g.m == 4 and g.meta["weights_error"][2] == 3
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out, graph=g).run(
        "var P: table(GRAPH_N, GRAPH_N); begin GRAPH_ADJ(P); writeln(GRAPH_N, ' ', GRAPH_M) end.", "adj.star")
    assert out.getvalue() == "3 4\n"
    with pytest.raises(GraphFileError, match=r"g.mtx:3: weight 1.5 .*this program reads the weights.*--weights round"):
        distances(backend, g)


def test_scale_against_scipy_on_a_networkx_graph(tmp_path):
    """Les Miserables with real weights w / 7: --weights scale=1000 gives SciPy's distances of
    the weights rint(1000 w / 7) (the real-data check of the weight modes)."""
    import networkx as nx
    G = nx.les_miserables_graph()
    ids = {v: i + 1 for i, v in enumerate(G.nodes())}
    real = [(ids[u], ids[v], d["weight"] / 7) for u, v, d in G.edges(data=True)]
    text = (f"%%MatrixMarket matrix coordinate real symmetric\n{len(ids)} {len(ids)} {len(real)}\n"
            + "".join(f"{max(u, v)} {min(u, v)} {w!r}\n" for u, v, w in real))
    g = sg.load(write(tmp_path, "lesmis.mtx", text), weights="scale=1000")
    want = np.rint(np.array([w for *_, w in real]) * 1000)
    assert sorted(g.weight.tolist()) == sorted((want.tolist() * 2))
    out = io.StringIO()
    starvm.Machine(out=out, graph=g).run(DIJKSTRA, "dijkstra.star")
    got = [x.split(": ")[1] for x in out.getvalue().splitlines()[1:]]
    ref = shortest_path(g.weight_matrix(), indices=0)
    assert got == [str(int(x)) for x in ref]


@pytest.mark.parametrize("bad", ["bogus", "scale=0", "scale=-1", "scale=nan", "scale=x"])
def test_bad_weight_mode(bad):
    with pytest.raises(ValueError):
        parse_mode(bad)


# ------------------------------------------------------------------ .npy
@pytest.mark.parametrize("value,mode,want", [
    (float(U64 - 2047), "exact", U64 - 2047),            # the largest double below 2^64
    (3.0, "exact", 3), (2.5, "round", 2), (0.25, "scale=10", 2),
    (1e300, "ignore", 1), (np.nan, "ignore", 1),
])
def test_npy_float_weights(tmp_path, value, mode, want):
    np.save(tmp_path / "g.npy", np.array([[0, value], [0, 0]]))
    assert sg.load(tmp_path / "g.npy", weights=mode).weight.tolist() == [want]


@pytest.mark.parametrize("value,message", [
    (1e300, "[0, 1]: weight 1e+300 does not fit 64 bits"), (np.inf, "[0, 1]: weight inf is not a finite number"),
    (np.nan, "[0, 1]: weight nan is not a finite number"), (2.0 ** 64, "does not fit 64 bits"),
    (1.5, "not a whole number"), (-3, "[0, 1]: negative weight -3"),
])
def test_npy_bad_weights_are_one_clear_error(tmp_path, value, message):
    np.save(tmp_path / "g.npy", np.array([[0, value], [0, 0]]))
    with _no_warnings():
        with pytest.raises(GraphFileError, match=message.replace("+", r"\+").replace("[", r"\[")):
            sg.load(tmp_path / "g.npy")


def test_npy_uint64_weights(tmp_path):
    np.save(tmp_path / "g.npy", np.array([[0, U64], [1 << 63, 0]], dtype=np.uint64))
    assert [int(x) for x in sg.load(tmp_path / "g.npy").weight] == [U64, 1 << 63]


def test_npy_header_checked_before_allocating(tmp_path, monkeypatch):
    """A header announcing 10^5 x 10^5 int64 over a few bytes is a truncated file; a real file
    whose arcs would not fit the memory is refused before they are read (OSError: exit 2)."""
    p = tmp_path / "big.npy"
    with open(p, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<i8", "fortran_order": False, "shape": (100000, 100000)})
        f.write(b"\0" * 100)
    with pytest.raises(GraphFileError, match=r"truncated file: the header announces shape \(100000, 100000\)"):
        sg.load(p)
    np.save(tmp_path / "ones.npy", np.ones((50, 50), dtype=bool))
    monkeypatch.setattr(input_files, "available_memory", lambda: 10_000)
    with pytest.raises(OSError, match="needs about .* of memory, only 9.8 KiB is available"):
        sg.load(tmp_path / "ones.npy")


def test_npy_not_an_array(tmp_path):
    p = write(tmp_path, "g.npy", b"\x93NUMPY\x01\x00garbage")
    with pytest.raises(GraphFileError, match="not a readable .npy header"):
        sg.load(p)
    np.save(tmp_path / "e.npy", np.zeros((0, 0)))
    assert sg.load(tmp_path / "e.npy").n == 0


# ------------------------------------------------------------------ text shapes
@pytest.mark.parametrize("fmt,text", [
    ("mtx", mtx("1 2 3;2 3 4")), ("dimacs", "p sp 3 2\na 1 2 3\na 2 3 4\n"), ("edgelist", "1 2 3\n2 3 4\n"),
])
def test_byte_order_mark_is_accepted(tmp_path, fmt, text):
    plain = sg.load(write(tmp_path, "a", text), fmt)
    marked = sg.load(write(tmp_path, "b", b"\xef\xbb\xbf" + text.encode()), fmt)
    assert (marked.n, marked.src.tolist(), marked.dst.tolist(), marked.weight.tolist()) == \
        (plain.n, plain.src.tolist(), plain.dst.tolist(), plain.weight.tolist()) == (3, [1, 2], [2, 3], [3, 4])


def test_a_mark_after_the_start_is_named_plainly(tmp_path):
    with pytest.raises(GraphFileError, match=r":2: a vertex must be an integer, got '\\ufeff2'"):
        sg.load(write(tmp_path, "g.txt", "1 2\n\ufeff2 3\n"))


# ------------------------------------------------------------------ devices, pipes, memory
def test_devices_and_directories_are_not_read(tmp_path):
    with pytest.raises(OSError, match="not a regular file or a pipe"):
        sg.load("/dev/zero")
    with pytest.raises(OSError):
        sg.load(tmp_path)


def test_a_pipe_is_read_up_to_the_memory_bound(tmp_path, monkeypatch):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed(data):
        with open(fifo, "wb") as f:
            try:
                f.write(data)
            except BrokenPipeError:
                pass

    t = threading.Thread(target=feed, args=(b"1 2 5\n2 3 1\n",))
    t.start()
    assert sg.load(fifo).weight.tolist() == [5, 1]
    t.join()
    monkeypatch.setattr(input_files, "available_memory", lambda: 8 * 4096)   # bound: 4 KiB of text
    t = threading.Thread(target=feed, args=(b"1 2\n" * 1_000_000,))
    t.start()
    with pytest.raises(OSError, match="more than 4.0 KiB to read"):
        sg.load(fifo)
    t.join(10)


def test_a_regular_file_larger_than_the_memory_bound(tmp_path, monkeypatch):
    p = write(tmp_path, "g.txt", "1 2\n" * 1000)
    monkeypatch.setattr(input_files, "available_memory", lambda: 8000)
    with pytest.raises(OSError, match="the file is 3.9 KiB; reading it needs about 31.2 KiB"):
        sg.load(p)


@pytest.mark.parametrize("spec,message", [
    ("rmat:scale=40", "rmat scale=40, ef=16 .* needs about .* TiB of memory"),
    ("gnp:n=10000000,p=0.5", "gnp n=10000000"),
    ("ssca2:n=100000000000", "ssca2 n=100000000000"),
])
def test_generators_check_memory_first(spec, message):
    with pytest.raises(ValueError, match=message):
        sg.generate(spec)


# ------------------------------------------------------------------ the ranks' inputs
def test_ranks_with_different_files_stop_with_one_error(tmp_path):
    """Rank 1 reads a stale copy: every rank raises the same error naming both digests."""
    from starvm.distributed.graph_input import input_digest, rank_graph
    good, stale = write(tmp_path, "g.txt", "1 2 3\n2 3 4\n"), write(tmp_path, "old.txt", "1 2 3\n2 3 5\n")
    files = [good, stale, good]

    def work(comm):
        return rank_graph(comm, None, str(files[comm.rank]), "edgelist", None)

    with pytest.raises(GraphFileError, match=r"the ranks read different graph inputs: on rank 0 [0-9a-f]{16}, "
                                             r"on rank 1 [0-9a-f]{16}"):
        run_ranks(3, work)
    files[1] = good
    graphs = run_ranks(3, work)
    assert sum(len(g.arcs) for g in graphs) == 2
    assert input_digest(None, str(good), None, None) != input_digest(None, str(good), None, "ignore")
    assert input_digest(None, "/dev/zero", None, None) == "not a regular file"
    assert input_digest(None, str(tmp_path / "missing"), None, None).startswith("unreadable")


def test_ranks_with_the_same_spec_agree(tmp_path):
    from starvm.distributed.graph_input import rank_graph
    graphs = run_ranks(2, lambda comm: rank_graph(comm, "rmat:scale=4,ef=2,seed=3", None, None, None))
    whole = sg.generate("rmat:scale=4,ef=2,seed=3")
    assert sum(len(g.arcs) for g in graphs) == whole.m


class _no_warnings:
    """No RuntimeWarning (or any other) may escape a reader."""

    def __enter__(self):
        import warnings
        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def test_karate_with_64_bit_weights_against_networkx(backend, tmp_path):
    """Zachary's karate club as NetworkX ships it, each weight w made w * 2^61 + w (up to
    7 * 2^61 + 7: past 2^63, uint64; distances too): a symmetric .mtx read exactly, and
    Dijkstra's distances equal NetworkX's on Python integers (exact), not SciPy's floats."""
    import networkx as nx
    G = nx.karate_club_graph()
    big = {(u, v): d["weight"] * (1 << 61) + d["weight"] for u, v, d in G.edges(data=True)}
    text = (f"%%MatrixMarket matrix coordinate integer symmetric\n34 34 {len(big)}\n"
            + "".join(f"{max(u, v) + 1} {min(u, v) + 1} {w}\n" for (u, v), w in big.items()))
    g = sg.load(write(tmp_path, "karate.mtx", text))
    assert g.weight.dtype == np.uint64 and g.max_weight == max(big.values()) > 1 << 63
    nx.set_edge_attributes(G, {e: w for e, w in big.items()}, "big")
    want = nx.single_source_dijkstra_path_length(G, 0, weight="big")
    assert max(want.values()) > 1 << 63
    assert distances(backend, g) == [str(want[v]) for v in range(34)]
