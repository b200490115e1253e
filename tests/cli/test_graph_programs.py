"""programs/*.star for the graph algorithms of stdlib/graphs.star, run through `star run`:
on their bundled default graph, on a file named with --graph and on a generated graph, each
output checked against SciPy; each program's reading (GRAPH_READING, --directed /
--undirected) and its first line; and the sandbox rule for graph input."""
from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse.csgraph as cg

import starvm.graphs as sg
from starvm.ui.cli import main
from tests.conftest import ROOT, subprocess_env

DEFAULTS = {"bfs": "karate", "components": "lesmis", "floyd": "karate", "dijkstra": "grid",
            "bellman_ford": "grid", "mst_prim": "grid", "mst_kruskal": "grid", "mst_boruvka": "grid",
            "bfs_adapt": "karate", "bellman_ford_adapt": "grid"}
GEN = "ssca2:n=40,clique=5,p=0.3,seed=4,wmax=20"
# the reading each program states with GRAPH_READING (the MST and components programs need
# edges; BFS and the distances take the arcs as given)
UNDIRECTED = {"mst_prim", "mst_kruskal", "mst_boruvka", "components"}


def reading(prog: str, override: str | None = None) -> str:
    return override or ("undirected" if prog in UNDIRECTED else "directed")


def star(*args, check=True, in_process=True):
    """`star run ARGS` from the checkout's folder: its exit code, standard output and error.
    In this process, through the command line's main() (a fresh process costs about a second
    of imports, and a compiled routine is loaded again by each); ``in_process=False``: as its
    own process, `python -m starvm run ARGS`. With --jit off unless ARGS choose: with the suite's
    threshold (tests/conftest.py) auto compiles nothing, but installing the tier renders every
    routine's Numba code, most of a run's time here (the tier's verdict on these programs is
    tests/jit/test_census.py's; `star run` with the default tier, tests/cli/test_cli.py's)."""
    argv = ["run", *map(str, args), *([] if "--jit" in args else ["--jit", "off"])]
    if in_process:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:         # argparse's usage errors
                rc = e.code
        p = subprocess.CompletedProcess(argv, rc, out.getvalue(), err.getvalue())
    else:
        p = subprocess.run([sys.executable, "-m", "starvm", *argv], cwd=ROOT, env=subprocess_env(),
                           capture_output=True, text=True, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def expected(prog: str, g, how: str, source: int = 1) -> list[str]:
    """What the program prints for the graph g (as given), read as `how`, from the vertex
    `source` (--param source=N; 1 by default)."""
    g = g.read_as(how == "directed")
    W = g.weight_matrix()
    if prog in ("bfs", "bfs_adapt"):
        lev = cg.shortest_path(W, unweighted=True, indices=source - 1)
        out = [f"BFS from vertex {source}: {g.n} vertices, {g.m} arcs, read as {how}"]
        for d in range(g.n):
            vs = np.nonzero(lev == d)[0] + 1
            if vs.size:
                out.append(f"level {d}: " + " ".join(map(str, vs)))
        r = int(np.isfinite(lev).sum())
        out.append(f"reached {r} of {g.n} vertices")
        if r < g.n:
            out.append("unreached: " + " ".join(map(str, np.nonzero(~np.isfinite(lev))[0] + 1)))
        return out
    if prog == "components":
        k, lab = cg.connected_components(W, directed=True, connection="weak")
        out = [f"connected components: {k} ({g.n} vertices, {g.m} arcs), read as {how}"]
        seen = set()
        for v, c in enumerate(lab):
            if c not in seen:
                seen.add(c)
                out.append(f"component of vertex {v + 1}: {(lab == c).sum()} vertices")
        return out
    if prog in ("dijkstra", "bellman_ford", "bellman_ford_adapt"):
        d = cg.shortest_path(W, indices=source - 1)
        name = {"dijkstra": "Dijkstra", "bellman_ford": "Bellman-Ford", "bellman_ford_adapt": "Bellman-Ford-adapt"}[prog]
        out = [f"shortest paths from vertex {source} ({name}): {g.n} vertices, {g.m} arcs, "
               f"{int(np.isfinite(d).sum())} reached, read as {how}"]
        out += [f"  to {v + 1}: " + (str(int(x)) if np.isfinite(x) else "unreachable") for v, x in enumerate(d)]
        return out
    if prog.startswith("mst"):
        t = cg.minimum_spanning_tree(W)
        k = cg.connected_components(W, directed=False)[0]
        name = {"mst_prim": "Prim", "mst_kruskal": "Kruskal", "mst_boruvka": "Boruvka"}[prog]
        return [f"minimum spanning forest ({name}): {g.n} vertices, {g.m} arcs, read as {how}", f"tree edges: {g.n - k}",
                f"total weight: {int(t.sum())}", f"trees: {k}"]
    if prog == "floyd":
        D = cg.shortest_path(W)
        fin = np.isfinite(D) & ~np.eye(g.n, dtype=bool)
        out = [f"all-pairs shortest paths (Floyd): {g.n} vertices, {g.m} arcs, read as {how}",
               f"reachable ordered pairs: {int(fin.sum())} of {g.n * (g.n - 1)}",
               f"sum of their distances: {int(D[fin].sum())}"]
        if fin.any():
            out.append(f"longest shortest path: {int(D[fin].max())}")
        out.append(f"from vertex {source}: " + " ".join(str(int(x)) if np.isfinite(x) else "-" for x in D[source - 1]))
        return out
    raise AssertionError(prog)


def compare(prog, got: str, g, override: str | None = None, source: int = 1):
    lines = got.splitlines()
    if prog == "floyd":   # which pair is the longest is a tie-break: check only its length
        lines = [re.sub(r" \(\d+ -> \d+\)$", "", x) for x in lines]
    assert lines == expected(prog, g, reading(prog, override), source)


@pytest.mark.parametrize("prog", sorted(DEFAULTS))
def test_program_on_default_graph(prog):
    compare(prog, star(f"programs/{prog}.star").stdout, sg.bundled(DEFAULTS[prog]))


@pytest.mark.parametrize("prog", sorted(DEFAULTS))
def test_program_on_generated_graph(prog):
    compare(prog, star(f"programs/{prog}.star", "--generate", GEN).stdout, sg.generate(GEN))


SOURCE_PROGRAMS = ["bellman_ford", "bellman_ford_adapt", "bfs", "bfs_adapt", "dijkstra", "floyd"]


@pytest.mark.parametrize("prog", SOURCE_PROGRAMS)
def test_program_from_another_source(prog):
    """const source = 1; in the program, --param source=N (-D) on the command line."""
    g = sg.generate(GEN)
    compare(prog, star(f"programs/{prog}.star", "--generate", GEN, "--param", "source=7").stdout, g, source=7)
    compare(prog, star(f"programs/{prog}.star", "--generate", GEN, "-D", f"SOURCE={g.n}").stdout, g, source=g.n)


def test_source_parameter_errors():
    for bad in ("0", "41"):                   # the generated graph has 40 vertices
        p = star("programs/bfs.star", "--generate", GEN, "-D", f"source={bad}", check=False)
        assert p.returncode == 1 and p.stdout == ""
        assert "error: the source vertex must be one of the graph's vertices 1 .. GRAPH_N" in p.stderr
    p = star("programs/dijkstra.star", "-D", "start=3", check=False)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == "star: error: --param start=3: the program has no constant 'start' (its constants: source = 1)\n"
    p = star("programs/dijkstra.star", "-D", "source=true", check=False)
    assert p.returncode == 2 and "the constant 'source' is an integer, not a boolean" in p.stderr
    p = star("programs/dijkstra.star", "-D", "source=five", check=False)
    assert p.returncode == 2 and "source=five: the value must be an integer or true/false" in p.stderr


@pytest.mark.parametrize("prog,fmt", [("dijkstra", "mtx"), ("bfs", "edgelist"), ("mst_kruskal", "dimacs"),
                                      ("components", "npy"), ("mst_boruvka", "mtx")])
def test_program_on_file(tmp_path, prog, fmt):
    g = sg.generate("rmat:scale=5,ef=3,seed=7,wmax=9")
    path = tmp_path / ("g.npy" if fmt == "npy" else "g.data")   # np.save adds .npy
    {"mtx": sg.write_mtx, "edgelist": sg.write_edgelist, "dimacs": sg.write_dimacs, "npy": sg.write_npy}[fmt](g, path)
    got = star(f"programs/{prog}.star", "--graph", path, "--graph-format", fmt).stdout
    compare(prog, got, sg.load(path, fmt))


# a program that reads its graph directed and one that reads it undirected: the flags reach
# the machine alike for every program (graphs/cli.reading_from_args); every program in both
# readings is tests/graphs/test_programs.py's (karate, Machine(directed=...), each backend)
@pytest.mark.parametrize("prog", ["bfs", "mst_prim"])
@pytest.mark.parametrize("how", ["directed", "undirected"])
def test_program_reading_from_the_command_line(tmp_path, prog, how):
    """--directed / --undirected win over the program's GRAPH_READING; the first line says
    which reading ran. The graph lists each undirected edge once (a SNAP-style file)."""
    path = tmp_path / "one_arc.txt"
    sg.write_edgelist(one_arc_graph(), path)
    got = star(f"programs/{prog}.star", "--graph", path, f"--{how}").stdout
    compare(prog, got, sg.load(path), how)


def one_arc_graph():
    """Zachary's karate club, weighted, each edge once (u < v), as NetworkX ships it."""
    import networkx as nx
    G = nx.karate_club_graph()
    e = np.array([(u + 1, v + 1, d["weight"]) for u, v, d in G.edges(data=True)])
    return sg.Graph(G.number_of_nodes(), e[:, 0], e[:, 1], e[:, 2], name="karate-one-arc")


@pytest.mark.parametrize("prog", ["mst_prim", "mst_kruskal", "mst_boruvka"])
def test_mst_programs_on_one_arc_files(tmp_path, prog):
    """The issue's case: an edge list and a `general` .mtx holding every edge once give
    NetworkX's minimum spanning tree weight (karate 68, Les Miserables 105)."""
    import networkx as nx
    G = nx.les_miserables_graph()
    ids = {v: i + 1 for i, v in enumerate(G.nodes())}
    e = np.array([(ids[u], ids[v], int(d["weight"])) for u, v, d in G.edges(data=True)])
    lesmis = sg.Graph(len(ids), e[:, 0], e[:, 1], e[:, 2])
    for g, want in ((one_arc_graph(), 68), (lesmis, 105)):
        for write, name in ((sg.write_edgelist, "g.txt"), (sg.write_mtx, "g.mtx")):
            write(g, tmp_path / name)
            out = star(f"programs/{prog}.star", "--graph", tmp_path / name).stdout.splitlines()
            assert out[0].endswith(f"{g.n} vertices, {2 * g.m} arcs, read as undirected"), out[0]
            assert out[2] == f"total weight: {want}", (name, out)


def test_bad_graph_file(tmp_path):
    p = tmp_path / "bad.gr"
    p.write_text("p sp 4 2\na 1 2 5\na 2 7 1\n")
    r = star("programs/dijkstra.star", "--graph", p, check=False, in_process=False)     # as its own process
    assert r.returncode == 1 and r.stdout == ""
    assert f"{p}:3: vertex 7 out of range 1..4" in r.stderr


def test_usage_errors(tmp_path):
    r = star("programs/bfs.star", "--graph", tmp_path / "missing.mtx", check=False)
    assert r.returncode == 2 and "cannot read" in r.stderr
    r = star("programs/bfs.star", "--generate", "rmat:size=3", check=False)
    assert r.returncode == 2 and "--generate" in r.stderr
    r = star("programs/bfs.star", "--graph", "data/karate.mtx", "--generate", "gnp:n=3,p=1", check=False)
    assert r.returncode == 2
    r = star("programs/bfs.star", "--directed", "--undirected", check=False)
    assert r.returncode == 2 and "not allowed with" in r.stderr


def test_no_graph_anywhere(tmp_path):
    p = tmp_path / "g.star"
    p.write_text("var P: table(GRAPH_N, GRAPH_N);\nbegin\n  GRAPH_ADJ(P);\nend.\n")
    r = star(p, check=False)
    assert r.returncode == 1 and "no graph" in r.stderr and "g.star:1:" in r.stderr
    r = star(p, "--generate", "gnp:n=5,p=0.5")
    assert r.returncode == 0


def test_sandbox_paths(tmp_path):
    """A program can read only the graph the user named or a bundled one, never a path."""
    secret = tmp_path / "secret.mtx"
    sg.write_mtx(sg.from_edges(3, [(1, 2)]), secret)
    p = tmp_path / "p.star"
    for name in (str(secret), "../data/karate", "karate.mtx", "grid.gr", "secret"):
        p.write_text(f"begin\n  GRAPH_DEFAULT('{name}');\n  writeln(GRAPH_N);\nend.\n")
        r = star(p, check=False)
        assert r.returncode == 1 and "no bundled graph" in r.stderr and "p.star:2:" in r.stderr, name
    p.write_text("begin\n  GRAPH_DEFAULT('KARATE');\n  writeln(GRAPH_N);\nend.\n")
    assert star(p).stdout == "34\n"


# ------------------------------------------------------------------ issue 37: every input an answer or one error
U64 = (1 << 64) - 1


def test_uint64_weight_gives_the_exact_distance(tmp_path):
    """The issue's file: an unmodified Matrix Market file with a uint64 weight."""
    p = tmp_path / "u64.mtx"
    p.write_text(f"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 {U64}\n")
    assert star("programs/dijkstra.star", "--graph", p).stdout.splitlines()[2] == f"  to 2: {U64}"


def test_weights_beyond_64_bits_are_one_error(tmp_path):
    p = tmp_path / "huge.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1e300\n")
    r = star("programs/dijkstra.star", "--graph", p, check=False, in_process=False)
    assert r.returncode == 1 and r.stdout == "" and "internal error" not in r.stderr
    assert f"{p}:3: weight 1e300 does not fit 64 bits" in r.stderr
    r = star("programs/dijkstra.star", "--graph", p, "--weights", "exact", check=False)
    assert r.returncode == 1 and f"{p}:3: weight 1e300 does not fit 64 bits" in r.stderr
    p.write_text("1 99999999999999999999\n")
    r = star("programs/bfs.star", "--graph", p, "--graph-format", "edgelist", check=False)
    assert r.returncode == 1 and f"{p}:1: vertex 99999999999999999999 is too large" in r.stderr


