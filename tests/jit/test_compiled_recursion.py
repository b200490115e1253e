"""Recursion in the compiled tier: a routine calling itself compiles (Numba types it from its
own signature), with the same results, output, steps and errors as the interpreter and the
recursion limit still holding; so do cycles through several routines (lower.py compiles each
cycle as one function that calls itself, which Numba's disk cache can load)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from reference.jit_differential import compiled_routines, differences, run
from test_compiled import jit_cache  # noqa: F401 - the compiled-code cache (jit_differential.py)

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

# Cycles of calls through several routines: `var` slices and integers, globals read and
# written, words and slices returned, a table written, output, around cycles of two and three.
CYCLES = """
var T: table(130, 5); gw: word(T); total, calls: integer;

{ A and B clear the marked rows of X alternately }
proc A(var X: slice; var c: integer; d: integer);
var i: integer;
begin
  calls := calls + 1;
  i := STEP(X);
  if i > 0 then begin c := c + i; total := total + d; B(X, c, d + 1) end
end;

proc B(var X: slice; var c: integer; d: integer);
var i: integer; w: word(T);
begin
  calls := calls + 1;
  w := ROW(d mod 130 + 1, T);
  gw := gw or w;
  i := STEP(X);
  if i > 0 then begin c := c + 2 * i; A(X, c, d + 1) end
end;

function F(w: word; d: integer): word;
begin
  if d = 0 then F := w else F := H(not w, d - 1)
end;

function H(w: word; d: integer): word;
begin
  if d = 0 then H := w else H := K(w and BITS('10110'), d - 1)
end;

function K(w: word; d: integer): word;
begin
  K := F(w or BITS('00011'), d)
end;

function S(X: slice; d: integer): slice;
var Y: slice;
begin
  Y := X;
  if d > 0 then begin Y(d) := 1; S := S2(Y, d - 1) end else S := Y
end;

function S2(X: slice; d: integer): slice;
begin
  if d mod 3 = 0 then begin COL(d mod 5 + 1, T) := X; writeln('S2 ', d) end;
  S2 := S(X, d)
end;

var X, Y: slice(T); c, i: integer;
begin
  for i := 1 to 130 do if i mod 3 = 0 then ROW(i, T) := BITS('10101');
  X := COL(1, T);
  c := 0;
  gw := BITS('00000');
  A(X, c, 1);
  writeln(c, ' ', total, ' ', calls, ' ', gw, ' ', NUMB(X));
  for i := 0 to 7 do writeln(F(BITS('11001'), i));
  Y := S(COL(2, T), 40);
  writeln(NUMB(Y), ' ', Y);
  writeln(T)
end.
"""


def cycle_functions(machine) -> dict[str, int]:
    """The compiled module's functions of cycles (lower.cycle_function): name -> signatures."""
    module = machine.jit.routines["main_"].unit.module
    return {n: len(getattr(module, n).signatures) for n in dir(module) if n.startswith("c_")}


@pytest.mark.parametrize("src", [MUTUAL, CYCLES], ids=["even-odd", "cycles"])
def test_mutual_recursion_compiles_and_equals_the_interpreter(src, monkeypatch, tmp_path):
    # an empty cache: Numba compiles here (a module loaded from the cache compiles no cycle function)
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path))
    assert differences(src, "mutual.star") == []
    out, _, err, m = run(src, "mutual.star", "on")
    assert err is None and out
    assert compiled_routines(m) == ["main block"]
    # one function a cycle, compiled once: the dummy arguments have the types of the real ones
    assert set(cycle_functions(m).values()) == {1}
    assert len(cycle_functions(m)) == (1 if src is MUTUAL else 3)
    m.profile = True
    assert "interpreted" not in m.profile_report()
    if src is MUTUAL:
        # Numba cannot load a cycle of several cached functions (numba issue 6061: a crash in
        # the second process); the cycle's one self-recursive function, cached here, loads in
        # a fresh process
        probe = ("import io, starvm, sys; out = io.StringIO(); m = starvm.Machine(jit='on', out=out); "
                 "m.run(sys.argv[1], 'c.star'); d = m.jit.routines['main_'].dispatcher; "
                 "print(sum(d.stats.cache_hits.values()), out.getvalue().split()[0])")
        fresh = subprocess.run([sys.executable, "-c", probe, src], capture_output=True, text=True, timeout=300)
        assert fresh.returncode == 0 and fresh.stdout.split() == ["1", "240"], fresh.stderr


