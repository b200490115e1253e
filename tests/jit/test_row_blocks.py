"""Row writes held in blocks of 64 rows (starvm/targets/numba/kernels.py rb_*, lower.row_blocked):
a loop that writes a table only by ROW(i, T) := w, and reads nothing of it, keeps the rows of
one 64-row block as words and writes them into the columns when another block comes, after the
loop, and before an error leaves it. Against the interpreter on random tables: the table,
output, steps by kind and errors (message, position, call stack, the table as the failing
statement left it), with row orders that stay in one block, jump between blocks at every write
and run downwards, at lengths around 64, under a step limit; a transposition in a main block
(the BFS library routine's first loop) against NumPy's transpose."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm.ir.ops import Node, Op
from starvm.targets.numba.lower import row_blocked

from reference.jit_differential import jit_cache  # noqa: E402,F401 - the module's fixture: the compiled-code cache (jit_differential.py)


PROGRAM = """
{ rows of R in the order i = (j - 1) * s mod NROWS(R) + 1 (s coprime to NROWS(R): each once),
  j = 1 .. n, or downwards; at j = bad the index is past the table: an error mid-loop }
proc FILL(n, s, bad: integer; down: boolean; var R: table; u: word);
var w: word; i, j, k: integer;
begin
  w := u;
  if down then
    for j := n downto 1 do
    begin
      i := ((j - 1) * s) mod NROWS(R) + 1;
      if j = bad then i := NROWS(R) + 1;
      k := (j * 7) mod LEN(w) + 1;
      if w(k) = 1 then w(k) := 0 else w(k) := 1;
      if j mod 3 = 0 then w := w xor u;
      ROW(i, R) := w;
      if j mod 37 = 0 then writeln(j, ' ', i, ' ', NCOLS(R));
    end
  else
    for j := 1 to n do
    begin
      i := ((j - 1) * s) mod NROWS(R) + 1;
      if j = bad then i := NROWS(R) + 1;
      k := (j * 7) mod LEN(w) + 1;
      if w(k) = 1 then w(k) := 0 else w(k) := 1;
      if j mod 3 = 0 then w := w xor u;
      ROW(i, R) := w;
      if j mod 37 = 0 then writeln(j, ' ', i, ' ', NCOLS(R));
    end;
end;