def test_real_weights_and_the_weight_modes(tmp_path):
    """Programs that read only arcs run on a real-weighted file; one that reads weights stops
    with the file's line and the modes to choose; --weights round / scale=K / ignore read it."""
    p = tmp_path / "real.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.5\n2 3 2.25\n")
    for prog in ("bfs", "components", "warshall"):
        assert star(f"programs/{prog}.star", "--graph", p).returncode == 0
    r = star("programs/dijkstra.star", "--graph", p, check=False)
    assert r.returncode == 1 and f"{p}:3: weight 1.5 is not a whole number" in r.stderr
    assert "--weights round" in r.stderr and "--weights ignore" in r.stderr
    want = {"round": ["2", "4"], "scale=100": ["150", "375"], "ignore": ["1", "2"]}
    for mode, dist in want.items():
        out = star("programs/dijkstra.star", "--graph", p, "--weights", mode).stdout.splitlines()
        assert [x.split(": ")[1] for x in out[2:]] == dist, mode
    r = star("programs/dijkstra.star", "--graph", p, "--weights", "scale=0", check=False)
    assert r.returncode == 2 and "--weights: scale=K needs a number K > 0" in r.stderr
    r = star("programs/dijkstra.star", "--generate", "gnp:n=4,p=0.5", "--weights", "round", check=False)
    assert r.returncode == 2 and "--weights needs --graph FILE" in r.stderr


