"""Main blocks and graph input in compiled code (issue 31): a main block that reads the graph
(GRAPH_ADJ, GRAPH_EDGES, GRAPH_N, ...) compiles, the host doing the graph input for it
(kernels.host_request, call.OutputSink.request) on the tables compiled code hands over, in
the main block or in a routine that takes the tables as parameters. Output, steps and errors
(message, position, Star call stack) equal the interpreter's; results against a plain
Python reading of the same graph."""
from __future__ import annotations

import numpy as np
import pytest

from reference.jit_differential import compiled_routines, jit_cache, run  # noqa: F401  (jit_cache: fixture)
from starvm.graphs.graph import from_edges

# one text for every graph and case (each distinct text is a Numba compile: seconds)
READER = """
proc EDGE_WEIGHTS(var L, R, W: table; var total, arcs: integer);
var i: integer; S: slice(L);
begin
  GRAPH_EDGES(L, R, W);
  total := 0; arcs := 0;
  SET(S);
  while SOME(S) do
  begin
    i := STEP(S);
    total := total + NUMOF(ROW(i, W)) * NUMOF(ROW(i, L));
    arcs := arcs + 1
  end
end;

var P: table(GRAPH_N, GRAPH_N);
    L, R: table(GRAPH_M, GRAPH_VBITS);
    W: table(GRAPH_M, GRAPH_WBITS);
    X: slice(P);
    v, deg, total, arcs: integer;
begin
  write('n ', GRAPH_N, ' m ', GRAPH_M, ' vbits ', GRAPH_VBITS, ' wbits ', GRAPH_WBITS);
  if GRAPH_UNDIRECTED then writeln(' undirected') else writeln(' directed');
  GRAPH_ADJ(P);
  for v := 1 to GRAPH_N do
  begin
    X := COL(v, P);
    deg := NUMB(X);
    if deg > 0 then writeln(v, ' in ', deg, ' first ', FND(X))
  end;
  EDGE_WEIGHTS(L, R, W, total, arcs);
  writeln('arcs ', arcs, ' weighted sum ', total)
end.
"""


def _expected(g) -> str:
    """What READER prints, computed from the arcs in plain Python."""
    n, src, dst, w = g.n, g.src.tolist(), g.dst.tolist(), g.weight.tolist()
    vbits, wbits = g.vbits, g.wbits
    lines = [f"n {n} m {len(src)} vbits {vbits} wbits {wbits} {'directed' if g.directed else 'undirected'}"]
    into: dict[int, set[int]] = {}
    for u, v in zip(src, dst):
        into.setdefault(v, set()).add(u)
    for v in range(1, n + 1):
        if into.get(v):
            lines.append(f"{v} in {len(into[v])} first {min(into[v])}")
    lines.append(f"arcs {len(src)} weighted sum {sum(a * b for a, b in zip(w, src))}")
    return "\n".join(lines) + "\n"


def _graphs():
    rng = np.random.default_rng(31)
    out = {"one vertex": from_edges(1, [(1, 1)], [3])}
    for n, m in ((5, 9), (70, 300), (130, 129)):       # sizes past a word (64), not multiples of it
        e = rng.integers(1, n + 1, size=(m, 2))
        out[f"{n} vertices"] = from_edges(n, e, rng.integers(1, 1000, size=m))
    return out


GRAPHS = _graphs()


@pytest.mark.parametrize("name", list(GRAPHS))
def test_a_main_block_reading_the_graph_compiles_and_equals_the_interpreter(backend, name):
    g = GRAPHS[name]
    off = run(READER, "reader.star", "off", backend=backend, graph=g)
    on = run(READER, "reader.star", "on", backend=backend, graph=g)
    assert off[2] is None and on[2] is None, (off[2], on[2])
    assert on[:3] == off[:3]
    assert off[0] == _expected(g)
    m = on[3]
    if backend == "numpy":    # on auto a call whose tables auto put on the device runs there (auto_tier.py)
        assert "main block" in compiled_routines(m) and "EDGE_WEIGHTS" not in m.jit.skipped   # compiled into it
        assert m.jit.routines["main_"].compiled_calls == 1


