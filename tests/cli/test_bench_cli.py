"""`star bench` end to end: the table it prints, exit codes 0 / 1 / 2, --json's content,
--call, several backends side by side with unavailable ones, --max-steps, --jit."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import starvm
from starvm.ui import cli
from starvm.backends import BackendUnavailable, get_backend
from starvm.benchmarking import machine_has_jit

ROOT = Path(__file__).resolve().parents[2]

# A main block with base operations whose work depends on the globals' initial state: a run
# that saw the previous run's globals would take the other branch and count other steps.
PROGRAM = """\
var T: table(70, 5); X: slice(T); i, n: integer;
proc FILL(var T: table; k: integer);
var i: integer;
begin
  for i := 1 to k do ROW(i, T) := BITS('10110')
end;
begin
  writeln('visible only in star run');
  if SOME(COL(1, T)) then ROW(1, T) := BITS('00000')
  else begin
    FILL(T, 70);
    X := COL(3, T);
    n := 0;
    while SOME(X) do begin i := STEP(X); n := n + 1 end;
  end;
  writeln(n)
end.
"""


def star(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("STARVM_BACKEND", "STARVM_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "starvm", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def available(name: str) -> bool:
    try:
        get_backend(name)
        return True
    except BackendUnavailable:
        return False


def reference_steps(source: str, call=None, args=()) -> dict[str, int]:
    """The steps of one plain run (Machine.run / Machine.call), by kind."""
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    if call is None:
        m.run(source, "p.star")
        return m.stats
    m.load(source, "p.star")
    m.call(call, *args)
    return m.last_call_stats


@pytest.fixture
def prog(tmp_path):
    (tmp_path / "p.star").write_text(PROGRAM)
    return tmp_path


def test_main_block_end_to_end_with_json(prog):
    r = star("bench", "p.star", "--backend", "numpy", "--repeat", "3", "--warmup", "2", "--json", "out.json",
             cwd=prog)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and r.stderr == ""
    assert "visible only in star run" not in r.stdout and "output is suppressed" in r.stdout
    lines = r.stdout.splitlines()
    assert lines[0].startswith("p.star: main block, 3 timed run(s) after 2 warm-up(s)")
    head = next(i for i, ln in enumerate(lines) if ln.startswith("backend"))
    assert lines[head].split() == ["backend", "median", "s", "min", "s", "max", "s", "steps/run", "steps/s"]
    row = lines[head + 1].split()
    want = reference_steps(PROGRAM)
    assert row[0] == "numpy" and float(row[2]) <= float(row[1]) <= float(row[3])
    assert int(row[4].replace(",", "")) == sum(want.values())
    assert "COL read" in r.stdout and "STEP" in r.stdout and "ROW write (set_row)" in r.stdout
    doc = json.loads((prog / "out.json").read_text())
    for key in ("benchmark", "title", "date", "machine", "device", "device_info", "program", "run", "repeat",
                "warmup", "results"):
        assert key in doc, key
    assert doc["benchmark"] == "star bench" and doc["run"] == "main block"
    for key in ("cpu_model", "cpu_count", "python", "numpy", "lark", "starvm", "git", "platform"):
        assert key in doc["machine"], key
    assert doc["machine"]["starvm"] == starvm.__version__
    assert "commit" in doc["machine"]["git"]
    (res,) = doc["results"]
    assert res["status"] == "ran" and res["backend"] == "numpy" and res["n_runs"] == 3 == len(res["runs_s"])
    assert res["min_s"] <= res["median_s"] <= res["max_s"]
    assert res["steps"] == want, "every timed run starts from freshly initialised globals"
    assert res["steps_per_s"] == pytest.approx(sum(want.values()) / res["median_s"])


def test_call_one_routine(prog, capsys):
    # a call that does not fit the routine is a Star error, as in Machine.call
    assert cli.main(["bench", str(prog / "p.star"), "--call", "FILL", "--repeat", "2"]) == 1
    assert "error: 'FILL' takes 2 arguments, got 0" in capsys.readouterr().err
    assert cli.main(["bench", str(prog / "p.star"), "--call", "FILL", "1", "2", "--repeat", "2"]) == 1
    assert "argument 'T' of 'FILL' must be a table" in capsys.readouterr().err
    (prog / "f.star").write_text("function F(n: integer; b: boolean): integer;\nvar T: table(3, 3); i: integer;\n"
                                 "begin F := 0; for i := 1 to n do if b then ROW(1, T) := ROW(2, T) end;\n")
    r = star("bench", "f.star", "--call", "F", "7", "true", "--repeat", "2", "--json", "f.json", cwd=prog)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("f.star: F(7, true), 2 timed run(s)")
    doc = json.loads((prog / "f.json").read_text())
    assert doc["call"] == "F" and doc["args"] == [7, True] and doc["run"] == "F(7, true)"
    want = reference_steps((prog / "f.star").read_text(), "F", (7, True))
    assert doc["results"][0]["steps"] == want == {"ROW_GET": 7, "ROW_SET": 7}


def test_several_backends_side_by_side(prog, capsys):
    rc = cli.main(["bench", str(prog / "p.star"), "--backend", "numpy,cupy,auto", "--repeat", "2",
                   "--json", str(prog / "s.json")])
    out = capsys.readouterr().out
    assert rc == 0
    doc = json.loads((prog / "s.json").read_text())
    rows = {r["backend"]: r for r in doc["results"]}
    assert list(rows) == ["numpy", "cupy", "auto"]
    want = reference_steps(PROGRAM)
    for name, r in rows.items():
        if available(name):
            assert r["status"] == "ran" and r["steps"] == want, name
        else:
            assert r["status"] == "unavailable" and "cupy" in r["error"]
            assert any(line.startswith(name) and "unavailable:" in line for line in out.splitlines())
    assert rows["numpy"]["status"] == "ran"


def test_only_unavailable_backends_exit_2(prog):
    if available("cupy"):
        pytest.skip("CuPy is usable here")
    r = star("bench", "p.star", "--backend", "cupy", cwd=prog)
    assert r.returncode == 2
    assert "cupy" in r.stdout and "unavailable" in r.stdout
    assert r.stderr.strip() == "star: error: none of the backends asked for can run here"


@pytest.mark.parametrize("args, message", [
    (["--backend", "numpy,gpu"], "--backend: gpu is not one of numpy, cupy, auto"),
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--call", "F", "x1"], "--call: argument 'x1' is not an integer or true/false"),
    (["--json", "{dir}/p.star/x.json"], "cannot write"),
    (["--generate", "nosuch:n=3"], "--generate:"),
])
def test_usage_errors_exit_2(prog, capsys, args, message):
    rc = cli.main(["bench", str(prog / "p.star"), "--repeat", "1"] + [a.format(dir=prog) for a in args])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_missing_file_exit_2(prog, capsys):
    assert cli.main(["bench", str(prog / "none.star")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("source, args, head", [
    ("begin writeln('a' end.", [], "p2.star:1:"),                                     # syntax error
    ("var n: integer;\nbegin n := true end.", [], "p2.star:2:"),                       # type error
    ("var n: integer;\nbegin n := 1 div 0 end.", [], "p2.star:2:"),                    # runtime error
    ("var n: integer;\nbegin while true do n := n + 1 end.", ["--max-steps", "50"], "p2.star:2:"),
    ("proc P; begin end;", [], "p2.star:1:1: error: the program has no main block"),
])
def test_star_errors_exit_1(prog, capsys, source, args, head):
    (prog / "p2.star").write_text(source)
    rc = cli.main(["bench", str(prog / "p2.star"), "--repeat", "1"] + args)
    err = capsys.readouterr().err
    assert rc == 1 and err.replace(str(prog) + os.sep, "").startswith(head), err
    assert "Traceback" not in err


def test_jit_option(prog, capsys):
    args = ["bench", str(prog / "p.star"), "--repeat", "1", "--jit", "on,off", "--json", str(prog / "j.json")]
    if not machine_has_jit():
        assert cli.main(args) == 2
        assert "no compiled tier" in capsys.readouterr().err
        return
    assert cli.main(args) == 0
    rows = json.loads((prog / "j.json").read_text())["results"]
    assert [(r["jit"], r["status"]) for r in rows] == [(True, "ran"), (False, "ran")]
    assert rows[0]["steps"] == rows[1]["steps"] == reference_steps(PROGRAM)
