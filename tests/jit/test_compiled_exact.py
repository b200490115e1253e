"""The compiled tier does what the interpreter does where its machine runs out (issue 36):
integers past 64 bits, recursion deeper than the thread's stack, and a failing `parallel
for`. Each such call stops and runs again from its entry (call.JitRoutine.restart) with
the tables it wrote put back: the output, steps, tables, results and errors are the
interpreter's on --jit on and auto, never an error of the tier's own. The GPU tier's part
runs on the CPU (tests/gpu_sources: the emulated kernel, the stand-in for CuPy)."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from reference.jit_differential import differences, run
from test_compiled import jit_cache  # noqa: F401 - the compiled-code cache (jit_differential.py)

MIN, MAX = -(1 << 63), (1 << 63) - 1

# Every integer operation at the edges of 64 bits, in a compiled main block and in routines the
# interpreter calls once the main block has run again interpreted; the first call that passes
# 64 bits comes after the main block printed, flipped a table and changed a global.
INTEGERS = """
var acc: integer; P: table(70, 3);

proc ops(a, b: integer);
begin
  write(a, ' ', b, ':');
  if b <> 0 then write(' ', a div b, ' ', a mod b);
  writeln(' ', a + b, ' ', a - b, ' ', a * b, ' ', -a);
  acc := acc + 1
end;

{ writes a table, output and a global, then passes 64 bits where k is large }
proc late(var Q: table; k: integer; var r: integer);
var i: integer;
begin
  for i := 1 to NCOLS(Q) do COL(i, Q) := not COL(i, Q);
  writeln('flipped ', NCOLS(Q), ' ', k);
  acc := acc + 10;
  r := k * k * k * k
end;

function span(a, b: integer): integer;
var i, c: integer;
begin
  c := 0;
  for i := a to b do c := c + 1;
  span := c
end;

function down(a, b: integer): integer;
var i, c: integer;
begin
  c := 0;
  for i := a downto b do c := c + 1;
  down := c
end;

var r, m, big, i: integer;
begin
  m := -9223372036854775807 - 1;
  big := 9223372036854775807;
  acc := 0;
  for i := 1 to 70 do if i mod 3 = 0 then ROW(i, P) := BITS('101');
  r := 0;
  late(P, 1000, r);
  writeln(r, ' ', acc);
  ops(-7, 2); ops(7, -2); ops(-7, -2); ops(0, -1); ops(m, 1); ops(m, 2); ops(m, 3); ops(m, -3);
  ops(big, -1); ops(m + 1, -1); ops(m, -1); ops(big, 2); ops(big, 1); ops(m, m);
  ops(3037000499, 3037000499); ops(3037000500, 3037000500); ops(-3037000500, 3037000500);
  ops(4611686018427387904, 2); ops(-4611686018427387904, 2); ops(-4611686018427387904, -2);
  late(P, 100000, r); writeln(r);
  writeln(P);
  writeln(span(big - 2, big), ' ', down(m + 2, m), ' ', span(5, 3), ' ', span(m, m + 1));
  r := m; r := r div (-1); writeln(r);
  r := big; r := r + 1; writeln(r);
  r := m; r := -r; writeln(r);
  r := m; r := r mod (-1); writeln(r);
  writeln(acc)
