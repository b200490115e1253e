"""`python -m starvm repl` in a real (pseudo-)terminal, driven by pexpect: the prompt,
multi-line input, echo of values, Ctrl-C stopping a running loop with the state kept,
history written to $STARVM_HISTORY, Ctrl-D quitting."""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from conftest import subprocess_env

pexpect = pytest.importorskip("pexpect", reason="pexpect is needed to drive a terminal (pip install \".[test]\")")
pytest.importorskip("prompt_toolkit")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def term(tmp_path):
    if not hasattr(pexpect, "spawn"):
        pytest.skip("pexpect.spawn needs a POSIX pseudo-terminal")
    env = {k: v for k, v in os.environ.items() if k not in ("STARVM_BACKEND", "STARVM_DEBUG")}
    env.update(PYTHONPATH=subprocess_env()["PYTHONPATH"], STARVM_HISTORY=str(tmp_path / "history"), TERM="xterm",
               PROMPT_TOOLKIT_NO_CPR="1")
    # SIGINT's default action back in the child (ignored when the tests run in the background),
    # so that the Ctrl-C below reaches the REPL
    child = pexpect.spawn(sys.executable, ["-m", "starvm", "repl"], cwd=str(tmp_path), env=env,
                          encoding="utf-8", timeout=30, dimensions=(40, 120),
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        yield child
    finally:
        if child.isalive():
            child.terminate(force=True)


def test_repl_in_a_terminal(term, tmp_path):
    term.expect("Star at the prompt")
    term.expect("star>")
    term.sendline("var x: integer;")
    term.expect("star>")
    term.send("proc bump;\r")                  # multi-line: the body follows
    term.expect(r"\.\.\.")
    term.send("begin x := x + 40 end;\r")
    term.expect("star>")
    term.send("bump; x := x + 2\r")
    term.expect("star>")
    term.send("x\r")
    term.expect(r"[^0-9]42\r\n")
    term.expect("star>")
    term.send("while true do x := x + 1\r")    # runs until Ctrl-C
    import time
    time.sleep(1.0)
    term.sendintr()
    term.expect("interrupted at <input-")
    term.expect("star>")
    term.send("writeln('big: ', x > 1000)\r")  # the loop's work is kept
    term.expect(r"big: true\r\n")
    term.expect("star>")
    term.send("x := y\r")
    term.expect("unknown name 'y'")
    term.expect("star>")
    term.sendeof()                             # Ctrl-D
    term.expect(pexpect.EOF)
    term.wait()
    assert term.exitstatus == 0
    hist = (tmp_path / "history").read_text()
    assert "+proc bump;\n+begin x := x + 40 end;" in hist and "+writeln('big: ', x > 1000)" in hist