MUTUAL_DEEP = """
function ev(n: integer): integer;
begin if n = 0 then ev := 0 else ev := od(n - 1) + 1 end;
function od(n: integer): integer;
begin if n = 0 then od := 0 else od := ev(n - 1) + 1 end;
begin
  writeln(ev(31));
  writeln(ev(100000));
end.
"""


def test_the_recursion_limit_holds_in_a_cycle_with_the_same_error():
    for jit in ("off", "on"):
        out, _, err, m = run(MUTUAL_DEEP, "deep.star", jit, max_depth=60)
        assert out == "31\n"
        lines = err.splitlines()
        assert lines[0] == "deep.star:5:40: error: recursion too deep (more than about 60 nested Star calls)", (jit, err)
        assert "more frames ..." in err and lines[-1] == "  od at deep.star:5:40", (jit, err)
        assert lines[-2] == "  ev at deep.star:3:40"
    assert compiled_routines(m) == ["main block"]
    assert differences(MUTUAL_DEEP, "deep.star", max_depth=60) == []


# A failure five calls deep in a cycle: the same message, position and Star call stack.
CYCLE_ERROR = """
var T: table(10, 3);
proc P(d: integer; var X: slice);
begin
  X(d) := 1;
  if d > 0 then Q(d - 1, X)
end;
proc Q(d: integer; var X: slice);
begin
  if d = 2 then COL(d + 5, T) := X;
  P(d, X)
end;
var X: slice(T);
begin
  X := COL(1, T);
  writeln('before');
  P(6, X)
end.
"""


def test_an_error_inside_a_cycle_has_the_same_position_and_call_stack():
    assert differences(CYCLE_ERROR, "cyc.star") == []
    out, _, err, m = run(CYCLE_ERROR, "cyc.star", "on")
    assert out == "before\n" and compiled_routines(m) == ["main block"]
    assert "cyc.star:10:17: error: column index 7 out of range 1..3" in err
    assert err.count("  P at cyc.star:6:17") == 4 and err.rstrip().endswith("Q at cyc.star:10:17")


@pytest.mark.parametrize("limit", [1, 7, 30, 61])
def test_the_step_limit_holds_in_a_cycle(limit):
    assert differences(CYCLES, "mutual.star", max_steps=limit) == []
    assert "step limit reached" in run(CYCLES, "mutual.star", "on", max_steps=limit)[2]


# The main block has no loop (--jit auto leaves it interpreted): the interpreter calls into the
# cycle at B, compiled through its own entry function (lower.cycle_member).
ENTERED_BY_THE_INTERPRETER = """
var n: integer;
proc A(k: integer; var s: integer);
begin n := n + 1; if k > 0 then B(k - 1, s) end;
proc B(k: integer; var s: integer);
var i: integer;
begin
  for i := 1 to k do s := s + i;
  A(k, s)
end;
var s: integer;
begin
  s := 0;
  n := 0;
  B(30, s);
  writeln(s);
  A(5, s);
  writeln(s, ' ', n)
end.
"""


def test_the_interpreter_calls_into_a_compiled_cycle(monkeypatch):
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "0")
    off = run(ENTERED_BY_THE_INTERPRETER, "entry.star", "off")
    auto = run(ENTERED_BY_THE_INTERPRETER, "entry.star", "auto")
    assert (auto[0], auto[1], auto[2]) == (off[0], off[1], off[2])
    first = sum(k * (k + 1) // 2 for k in range(31))
    assert off[0] == f"{first}\n{first + sum(k * (k + 1) // 2 for k in range(5))} {31 + 6}\n"
    assert compiled_routines(auto[3]) == ["B"]
