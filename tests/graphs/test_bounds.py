"""Every data-dependent loop of the graph library ends in a clear Star error when its bound
is passed, never in an endless loop or a silent answer (docs/stdlib.md, "Loop bounds").

With correct search routines the bounds cannot be passed, so each test makes the program
declare a broken MATCH, MIN, GROUPMIN or SETMIN (a program's own routine wins over the
library's, and the library's routines then call it) and checks that the loop stops with its
ERROR message at the library's line, under the program's call."""
from __future__ import annotations

import io

import pytest

import starvm
from starvm.errors import StarRuntimeError

ARCS = [(1, 2, 3), (2, 3, 1), (3, 1, 2), (3, 4, 5), (4, 1, 1)]      # a cycle and more, n = 4


def arc_globals(arcs=ARCS) -> str:
    lines = []
    for e, (u, v, w) in enumerate(arcs, 1):
        lines.append(f"ROW({e}, L) := BITS('{u:03b}'); ROW({e}, R) := BITS('{v:03b}'); ROW({e}, W) := BITS('{w:04b}');")
    return "\n  ".join(lines)


def run(backend: str, broken: str, call: str, arcs=ARCS) -> StarRuntimeError:
    src = f"""{broken}
var L, R: table({len(arcs)}, 3); W: table({len(arcs)}, 4); D: table(4, 4); Tr: slice(L); calls: integer;
begin
  calls := 0;
  {arc_globals(arcs)}
  {call};
end.
"""
    m = starvm.Machine(backend=backend, out=io.StringIO(), native=False, max_steps=2_000_000, jit="off")   # as test_routines
    with pytest.raises(StarRuntimeError) as info:
        m.run(src, "broken.star")
    return info.value


def expect(err: StarRuntimeError, message: str, library_file: str):
    text = err.render()
    assert message in str(err), text
    assert f"{library_file}:" in text and "main block at broken.star" in text, text


EMPTY_MIN = "proc MIN(T: table; X: slice(T); var Z: slice(T)); begin CLR(Z) end;"


def test_dijkstra_bound(backend):
    expect(run(backend, EMPTY_MIN, "DIJKSTRA(4, 1, L, R, W, D)"), "DIJKSTRA: MIN found no unsettled vertex",
           "stdlib/graphs.star")


def test_kruskal_bound(backend):
    expect(run(backend, EMPTY_MIN, "KRUSKAL(4, L, R, W, Tr)"), "KRUSKAL: more weight classes than edges",
           "stdlib/graphs.star")


def test_prim_bound(backend):
    """A MATCH that never finds a right end: edges with both ends in the tree still look as
    if they left it, and a vertex would join twice."""
    broken = """proc MATCH(T: table; X: slice(T); v: word(T); var Z: slice(T));
var j: integer; E: slice(T);
begin
  calls := calls + 1;
  if calls mod 2 = 0 then CLR(Z)            { the MATCH on right }
  else begin
    Z := X;
    for j := 1 to NCOLS(T) do
      if v(j) = 1 then Z := Z and COL(j, T) else Z := Z and not COL(j, T);
  end;
end;"""
    expect(run(backend, broken, "PRIM(4, L, R, W, Tr)"), "PRIM: more than n vertices joined", "stdlib/graphs.star")


def test_groupmin_bound(backend):
    """A MATCH that selects rows outside X: GROUPMIN's rows to do never shrink."""
    broken = "proc MATCH(T: table; X: slice(T); v: word(T); var Z: slice(T)); begin Z := not X end;"
    err = run(backend, broken, "CLR(Tr); Tr(5) := 1; Tr := not Tr; GROUPMIN(L, W, Tr, Tr)")
    expect(err, "GROUPMIN: more groups than rows", "stdlib/rows.star")


def test_boruvka_round_that_merges_nothing(backend):
    broken = """proc GROUPMIN(G, K: table; X: slice(G); var Z: slice(G));
begin
  calls := calls + 1;
  if calls = 1 then Z := X else CLR(Z);     { the first call keeps every row (all distinct) }
end;"""
    expect(run(backend, broken, "BORUVKA(4, L, R, W, Tr)"), "BORUVKA: a round merged no components",
           "stdlib/graphs.star")


def test_boruvka_cycle_of_hooks(backend):
    """Every component hooks along the cycle 1 -> 2 -> 3 -> 1 (the arcs as given, not the
    lightest): pointer jumping would go round for ever."""
    broken = """proc GROUPMIN(G, K: table; X: slice(G); var Z: slice(G));
var j: integer;
begin
  CLR(Z);
  for j := 1 to 3 do if X(j) = 1 then Z(j) := 1;
end;"""
    arcs = [(1, 2, 1), (2, 3, 1), (3, 1, 1)]
    expect(run(backend, broken, "BORUVKA(3, L, R, W, Tr)", arcs), "BORUVKA: pointer jumping did not settle",
           "stdlib/graphs.star")


def test_bellman_ford_adapt_bound(backend):
    """A SETMIN that finds no overflow and takes every candidate as an improvement: distances
    'change' every round round the cycle."""
    broken = """proc SETMIN(T, F: table; X: slice(T); var Z: slice(T));
begin
  calls := calls + 1;
  if calls mod 2 = 1 then CLR(Z) else Z := X;
end;"""
    expect(run(backend, broken, "BELLMAN_FORD-adapt(4, 1, L, R, W, D)"),
           "BELLMAN_FORD-adapt: distances still change after n rounds", "stdlib/graphs.star")


def test_bellman_ford_bound(backend):
    """A WCOPY that copies every non-zero distance less one into the arcs leaving it: round the 0-weight
    cycle 2 -> 3 -> 2 the distances fall by one a round, past n rounds."""
    broken = """proc WCOPY(w: word; X: slice(F); var F: table);
var j: integer; one, v: word;
begin
  one := w; CLR(one); v := one; one(LEN(w)) := 1;
  if NOTEQ(w, v) then v := SUBT(w, one);     { 0 stays 0 }
  for j := 1 to NCOLS(F) do
    if v(j) = 1 then COL(j, F) := COL(j, F) or X else COL(j, F) := COL(j, F) and not X;
end;"""
    arcs = [(1, 2, 9), (2, 3, 0), (3, 2, 0)]
    expect(run(backend, broken, "BELLMAN_FORD(4, 1, L, R, W, D)", arcs),
           "BELLMAN_FORD: distances still change after n rounds", "stdlib/graphs.star")


def test_error_statement_in_a_parallel_for_is_refused():
    src = "var P: table(4, 4); i: integer;\nbegin\n  parallel for i := 1 to 4 do ERROR('no');\nend.\n"
    with pytest.raises(starvm.StarError, match="ERROR inside the loop"):
        starvm.Machine(out=io.StringIO()).run(src, "p.star")


def test_correct_routines_pass_the_bounds(backend):
    """The same program with the library's own routines: no error, the right forest."""
    m = starvm.Machine(backend=backend, out=io.StringIO(), native=False, jit="off")    # as test_routines
    m.run(f"""var L, R: table(5, 3); W: table(5, 4); Tr: slice(L); calls: integer;
begin
  {arc_globals()}
  BORUVKA(4, L, R, W, Tr);
  writeln(Tr);
end.""", "ok.star")
    assert m.out.getvalue().strip() == "01101"     # weights 3 1 2 5 1: the edges 2-3, 3-1, 4-1
