"""The debugger through its Python API (starvm.debug.Debugger), on every backend: breakpoints,
step / next / finish / back on WARSHALL-C and on recursive routines, back-then-step identity,
conditional breakpoints, watch, and bad commands that leave the session usable. Results are
checked against plain-Python models and against the same program run without the debugger."""
from __future__ import annotations

import io
import threading
import time

import numpy as np
import pytest

import starvm
from starvm.debug import DebugError, Debugger
from star_programs import (LOOP_FOREVER, RECURSIVE, closure, line_of, random_digraph, warshall_c_inner_visits,
                           warshall_c_program)


def _plain_run(text: str, backend: str):
    """The program without the debugger: its output and step count (native kernels off, as
    the debugger runs Star bodies)."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out, native=False)
    m.run(text, "prog.star")
    return out.getvalue(), sum(m.counts), m


def _rows(adj) -> tuple[str, ...]:
    return tuple("".join("1" if b else "0" for b in row) for row in adj)


@pytest.fixture
def dbg_factory():
    made = []

    def make(text, backend, **kw):
        d = Debugger(text, "prog.star", backend=backend, out=io.StringIO(), **kw)
        made.append(d)
        return d
    yield make
    for d in made:
        d.close()


@pytest.mark.parametrize("n,seed", [(7, 1), (12, 2)])
def test_warshall_c_continue_to_end_matches_plain_run(backend, dbg_factory, n, seed):
    adj = random_digraph(n, seed, p=0.25)
    text = warshall_c_program(adj)
    d = dbg_factory(text, backend)
    stop = d.start()
    assert stop.reason == "start" and stop.event == 1 and stop.routine == "main block"
    end = d.cont()
    assert end.reason == "finished"
    out, steps, m = _plain_run(text, backend)
    assert end.steps == steps
    assert d.out.getvalue() == out
    assert d.variables()["P"] == _rows(closure(adj))


def test_breakpoints_step_next_finish_on_warshall_c(backend, dbg_factory):
    adj = random_digraph(9, 3, p=0.3)
    text = warshall_c_program(adj)
    visits = warshall_c_inner_visits(adj)
    assert visits, "the graph must make the inner loop run"
    d = dbg_factory(text, backend)
    d.start()
    # a routine breakpoint stops at the routine's first statement
    assert "breakpoint 1 at WARSHALL-C" in d.break_("WARSHALL-C")
    s = d.cont()
    assert s.reason == "breakpoint" and s.routine == "WARSHALL-C" and s.line == line_of(text, "begin for k:=1")
    assert [r for r, _ in d.where()] == ["main block", "WARSHALL-C"]
    # step walks statement by statement: the for, x := ROW, W := COL, i = STEP
    lines = [d.step().line for _ in range(3)]
    assert lines == [line_of(text, "x:=ROW"), line_of(text, "W:=COL"), line_of(text, "i = STEP")]
    assert d.print_("k") == "1"
    assert d.evaluate("NROWS(P)") == 9
    # a line breakpoint in the inner loop: every stop is one (k, i) of the model, in order
    d.delete()
    target = line_of(text, "COL ( i , P ) :=V")
    d.break_(str(target))
    seen = []
    s = d.cont()
    while s.reason == "breakpoint":
        assert s.line == target
        seen.append((d.evaluate("k"), d.evaluate("i")))
        if len(seen) == 3:
            # next over one statement stays in the routine; finish leaves it
            nxt = d.next()
            assert nxt.line == line_of(text, "i:=STEP(x)") and nxt.routine == "WARSHALL-C"
            d.delete()
            fin = d.finish()
            assert fin.routine == "main block" and fin.line == line_of(text, "writeln(NUMB")
            assert d.variables()["P"] == _rows(closure(adj))
            break
        s = d.cont()
    assert seen == visits[:len(seen)] and len(seen) == min(3, len(visits))


def test_conditional_breakpoint_stops_only_when_true(backend, dbg_factory):
    adj = random_digraph(10, 4, p=0.3)
    text = warshall_c_program(adj)
    want = [(k, i) for k, i in warshall_c_inner_visits(adj) if i == 3]
    d = dbg_factory(text, backend)
    d.start()
    msg = d.break_(f"{line_of(text, 'COL ( i , P ) :=V')} if i = 3")
    assert msg.endswith("if i = 3")
    got = []
    s = d.cont()
    while s.reason == "breakpoint":
        got.append((d.evaluate("k"), d.evaluate("i")))
        s = d.cont()
    assert s.reason == "finished"
    assert got == want
    assert d.breakpoints[0].hits == len(want)


@pytest.mark.parametrize("reuse", [True, False], ids=["same machine", "fresh machine"])
def test_back_then_step_gives_identical_state_and_counts(backend, dbg_factory, reuse):
    text = warshall_c_program(random_digraph(8, 5, p=0.3))
    d = dbg_factory(text, backend)
    d.reuse_machine = reuse          # replays run init_ and main again, or compile anew
    d.start()
    rng = np.random.default_rng(7)
    total = d.cont().event          # events of the whole run
    for e in sorted(rng.choice(np.arange(2, total), size=4, replace=False)):
        before = d.run_to(int(e))
        state, steps = d.variables(), before.steps
        after = d.step()
        state2 = d.variables()
        back = d.back()
        assert (back.event, back.steps, back.line, d.variables()) == (before.event, steps, before.line, state)
        again = d.step()
        assert (again.event, again.steps, again.line, d.variables()) == (after.event, after.steps, after.line, state2)
    # back from the finished program: before the last statement; step finishes it again
    end = d.cont()
    last = d.back()
    assert last.running and last.event == end.event
    assert d.step().reason == "finished"


def test_recursive_routine_step_next_finish_back(backend, dbg_factory):
    d = dbg_factory(RECURSIVE, backend)
    d.start()
    d.break_("FIB")
    s = d.cont()
    assert s.routine == "FIB" and d.evaluate("n") == 6
    depth0 = len(d.where())
    # step into the recursion: FIB(5) is one frame deeper
    while True:
        s = d.step()
        if len(d.where()) > depth0:
            break
    assert d.evaluate("n") == 5 and [r for r, _ in d.where()] == ["main block"] + ["FIB"] * 2
    # finish returns to FIB(6) with a set
    d.delete()
    s = d.finish()
    assert len(d.where()) == depth0 and d.evaluate("n") == 6 and d.evaluate("a") == 5
    # next runs FIB(n - 2) whole
    s = d.next()
    assert len(d.where()) == depth0 and d.evaluate("b") == 3
    state, steps, event = d.variables(), s.steps, s.event
    d.step()
    d.back()
    assert (d.variables(), d.stop.steps, d.stop.event) == (state, steps, event)
    # the deepest MARK call: a routine breakpoint with a condition
    d.break_("MARK if d = 0")
    s = d.cont()
    assert s.reason == "breakpoint" and d.evaluate("d") == 0
    assert [r for r, _ in d.where()] == ["main block"] + ["MARK"] * 6
    assert d.print_("X") == "slice 11111000"
    assert d.cont().reason == "finished"
    assert d.out.getvalue() == "8 11111000\n"


def test_watch_stops_on_every_change(backend, dbg_factory):
    text = warshall_c_program(random_digraph(6, 6, p=0.4))
    d = dbg_factory(text, backend)
    d.start()
    d.break_("WARSHALL-C")
    d.cont()
    d.delete()
    assert d.watch("k").startswith("watching k (in WARSHALL-C)")
    values = []
    s = d.cont()
    while s.reason == "watch":
        assert s.message.startswith("watch: k changed:")
        values.append(d.evaluate("k"))
        s = d.cont()
    assert values == list(range(1, 7)) and s.reason == "finished"
    # a watched global table: stops exactly when P changes, with the line that changed it
    d.unwatch()
    d.restart()
    d.watch("P")
    writers = {n for n, line in enumerate(text.split("\n"), 1) if ":= BITS(" in line or "COL ( i , P ) :=V" in line}
    changes = 0
    s = d.cont()
    while s.reason == "watch":
        assert "P changed" in s.message
        assert int(s.message.rsplit("(by line ", 1)[1].rstrip(")")) in writers
        changes += 1
        s = d.cont()
    assert changes >= 2          # the ROW assignments of the main block, then WARSHALL-C's COL writes


def test_bad_commands_leave_the_session_usable(backend, dbg_factory):
    text = warshall_c_program(random_digraph(6, 8, p=0.4))
    d = dbg_factory(text, backend)
    d.start()
    blank = 2   # Listing 2's line 2 declares variables: no statement there
    msg = d.break_(str(blank))
    assert msg.startswith(f"no statement on line {blank}; the breakpoint moves to line ")
    with pytest.raises(DebugError, match="unknown name 'nosuch'"):
        d.print_("nosuch + 1")
    with pytest.raises(DebugError, match="no routine 'NOSUCH'"):
        d.break_("NOSUCH")
    with pytest.raises(DebugError, match="condition must be a boolean"):
        d.break_("WARSHALL-C if n + 1")
    with pytest.raises(DebugError, match="no variable 'zz'"):
        d.watch("zz")
    with pytest.raises(DebugError, match="nothing to go back to"):
        d.back()
    with pytest.raises(DebugError, match="no statement on line 9999"):
        d.break_("9999")
    # still usable
    s = d.cont()
    assert s.reason == "breakpoint"
    assert d.print_("NROWS(P)") == "6"


def test_a_runtime_error_ends_the_run_and_back_returns_before_it(backend, dbg_factory):
    text = "var X: slice; n: integer;\nbegin\n  X := BITS('0101');\n  n := 5;\n  X(n) := 1;\nend.\n"
    d = dbg_factory(text, backend)
    d.start()
    s = d.cont()
    assert s.reason == "error" and "bit index 5 out of range" in s.message
    b = d.back()
    assert b.line == 5 and d.evaluate("n") == 5


def test_pause_stops_a_running_continue(backend, dbg_factory):
    """What Ctrl-C does at the prompt: the next statement stops the run."""
    d = dbg_factory(LOOP_FOREVER, backend)
    d.start()
    timer = threading.Timer(0.5, lambda: setattr(d, "_pause", True))
    timer.start()
    t0 = time.perf_counter()
    s = d.cont()
    assert s.reason == "interrupted" and time.perf_counter() - t0 < 20
    assert d.evaluate("n") > 0
    n = d.evaluate("n")
    d.step()
    d.step()
    assert d.evaluate("n") == n + 1


def test_steps_report_counts_by_operation(backend, dbg_factory):
    text = warshall_c_program(random_digraph(5, 9, p=0.4))
    d = dbg_factory(text, backend, profile=True)
    d.start()
    d.cont()
    report = d.steps_report()
    _, steps, m = _plain_run(text, backend)
    assert f"steps {steps} (" in report
    assert "native kernels and the compiled tier were bypassed" in report
    for op, c in m.stats.items():
        from starvm.ir.ops import OP_TITLES, Op
        assert f"{OP_TITLES[Op[op]]} {c}" in report
