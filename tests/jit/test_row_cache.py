"""Rows kept as words (starvm/targets/numba/kernels.py rc_*, lower.row_cached): a routine that writes a
table only by ROW(i, T) := w reads and writes its rows as words, the columns following every
changed bit. Against the interpreter on random tables: results, output, steps by kind, errors
(position, call stack, the table as the failing statement left it), the table passed twice,
lengths around 64; WARSHALL (Listing 1, row access) against a plain Python closure."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm.ir.ops import Op
from starvm.targets.numba.lower import row_cached

from reference.jit_differential import jit_cache  # noqa: E402,F401 - the module's fixture: the compiled-code cache (jit_differential.py)


PROGRAM = """
proc ROWS(n, s: integer; var A: table; B: table; var w: word);
var v, u: word; i, j: integer;
begin
  for i := 1 to n do
  begin
    j := (i * s) mod NROWS(A) + 1;
    v := ROW(j, A);
    u := ROW(i mod NROWS(B) + 1, B);     { B may be A itself }
    v := v xor u;
    ROW(j, A) := v;
    v := ROW(i mod NROWS(A) + 1, A); v := v or w; ROW(i mod NROWS(A) + 1, A) := v;
    v := ROW(j, A); v := v and u; ROW(j, A) := v;
    if COL(1, A)(j) = 1 then w := w xor ROW(j, A);
    if i = s then writeln(i, ' ', ROW(j, A), ' ', NUMB(COL(NCOLS(A), A)));
  end;
  writeln(A);
end;

proc U_WARSHALL(n:integer; var P: table);
var X:slice(P); v,w: word; i,k: integer;
begin for k:=1 to n do
  begin X :=COL(k , P) ; w:=ROW (k,P) ;
    while SOME(X) do begin i := STEP(X) ; v:=ROW(i,P); v=v or w; ROW(i,P):=v; end ;
  end ;
end ;
"""


def call(jit, name, *make):
    out = io.StringIO()
    m = starvm.Machine(jit=jit, out=out)
    m.load(PROGRAM, "rows.star")
    args = [f(m) for f in make]
    err = None
    try:
        m.call(name, *args)
    except starvm.StarError as e:
        err = e.render()
    tables = [a.to_numpy().tolist() for a in args if isinstance(a, starvm.Table)]
    return tables, out.getvalue(), err, m.stats, m


def test_only_routines_that_change_one_table_by_rows_keep_rows():
    from starvm.ir.ops import Node
    m = starvm.Machine(jit="on")
    m.load(PROGRAM, "rows.star")
    bodies = {info.display: (info, body) for info, body in m.jit.bodies.values()}
    assert [s.display for s in row_cached(bodies["ROWS"][1])] == ["A"]
    assert [s.display for s in row_cached(bodies["U_WARSHALL"][1])] == ["P"]
    body = bodies["U_WARSHALL"][1]
    for other in (Op.CALL, Op.PFOR, Op.COL_SET):     # anything else that may change a table: none
        assert row_cached(Node(Op.BLOCK, (body, Node(other, ())))) == []


@pytest.mark.parametrize("rows, cols", [(1, 1), (5, 63), (64, 64), (130, 65), (70, 130)])
def test_row_reads_and_writes_equal_the_interpreter(rows, cols):
    rng = np.random.default_rng(rows * 1000 + cols)
    a = rng.random((rows, cols)) < 0.5
    b = rng.random((rows, cols)) < 0.5
    w = rng.random(cols) < 0.5
    for s in (1, 3):
        for same in (False, True):        # B distinct from A, or A itself
            def tables(m):
                A = m.table(a.copy())
                return A, (A if same else m.table(b.copy()))
            results = {}
            for jit in ("off", "on"):
                box = {}
                made = lambda m: box.setdefault("t", tables(m))         # noqa: E731
                results[jit] = call(jit, "ROWS", lambda m: 2 * rows + 3, lambda m: s,
                                    lambda m: made(m)[0], lambda m: made(m)[1], lambda m: m.word(w.copy()))
            assert results["on"][:4] == results["off"][:4], (rows, cols, s, same)
            assert results["on"][2] is None
            assert results["on"][4].jit.routines["r_rows"].compiled_calls == 1


@pytest.mark.parametrize("bad", ["row", "length"])
def test_an_error_after_row_writes_leaves_the_table_as_the_interpreter_does(bad):
    """ROWS with B shorter in columns (a word of the wrong length) or n past the rows
    indexed by a ROW read of B: the call stops with the interpreter's message, position
    and steps, and A holds the rows written before."""
    rng = np.random.default_rng(5)
    a = rng.random((70, 66)) < 0.5
    b = rng.random((3 if bad == "row" else 70, 66 if bad == "row" else 65)) < 0.5
    w = rng.random(66) < 0.5
    text = PROGRAM.replace("u := ROW(i mod NROWS(B) + 1, B);", "u := ROW(i, B);") if bad == "row" else PROGRAM
    runs = {}
    for jit in ("off", "on"):
        out = io.StringIO()
        m = starvm.Machine(jit=jit, out=out)
        m.load(text, "rows.star")
        A = m.table(a.copy())
        err = None
        try:
            m.call("ROWS", 9, 2, A, m.table(b.copy()), m.word(w.copy()))
        except starvm.StarError as e:
            err = e.render()
        runs[jit] = (A.to_numpy().tolist(), out.getvalue(), err, m.stats)
        if jit == "on":
            assert m.jit.routines["r_rows"].compiled_calls == 1      # it failed inside compiled code
    assert runs["on"] == runs["off"]
    assert runs["on"][2] is not None and "rows.star:" in runs["on"][2]


def closure(adj):
    reach = adj.copy()
    for k in range(adj.shape[0]):
        reach[reach[:, k]] |= reach[k]
    return reach


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 200])
def test_warshall_listing_1_equals_the_closure_and_the_interpreters_steps(n):
    adj = np.random.default_rng(n).random((n, n)) < 2.0 / n
    off = call("off", "U_WARSHALL", lambda m: n, lambda m: m.table(adj.copy()))
    on = call("on", "U_WARSHALL", lambda m: n, lambda m: m.table(adj.copy()))
    assert on[:4] == off[:4]
    assert np.array_equal(np.array(on[0][0], bool), closure(adj))
