"""Ctrl-C while `star run` starts (issue 36 item 2): at any moment before or while the program
runs the command exits 130 with a `star: interrupted` line and no Python traceback. The
signal lands at several delays after the start: in the imports (NumPy's, starvm's), the
argument parsing, the compile, the run."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import subprocess_env

PROGRAM = """program spin;
var s, i: integer;
begin
  s := 0;
  for i := 1 to 1000000000 do s := (s + i) mod 1000003;
  writeln(s)
end.
"""
STAR = shutil.which("star", path=str(Path(sys.executable).parent))   # the console script (starvm.ui.cli:main)
PYTHON_START_S = 0.05    # a SIGINT this early may land in Python's own start-up (_interrupted_after)


def _interrupted_after(command: list[str], delay: float) -> subprocess.CompletedProcess:
    """The command sent SIGINT ``delay`` s after its start. One that lands inside the Python
    interpreter's own start-up (site, os: no starvm code has run, a loaded host takes that
    long) is Python's to report, not starvm's: that run is repeated (up to 5 times). A command
    that ignores it past 60 s is stopped with SIGABRT and its Python stacks are the failure."""
    for _ in range(5):
        # SIGINT's default action back in the child, as a terminal's Ctrl-C finds it: a test run
        # started in the background (a shell's `&` job, nohup) ignores SIGINT, the child inherits
        # that and Python keeps it, so the command rightly ignored the signal and ran on (60 s
        # and a failure at the first delay, every time, in such CI runs)
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=subprocess_env(STARVM_BACKEND="numpy", PYTHONFAULTHANDLER="1"),
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            time.sleep(delay)
            proc.send_signal(signal.SIGINT)
            if delay <= PYTHON_START_S:
                # this early the SIGINT may land in the interpreter's own start-up, before any
                # starvm code, and be lost there (seen in CI on a loaded host: the run went on):
                # a user presses Ctrl-C again, which must then stop it as any other
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)         # PYTHONFAULTHANDLER: the stacks on stderr
            out, err = proc.communicate(timeout=30)
            pytest.fail(f"still running 60 s after SIGINT at {delay} s; its stacks:\n{err[-6000:]}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        if not _in_python_start_up(err):
            break
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def _in_python_start_up(err: str) -> bool:
    """Did the SIGINT land before any starvm code ran (Python's init, site, its own modules,
    the console script's `from starvm.ui.cli import main` before starvm's first line: seen
    in CI under load at 0.05 s, the traceback's only frame the script's, or the script's and
    the import system's)?"""
    if "Fatal Python error: init_" in err:
        return True
    frames = [line.strip() for line in err.splitlines() if line.strip().startswith("File")]
    return "KeyboardInterrupt" in err and bool(frames) and \
        all("<frozen " in f or "/lib/python3" in f or (STAR is not None and f.startswith(f'File "{STAR}"'))
            for f in frames)


@pytest.mark.parametrize("how", ["console script", pytest.param("python -m starvm", marks=pytest.mark.xfail(
    strict=False, reason="issue 36, open: `python -m starvm` sent SIGINT 0.4 s after its start sometimes prints "
                         "'star: interrupted' and then dies by SIGINT (rc -2); seen once in CI and on the H200"))])
def test_a_ctrl_c_during_start_up_exits_130_without_a_traceback(tmp_path, how):
    if how == "console script" and STAR is None:
        pytest.skip("no `star` console script beside this Python")
    path = tmp_path / "spin.star"
    path.write_text(PROGRAM)
    command = ([STAR] if how == "console script" else [sys.executable, "-m", "starvm"]) + ["run", str(path)]
    delays = (0.05, 0.15, 0.3, 0.5) if how == "console script" else (0.1, 0.4)
    for delay in delays:
        res = _interrupted_after(command, delay)
        assert res.returncode == 130, (delay, res.returncode, res.stderr)
        assert "Traceback" not in res.stderr, (delay, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("star: interrupted"), (delay, res.stderr)
