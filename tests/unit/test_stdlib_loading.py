"""The standard library (stdlib/*.star) is loaded on demand, by routine name."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm import stdlib
from starvm.frontend.parser import fold
from starvm.resources import stdlib_dir

# The 8-vertex graph of programs/warshall*.star and its transitive closure.
GRAPH = """
var P: table(8, 8);
begin
  ROW(1, P) := BITS('01000000');
  ROW(2, P) := BITS('00100000');
  ROW(3, P) := BITS('10010000');
  ROW(4, P) := BITS('00001000');
  ROW(6, P) := BITS('00000010');
  {CALL}(8, P);
  writeln(P);
end.
"""
CLOSURE = "\n".join([
    "11111000", "11111000", "11111000", "00001000", "00000000", "00000010", "00000000", "00000000",
]) + "\n"


def _closure(adj: np.ndarray) -> np.ndarray:
    r = adj.astype(bool).copy()
    for k in range(r.shape[0]):
        r[r[:, k]] |= r[k]
    return r


def test_library_declares_the_three_warshalls():
    assert any(stdlib_dir().glob("*.star")), f"no .star file in {stdlib_dir()}"
    idx = stdlib.index()
    for name in ("warshall", "warshall_c", "warshall_adapt"):
        assert name in idx, f"{name} is not in the standard library index {sorted(idx)}"


@pytest.mark.parametrize("call", ["WARSHALL_C", "WARSHALL-C", "warshall_c", "WARSHALL", "WARSHALL-adapt"])
def test_program_gets_undeclared_routine_from_library(backend, call):
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out)
    m.run(GRAPH.replace("{CALL}", call), "uses_library.star")
    assert out.getvalue() == CLOSURE
    info = m.env.routines[fold(call)]
    assert info.node.loc.filename.startswith("stdlib/"), "the routine did not come from the library"


def test_program_declaration_wins_over_library(backend):
    """A routine the program declares itself is used, not the library's."""
    src = """
proc WARSHALL_C(n: integer; var P: table);
begin writeln('mine ', n) end;
var P: table(2, 2);
begin WARSHALL_C(2, P) end.
"""
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out).run(src, "own.star")
    assert out.getvalue() == "mine 2\n"


def test_call_from_python_loads_library_routine(machine):
    rng = np.random.default_rng(7)
    adj = rng.random((40, 40)) < 0.05
    P = machine.table(adj)
    machine.call("WARSHALL_C", 40, P)
    assert np.array_equal(P.to_numpy(), _closure(adj))


def test_unknown_routine_is_still_an_error(backend):
    with pytest.raises(starvm.StarTypeError, match="unknown name"):
        starvm.Machine(backend=backend, out=io.StringIO()).run("begin NO_SUCH_PROC(1) end.", "x.star")
