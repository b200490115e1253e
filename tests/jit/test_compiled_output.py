"""writeln in compiled code: the records written before a failure are printed as the
interpreter prints them, however often the output buffer grew (kernels.out_room replaces the
array inside a holder the host keeps, buffers.output_holder), in nested compiled calls, under
a step limit, and with the grown buffer reused by later calls."""
from __future__ import annotations

from pathlib import Path

import pytest

from reference.jit_differential import jit_cache  # noqa: F401 - the module's fixture: the compiled-code cache (jit_differential.py)
from reference.jit_differential import run
from starvm.targets.numba.kernels import output_records

ROOT = Path(__file__).resolve().parents[2]


def same_as_interpreter(src: str, backend: str, **kw):
    """Both tiers' (output, step counts, error); asserts they agree and returns the compiled run."""
    off = run(src, "out.star", "off", backend=backend, **kw)
    on = run(src, "out.star", "on", backend=backend, **kw)
    assert on[0] == off[0]
    assert on[1] == off[1]
    assert on[2] == off[2]
    return off, on


def ran_compiled(machine) -> set[str]:
    return {r.display for r in machine.jit.routines.values() if r.compiled_calls}


# `lines` lines of an n-bit slice (⌈n/64⌉ + 2 words each, plus a newline record), then a bit
# index one past the end: 1024 words of buffer first, doubled as often as needed. The sizes
# are tables' (NROWS), not literals in the compiled main block: every size runs one module.
GROW_THEN_FAIL = """var T: table({n}, 3); L: table({lines}, 1); X: slice(T); i: integer;
begin
  X := COL(1, T);
  X(1) := 1;
  for i := 1 to NROWS(L) do writeln(i, ' ', X);
  X(NROWS(T) + 1) := 1
end.
"""


@pytest.mark.parametrize("n, lines", [(1, 1), (1, 300), (63, 200), (64, 250), (65, 180), (4000, 300)])
def test_output_grown_many_times_before_an_error_is_printed(backend, n, lines):
    off, on = same_as_interpreter(GROW_THEN_FAIL.format(n=n, lines=lines), backend)
    assert off[0].count("\n") == lines and off[0].startswith("1 1")
    assert f"out.star:6:3: error: bit index {n + 1} out of range 1..{n}" in off[2]
    if backend == "numpy":
        assert ran_compiled(on[3]) == {"main block"}


# A procedure writes enough to grow the buffer, returns, is called again and fails in a
# callee two compiled calls deep; the records of every call before the error are printed.
# fail_at and rounds are tables' sizes less one (globals F and R), not literals: one module.
NESTED = """var T: table(700, 2); X: slice(T); k: integer; F: table({fail_at} + 1, 1); R: table({rounds} + 1, 1);
proc leaf(var X: slice; d: integer);
var i: integer;
begin
  for i := 1 to 12 do writeln(d, ' ', i, ' ', X);
  if d = NROWS(F) - 1 then X(701) := 1
end;
proc middle(var X: slice; d: integer);
var j: integer;
begin
  for j := 1 to 2 do begin writeln('middle ', d, ' ', j); leaf(X, d * 10 + j) end
end;
proc outer(var X: slice);
var d: integer;
begin
  for d := 1 to NROWS(R) - 1 do middle(X, d)
end;
begin
  X := COL(2, T);
  X(7) := 1;
  for k := 1 to 2 do outer(X);
  writeln('end')
end.
"""


@pytest.mark.parametrize("fail_at, rounds", [(12, 3), (31, 3), (52, 6), (0, 4)])
def test_output_grown_inside_nested_compiled_calls_before_an_error_is_printed(backend, fail_at, rounds):
    off, on = same_as_interpreter(NESTED.format(fail_at=fail_at, rounds=rounds), backend)
    if fail_at:
        assert "error: bit index 701 out of range 1..700" in off[2]
        assert "leaf at out.star:6:" in off[2] and "middle at" in off[2] and "outer at" in off[2]
        assert off[0].count("\n") > 24 and off[0].rstrip().split("\n")[-1].startswith(str(fail_at))
    else:
        assert off[2] is None and off[0].endswith("end\n")
    if backend == "numpy":
        assert ran_compiled(on[3]) == {"main block"}


@pytest.mark.parametrize("limit", [3, 40, 150, 299, 599])
def test_output_grown_before_the_step_limit_is_printed(backend, limit):
    off, on = same_as_interpreter(GROW_THEN_FAIL.format(n=200, lines=600), backend, max_steps=limit)
    assert f"step limit reached: more than {limit}" in off[2]
    assert off[0].count("\n") == limit    # the loop's iterations are the steps: `limit` of them ran


@pytest.mark.parametrize("limit", [5, 12, 19])
def test_the_fuzzing_program_that_lost_its_output_under_a_step_limit(limit):
    """bench/results/fuzz_failures/compiled_seed1028.star: under 12 and 19 steps the compiled
    tier crashed ('bad output record 0')."""
    src = (ROOT / "bench" / "results" / "fuzz_failures" / "compiled_seed1028.star").read_text()
    off, on = same_as_interpreter(src, "numpy", max_steps=limit)
    assert "step limit reached" in off[2] and off[0]