{ rows written in blocks between reads through the row cache (kernels.rc_*): row NROWS(P)
  is kept as words, rewritten by the blocked loop, then read by the closure's loop }
proc SET_THEN_CLOSE(var P: table);
var X: slice(P); v, w: word; i, k: integer;
begin
  w := ROW(NROWS(P), P);
  for i := 1 to NROWS(P) do
  begin
    w(i mod LEN(w) + 1) := 1;
    if i mod 5 = 0 then CLR(w);
    ROW(i, P) := w;
  end;
  for k := 1 to NROWS(P) do
  begin
    X := COL(k, P); w := ROW(k, P);
    while SOME(X) do begin i := STEP(X); v := ROW(i, P); v := v or w; ROW(i, P) := v; end;
  end;
end;

{ the transposition of P (n x n) through a local table, copied out by columns }
proc TRANSPOSE(P: table; var R: table);
var PT: table(NCOLS(P), NROWS(P)); j: integer;
begin
  for j := 1 to NCOLS(P) do ROW(j, PT) := CONVERT(COL(j, P));
  for j := 1 to NCOLS(R) do COL(j, R) := COL(j, PT);
end;
"""


def machine(jit, **kw):
    out = io.StringIO()
    m = starvm.Machine(jit=jit, out=out, **kw)
    m.load(PROGRAM, "blocks.star")
    return m, out


def run_fill(jit, a, u, n, s, bad, down, **kw):
    m, out = machine(jit, **kw)
    R = m.table(a.copy())
    err = None
    try:
        m.call("FILL", n, s, bad, down, R, m.word(u.copy()))
    except starvm.StarError as e:
        err = e.render()
    return (R.to_numpy().tolist(), out.getvalue(), err, m.stats), m


def test_which_loops_hold_their_row_writes_in_blocks():
    m, _ = machine("on")
    bodies = {info.display: body for info, body in m.jit.bodies.values()}

    def loops(body):
        return [n for n in _walk(body) if n.op is Op.FOR]
    fill = loops(bodies["FILL"])
    assert [row_blocked(f.src[2], False).display for f in fill] == ["R", "R"]   # R is all the body names
    trans = loops(bodies["TRANSPOSE"])
    assert row_blocked(trans[0].src[2], False).display == "PT"     # a local table: P cannot be it
    assert row_blocked(trans[1].src[2], False) is None             # writes columns, not rows
    body = fill[0].src[2]
    R = next(n.src[1] for n in _walk(body) if n.op is Op.ROW_SET)
    for extra in (Node(Op.CALL, ()), Node(Op.PFOR, ()), Node(Op.COL_GET, (Node(Op.CONST, arg=1), R))):
        assert row_blocked(Node(Op.BLOCK, (body, extra)), False) is None   # may see R: no blocks


def _walk(n):
    yield n
    for c in n.src:
        if isinstance(c, Node):
            yield from _walk(c)


@pytest.mark.parametrize("rows, cols", [(1, 1), (63, 5), (64, 64), (65, 1), (130, 65), (200, 130)])
def test_row_writes_in_blocks_equal_the_interpreter(rows, cols):
    rng = np.random.default_rng(rows * 1000 + cols)
    a = rng.random((rows, cols)) < 0.5
    u = rng.random(cols) < 0.5
    steps = [1, 3, 64 + 1] if rows > 1 else [1]
    for s in steps:
        if np.gcd(s, rows) != 1:
            continue
        for down in (False, True):
            for n in {rows, max(1, rows // 2)}:
                off, _ = run_fill("off", a, u, n, s, 0, down)
                on, m = run_fill("on", a, u, n, s, 0, down)
                assert on == off, (rows, cols, s, down, n)
                assert off[2] is None and m.jit.routines["r_fill"].compiled_calls == 1


@pytest.mark.parametrize("bad, down", [(70, False), (1, False), (64, False), (129, True), (3, True)])
def test_an_error_mid_loop_leaves_the_rows_written_before(bad, down):
    """Row index past the table at iteration `bad`: the rows written before it (some still in
    the block) are in the table, as the interpreter leaves them; message, position, steps."""
    rng = np.random.default_rng(bad)
    a = rng.random((150, 70)) < 0.5
    u = rng.random(70) < 0.5
    off, _ = run_fill("off", a, u, 150, 1, bad, down)
    on, m = run_fill("on", a, u, 150, 1, bad, down)
    assert on == off
    assert on[2] is not None and "blocks.star:" in on[2] and "FILL" in on[2]
    assert m.jit.routines["r_fill"].compiled_calls == 1


@pytest.mark.parametrize("limit", [40, 100, 145])
def test_the_step_limit_mid_loop_leaves_the_rows_written_before(limit):
    rng = np.random.default_rng(limit)
    a = rng.random((150, 70)) < 0.5
    u = rng.random(70) < 0.5
    off, _ = run_fill("off", a, u, 150, 1, 0, False, max_steps=limit)
    on, _ = run_fill("on", a, u, 150, 1, 0, False, max_steps=limit)
    assert on == off and on[2] is not None


@pytest.mark.parametrize("n, k", [(1, 1), (64, 64), (100, 37), (129, 200)])
def test_a_transposition_through_a_local_table_equals_numpy(n, k):
    p = np.random.default_rng(n + k).random((n, k)) < 0.3
    results = {}
    for jit in ("off", "on"):
        m, _ = machine(jit)
        R = m.table(np.zeros((k, n), bool))
        m.call("TRANSPOSE", m.table(p.copy()), R)
        results[jit] = (R.to_numpy(), m.stats)
    assert np.array_equal(results["on"][0], p.T)
    assert np.array_equal(results["off"][0], p.T) and results["on"][1] == results["off"][1]


def test_a_main_block_transposition_runs_blocked_and_prints_the_interpreters_output(tmp_path):
    """components.star's loop in a main block, as `star run` compiles it."""
    from starvm.ui.cli import main
    prog = tmp_path / "t.star"
    prog.write_text("""program t;
var P, PT: table(GRAPH_N, GRAPH_N); j: integer;
begin
  GRAPH_DEFAULT('karate');
  GRAPH_ADJ(P);
  for j := 1 to GRAPH_N do ROW(j, PT) := CONVERT(COL(j, P));
  for j := 1 to GRAPH_N do if j mod 7 = 0 then writeln(j, ' ', COL(j, PT), ' ', COL(j, P));
end.
""")
    import contextlib
    outs, errs = {}, {}
    for jit in ("off", "on"):
        buf, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            rc = main(["run", str(prog), "--generate", "rmat:scale=7,ef=4,seed=3", "--jit", jit, "--profile"])
        outs[jit], errs[jit] = (rc, buf.getvalue()), err.getvalue()
    assert outs["on"] == outs["off"] and outs["on"][0] == 0 and outs["on"][1].count("\n") == 18
    assert "main block: compiled" in errs["on"], errs["on"]
    from starvm.ui.precompile import _main_body
    main_body = _main_body(prog.read_text(), str(prog))
    first = next(n for n in _walk(main_body) if n.op is Op.FOR)
    assert row_blocked(first.src[2], True).display == "PT"


def test_mpi_ranks_write_rows_their_own_way_without_blocks():
    """The MPI renderer (a subclass) writes a ROW through its owner rank (mp_row_set): the
    blocked loop falls back to the plain one, its text valid Python."""
    import ast
    from starvm.targets.mpi.lower import MpiModuleGen
    from starvm.targets.numba.lower import ModuleGen
    m, _ = machine("on")
    bodies = {k: v for k, v in m.jit.bodies.items() if k == "r_fill"}
    plain = ModuleGen(bodies).render(["r_fill"]).source
    ranks = MpiModuleGen(bodies).render(["r_fill"]).source
    assert plain.count("rb_new(") == 2 and plain.count("op_row_set_rb(") == 2 and plain.count("rc_forget(") == 2
    assert "rb_" not in ranks and ranks.count("mp_row_set(") == 2
    ast.parse(ranks)


@pytest.mark.parametrize("n", [1, 64, 100])
def test_blocked_writes_and_the_row_cache_in_one_routine(n):
    a = np.random.default_rng(n).random((n, n)) < 0.5
    runs = {}
    for jit in ("off", "on"):
        m, _ = machine(jit)
        P = m.table(a.copy())
        m.call("SET_THEN_CLOSE", P)
        runs[jit] = (P.to_numpy().tolist(), m.stats)
    assert runs["on"] == runs["off"]
    plain = __import__("starvm.targets.numba.lower", fromlist=["ModuleGen"]).ModuleGen(
        {k: v for k, v in machine("on")[0].jit.bodies.items() if k == "r_set_then_close"}).render(["r_set_then_close"]).source
    assert "rc_new(" in plain and "op_row_set_rb(" in plain and "rc_forget(" in plain
