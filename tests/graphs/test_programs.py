"""Every graph program of programs/ on the real graphs NetworkX ships (each edge once, the
SNAP-file form) and on made-up arc lists, in both readings, run in-process through
Machine(graph=..., directed=...): the output against SciPy (the expectations of
tests/cli/test_graph_programs.py) and NetworkX (the MST weight, the BFS reach)."""
from __future__ import annotations

import io
import re

import networkx as nx
import pytest

import starvm
import starvm.graphs as sg
from graph_cases import Case, all_cases, closure, mst_reference
from tests.cli.test_graph_programs import DEFAULTS, expected, reading
from tests.conftest import ROOT

CLOSURE = ["warshall", "warshall_c", "warshall_adapt"]
PROGRAMS = sorted(DEFAULTS) + CLOSURE
# the real graphs and a made-up list with repeats, a loop and an isolated vertex (SciPy's
# csgraph, the expectations' reference, drops zero weights: no zero-weight case here), each in
# the program's own reading; karate also with --directed and --undirected (the closure
# programs read it the same way in both: they are checked in their own reading)
CASES = {c.name: c for c in all_cases()}
RUNS = [(CASES[name], prog, None) for name in ("karate", "florentine", "davis", "duplicates") for prog in PROGRAMS]
RUNS += [(CASES["karate"], prog, d) for prog in sorted(DEFAULTS) for d in (True, False)]
# (Les Miserables: tests/cli/test_graph_programs.py runs the programs on it, and
# tests/graphs/test_routines.py every routine)


def graph_of(case: Case) -> sg.Graph:
    a = case.a
    return sg.Graph(case.n, a[:, 0], a[:, 1], a[:, 2], name=case.name)


def run(backend: str, prog: str, g: sg.Graph, directed: bool | None) -> list[str]:
    out = io.StringIO()
    # the interpreter alone: with the suite's threshold (tests/conftest.py) --jit auto compiled
    # nothing here, but installing the tier rendered every routine's Numba code on each of these
    # machines (60% of the file's time); which routines of these programs the tier compiles, and
    # that it renders them, is tests/jit/test_census.py's
    m = starvm.Machine(backend=backend, out=out, graph=g, directed=directed, jit="off")
    m.run((ROOT / "programs" / f"{prog}.star").read_text(), f"{prog}.star")
    return out.getvalue().splitlines()


@pytest.mark.parametrize("case,prog,directed", RUNS,
                         ids=[f"{c}-{p}-{ {None: 'program', True: 'directed', False: 'undirected'}[d]}"
                              for c, p, d in RUNS])
def test_program(backend, prog, case, directed):
    g = graph_of(case)
    how = reading(prog, None if directed is None else ("directed" if directed else "undirected"))
    if prog in CLOSURE:
        how = how if directed is not None else "directed"
    got = run(backend, prog, g, directed)
    read = case if how == "directed" else Case(case.name, case.n, tuple(zip(*[x.tolist() for x in (
        g.undirected().src, g.undirected().dst, g.undirected().weight)])))
    if prog in CLOSURE:
        want = [f"transitive closure, read as {how} (row i: the vertices reachable from i):"]
        want += ["".join("1" if b else "0" for b in row) for row in closure(read)]
        assert got == want
        return
    if prog == "floyd":
        got = [re.sub(r" \(\d+ -> \d+\)$", "", x) for x in got]
    assert got == expected(prog, g, how)
    if prog.startswith("mst"):                       # NetworkX too: the weight of the forest
        assert got[2] == f"total weight: {mst_reference(read)[0]}"
    if prog.startswith("bfs"):
        G = nx.DiGraph(list(zip(*[x.tolist() for x in (read.a[:, 0], read.a[:, 1])])))
        G.add_nodes_from(range(1, case.n + 1))
        reach = len(nx.descendants(G, 1)) + 1
        assert f"reached {reach} of {case.n} vertices" in got
