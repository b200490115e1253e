"""The debugger's command language (starvm/debug/commands.py) without a terminal: every
command and alias, the repeat of an empty line, usage messages, and the compiled tier
staying out of the way while debugging."""
from __future__ import annotations

import io

import pytest

from star_programs import RECURSIVE, line_of, random_digraph, warshall_c_program
from starvm.debug import Debugger
from starvm.debug.commands import DebugShell


@pytest.fixture
def shell():
    shells = []

    def make(text, backend="numpy"):
        out = io.StringIO()
        sh = DebugShell(Debugger(text, "prog.star", backend=backend, out=out), out)
        assert sh.begin()
        shells.append(sh)
        return sh
    yield make
    for sh in shells:
        sh.d.close()


def _run(sh, line):
    sh.out.seek(0)
    sh.out.truncate()
    sh.execute(line)
    return sh.out.getvalue()


def test_every_command(shell, backend):
    text = warshall_c_program(random_digraph(6, 41, p=0.4))
    sh = shell(text, backend)
    assert "break LINE" in _run(sh, "help") and "(bk)" in _run(sh, "h")
    assert _run(sh, "b WARSHALL-C") == "breakpoint 1 at WARSHALL-C\n"
    assert _run(sh, "breaks") == "breakpoint 1 at WARSHALL-C (hit 0 times)\n"
    assert "in WARSHALL-C" in _run(sh, "c")
    assert "hit 1 times" in _run(sh, "info")
    listing = _run(sh, "l")
    here = line_of(text, "begin for k:=1")
    assert f"{here:>5} -> begin for k:=1 to n do" in listing
    assert "x:=ROW(k,P);" in listing
    assert _run(sh, "list 20").count("\n") == 11
    assert "x:=ROW" in _run(sh, "s")
    assert "W:=COL" in _run(sh, "")          # an empty line repeats step
    assert "i = STEP" in _run(sh, "n")
    assert "while i >0" in _run(sh, "")      # and next
    assert _run(sh, "p NROWS(P) + 1") == "7\n"
    assert _run(sh, "print").startswith("error: usage: print EXPR")
    assert "-> WARSHALL-C at prog.star:" in _run(sh, "w")
    assert "-> WARSHALL-C at prog.star:" in _run(sh, "bt")
    shown = _run(sh, "show P 2")
    assert "rows 2-6 shown" in shown and "    1 |" not in shown
    assert _run(sh, "show P 9-12").startswith("error: rows 9-12 are outside 1..6")
    assert _run(sh, "show x").startswith("x: word of 6 bits, ")
    assert _run(sh, "watch i").startswith("watching i (in WARSHALL-C)")
    assert _run(sh, "unwatch i") == "no longer watching i\n"
    assert _run(sh, "delete 7") == "error: no breakpoint 7\n"
    assert _run(sh, "delete x") == "error: usage: delete [N]\n"
    assert _run(sh, "d 1") == "deleted breakpoint 1\n"
    ev = sh.d.stop.event
    assert f"[event {ev - 1}," in _run(sh, "bk")
    assert f"[event {ev}," in _run(sh, "goto " + str(ev))
    assert _run(sh, "goto x") == "error: usage: goto EVENT (a number)\n"
    assert "in main block" in _run(sh, "f")
    assert _run(sh, "steps").startswith(f"event {sh.d.stop.event}; steps {sh.d.stop.steps} (")
    assert "[event 1, steps 0]" in _run(sh, "run")
    assert "the program has finished" in _run(sh, "c")
    assert "'run' starts it again" in _run(sh, "step")
    assert _run(sh, "frobnicate") == "unknown command 'frobnicate'; 'help' lists the commands\n"
    assert sh.execute("q") is False and sh.done


def test_the_compiled_tier_is_bypassed(monkeypatch, backend):
    """Even with the compiled tier forced on, every iteration of a hot loop is an event."""
    monkeypatch.setenv("STARVM_JIT", "on")
    text = ("function SUM(n: integer): integer;\nvar i, s: integer;\nbegin\n  s := 0;\n"
            "  for i := 1 to n do s := s + i;\n  SUM := s;\nend;\n\nbegin\n  writeln(SUM(300));\nend.\n")
    out = io.StringIO()
    with Debugger(text, "sum.star", backend=backend, out=out) as d:
        d.start()
        end = d.cont()
    # main: writeln; SUM: s := 0, the for line on entry and after each of the 300 bodies, 300 bodies, SUM := s
    assert out.getvalue() == "45150\n" and end.event == 1 + 1 + 1 + 300 + 300 + 1


def test_recursive_where_in_the_shell(shell):
    sh = shell(RECURSIVE)
    _run(sh, "break FIB if n = 1")
    _run(sh, "c")
    stack = _run(sh, "where").splitlines()
    assert stack[0].startswith("   main block") and stack[-1].startswith("-> FIB") and len(stack) == 7
