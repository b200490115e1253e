"""The `star` command end to end, through a subprocess: output, exit codes, error reports."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import starvm
from starvm.ui import cli
from starvm.backends import BackendUnavailable, get_backend

ROOT = Path(__file__).resolve().parents[2]

HELLO = """\
var n: integer;
begin
  n := 6 * 7;
  writeln('hello ', n, ' ', n > 40);
  write('no newline')
end.
"""

SYNTAX = """\
begin
  writeln('abc);
end.
"""

TYPE = """\
var n: integer;
begin
  writeln('must not run');
  n := n and true;
end.
"""

RUNTIME = """\
proc inner(var T: table; i: integer);
begin
  ROW(i, T) := BITS('11')
end;
proc outer(var T: table);
begin
  inner(T, 5)
end;
var T: table(2, 2);
begin
  writeln('before');
  outer(T)
end.
"""


def star(*args, cwd: Path, **env_extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("STARVM_BACKEND", "STARVM_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "starvm", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def files(tmp_path):
    for name, text in [("hello.star", HELLO), ("syntax.star", SYNTAX), ("type.star", TYPE),
                       ("runtime.star", RUNTIME)]:
        (tmp_path / name).write_text(text)
    return tmp_path


def assert_no_traceback(r):
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout


def assert_error_report(stderr: str, filename: str, line: int, col: int, message: str, source_line: str):
    lines = stderr.splitlines()
    assert lines[0] == f"{filename}:{line}:{col}: error: {message}"
    assert lines[1].endswith(source_line) and f"{line} | " in lines[1]
    text_start = len(lines[1]) - len(source_line)
    assert lines[2].index("^") == text_start + col - 1
    return lines


def test_run(files):
    r = star("run", "hello.star", cwd=files)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "hello 42 true\nno newline"
    assert r.stderr == ""


def test_check_ok_says_so_and_runs_nothing(files):
    r = star("check", "hello.star", cwd=files)
    assert (r.returncode, r.stdout, r.stderr) == (0, "hello.star: no errors\n", "")


def test_check_runs_not_even_the_initialisation(tmp_path):
    (tmp_path / "neg.star").write_text("var t: table(0 - 1, 2);\nbegin writeln('x') end.\n")
    r = star("check", "neg.star", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "neg.star: no errors\n", "")
    r = star("run", "neg.star", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("neg.star:1:5: error: a table cannot have a negative size")
    assert_no_traceback(r)


def test_check_type_error(files):
    r = star("check", "type.star", cwd=files)
    assert r.returncode == 1
    assert r.stdout == ""
    assert_error_report(r.stderr, "type.star", 4, 10, "'and' needs two booleans, two slices or two words, "
                        "not an integer and a boolean", "  n := n and true;")
    assert_no_traceback(r)


def test_run_type_error_runs_nothing(files):
    r = star("run", "type.star", cwd=files)
    assert r.returncode == 1
    assert r.stdout == ""                      # 'must not run' was not printed
    assert r.stderr.startswith("type.star:4:10: error: 'and' needs")
    assert "hint:" in r.stderr
    assert_no_traceback(r)


def test_syntax_error(files):
    for cmd in ("run", "check"):
        r = star(cmd, "syntax.star", cwd=files)
        assert r.returncode == 1
        assert r.stdout == ""
        lines = assert_error_report(r.stderr, "syntax.star", 2, 11, "unterminated string literal",
                                    "  writeln('abc);")
        assert len(lines) == 3
        assert_no_traceback(r)


def test_runtime_error_shows_the_star_call_stack(files):
    r = star("run", "runtime.star", cwd=files)
    assert r.returncode == 1
    assert r.stdout == "before\n"              # output before the error is kept
    lines = assert_error_report(r.stderr, "runtime.star", 3, 3, "row index 5 out of range 1..2",
                                "  ROW(i, T) := BITS('11')")
    stack = lines[lines.index("Star call stack (innermost last):") + 1:]
    assert stack == ["  main block at runtime.star:12:3", "  outer at runtime.star:7:3",
                     "  inner at runtime.star:3:3"]
    assert_no_traceback(r)


def test_runtime_error_file_in_another_directory(files):
    r = star("run", str(files / "runtime.star"), cwd=ROOT)
    assert r.returncode == 1
    assert r.stderr.startswith(f"{files / 'runtime.star'}:3:3: error:")


def test_run_without_main_block(tmp_path):
    (tmp_path / "lib.star").write_text("proc p; begin end;\n")
    r = star("run", "lib.star", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.startswith("lib.star:1:1: error:") and "main block" in r.stderr
    assert_no_traceback(r)
    assert star("check", "lib.star", cwd=tmp_path).returncode == 0


def test_version_and_help(tmp_path):
    r = star("--version", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.strip() == f"starvm {starvm.__version__}"
    r = star("--help", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.startswith("usage: star")
    for word in ("run", "check", "--version", "STARVM_BACKEND"):
        assert word in r.stdout
    r = star("run", "--help", cwd=tmp_path)
    assert r.returncode == 0 and "--backend" in r.stdout and "--profile" in r.stdout


def test_usage_errors(tmp_path):
    r = star(cwd=tmp_path)                    # no arguments: the REPL, here reading no input
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")   # (tests/unit/test_repl.py tests it)
    r = star("run", cwd=tmp_path)             # no file
    assert r.returncode == 2 and "usage:" in r.stderr
    assert_no_traceback(r)
    r = star("frobnicate", "x.star", cwd=tmp_path)
    assert r.returncode == 2 and "usage:" in r.stderr
    assert_no_traceback(r)


@pytest.mark.parametrize("cmd", ["run", "check"])
def test_missing_file(tmp_path, cmd):
    r = star(cmd, "missing.star", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("star: error: cannot read missing.star")
    assert r.stdout == ""
    assert_no_traceback(r)


def test_backend_choice(files):
    r = star("run", "--backend", "numpy", "hello.star", cwd=files)
    assert (r.returncode, r.stdout) == (0, "hello 42 true\nno newline"), r.stderr
    r = star("run", "hello.star", cwd=files, STARVM_BACKEND="numpy")
    assert (r.returncode, r.stdout) == (0, "hello 42 true\nno newline"), r.stderr


def test_unknown_backend(files):
    r = star("run", "--backend", "fortran", "hello.star", cwd=files)
    assert r.returncode == 2
    assert "usage:" in r.stderr and "fortran" in r.stderr
    assert r.stdout == ""
    r = star("run", "hello.star", cwd=files, STARVM_BACKEND="fortran")
    assert r.returncode == 2
    assert r.stderr.startswith("star: error: unknown backend 'fortran'")
    assert r.stdout == ""
    assert_no_traceback(r)


def test_cupy_backend_without_a_gpu(files):
    try:
        get_backend("cupy")
    except BackendUnavailable:
        pass
    else:
        pytest.skip("CuPy is usable here")
    r = star("run", "--backend", "cupy", "hello.star", cwd=files)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("star: error: the cupy backend")
    assert len(r.stderr.strip().splitlines()) == 1
    assert_no_traceback(r)


def warshall_listing1_counts(adj: np.ndarray) -> dict[str, int]:
    """The steps of Listing 1, by simulating it in NumPy."""
    P = adj.copy()
    n = len(P)
    steps = {"COL read": 0, "ROW read (get_row)": 0, "ROW write (set_row)": 0, "STEP": 0, "SOME": 0}
    for k in range(n):
        X = P[:, k].copy()
        w = P[k].copy()
        steps["COL read"] += 1
        steps["ROW read (get_row)"] += 1
        steps["SOME"] += 1 + X.sum()
        for i in np.flatnonzero(X):
            steps["STEP"] += 1
            steps["ROW read (get_row)"] += 1
            P[i] |= w
            steps["ROW write (set_row)"] += 1
    return steps


def test_profile(tmp_path):
    prog = (ROOT / "programs" / "warshall.star").read_text()
    (tmp_path / "w.star").write_text(prog)
    r = star("run", "--profile", "w.star", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:] == ["11111000", "11111000", "11111000", "00001000", "00000000",
                                         "00000010", "00000000", "00000000"]
    table = {}
    for line in r.stderr.splitlines():
        for title in ("COL read", "ROW read (get_row)", "ROW write (set_row)", "STEP", "SOME", "total"):
            if line.startswith(title + " "):
                table[title] = int(line[len(title):].split()[0])
    adj = np.zeros((8, 8), dtype=bool)
    for i, j in [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5), (6, 7)]:
        adj[i - 1, j - 1] = True
    want = warshall_listing1_counts(adj)       # the main block fills P by GRAPH_ADJ: no steps
    for title, count in want.items():
        assert table.get(title) == count, (title, r.stderr)
    assert "mean, us" in r.stderr
    assert table["total"] >= sum(want.values())
    assert_no_traceback(r)


# ---------------------------------------------------------------------------------------
# internal errors (a bug in starvm): a one-line report, the traceback only with STARVM_DEBUG=1

def _broken_run(self, text, filename="<string>"):
    raise RuntimeError("boom")


def test_internal_error_without_debug(files, monkeypatch, capsys):
    monkeypatch.delenv("STARVM_DEBUG", raising=False)
    monkeypatch.setattr(starvm.Machine, "run", _broken_run)
    rc = cli.main(["run", str(files / "hello.star")])
    err = capsys.readouterr().err
    assert rc == 3
    assert "internal error: RuntimeError: boom" in err and "STARVM_DEBUG=1" in err
    assert "Traceback" not in err


def test_internal_error_with_debug(files, monkeypatch, capsys):
    monkeypatch.setenv("STARVM_DEBUG", "1")
    monkeypatch.setattr(starvm.Machine, "run", _broken_run)
    rc = cli.main(["run", str(files / "hello.star")])
    err = capsys.readouterr().err
    assert rc == 3
    assert "Traceback" in err and "RuntimeError: boom" in err


def test_star_errors_in_process(files, capsys):
    assert cli.main(["check", str(files / "type.star")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{files / 'type.star'}:4:10: error:")
    assert cli.main(["run", str(files / "missing.star")]) == 2
    assert capsys.readouterr().err.startswith("star: error: cannot read")


def test_output_to_a_closed_pipe_is_quiet(tmp_path):
    """`star run P.star | head -1`: the reader goes away; star stops with exit 2 and no
    'internal error' (a broken pipe is an I/O error, not a bug)."""
    prog = tmp_path / "many.star"
    prog.write_text("var i: integer; begin for i := 1 to 200000 do writeln(i) end.")
    p = subprocess.Popen([sys.executable, "-m", "starvm", "run", str(prog)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        first = p.stdout.readline()
        p.stdout.close()                       # the reader is gone
        err = p.stderr.read().decode()
        rc = p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert first == b"1\n"
    assert rc == 2 and "internal error" not in err and "Traceback" not in err, (rc, err)
