"""Limits: --max-steps / Machine(max_steps), table size against free memory, Star recursion
depth, Ctrl-C (issue: reliability)."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import starvm
from conftest import subprocess_env
from starvm.ui import cli
from starvm.execution import limits
from starvm.targets.python.codegen import CodeGen

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENDLESS = "var x: integer;\nbegin\n  x := 0;\n  while true do x := x + 1\nend.\n"


def test_step_limit_stops_an_endless_scalar_loop_at_its_position():
    m = starvm.Machine(out=io.StringIO(), max_steps=1000)
    with pytest.raises(starvm.StarRuntimeError) as e:
        m.run(ENDLESS, "endless.star")
    assert "step limit" in e.value.message and "1000" in e.value.message
    assert (e.value.line, e.value.column) == (4, 3)


@pytest.mark.parametrize("loop", [
    "for i := 1 to 5000 do x := x + 1",
    "repeat x := x + 1 until x < 0",
    "parallel for i := 1 to 3 do begin end",
])
def test_step_limit_counts_every_kind_of_loop(loop):
    src = f"var x, i: integer;\nbegin\n  x := 0;\n  while true do begin {loop} end\nend.\n"
    with pytest.raises(starvm.StarRuntimeError, match="step limit"):
        starvm.Machine(out=io.StringIO(), max_steps=2000).run(src)


def test_step_limit_counts_routine_calls():
    src = "function f(n: integer): integer;\nbegin if n = 0 then f := 0 else f := f(n - 1) + 1 end;\n" \
          "begin writeln(f(50)) end.\n"
    out = io.StringIO()
    starvm.Machine(out=out, max_steps=51).run(src)
    assert out.getvalue() == "50\n"
    with pytest.raises(starvm.StarRuntimeError, match="step limit") as e:
        starvm.Machine(out=io.StringIO(), max_steps=50).run(src)
    assert e.value.line == 1                  # entering f (its heading) ...
    assert e.value.stack[-2].loc.line == 2    # ... called from line 2


def test_step_limit_resets_for_each_run():
    m = starvm.Machine(out=io.StringIO(), max_steps=100)
    m.load("function f(n: integer): integer; var i: integer;\nbegin f := 0; for i := 1 to n do f := f + i end;")
    assert [m.call("f", 90) for _ in range(3)] == [4095] * 3


def test_no_limit_no_check_generated():
    src = "var x, i: integer;\nbegin for i := 1 to 3 do x := x + i end.\n"
    assert "_tick" not in starvm.Machine().compile(src).source
    assert "_tick()" in starvm.Machine(max_steps=10).compile(src).source
    assert CodeGen.__init__.__defaults__[-1] is False


def test_scalar_loop_stays_fast_with_a_limit():
    src = "function s(n: integer): integer; var i, t: integer;\nbegin t := 0; for i := 1 to n do t := t + i; s := t end;"
    m = starvm.Machine(max_steps=10 ** 7)
    m.load(src)
    t0 = time.perf_counter()
    assert m.call("s", 10 ** 6) == 500000500000
    assert time.perf_counter() - t0 < 1.5     # target 0.5 s on a quiet machine


def test_cli_max_steps(tmp_path, capsys):
    p = tmp_path / "endless.star"
    p.write_text(ENDLESS)
    assert cli.main(["run", "--max-steps", "500", str(p)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{p}:4:3: error: step limit reached")


def test_table_larger_than_free_memory_is_refused_before_allocation(backend):
    m = starvm.Machine(backend=backend, out=io.StringIO())
    need = limits.table_bytes(10 ** 9, 10 ** 6)
    with pytest.raises(starvm.StarRuntimeError, match=f"needs {need} bytes"):
        m.run("var T: table(1000000000, 1000000);\nbegin writeln(NROWS(T)) end.")
    with pytest.raises(starvm.StarRuntimeError, match="needs") as e:
        m.run("proc p(n: integer);\nvar T: table(n, n);\nbegin writeln(NROWS(T)) end;\nbegin p(100000000) end.")
    assert e.value.line == 4 or e.value.line == 2
    with pytest.raises(starvm.StarRuntimeError, match="bytes"):
        m.table(rows=10 ** 9, cols=10 ** 6)


def test_free_memory_is_known():
    free = limits.free_bytes(starvm.Machine().backend)
    assert free is None or free > 0


def test_recursion_depth_is_configurable_and_deterministic(monkeypatch):
    src = "function f(n: integer): integer;\nbegin if n = 0 then f := 0 else f := f(n - 1) + 1 end;\n"
    m = starvm.Machine(max_depth=300)
    m.load(src)
    assert m.call("f", 250) == 250
    with pytest.raises(starvm.StarRuntimeError, match="recursion too deep"):
        m.call("f", 600)
    old = sys.getrecursionlimit()
    m2 = starvm.Machine(max_depth=20000)
    m2.load(src)
    assert m2.call("f", 15000) == 15000
    assert sys.getrecursionlimit() == old            # restored
    monkeypatch.setenv("STARVM_MAX_DEPTH", "123")
    assert starvm.Machine().max_depth == 123


def _depth_at_failure(extra_frames):
    def nest(k):
        if k:
            return nest(k - 1)
        m = starvm.Machine(max_depth=200)
        m.load("function f(n: integer): integer;\nbegin f := f(n + 1) end;")
        with pytest.raises(starvm.StarRuntimeError) as e:
            m.call("f", 0)
        return len(e.value.stack)
    return nest(extra_frames)


def test_recursion_failure_does_not_depend_on_the_callers_stack():
    assert _depth_at_failure(0) == _depth_at_failure(300)


def test_ctrl_c_exits_130_with_one_line(tmp_path):
    p = tmp_path / "endless.star"
    p.write_text("var x: integer;\nbegin\n  writeln('started');\n  x := 0;\n  while true do x := x + 1\nend.\n")
    # The child gets SIGINT's default action back: a shell that starts a job in the background
    # makes it ignore SIGINT, and Python then never raises KeyboardInterrupt for it.
    proc = subprocess.Popen([sys.executable, "-m", "starvm", "run", str(p)], cwd=ROOT,
                            env=subprocess_env(PYTHONUNBUFFERED="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    watchdog = threading.Timer(60, proc.kill)      # a child that never prints or never stops
    watchdog.start()
    try:
        assert proc.stdout.readline() == "started\n"
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        watchdog.cancel()
        if proc.poll() is None:                    # the endless loop must not outlive the test
            proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == 130
    assert err.count("\n") == 1 and err.startswith("star: interrupted"), err
    assert f"{p}:5:" in err
