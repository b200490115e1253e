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


# library routines with a native kernel called from compiled code: the host runs the kernel
# (kernels.host_native -> call.OutputSink.native) on compiled code's tables and vectors;
# table sizes from NROWS of size tables, so every case is one compiled module
NATIVES = """
var T: table(NROWS(SIZE_N), 8); IX: table(NROWS(SIZE_M), 7); R: table(NROWS(SIZE_M), 8);
    B: table(NROWS(SIZE_N), 8); ID: table(NROWS(SIZE_N), 7);
    G: table(NROWS(SIZE_M), 3); K: table(NROWS(SIZE_M), 6);
    X: slice(IX); Z: slice(G); i, s: integer;

{ its slice is dead after the call, and a computed slice: their words must live until the
  host has run the kernel (Numba frees an array after its last use) }
proc VIA(T, IX: table; var R: table);
var A: slice(IX);
begin
  SET(A); A(2) := 0;
  GATHER(T, IX, A, R);
  GATHER(T, IX, A and not COL(1, IX), R)
end;

proc FILL(var F: table; seed, limit: integer);
var i: integer; w: word(F);
begin
  for i := 1 to NROWS(F) do begin SETNUM((i * seed) mod limit + 1, w); ROW(i, F) := w end
end;

begin
  FILL(T, 7, 251); FILL(IX, 3, NROWS(T) + NROWS(SIZE_BAD)); FILL(G, 5, 6); FILL(K, 11, 60);
  IOTA(ID);
  SET(X); X(3) := 0; X(NROWS(IX)) := 0;
  GATHER(T, IX, X, R);
  VIA(T, IX, R);
  SCATTER(R, IX, X, B);
  GROUPMIN(G, K, X, Z);
  s := 0;
  for i := 1 to NROWS(R) do s := s + i * NUMOF(ROW(i, R));
  writeln('gather ', s);
  s := 0;
  for i := 1 to NROWS(B) do s := s + i * NUMOF(ROW(i, B)) + NUMOF(ROW(i, ID));
  writeln('scatter ', s);
  writeln('groups ', NUMB(Z), ' first ', FND(Z));
  writeln(Z)
end.
"""
SIZES = "var SIZE_N: table({n}, 1); SIZE_M: table({m}, 1); SIZE_BAD: table({bad}, 1);\n"


@pytest.mark.parametrize("n, m, bad", [(70, 150, 0), (1, 3, 0), (100, 64, 0), (100, 65, 40)])
def test_library_routines_with_native_kernels_called_from_compiled_code(n, m, bad):
    src = SIZES.format(n=n, m=m, bad=bad) + NATIVES
    ref = run(src, "natives.star", "off", native=False)   # the Star bodies, interpreted
    off = run(src, "natives.star", "off")
    on = run(src, "natives.star", "on")
    assert on[:3] == off[:3] == ref[:3]
    if bad:      # a row number past T's rows: GATHER's own error, inside its body, under main
        assert "row index" in off[2] and "GATHER" in off[2] and "main block" in off[2]
    else:
        assert off[2] is None and off[0].startswith("gather ")
    assert "main block" in compiled_routines(on[3])


@pytest.mark.parametrize("limit", [50, 400, 2000])
def test_a_step_limit_across_native_calls_stops_where_the_interpreter_does(limit):
    src = SIZES.format(n=70, m=150, bad=0) + NATIVES
    off = run(src, "natives.star", "off", max_steps=limit)
    on = run(src, "natives.star", "on", max_steps=limit)
    assert on[:3] == off[:3]
    assert off[2] is not None and "step limit" in off[2]
