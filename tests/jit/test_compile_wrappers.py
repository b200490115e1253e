"""Routine functions that only compiled code calls have no CPython wrapper (lower.host_entries).

A generated function that another generated function calls is compiled without Numba's
CPython wrapper (it unboxes every argument and boxes the result: a sizeable part of a small
function's compile); the host calls such a routine through its host entry ``h_<routine>``,
which Numba compiles only if the host calls it. A routine nothing else calls (the main
block, a caller, one calling only itself) keeps its wrapper and has no entry. Called from the
host or from compiled code, results, output and errors stay the interpreter's.
"""
from __future__ import annotations

import io

import pytest

import starvm
from starvm.targets.numba.lower import HOST_ENTRY, INNER_DECORATOR, ROUTINE_DECORATOR

PROGRAM = """
function SQ(x: integer): integer;
begin
  SQ := x * x + 100 div (9 - x)
end;

proc ACC(n: integer; var k: integer);
var i: integer;
begin
  k := 0;
  for i := 1 to n do k := k + SQ(i);
  writeln('acc ', k);
end;

function FACT(n: integer): integer;
begin
  if n <= 1 then FACT := 1 else FACT := n * FACT(n - 1)
end;
"""
# SQ(9) divides by zero: from the host, and two calls deep from ACC(10)
CALLS = [("SQ", (3,)), ("ACC", (5, 0)), ("FACT", (10,)), ("SQ", (9,)), ("ACC", (10, 0)), ("SQ", (12,))]


def machine(jit: str, out: io.StringIO) -> starvm.Machine:
    m = starvm.Machine(backend="numpy", jit=jit, out=out)
    m.load(PROGRAM, "wrappers.star")
    return m


def runs(m: starvm.Machine) -> list:
    done = []
    for name, args in CALLS:
        try:
            done.append((m.call(name, *args), None, m.last_call_stats))
        except starvm.StarError as e:
            done.append((None, str(e), m.last_call_stats))
    return done


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("STARVM_JIT_CACHE", str(tmp_path_factory.mktemp("wrappers")))
    out = io.StringIO()
    m = machine("on", out)
    try:
        yield m, runs(m), out.getvalue()
    finally:
        mp.undo()


def _decorator_of(source: str, func: str) -> str:
    lines = source.splitlines()
    return lines[lines.index(next(line for line in lines if line.startswith(f"def {func}("))) - 1]


def test_only_callees_lose_the_wrapper_and_get_a_host_entry(compiled):
    m, _runs, _out = compiled
    routines = {r.display: r for r in m.jit.routines.values()}
    source = routines["SQ"].unit.lowered.source
    assert _decorator_of(source, "f_r_sq") == INNER_DECORATOR          # ACC calls it
    assert _decorator_of(source, f"{HOST_ENTRY}r_sq") == ROUTINE_DECORATOR
    assert routines["SQ"].compiled.func == f"{HOST_ENTRY}r_sq"
    for func in ("f_r_acc", "f_r_fact"):                                  # a caller; one calling only itself
        assert _decorator_of(source, func) == ROUTINE_DECORATOR
        assert f"def {HOST_ENTRY}{func[2:]}(" not in source
    assert routines["ACC"].compiled.func == "f_r_acc"


def test_host_and_compiled_callers_equal_the_interpreter(compiled):
    m, done, out = compiled
    assert {r.display: r.state for r in m.jit.routines.values()} == {"SQ": "compiled", "ACC": "compiled",
                                                                      "FACT": "compiled"}
    reference = io.StringIO()
    assert done == runs(machine("off", reference))
    assert out == reference.getvalue()
    assert "division by zero" in done[3][1] and "SQ" in done[4][1] and "ACC" in done[4][1]
