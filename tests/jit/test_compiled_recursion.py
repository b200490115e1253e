"""Recursion in the compiled tier: a routine calling itself compiles (Numba types it from its
own signature), with the same results, output, steps and errors as the interpreter and the
recursion limit still holding; a cycle through several routines stays interpreted and
--profile says why."""
from __future__ import annotations

from jit_differential import compiled_routines, differences, run
from test_compiled import jit_cache  # noqa: F401 - the module's temporary cache directory

RECURSIVE = """
function fib(n: integer): integer;
begin if n < 2 then fib := n else fib := fib(n - 1) + fib(n - 2) end;

{ clears the marked bits one call at a time, adding up their positions }
proc drain(var X: slice; var c: integer);
var i: integer;
begin
  i := STEP(X);
  if i > 0 then begin c := c + i; drain(X, c) end
end;

proc hanoi(n, a, b, c: integer; var moves: integer);
begin
  if n > 0 then
  begin
    hanoi(n - 1, a, c, b, moves);
    moves := moves + 1;
    hanoi(n - 1, c, b, a, moves)
  end
end;

{ a table walked by recursion: column j of P becomes column j - 1 or column j }
proc fold(var P: table; j: integer);
var V: slice(P);
begin
  if j > 1 then
  begin
    fold(P, j - 1);
    V := COL(j - 1, P) or COL(j, P);
    COL(j, P) := V;
    writeln(j, ' ', NUMB(V));
  end
end;

var X: slice; P: table(70, 6); c, m, i: integer;
begin
  writeln(fib(15));
  X := BITS('1011000000000000000000000000000000000000000000000000000000000000011');
  c := 0;
  drain(X, c);
  writeln(c, ' ', X);
  m := 0;
  hanoi(7, 1, 2, 3, m);
  writeln(m);
  for i := 1 to 70 do if i mod 7 = 0 then ROW(i, P) := BITS('100001');
  ROW(3, P) := BITS('010000');
  fold(P, 6);
  writeln(P);
end.
"""


def test_direct_recursion_compiles_and_equals_the_interpreter():
    assert differences(RECURSIVE, "rec.star") == []
    out, _, err, m = run(RECURSIVE, "rec.star", "on")
    assert err is None and out.startswith("610\n")
    assert set(compiled_routines(m)) == {"main block"}
    m.profile = True
    assert "recursive" not in m.profile_report()


DEEP = """
function depth(n: integer): integer;
begin if n = 0 then depth := 0 else depth := 1 + depth(n - 1) end;
begin
  writeln(depth(30));
  writeln(depth(100000));
end.
"""


def test_the_recursion_limit_holds_with_the_same_error():
    for jit in ("off", "on"):
        out, _, err, m = run(DEEP, "deep.star", jit, max_depth=60)
        assert out == "30\n"
        lines = err.splitlines()
        assert lines[0] == "deep.star:3:50: error: recursion too deep (more than about 60 nested Star calls)", jit
        assert lines[3] == "hint: raise the limit with STARVM_MAX_DEPTH or Machine(max_depth=N)"
        assert "more frames ..." in err and lines[-1] == "  depth at deep.star:3:50"
    assert compiled_routines(m) == ["main block"]


MUTUAL = """
function iseven(n: integer): boolean;
begin if n = 0 then iseven := true else iseven := isodd(n - 1) end;

function isodd(n: integer): boolean;
begin if n = 0 then isodd := false else isodd := iseven(n - 1) end;

var i, k: integer;
begin
  k := 0;
  for i := 1 to 30 do if iseven(i) then k := k + i;
  writeln(k);
end.
"""


def test_mutual_recursion_falls_back_and_says_why():
    assert differences(MUTUAL, "mutual.star") == []
    m = run(MUTUAL, "mutual.star", "on")[3]
    assert compiled_routines(m) == []
    m.profile = True
    report = m.profile_report()
    assert "iseven: interpreted: mutually recursive" in report
    assert "main block: interpreted: calls 'iseven', which is not compiled" in report
