"""The ERROR statement in compiled code: the same message, position, call stack, output and
steps as the interpreter, so routines that guard their loops with ERROR (BORUVKA's rounds)
compile instead of running interpreted."""
from __future__ import annotations

import pytest

from reference.jit_differential import compiled_routines, jit_cache, run  # noqa: F401  (jit_cache: fixture)

# the limits come as table sizes (NROWS), not literals in the compiled main block, so every
# limit runs one compiled module (a literal would make each its own Numba compile)
GUARDED = """
proc CHECK(k, limit: integer; var S: slice);
begin
  S(k) := 1;
  writeln('row ', k, ' ', S);
  if k > limit then ERROR('k passed the limit')
end;

proc OUTER(n, limit: integer; var S: slice);
var i: integer;
begin
  for i := 1 to n do CHECK(i, limit, S)
end;

function FIRST_ABOVE(n, limit: integer): integer;
var i, r: integer;
begin
  r := 0;
  for i := 1 to n do if (r = 0) and (i > limit) then r := i;
  if r = 0 then ERROR('no row above the limit');
  FIRST_ABOVE := r
end;

var T: table(70, 2);
var S: slice(T);
var FIRST: table({first}, 1); LIMIT: table({limit} + 1, 1);
begin
  CLR(S);
  writeln('first above: ', FIRST_ABOVE(70, NROWS(FIRST)));
  OUTER(70, NROWS(LIMIT) - 1, S);
  writeln('done ', NUMB(S))
end.
"""


def both(src, backend, **kw):
    off = run(src, "guard.star", "off", backend=backend, **kw)
    on = run(src, "guard.star", "on", backend=backend, **kw)
    assert on[:3] == off[:3]     # output, steps by kind, rendered error
    return off, on


@pytest.mark.parametrize("limit", [0, 3, 64, 65, 70])
def test_error_statement_in_a_nested_call_matches_the_interpreter(backend, limit):
    (out, _, err, _), (_, _, _, m) = both(GUARDED.format(first=5, limit=limit), backend)
    assert out.startswith("first above: 6\n")
    if limit >= 70:
        assert err is None and out.endswith("done 70\n")
    else:
        assert out.count("row ") == limit + 1
        lines = err.splitlines()
        assert lines[0] == "guard.star:6:21: error: k passed the limit"
        assert lines[-2:] == ["  OUTER at guard.star:12:22", "  CHECK at guard.star:6:21"]
    if backend == "numpy":
        assert compiled_routines(m) == ["main block"]


def test_error_statement_in_a_function_called_inside_an_expression(backend):
    (out, _, err, _), (_, _, _, m) = both(GUARDED.format(first=70, limit=70), backend)
    assert out == ""
    assert err.splitlines()[0] == "guard.star:20:17: error: no row above the limit"
    assert err.rstrip().endswith("FIRST_ABOVE at guard.star:20:17")
    if backend == "numpy":
        assert compiled_routines(m) == ["main block"]


def test_error_statement_under_a_step_limit(backend):
    src = GUARDED.format(first=5, limit=40)
    for limit in (10, 60, 1000):
        both(src, backend, max_steps=limit)
