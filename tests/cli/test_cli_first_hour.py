"""What a first hour with `star` meets (issue 37): a program on standard input (`star run -`,
`star check -`), `star run --help`, `star check`'s word on success, `--profile` on a program
that does not load, `star show --graph`. In-process through cli.main where that suffices."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest

from starvm.ui import cli

from test_cli import ROOT, assert_error_report, star

HELLO = "var n: integer;\nbegin\n  n := 6 * 7;\n  writeln('hello ', n)\nend.\n"
BROKEN = "begin\n  writeln(1\nend.\n"


def _main(argv, monkeypatch, capsys, stdin: str | None = None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


# ---------------------------------------------------------------- standard input

def test_run_reads_the_program_from_stdin(monkeypatch, capsys):
    assert _main(["run", "-"], monkeypatch, capsys, HELLO) == (0, "hello 42\n", "")


def test_check_reads_the_program_from_stdin(monkeypatch, capsys):
    assert _main(["check", "-"], monkeypatch, capsys, HELLO) == (0, "<stdin>: no errors\n", "")


@pytest.mark.parametrize("command", ["run", "check"])
def test_errors_in_a_program_from_stdin_name_stdin(command, monkeypatch, capsys):
    rc, out, err = _main([command, "-"], monkeypatch, capsys, BROKEN)
    assert rc == 1 and out == ""
    assert_error_report(err, "<stdin>", 3, 1, "unexpected 'end'; expected one of ')', ','", "end.")


def test_runtime_error_of_a_program_from_stdin(monkeypatch, capsys):
    rc, out, err = _main(["run", "-"], monkeypatch, capsys, "var T: table(2, 2);\nbegin\n  ROW(3, T) := BITS('11')\nend.\n")
    assert rc == 1 and err.startswith("<stdin>:3:3: error: row index 3 out of range 1..2")


def test_stdin_through_a_real_pipe(tmp_path):
    """The installed entry point, with the program piped in (no file on disk)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "starvm", "run", "-"], input=HELLO, capture_output=True,
                       text=True, cwd=tmp_path, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, "hello 42\n", "")


def test_debug_cannot_read_the_program_from_stdin(monkeypatch, capsys):
    rc, out, err = _main(["debug", "-"], monkeypatch, capsys, HELLO)
    assert rc == 2 and "star debug reads its commands from standard input" in err


# ---------------------------------------------------------------- check, help, profile

def test_check_says_no_errors_and_exits_0(tmp_path, monkeypatch, capsys):
    (tmp_path / "lib.star").write_text("proc p; begin end;\n")      # a library: no main block
    assert _main(["check", str(tmp_path / "lib.star")], monkeypatch, capsys) == \
        (0, f"{tmp_path / 'lib.star'}: no errors\n", "")


def test_run_help_has_a_description_and_the_exit_codes(monkeypatch, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    assert "Load a Star program and run its main block" in out
    exit_codes = out[out.index("exit codes:"):]
    for code, what in [("0", "success"), ("1", "an error in the Star program"), ("2", "a usage or I/O error"),
                       ("3", "an internal error"), ("130", "interrupted")]:
        assert f"  {code} " in exit_codes and what in exit_codes
    plot = " ".join(out[out.rindex("--plot OUT.png"):].split()[:30])
    assert "draw the steps per operation" in plot and "with --profile also the time per kind" in plot
    assert "- to read the program from standard input" in " ".join(out.split())


@pytest.mark.parametrize("command", ["check", "show"])
def test_other_commands_list_the_exit_codes(command, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    assert "exit codes:" in capsys.readouterr().out


def test_profile_of_a_program_that_does_not_load_prints_only_the_error(monkeypatch, capsys):
    rc, out, err = _main(["run", "--profile", "-"], monkeypatch, capsys, BROKEN)
    assert rc == 1 and out == ""
    assert err.startswith("<stdin>:3:1: error:") and len(err.splitlines()) == 3, err
    rc, out, err = _main(["run", "--profile", "-"], monkeypatch, capsys, "var n: integer;\nbegin n := true end.\n")
    assert rc == 1 and err.startswith("<stdin>:2:12: error:") and "total" not in err


def test_profile_of_a_program_that_fails_while_running_comes_before_the_error(monkeypatch, capsys):
    rc, out, err = _main(["run", "--profile", "-"], monkeypatch, capsys,
                         "var X: slice; T: table(2, 2); i: integer;\nbegin\n  X := COL(1, T);\n"
                         "  i := NUMB(X) + 3;\n  ROW(i, T) := BITS('11')\nend.\n")
    assert rc == 1
    assert "COL read" in err and "total" in err               # the profile of what ran
    assert err.index("total") < err.index("<stdin>:5:3: error: row index 3 out of range 1..2")


# ---------------------------------------------------------------- star show --graph

def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_show_takes_the_graph_options(tmp_path, monkeypatch, capsys):
    """star show --graph FILE draws the closure of that graph, not of the program's default."""
    pytest.importorskip("matplotlib")
    edges = tmp_path / "g.txt"
    edges.write_text("1 2\n2 3\n")                                # 3 vertices: closure 011 / 001 / 000
    png = tmp_path / "p.png"
    rc, out, err = _main(["show", str(ROOT / "programs" / "warshall_c.star"), "--table", "P", "--png", str(png),
                          "--graph", str(edges)], monkeypatch, capsys)
    assert rc == 0, err
    assert out.splitlines()[1:] == ["011", "001", "000"]
    assert "(P: table 3 x 3)" in err and png.exists()
    rc, out, err = _main(["show", str(ROOT / "programs" / "warshall_c.star"), "--table", "P", "--png", str(png),
                          "--generate", "gnp:n=5,p=0.5,seed=1", "--undirected"], monkeypatch, capsys)
    assert rc == 0 and "(P: table 5 x 5)" in err and "read as undirected" in out
    rc, out, err = _main(["show", str(ROOT / "programs" / "warshall_c.star"), "--table", "P", "--png", str(png),
                          "--graph", str(tmp_path / "missing.txt")], monkeypatch, capsys)
    assert rc == 2 and err.startswith("star: error: cannot read")