# An interpreted main block (no loop: --jit auto leaves it) calls a compiled procedure three
# times: the first call grows the buffer, the next ones reuse it from its start.
REUSED = """var T: table(3000, 2); X: slice(T);
proc burst(var X: slice; m: integer);
var i: integer;
begin
  for i := 1 to m do writeln(m, ' ', i, ' ', X)
end;
begin
  X := COL(1, T);
  X(2999) := 1;
  burst(X, 40);
  writeln('between');
  burst(X, 3);
  burst(X, 25);
  X(3001) := 1
end.
"""


def test_a_grown_buffer_is_reused_by_later_calls(backend, monkeypatch):
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "0")
    off = run(REUSED, "out.star", "off", backend=backend)
    auto = run(REUSED, "out.star", "auto", backend=backend)
    assert (auto[0], auto[1], auto[2]) == (off[0], off[1], off[2])
    assert off[0].count("\n") == 40 + 1 + 3 + 25 and "bit index 3001" in off[2]
    if backend == "numpy":
        burst = [r for r in auto[3].jit.routines.values() if r.display == "burst"]
        assert burst and burst[0].compiled_calls == 3
        assert output_records(auto[3].jit.buffers()[2]).shape[0] > 1024    # grown once, kept


# A writeln whose later argument fails after the buffer grew: the lines before it are
# printed, the unfinished one is not (as in the interpreter).
UNFINISHED = """var T: table(2000, 1); X: slice(T); i: integer;
begin
  X := COL(1, T);
  for i := 1 to 40 do writeln(X);
  writeln('last ', X, ' ', X(i * 100))
end.
"""


def test_a_write_call_failing_after_the_buffer_grew_prints_the_lines_before_it(backend):
    off, _on = same_as_interpreter(UNFINISHED, backend)
    assert off[0].count("\n") == 40 and "last" not in off[0]
    assert "bit index 4000 out of range 1..2000" in off[2]


# Numba compiles nothing in a process that finds everything in the disk cache: not the
# output holder either (a typed List made or read from Python compiles Numba's helpers for
# it in every process, seconds; kernels.new_output and output_records are cached).
COUNT_COMPILES = """
import io, sys
import starvm
from numba.core import event

class Count(event.Listener):
    n = 0
    def on_start(self, ev):
        Count.n += 1
    def on_end(self, ev):
        pass

out = io.StringIO()
m = starvm.Machine(jit="on", out=out)
with event.install_listener("numba:compile", Count()):
    try:
        m.run(sys.argv[1], "out.star")
    except starvm.StarError:
        pass
print(Count.n, out.getvalue().count(chr(10)))
"""


def test_a_fresh_process_with_a_warm_cache_compiles_nothing(tmp_path, monkeypatch):
    """This process fills an empty cache (Numba compiles the program here), then a fresh
    process runs the program from it."""
    import io
    import subprocess
    import sys
    import starvm
    from numba.core import event
    # a text of its own: a module this process loaded for another test would not compile here
    src = GROW_THEN_FAIL.format(n=4000, lines=40).replace("X(1) := 1;", "X(1) := 1; X(2) := 1;")
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path))
    out = io.StringIO()
    with event.install_listener("numba:compile", event.RecordingListener()) as rec:
        with pytest.raises(starvm.StarError):
            starvm.Machine(jit="on", out=out).run(src, "out.star")
    compiles = [e for _, e in rec.buffer if e.is_start]
    assert compiles and out.getvalue().count("\n") == 40
    run = subprocess.run([sys.executable, "-c", COUNT_COMPILES, src], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["0", "40"]


# Functions that write output, called inside expressions: in writeln's arguments their lines
# come before the line (the interpreter formats every argument before it writes), and an
# unassigned argument fails before a later argument's call writes anything.
WRITING_FUNCTIONS = """
function f(x: integer): integer;
begin writeln('in f ', x); f := x * 2 end;
function g(X: slice): slice;
begin writeln('in g ', X); g := not X end;
var i: integer; X, Y: slice; T: table(3, 2);
begin
  X := BITS('101');
  for i := 1 to 2 do writeln('a ', f(i), ' b ', f(i + 10), ' ', i > 1, g(X), T);
  i := f(3) + f(4);
  if f(5) > 3 then writeln(i);
  writeln(f(6), Y, g(X))
end.
"""


def test_functions_that_write_output_inside_expressions(backend):
    off, on = same_as_interpreter(WRITING_FUNCTIONS, backend)
    assert off[0].startswith("in f 1\nin f 11\nin g 101\na 2 b 22 false01000\n00\n00\nin f 2\n")
    assert off[0].endswith("in f 5\n14\nin f 6\n") and "'Y' is used before it is assigned" in off[2]
    if backend == "numpy":
        assert ran_compiled(on[3]) == {"main block"}
