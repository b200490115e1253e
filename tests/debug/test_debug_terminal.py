"""`star debug` and the REPL's `:debug` in a real (pseudo-)terminal, driven by pexpect:
breakpoints, step / next / finish / back, print, where, watch, a conditional breakpoint,
bad commands, Ctrl-C during `continue` returning to the prompt; and `star debug` with its
commands piped in (the transcript form docs/debugging.md shows)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import subprocess_env
from star_programs import LOOP_FOREVER, RECURSIVE, line_of, random_digraph, warshall_c_program

pexpect = pytest.importorskip("pexpect", reason="pexpect is needed to drive a terminal (pip install \".[test]\")")
pytest.importorskip("prompt_toolkit")

PROMPT = "debug>"   # prompt_toolkit draws the trailing space as a cursor move


def _spawn(args, cwd):
    if not hasattr(pexpect, "spawn"):
        pytest.skip("pexpect.spawn needs a POSIX pseudo-terminal")
    env = {k: v for k, v in os.environ.items() if k not in ("STARVM_BACKEND", "STARVM_DEBUG")}
    env.update(PYTHONPATH=subprocess_env()["PYTHONPATH"], STARVM_HISTORY=str(Path(cwd) / "history"), TERM="xterm",
               PROMPT_TOOLKIT_NO_CPR="1")
    return pexpect.spawn(sys.executable, ["-m", "starvm", *args], cwd=str(cwd), env=env, encoding="utf-8",
                         timeout=30, dimensions=(40, 160),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _cmd(child, line: str) -> None:
    child.expect_exact(PROMPT)
    child.send(line + "\r")


def test_star_debug_in_a_terminal(tmp_path):
    text = warshall_c_program(random_digraph(8, 11, p=0.3))
    (tmp_path / "wc.star").write_text(text)
    inner = line_of(text, "COL ( i , P ) :=V")
    child = _spawn(["debug", "wc.star"], tmp_path)
    try:
        child.expect("stopped before its first statement")
        _cmd(child, "break WARSHALL-C")
        child.expect("breakpoint 1 at WARSHALL-C")
        _cmd(child, "continue")
        child.expect(r"> wc\.star:\d+ in WARSHALL-C  \[event \d+, steps \d+\]")
        _cmd(child, "step")
        child.expect(r"\[event (\d+), steps (\d+)\]\r\n +\d+ \| x:=ROW\(k,P\)")
        event, steps = int(child.match.group(1)), int(child.match.group(2))
        _cmd(child, "next")                    # x := ROW(k, P): one step
        child.expect(rf"\[event {event + 1}, steps {steps + 1}\]")
        _cmd(child, "back")
        child.expect(rf"\[event {event}, steps {steps}\]")
        _cmd(child, "step")
        child.expect(rf"\[event {event + 1}, steps {steps + 1}\]")
        _cmd(child, "print ROW(k, P)")
        child.expect(r"word [01]{8}\r\n")
        _cmd(child, "where")
        child.expect(r"main block at wc\.star:\d+\r\n-> WARSHALL-C at wc\.star:\d+")
        _cmd(child, f"break {inner} if i = 2")
        child.expect(f"breakpoint 2 at wc.star:{inner} if i = 2")
        _cmd(child, "delete 1")
        _cmd(child, "continue")
        child.expect(f"breakpoint 2 \\(wc.star:{inner}\\)")
        _cmd(child, "print i")
        child.expect(r"[^0-9]2\r\n")
        _cmd(child, "show P 1-3")
        child.expect(r"P: table 8 x 8, \d+ ones \(rows 1-3 shown\)")
        _cmd(child, "watch x")
        child.expect("watching x")
        _cmd(child, "delete")
        _cmd(child, "continue")
        child.expect(r"watch: x changed: [01]{8} -> [01]{8} \(by line \d+\)")
        _cmd(child, "unwatch")
        child.expect("removed 1 watch")
        _cmd(child, "finish")
        child.expect(r"in main block")
        _cmd(child, "print nosuch")
        child.expect("unknown name 'nosuch'")
        _cmd(child, "steps")
        child.expect(r"event \d+; steps \d+ \(")
        _cmd(child, "quit")
        child.expect(pexpect.EOF)
        child.wait()
        assert child.exitstatus == 0
    finally:
        if child.isalive():
            child.terminate(force=True)


def test_ctrl_c_during_continue_returns_to_the_prompt(tmp_path):
    (tmp_path / "loop.star").write_text(LOOP_FOREVER)
    child = _spawn(["debug", "loop.star"], tmp_path)
    try:
        child.expect("stopped before its first statement")
        _cmd(child, "continue")
        time.sleep(1.0)
        child.sendintr()
        child.expect("interrupted")
        child.expect(r"> loop\.star:4 in main block")
        _cmd(child, "print n > 10")
        child.expect(r"true\r\n")
        _cmd(child, "quit")
        child.expect(pexpect.EOF)
        child.wait()
        assert child.exitstatus == 0
    finally:
        if child.isalive():
            child.terminate(force=True)


def test_repl_debug_command_in_a_terminal(tmp_path):
    (tmp_path / "rec.star").write_text(RECURSIVE)
    child = _spawn(["repl"], tmp_path)
    try:
        child.expect("star>")
        child.send(":debug rec.star\r")
        child.expect("stopped before its first statement")
        _cmd(child, "break FIB if n = 2")
        _cmd(child, "continue")
        child.expect(r"breakpoint 1 \(FIB\)")
        _cmd(child, "where")
        child.expect(r"(-> FIB at rec\.star:\d+)")
        _cmd(child, "print n")
        child.expect(r"[^0-9]2\r\n")
        child.expect_exact("debug>")
        child.sendeof()                         # Ctrl-D leaves the debugger, not the prompt
        child.expect("left the debugger")
        child.expect("star>")
        child.send("1 + 1\r")
        child.expect(r"[^0-9]2\r\n")
        child.expect("star>")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)


def test_star_debug_reads_commands_from_a_pipe(tmp_path):
    (tmp_path / "rec.star").write_text(RECURSIVE)
    cmds = "break MARK if d = 0\ncontinue\nwhere\nprint X\nfinish\nback\nquit\n"
    r = subprocess.run([sys.executable, "-m", "starvm", "debug", "rec.star"], input=cmds, capture_output=True,
                       text=True, cwd=tmp_path, env=subprocess_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "debug> break MARK if d = 0\nbreakpoint 1 at MARK if d = 0" in r.stdout
    assert r.stdout.count("-> MARK at rec.star") == 1 and r.stdout.count("   MARK at rec.star") == 5
    assert "slice 11111000" in r.stdout


def test_star_debug_usage_and_star_errors(tmp_path):
    (tmp_path / "bad.star").write_text("begin x := 1 end.\n")
    r = subprocess.run([sys.executable, "-m", "starvm", "debug", "bad.star"], input="", capture_output=True,
                       text=True, cwd=tmp_path, env=subprocess_env(), timeout=60)
    assert r.returncode == 1 and "bad.star:1:7: error: unknown name 'x'" in r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "starvm", "debug", "missing.star"], capture_output=True,
                       text=True, cwd=tmp_path, env=subprocess_env(), timeout=60)
    assert r.returncode == 2 and "cannot read missing.star" in r.stderr
