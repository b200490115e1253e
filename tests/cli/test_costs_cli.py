"""`star run --cost`, `star cost --list / --validate / FILE --vary`: output, exit codes."""
from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import starvm
from starvm.ui import cli
from starvm.costs import model_names

from conftest import ROOT, subprocess_env

PROGRAM = """\
var T: table(200, 8); X, Z: slice(T); v: word(T);
proc FIND;
begin
  MATCH(T, X, v, Z);
end;
begin
  SET(X);
  FIND;
  writeln('found ', NUMB(Z));
end.
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "find.star"
    path.write_text(PROGRAM)
    return path


def test_list_names_the_models_with_their_sources(capsys):
    assert cli.main(["cost", "--list"]) == 0
    out = capsys.readouterr().out
    for name in model_names():
        assert f"{name}: " in out
    assert "source: [pimeval]" in out and "source: [linley2020]" in out and "leaves out" not in out
    assert cli.main(["cost", "--list", "-v"]) == 0
    assert "leaves out:" in capsys.readouterr().out


def test_an_unknown_model_is_a_usage_error_before_the_run(program, capsys):
    assert cli.main(["run", str(program), "--cost", "star-unit,nosuch"]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""     # the program did not run
    assert "unknown cost model 'nosuch' (available: " + ", ".join(model_names()) + ")" in cap.err


def test_run_cost_reports_on_stderr_after_the_output(program, capsys):
    assert cli.main(["run", str(program), "--cost", "star-unit,pimeval-bitsimd-v"]) == 0
    cap = capsys.readouterr()
    assert cap.out == "found 200\n"
    err = cap.err
    assert "estimated cost on device models" in err and "200 rows x 8 columns" in err
    assert "star-unit" in err and "pimeval-bitsimd-v" in err and "host run" in err
    assert "per routine" not in err      # without --profile: the whole run only


def test_run_cost_with_profile_and_plot(program, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "cost.png"
    assert cli.main(["run", str(program), "--cost", "cam-ap", "--profile", "--plot", str(png)]) == 0
    err = capsys.readouterr().err
    assert "per routine" in err and "FIND" in err and "MATCH" in err and f"wrote {png}" in err
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_a_model_file_by_path(program, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n')
    assert cli.main(["run", str(program), "--cost", str(bad)]) == 2
    assert "bad.toml (bad): missing 'device'" in capsys.readouterr().err


def test_validate_prints_each_reproduction(capsys):
    assert cli.main(["cost", "--validate"]) == 0
    out = capsys.readouterr().out
    assert out.count("error ") == len(model_names())
    assert "reproduced 4947 ns from add32.star: error +4.04%" in out


def test_cost_of_one_file_and_its_usage(program, capsys):
    assert cli.main(["cost", str(program), "--model", "gsi-gemini"]) == 0
    out = capsys.readouterr().out
    assert "gsi-gemini" in out and "per routine" in out and "FIND" in out
    assert cli.main(["cost"]) == 2
    assert "star cost needs --list, --validate, or a FILE" in capsys.readouterr().err
    assert cli.main(["cost", str(program), "--vary", "N"]) == 2
    assert "--vary N: give NAME=V1,V2,..." in capsys.readouterr().err


@pytest.mark.skipif("params" not in inspect.signature(starvm.Machine).parameters,
                    reason="program parameters (Machine(params=...)) are not in this starvm")
def test_vary_runs_the_program_at_each_size(tmp_path, capsys):
    path = tmp_path / "sized.star"
    path.write_text(PROGRAM.replace("var T: table(200, 8);", "const N = 10;\nvar T: table(N, 8);"))
    png = tmp_path / "grow.png"
    args = ["cost", str(path), "--model", "star-unit,cam-ap", "--vary", "N=64,256,1024"]
    if pytest.importorskip("matplotlib"):
        args += ["--plot", str(png)]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("N=")]
    assert [line.split()[:2] for line in lines] == [["N=64", "64"], ["N=256", "256"], ["N=1024", "1024"]]
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert cli.main(["cost", str(path), "--vary", "M=1,2"]) == 2


def test_end_to_end_through_the_command(program):
    r = subprocess.run([sys.executable, "-m", "starvm", "run", str(program), "--cost", "nosuch"],
                       capture_output=True, text=True, cwd=ROOT, env=subprocess_env(), timeout=300)
    assert r.returncode == 2 and "available: cam-ap" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "{p}", "--cost="], "no cost model given (available: cam-ap"),
    (["cost", "{p}", "--rows", "0"], "--rows must be at least 1, not 0"),
    (["cost", "{p}", "--vary", "N=a,b"], "--vary N=a,b: give NAME=V1,V2,..."),
    (["cost", "{p}", "--model", "x"], "unknown cost model 'x'"),
])
def test_bad_cost_arguments_are_usage_errors(program, args, message, capsys):
    assert cli.main([a.format(p=program) for a in args]) == 2
    cap = capsys.readouterr()
    assert message in cap.err and cap.out == ""


def test_a_star_error_in_star_cost_is_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.star"
    bad.write_text("begin writeln(1 +) end.\n")
    assert cli.main(["cost", str(bad)]) == 1
    assert "bad.star:1:18: error:" in capsys.readouterr().err
