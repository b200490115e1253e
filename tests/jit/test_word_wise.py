"""Logic expressions assigned in one loop over words (lower.word_wise_assign, kernels col_ref,
ck_not, ck_logic, asg_words, clear_tail): V := e, e a tree of and / or / xor / not over vector
variables and COL reads, checks and steps first in the kernels' order, then the words. Against
the interpreter on random tables at lengths around 64: values (tail bits clear after a not),
steps by kind, V an operand of its own value, a var parameter's words written in place, and
errors (a COL index past the table, two lengths, a variable not yet assigned) with their
position and message; which expressions take the loop."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm.ir.ops import Node, Op

from reference.jit_differential import jit_cache  # noqa: E402,F401 - the module's fixture: the compiled-code cache (jit_differential.py)


PROGRAM = """
proc MIX(T, U: table; j, k: integer; var Z: slice(T); var W: word);
var A, B: slice(T); y, x: word; i: integer;
begin
  A := COL(j, T) and not COL(k, T);
  B := not (A or Z) xor COL(k, T);
  for i := 1 to NCOLS(T) do
    Z := Z and not COL(i, T) or (A xor COL(i, T));
  A := not not A;
  B := B and COL(1, U);
  Z := (Z or B) and not A;
  writeln(NUMB(A), ' ', NUMB(B), ' ', NUMB(Z), ' ', NUMB(not Z));
  x := not W;
  if j = 5 then W := W and x;
  W := not (W xor x);
  if k = 6 then W := x or y;
  writeln(W);
end;
"""


def run(jit, t, u, j, k, z, w):
    out = io.StringIO()
    m = starvm.Machine(jit=jit, out=out)
    m.load(PROGRAM, "ww.star")
    Z, W = m.slice(z.copy()), m.word(w.copy())
    err = None
    try:
        m.call("MIX", m.table(t.copy()), m.table(u.copy()), j, k, Z, W)
    except starvm.StarError as e:
        err = e.render()
    return (Z.to_numpy().tolist(), W.to_numpy().tolist(), out.getvalue(), err, m.stats), m


@pytest.mark.parametrize("rows, cols", [(1, 2), (63, 3), (64, 4), (65, 2), (130, 5)])
def test_word_wise_assignments_equal_the_interpreter(rows, cols):
    rng = np.random.default_rng(rows * 7 + cols)
    t = rng.random((rows, cols)) < 0.5
    u = rng.random((rows, 2)) < 0.5
    for j, k in ((1, 2), (cols, 1)):
        z = rng.random(rows) < 0.5
        w = rng.random(cols + 3) < 0.5
        off, _ = run("off", t, u, j, k, z, w)
        on, m = run("on", t, u, j, k, z, w)
        assert on == off, (rows, cols, j, k)
        assert off[3] is None and m.jit.routines["r_mix"].compiled_calls == 1


@pytest.mark.parametrize("case", ["col index", "lengths", "unassigned"])
def test_errors_in_a_word_wise_assignment_equal_the_interpreters(case):
    rng = np.random.default_rng(3)
    t = rng.random((70, 3)) < 0.5
    u = rng.random((70 if case != "lengths" else 69, 2)) < 0.5
    j, k = (9, 1) if case == "col index" else (5 if case == "unassigned" else 1, 6 if case == "unassigned" else 2)
    z, w = rng.random(70) < 0.5, rng.random(6) < 0.5
    off, _ = run("off", t, u, j, k, z, w)
    on, _ = run("on", t, u, j, k, z, w)
    # the var parameters too: the caller's variables hold what the call wrote before it failed
    # (call.keep_changed_vectors), as the interpreter's, which share their words with it
    assert on == off
    assert on[3] is not None and "ww.star:" in on[3]


def test_which_assignments_take_one_loop_over_words():
    from starvm.targets.numba.lower import ModuleGen
    m = starvm.Machine(jit="on")
    m.load(PROGRAM, "ww.star")
    bodies = {k: v for k, v in m.jit.bodies.items() if k == "r_mix"}
    source = ModuleGen(bodies).render(["r_mix"]).source
    # A, B (twice), Z (twice), A := not not A, W := not (W xor x); not x := not W, W := W and x
    # or W := x or y (one operation over variables: asg(op_not), op_and_asg, op_or_asg as before)
    assert source.count("asg_words(") == 7
    assert "op_and_asg(" in source and "op_or_asg(" in source and "asg(l3, op_not(" in source
    gen = ModuleGen(bodies)
    col = Node(Op.COL_GET, (Node(Op.CONST, arg=1), Node(Op.VAR, arg=m.jit.bodies["r_mix"][0].params[0])))
    gen.cow = {}
    assert gen.word_wise(Node(Op.NOT, (col,)))
    assert not gen.word_wise(Node(Op.NOT, (Node(Op.CALL, ()),)))
