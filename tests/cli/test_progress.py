"""`star run --progress`: a tqdm bar for the outer loops on a terminal, nothing through a pipe;
and the code generation hook behind it, which is off (absent) by default."""
from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

import starvm
from conftest import subprocess_env

pytest.importorskip("tqdm", reason="progress bars need tqdm (pip install \".[test]\")")

LONG = """\
var i, j, s: integer;
begin
  s := 0;
  for i := 1 to 200 do
    for j := 1 to 500 do s := s + j;
  writeln(s)
end.
"""
RESULT = f"{200 * 500 * 501 // 2}\n"


def test_progress_bar_on_a_terminal(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    if not hasattr(pexpect, "spawn"):
        pytest.skip("pexpect.spawn needs a POSIX pseudo-terminal")
    src = tmp_path / "long.star"
    src.write_text(LONG)
    child = pexpect.spawn(sys.executable, ["-m", "starvm", "run", "--progress", str(src)],
                          env=subprocess_env(), encoding="utf-8", timeout=60, dimensions=(24, 100))
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)             # kills the child if it is still running
    text = child.before
    assert child.exitstatus == 0, text
    assert "for i (line 4)" in text and "200/200" in text and "100%" in text
    assert "for j" not in text                      # inner loops get no bar
    assert RESULT.strip() in text


def test_no_progress_through_a_pipe(tmp_path):
    src = tmp_path / "long.star"
    src.write_text(LONG)
    r = subprocess.run([sys.executable, "-m", "starvm", "run", "--progress", str(src)],
                       capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert r.returncode == 0
    assert r.stdout == RESULT and r.stderr == ""


def test_codegen_hook_is_off_by_default():
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    gen = m.compile(LONG, "long.star")
    assert "_progress" not in gen.source and "_progress" not in m.ns


def test_hook_wraps_only_outermost_loops():
    from starvm.ui import progress
    out, bars = io.StringIO(), io.StringIO()
    m = starvm.Machine(backend="numpy", out=out)
    progress.enable(m, True, file=bars)
    gen = m.compile("proc p(n: integer); var i, j: integer;\n"
                    "begin for i := 1 to n do for j := 1 to n do ; end;\n" + LONG, "long.star")
    assert gen.source.count("_progress(") == 2     # p's outer loop and the main block's
    m._main()
    m.call("p", 3)
    assert out.getvalue() == RESULT
    assert "200/200" in bars.getvalue() and "3/3" in bars.getvalue()
    assert not m.ns["_progress"].active
    progress.enable(m, False)
    assert "_progress" not in m.ns