def test_the_karate_club_read_undirected_equals_the_interpreter(backend):
    src = READER.replace("begin\n  write('n '", "begin\n  GRAPH_DEFAULT('karate');\n  GRAPH_READING('undirected');\n"
                                                "  write('n '", 1)
    off = run(src, "karate.star", "off", backend=backend)
    on = run(src, "karate.star", "on", backend=backend)
    assert off[2] is None and on[:3] == off[:3]
    assert off[0].startswith("n 34 m 156 ") and "undirected" in off[0]
    assert backend != "numpy" or "main block" in compiled_routines(on[3])


def test_graph_input_errors_have_the_interpreters_position_and_call_stack(backend):
    # a table of the wrong size for GRAPH_EDGES, inside a routine called from the main block
    src = READER.replace("L, R: table(GRAPH_M, GRAPH_VBITS)", "L, R: table(GRAPH_M + 1, GRAPH_VBITS)")
    g = GRAPHS["70 vertices"]
    off = run(src, "reader.star", "off", backend=backend, graph=g)
    on = run(src, "reader.star", "on", backend=backend, graph=g)
    assert off[2] is not None and "GRAPH_EDGES: L must have GRAPH_M" in off[2]
    assert on[:3] == off[:3]          # the lines before it, the steps, the message with position and stack
    assert "EDGE_WEIGHTS" in off[2]


def test_no_graph_is_the_interpreters_error():
    src = "var n: integer;\nbegin\n  n := 0;\n  while n < 3 do n := n + 1;\n  writeln(n, ' ', GRAPH_N)\nend.\n"
    off = run(src, "nograph.star", "off")
    on = run(src, "nograph.star", "on")
    assert off[2] is not None and "no graph" in off[2] and "nograph.star:5" in off[2]
    assert on[:3] == off[:3]


# functions with `var` parameters or that assign globals, called inside expressions, loop
# tests, short-circuit `and`, write arguments: computed one operation per line in the
# interpreter's order (lower.ModuleGen.linear); a value as a statement (COL(i, P);)
EFFECTS = """
var T: table(70, 2); S, YS: slice(T); x, y, z, g: integer; b: boolean;
function firstone(var X: slice): integer;
begin firstone := STEP(X) end;
function bump(var k: integer): integer;
begin k := k + 1; bump := k * 10 end;
function tally: integer;
begin g := g + 1; tally := g end;
begin
  SET(S); g := 0;
  x := firstone(S);
  y := firstone(S) + 10;
  z := 5;
  y := z + bump(z) + z;
  writeln(x, ' ', y, ' ', z, ' ', NUMB(S));
  b := (z > 100) and (bump(z) > 0);
  writeln(b, ' ', z);
  b := (z > 1) and (bump(z) > 0) or (tally > 5);
  writeln(b, ' ', z, ' ', g);
  while firstone(S) < 20 do z := z + 1;
  writeln(z, ' ', NUMB(S));
  repeat z := z - 1 until bump(x) + tally > 100;
  writeln(z, ' ', x, ' ', g);
  writeln(firstone(S), ' ', firstone(S), ' ', bump(z), ' ', z, ' ', g + tally + g);
  COL(1, T) := S;
  COL(2, T);
  if tally > 3 then COL(tally mod 2 + 1, T) := NOT COL(1, T);
  YS := COL({col}, T);
  writeln(NUMB(YS), ' ', g)
end.
"""


@pytest.mark.parametrize("col", ["1", "firstone(S) - 21", "firstone(S)"])   # the last: out of range
def test_calls_with_effects_inside_expressions_compile_in_the_interpreters_order(backend, col):
    src = EFFECTS.replace("{col}", col)
    off = run(src, "effects.star", "off", backend=backend)
    on = run(src, "effects.star", "on", backend=backend)
    assert on[:3] == off[:3]
    assert (off[2] is None) == (col != "firstone(S)")
    assert off[0].startswith("1 71 6 68\nfalse 6\ntrue 7 0\n")
    assert backend != "numpy" or "main block" in compiled_routines(on[3])
