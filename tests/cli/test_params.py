"""Program parameters: `const NAME = literal;` in Star, replaced by `star run --param NAME=VALUE`
(`-D`) or `Machine(params=...)` (starvm/runtime/params.py). The command line's graph programs
are checked against SciPy in tests/cli/test_graph_programs.py."""
from __future__ import annotations

import io

import pytest

import starvm
from starvm.ui import cli
from starvm.runtime.params import ParamError, parse_assignment

PROG = """\
const n = 3; big = false; neg = -2;
var T: table(n, n + 1);
begin
  writeln(n, ' ', big, ' ', neg, ' ', NROWS(T), 'x', NCOLS(T));
end.
"""


def run(backend, text=PROG, **params) -> str:
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out, params=params).run(text, "p.star")
    return out.getvalue()


def test_constants_have_their_declared_values(backend):
    assert run(backend) == "3 false -2 3x4\n"


def test_params_replace_the_declared_values_before_the_tables_are_made(backend):
    assert run(backend, n=5, BIG=True, neg=0) == "5 true 0 5x6\n"       # names are case-insensitive


def test_a_constant_reads_like_a_global_in_routines(backend):
    text = "const k = 4;\nfunction twice: integer; begin twice := 2 * k end;\nbegin writeln(twice) end.\n"
    assert run(backend, text) == "8\n"
    assert run(backend, text, k=21) == "42\n"


@pytest.mark.parametrize("body, where", [
    ("n := 4", "4:3"),
    ("for n := 1 to 2 do writeln(n)", "4:7"),
    ("bump(n)", "4:8"),
])
def test_a_constant_cannot_be_assigned(body, where):
    text = f"const n = 3;\nproc bump(var x: integer); begin x := x + 1 end;\nbegin\n  {body}\nend.\n"
    with pytest.raises(starvm.StarTypeError) as e:
        starvm.Machine(backend="numpy", out=io.StringIO()).run(text, "c.star")
    first, *rest = e.value.render().splitlines()
    assert first == f"c.star:{where}: error: cannot assign to 'n': it is a constant"
    assert any("--param n=VALUE" in line for line in rest)


@pytest.mark.parametrize("params, message", [
    ({"m": 1}, "m=1: the program has no constant 'm' (its constants: n = 3, big = false, neg = -2)"),
    ({"n": True}, "n=true: the constant 'n' is an integer, not a boolean"),
    ({"big": 1}, "big=1: the constant 'big' is a boolean, not an integer"),
])
def test_wrong_params_are_refused_before_anything_runs(params, message):
    m = starvm.Machine(backend="numpy", out=io.StringIO(), params=params)
    with pytest.raises(ParamError) as e:
        m.run(PROG, "p.star")
    assert str(e.value) == message
    assert list(m.globals) == []                 # the failed load declared nothing


def test_a_program_without_constants_says_how_to_declare_one():
    with pytest.raises(ParamError, match=r"declares no constants \(a parameter sets one: const NAME = VALUE;"):
        starvm.Machine(backend="numpy", out=io.StringIO(), params={"x": 1}).run("begin end.")


def test_a_library_loaded_first_does_not_trip_the_name_check():
    """The names are checked when a program with a main block loads: a library loaded before
    it may lack the program's constants."""
    m = starvm.Machine(backend="numpy", out=io.StringIO(), params={"n": 7})
    m.load("proc nothing; begin end;", "lib.star")
    m.run(PROG, "p.star")
    assert m.out.getvalue().startswith("7 ")
    assert m.globals["n"] == 7


@pytest.mark.parametrize("params, message", [
    ({"x": 1.5}, "must be an int or a bool, got float"),
    ({"x y": 1}, "is not a Star name"),
    ({"x": 1, "X": 2}, "is given twice"),
])
def test_machine_params_of_the_wrong_kind(params, message):
    with pytest.raises(ParamError, match=message):
        starvm.Machine(backend="numpy", params=params)


@pytest.mark.parametrize("text, want", [
    ("source=5", ("source", 5)), ("n=-3", ("n", -3)), ("n=+3", ("n", 3)), (" n = 4 ", ("n", 4)),
    ("flag=true", ("flag", True)), ("flag=FALSE", ("flag", False)), ("big=123456789012345678901", ("big", 123456789012345678901)),
])
def test_parse_assignment(text, want):
    assert parse_assignment(text) == want


@pytest.mark.parametrize("text, message", [
    ("source", "'source' is not NAME=VALUE"), ("=5", "'=5' is not NAME=VALUE"),
    ("1x=5", "'1x' is not a Star name"), ("n=", "n=: the value is missing"),
    ("n=five", "n=five: the value must be an integer or true/false"), ("n=1.5", "must be an integer or true/false"),
])
def test_parse_assignment_errors(text, message):
    with pytest.raises(ParamError, match=message.replace("(", r"\(")):
        parse_assignment(text)


def test_cli_param_and_its_errors(tmp_path, capsys):
    prog = tmp_path / "p.star"
    prog.write_text(PROG)
    assert cli.main(["run", str(prog), "-D", "n=2", "--param", "big=true"]) == 0
    assert capsys.readouterr().out == "2 true -2 2x3\n"
    for args, message in [(["-D", "n=x"], "star: error: --param n=x: the value must be an integer or true/false"),
                          (["-D", "m=1"], "star: error: --param m=1: the program has no constant 'm'"),
                          (["-D", "n=1", "-D", "N=2"], "star: error: --param N is given twice"),
                          (["-D", "big=2"], "star: error: --param big=2: the constant 'big' is a boolean")]:
        assert cli.main(["run", str(prog), *args]) == 2, args
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(message), err
    assert cli.main(["check", str(prog)]) == 0           # check takes no parameters: the declared values type-check
    capsys.readouterr()


def test_help_names_the_param_option(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    assert "-D NAME=VALUE, --param NAME=VALUE" in capsys.readouterr().out


def test_trace_debug_and_show_take_params(tmp_path, capsys, monkeypatch):
    """star trace / debug / show pass -D to their machines as star run does."""
    import json
    prog = tmp_path / "p.star"
    prog.write_text(PROG)
    out = tmp_path / "t.json"
    assert cli.main(["trace", str(prog), "-D", "n=2", "--json", str(out)]) == 0
    assert "".join(text for _, text in json.loads(out.read_text())["output"]) == "2 false -2 2x3\n"
    assert cli.main(["trace", str(prog), "-D", "m=2", "--json", str(out)]) == 2
    assert "--param m=2: the program has no constant 'm'" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("continue\n"))
    assert cli.main(["debug", str(prog), "-D", "neg=7"]) == 0
    assert "3 false 7 3x4" in capsys.readouterr().out
    pytest.importorskip("matplotlib")
    assert cli.main(["show", str(prog), "--table", "T", "--png", str(tmp_path / "t.png"), "--param", "n=4"]) == 0
    assert "(T: table 4 x 5)" in capsys.readouterr().err