def test_byte_order_mark_and_empty_files(tmp_path):
    p = tmp_path / "bom.mtx"
    p.write_bytes(b"\xef\xbb\xbf%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 3\n")
    assert star("programs/dijkstra.star", "--graph", p).stdout.splitlines()[2] == "  to 2: 3"
    e = tmp_path / "empty.txt"
    e.write_text("")
    r = star("programs/dijkstra.star", "--graph", e, check=False)     # no vertex 1: the program says so
    assert r.returncode == 1 and r.stderr.startswith("programs/dijkstra.star:") and "stdlib/" not in r.stderr
    assert "source vertex" in r.stderr
    assert star("programs/components.star", "--graph", e).stdout.startswith("connected components: 0 (0 vertices")


def test_devices_and_huge_inputs_are_usage_errors(tmp_path):
    r = star("programs/bfs.star", "--graph", "/dev/zero", check=False)
    assert r.returncode == 2 and "cannot read /dev/zero: not a regular file or a pipe" in r.stderr
    r = star("/dev/zero", check=False)
    assert r.returncode == 2 and "cannot read /dev/zero: not a regular file or a pipe" in r.stderr
    r = star("programs/bfs.star", "--generate", "rmat:scale=40", check=False)
    assert r.returncode == 2 and "--generate: rmat scale=40, ef=16" in r.stderr and "of memory" in r.stderr
    big = tmp_path / "big.npy"
    with open(big, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<i8", "fortran_order": False, "shape": (100000, 100000)})
    r = star("programs/bfs.star", "--graph", big, check=False)
    assert r.returncode == 1 and f"{big}: truncated file: the header announces shape (100000, 100000)" in r.stderr