end.
"""


def _expected_ops(a, b):
    def div(x, y):
        q = abs(x) // abs(y)
        return q if (x >= 0) == (y >= 0) else -q
    text = f"{a} {b}:"
    if b:
        text += f" {div(a, b)} {a - div(a, b) * b}"
    return text + f" {a + b} {a - b} {a * b} {-a}"


@pytest.mark.parametrize("jit", ["on", "auto"])
def test_integers_past_64_bits_equal_the_interpreter(monkeypatch, jit):
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "0")
    off = run(INTEGERS, "ints.star", "off")
    got = run(INTEGERS, "ints.star", jit)
    assert off[2] is None
    assert got[:3] == off[:3]
    lines = off[0].splitlines()
    assert lines[:2] == ["flipped 3 1000", f"{1000 ** 4} 10"]
    assert lines[2:22] == [_expected_ops(a, b) for a, b in (
        (-7, 2), (7, -2), (-7, -2), (0, -1), (MIN, 1), (MIN, 2), (MIN, 3), (MIN, -3), (MAX, -1), (MIN + 1, -1),
        (MIN, -1), (MAX, 2), (MAX, 1), (MIN, MIN), (3037000499, 3037000499), (3037000500, 3037000500),
        (-3037000500, 3037000500), (1 << 62, 2), (-(1 << 62), 2), (-(1 << 62), -2))]
    assert lines[22:24] == ["flipped 3 100000", str(100000 ** 4)]
    assert lines[-6:] == ["3 3 0 2", str(1 << 63), str(1 << 63), str(1 << 63), "0", "40"]
    restarts = {r.display: r.restarts for r in got[3].jit.routines.values()}
    assert restarts["late"] == 1 and restarts["span"] == 1
    if jit == "on":       # auto leaves a routine without a loop interpreted
        assert restarts["ops"] > 0 and restarts["main block"] == 1


@pytest.mark.parametrize("limit", [3, 30, 60, 100])   # of the 110 it takes
def test_integers_past_64_bits_under_a_step_limit(limit):
    assert differences(INTEGERS, "ints.star", max_steps=limit) == []


# Recursion deeper than a thread's stack holds: run compiled on a thread of its own, sized
# from what a call took; the recursion limit still the interpreter's, with its error.
DEEP = """
var P: table(64, 2);

function f(n: integer): integer;
begin if n = 0 then f := 0 else f := 1 + f(n - 1) end;

{ flips column 1 on the way down: the run that stopped on the stack's room wrote it }
proc walk(var Q: table; n: integer; var c: integer);
begin
  if n > 0 then begin COL(1, Q) := not COL(1, Q); c := c + 1; walk(Q, n - 1, c) end
end;

proc ping(n: integer; var c: integer);
begin if n > 0 then begin c := c + 1; pong(n - 1, c) end end;
proc pong(n: integer; var c: integer);
begin if n > 0 then begin c := c + 2; ping(n - 1, c) end end;
begin end.
"""


def _deep_calls(jit, calls, max_depth=30000, max_steps=None):
    m = starvm.Machine(jit=jit, out=io.StringIO(), max_depth=max_depth, max_steps=max_steps)
    m.load(DEEP, "deep.star")
    got = []
    for name, n in calls:
        P = m.table(np.eye(64, 2, dtype=bool))
        try:
            if name == "f":
                got.append(m.call("f", n))
            elif name == "walk":
                got.append((m.call("walk", P, n, 0), P.to_numpy().tolist()))
            else:
                got.append(m.call(name, n, 0))
        except starvm.StarError as e:
            got.append(e.render())
    return got, list(m.counts), m


def test_deep_recursion_runs_on_a_larger_stack_and_equals_the_interpreter():
    calls = [("f", 20000), ("walk", 20001), ("ping", 25000), ("f", 100)]
    off, off_counts, _ = _deep_calls("off", calls)
    on, on_counts, m = _deep_calls("on", calls)
    assert on == off and on_counts == off_counts
    assert off[0] == 20000 and off[1][0] == (20001,) and off[2] == (37500,) and off[3] == 100
    routines = {r.display: r for r in m.jit.routines.values()}
    for name in ("f", "walk", "ping"):     # each stopped once on the caller's stack, then fit
        assert routines[name].restarts == 1 and routines[name].stack_room > (1 << 20)


def test_too_deep_is_the_interpreters_error_never_a_signal():
    calls = [("f", 20000), ("walk", 12001), ("f", 11990)]
    off, off_counts, _ = _deep_calls("off", calls, max_depth=12000)
    on, on_counts, _ = _deep_calls("on", calls, max_depth=12000)
    assert on == off and on_counts == off_counts
    assert "recursion too deep (more than about 12000 nested Star calls)" in off[0]
    assert "recursion too deep (more than about 12000 nested Star calls)" in off[1]
    assert off[2] == 11990


def test_an_error_deep_in_compiled_recursion_shows_the_interpreters_stack():
    """The step limit 2500 calls deep (found by the edge fuzz, seed 370022): the stack of more
    than 200 frames shortened as the interpreter shortens it (Machine._guard)."""
    calls = [("f", 3000), ("ping", 3000)]
    off, off_counts, _ = _deep_calls("off", calls, max_steps=2500)
    on, on_counts, _ = _deep_calls("on", calls, max_steps=2500)
    assert on == off and on_counts == off_counts
    assert "step limit reached" in off[0] and "more frames ..." in off[0]


def test_on_large_stack_returns_and_raises_as_a_call():
    from starvm.jit.call import on_large_stack
    assert on_large_stack(1 << 22, lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(KeyError):
        on_large_stack(1 << 22, {}.__getitem__, "x")


# A `parallel for` failing in an iteration: the interpreter's fused loop checks a statement for
# every iteration before it writes, so the statements before it have run for all iterations
# and the failing one for none; compiled (iterations in order) the call runs again interpreted.
PFOR = """
proc fill(var P: table; X: slice(P); k: integer);
var i: integer;
begin
  parallel for i := 1 to k do
    COL(i, P) := COL(i, P) or X
end;

proc two(var P: table; X: slice(P); k: integer);
var i: integer;
begin
  writeln('two ', k);
  parallel for i := 1 to k do
  begin
    COL(i, P) := COL(i, P) xor X;
    if X(i * 10) = 1 then COL(i, P) := not COL(i, P)
  end;
  writeln('done')
end;

{ nothing in it can stop to run again: its calls save no table }
proc orall(var P: table; X: slice(P));
var i: integer;
begin
  for i := 1 to NCOLS(P) do COL(i, P) := COL(i, P) or X
end;
begin end.
"""


@pytest.mark.parametrize("jit", ["on", "auto"])
def test_a_failing_parallel_for_leaves_what_the_interpreter_leaves(monkeypatch, jit):
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "0")
    rng = np.random.default_rng(7)
    table, x = rng.random((70, 8)) < 0.5, rng.random(70) < 0.5
    x[[9, 29, 69]] = True

    def calls(mode):
        out = io.StringIO()
        m = starvm.Machine(jit=mode, out=out, native=False)
        m.load(PFOR, "pfor.star")
        got = []
        for name, k in (("fill", 8), ("fill", 9), ("two", 7), ("two", 8), ("fill", 0), ("orall", None)):
            P = m.table(table.copy())
            before = list(m.counts)
            try:
                m.call(name, P, m.slice(x), *([] if k is None else [k]))
                err = None
            except starvm.StarError as e:
                err = e.render()
            got.append((name, k, err, [a - b for a, b in zip(m.counts, before)], P.to_numpy().tolist()))
        return got, out.getvalue(), m

    off, off_out, _ = calls("off")
    on, on_out, m = calls(jit)
    assert on == off and on_out == off_out
    assert "column index 9 out of range 1..8" in off[1][2] and off[1][4] == table.tolist()
    assert "bit index 80 out of range 1..70" in off[3][2]
    assert off[3][4] == (table ^ x[:, None] * (np.arange(8) < 8)).tolist()     # statement 1 ran for all 8
    assert off_out == "two 7\ndone\ntwo 8\n"
    restarts = {r.display: r.restarts for r in m.jit.routines.values() if r.display != "main block"}
    assert restarts == {"fill": 1, "two": 1, "orall": 0}
    restartable = {r.display: r.compiled.restartable for r in m.jit.routines.values() if r.display != "main block"}
    assert restartable == {"fill": True, "two": True, "orall": False}


# ---------------------------------------------------------------- the GPU tier (emulated)
GPU_INTS = """
proc g_ops(a, b: integer; var q, r, n: integer);
begin
  q := a div b; r := a mod b; n := 0;
  for n := 1 to b do q := q + 0
end;
begin end.
"""


# the exact cases side by side in one kernel: the CPU run builds a program per kernel and
# argument list (g++, seconds each), and a failing case stops its kernel, so those run alone
GPU_EXACT = """
proc g_four(a1, b1, a2, b2, a3, b3, a4, b4: integer; var q1, r1, q2, r2, q3, r3, q4, r4: integer);
begin
  q1 := a1 div b1; r1 := a1 mod b1;
  q2 := a2 div b2; r2 := a2 mod b2;
  q3 := a3 div b3; r3 := a3 mod b3;
  q4 := a4 div b4; r4 := a4 mod b4
end;
begin end.
"""


def _emulated(text: str, root: str, args: list):
    from gpu_sources import emulate
    from gpu_sources.corpus import routine_bodies
    from starvm.targets.cuda.routine import render
    emulate.require()
    return emulate.run_kernel(render(routine_bodies(text, "emu.star"), root), args, 1, 32)


def test_gpu_kernel_divides_exactly():
    """The CUDA kernel's div and mod on the CPU (tests/gpu_sources/emulate.py): min div 2 and
    min mod -1 exact (C's / was undefined at min div -1), truncated toward zero."""
    pairs = [(MIN, 2), (MIN, 3), (MIN + 1, -1), (-7, 2)]
    got = _emulated(GPU_EXACT, "r_g_four", [x for p in pairs for x in p] + [0] * 8)
    want = []
    for a, b in pairs:
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        want += [q, a - q * b]
    assert got.code == 0 and got.results[:8] == want


@pytest.mark.parametrize("a, b", [(MIN, -1), (0, MAX)])
def test_gpu_kernel_stops_past_64_bits(a, b):
    """min div -1 and a loop up to the largest integer stop the kernel as E_OVERFLOW (the host
    then runs the call interpreted)."""
    from starvm.targets.layout import E
    assert _emulated(GPU_INTS, "r_g_ops", [a, b, 0, 0, 0]).code == E.OVERFLOW


def test_gpu_tier_renders_recursion_as_device_functions_of_their_own():
    # recursion and mutual recursion compile on the GPU tier (issue 31): the routines on a
    # cycle of calls are __noinline__ device functions, checked against the depth limit
    # (tests/jit/test_gpu_emulated.py runs them against the interpreter)
    from gpu_sources.corpus import routine_bodies
    from starvm.targets.cuda.routine import render
    bodies = routine_bodies(DEEP.replace("var P: table(64, 2);", ""), "deep.star")
    for root in ("r_f", "r_ping"):
        source = render(bodies, root).source
        assert "__noinline__" in source and "E_DEPTH" in source


GPU_LATE = """
proc g_late(var Q: table; k: integer; var r: integer);
var i: integer;
begin
  for i := 1 to NCOLS(Q) do COL(i, Q) := not COL(i, Q);
  r := k * k * k * k
end;
begin end.
"""


def test_gpu_call_past_64_bits_runs_again_interpreted_with_its_tables_restored(monkeypatch):
    """GpuRoutine.run on the stand-in for CuPy (tests/gpu_sources/fake_cupy.py): a kernel that
    stops as E_OVERFLOW after writing its table (a model of it: the table dirtied) leaves the
    call to the interpreter, with the table as it was before the launch: result, table and
    steps are the interpreter's."""
    from gpu_sources import fake_cupy
    from gpu_sources.fake_cupy import fake_cupy_installed
    from gpu_sources.emulate import device_copies
    from starvm.jit import cuda_runtime
    from starvm.targets.layout import E, S_CODE
    table = np.random.default_rng(3).random((70, 3)) < 0.5
    want = starvm.Machine(jit="off", native=False, out=io.StringIO())
    want.load(GPU_LATE, "late.star")
    P0 = want.table(table)
    want_r = want.call("G_LATE", P0, 100000, 0)
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
        device_copies(monkeypatch)
        monkeypatch.setattr(cuda_runtime, "_SMS", [132])
        m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
        m.load(GPU_LATE, "late.star")

        def model(launch):
            io_ = launch.args[-7]
            launch.args[0][...] = ~np.uint64(0)       # what the kernel wrote before it stopped
            io_[:] = 0
            io_[S_CODE] = E.OVERFLOW
        fake_cupy.ON_LAUNCH.append(model)
        P = m.table(table)
        got_r = m.call("G_LATE", P, 100000, 0)
        r = m.jit.routines["r_g_late"]
        assert r.state == "compiled" and r.launches == 1 and r.reruns == 1
        assert got_r == want_r == (100000 ** 4,)
        assert np.array_equal(P.to_numpy(), P0.to_numpy())
        assert m.counts == want.counts


@pytest.mark.parametrize("how", ["no thread", "too large"])
def test_without_a_large_stack_a_deep_call_runs_interpreted(monkeypatch, how):
    from starvm.jit import call
    if how == "no thread":
        def refused(*args):
            raise call.NoLargeStack("can't start new thread")
        monkeypatch.setattr(call, "on_large_stack", refused)
    else:
        monkeypatch.setattr(call, "_MAX_ROOM", 1 << 21)
    calls = [("f", 20000), ("walk", 20001), ("f", 50)]
    off, off_counts, _ = _deep_calls("off", calls)
    on, on_counts, m = _deep_calls("on", calls)
    assert on == off and on_counts == off_counts
    f = next(r for r in m.jit.routines.values() if r.display == "f")
    assert f.compiled_calls >= 1 and f.stack_room == call._INLINE_ROOM


def test_gpu_tier_past_64_bits_and_a_failing_parallel_for_equal_the_interpreter():
    """On a GPU (skipped without one): g_late passes 64 bits after writing its table, the
    minimum div -1 stops the kernel, fill fails in an iteration of its parallel for; each call
    runs again interpreted with its table put back."""
    from conftest import cupy_or_skip
    cupy_or_skip()
    table = np.random.default_rng(5).random((70, 3)) < 0.5
    x = np.random.default_rng(6).random(70) < 0.5
    text = GPU_LATE.replace("begin end.", "") + GPU_INTS.replace("begin end.", "") + PFOR

    def calls(jit):
        m = starvm.Machine(backend="cupy", jit=jit, native=False, out=io.StringIO())
        m.load(text, "gpu.star")
        got = []
        # (a loop up to 2^63 - 1 would run on for ever interpreted: the emulated kernel's test)
        for name, args in (("G_LATE", (100, 0)), ("G_LATE", (100000, 0)), ("G_OPS", (MIN, -1, 0, 0, 0)),
                           ("G_OPS", (MIN, 2, 0, 0, 0)), ("G_OPS", (MIN, -3, 0, 0, 0)), ("FILL", (3,)), ("FILL", (4,))):
            P = m.table(table.copy())
            full = (P, *args) if name == "G_LATE" else (P, m.slice(x), *args) if name == "FILL" else args
            before = list(m.counts)
            try:
                out = m.call(name, *full)
            except starvm.StarError as e:
                out = e.render()
            got.append((name, out, [a - b for a, b in zip(m.counts, before)], P.to_numpy().tolist()))
        return got, m

    off, _ = calls("off")
    on, m = calls("on")
    assert on == off
    reruns = {r.display: r.reruns for r in m.jit.routines.values() if hasattr(r, "reruns")}
    assert reruns.get("g_late", 0) >= 1 and reruns.get("g_ops", 0) >= 1, reruns


LOOPED = """
function g(n: integer): integer;
var i, s: integer;
begin
  s := 0;
  for i := 1 to 2 do s := s + i;
  if n = 0 then g := s else g := g(n - 1) + 1
end;
begin end.
"""


def test_a_deep_recursion_left_interpreted_on_auto_is_the_interpreters(monkeypatch):
    """--jit auto below the threshold: g runs interpreted through its JitRoutine, a C frame a
    call; 30000 calls deep that overflowed the stack (SIGSEGV) where --jit off printed 30003
    (found by the edge fuzz). From call._DEEP_CALLS on, the calls go to the interpreted
    routine directly."""
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", str(10 ** 18))
    got = {}
    for jit in ("off", "auto"):
        m = starvm.Machine(jit=jit, out=io.StringIO(), max_depth=40000)
        m.load(LOOPED, "looped.star")
        got[jit] = (m.call("g", 30000), list(m.counts))
    assert got["auto"] == got["off"] and got["off"][0] == 30003
