"""Every input an answer or one clear error (issue 37): long and deeply nested programs run,
integers of any length print exactly, and the language's traps get an error, a hint or a
warning with its position instead of an internal error or a silently wrong result."""
from __future__ import annotations

import io
import re
import sys

import pytest

import starvm
from conftest import run_star
from starvm.ui.cli import main as cli_main
from starvm.frontend import parser as parser_module
from starvm.frontend.integers import decimal_of_int, int_of_decimal


def run(src: str, backend: str = "numpy", **options) -> str:
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out, **options).run(src, "deep.star")
    return out.getvalue()


def error_of(src: str, backend: str = "numpy", **options) -> starvm.StarError:
    with pytest.raises(starvm.StarError) as info:
        run(src, backend, **options)
    return info.value


def with_x(body: str, decl: str = "x, i, k: integer; b: boolean") -> str:
    return f"var {decl};\nbegin\n  x := 0; i := 1; k := 2; b := true;\n  {body};\n  writeln(x, ' ', b)\nend.\n"


# ---------------------------------------------------------------- long and deep programs

def test_a_flat_sum_of_many_terms(backend):
    # 210 terms passed Python's 200 nested parentheses; 700 its recursion limit
    assert run(with_x("x := " + "+".join(["1"] * 700)), backend) == "700 true\n"


def test_deep_unary_minus_and_not(backend):
    assert run(with_x("x := " + "-" * 1001 + "1"), backend) == "-1 true\n"
    assert run(with_x("b := " + "not " * 3001 + "true"), backend) == "0 false\n"


def test_deep_parentheses_on_the_right_keep_their_value(backend):
    # 1 - (2 - (3 - ...)): a right-nested chain (no flattening possible), evaluated exactly
    n = 400
    text = "".join(f"{j} - (" for j in range(1, n)) + str(n) + ")" * (n - 1)
    want = 0
    for j in range(n, 0, -1):
        want = j - want if j < n else n
    assert run(with_x("x := " + text), backend) == f"{want} true\n"


def test_deep_nesting_of_statements(backend):
    assert run(with_x("begin " * 2000 + "x := 7" + " end" * 2000), backend) == "7 true\n"
    assert run(with_x("if x = 0 then " * 600 + "x := 5"), backend) == "5 true\n"
    assert run(with_x("if x = 1 then x := 9 else " * 300 + "x := 4"), backend) == "4 true\n"
    # Python allows 20 nested loops in a function: 30 while loops, repeats and fors
    assert run(with_x("while x < 1 do " * 30 + "x := x + 1"), backend) == "1 true\n"
    assert run(with_x("repeat " * 30 + "x := x + 1" + " until x > 0" * 30), backend) == "1 true\n"
    fors = "".join(f"for i := 1 to 1 do " if j % 2 else "for k := 1 to 2 do " for j in range(2))
    assert run(with_x(fors + "begin " * 40 + "x := x + 1" + " end" * 40), backend) == "2 true\n"


def test_evaluation_order_and_short_circuit_survive_temporaries(backend):
    """A deep expression is computed one operation per line: left to right as before (a call
    that changes x is seen only by what comes after it), and `and`/`or` still stop early."""
    src = ("var x, y: integer;\nfunction BUMP(var v: integer): integer;\nbegin\n  v := v + 1;\n  BUMP := v\nend;\n"
           "begin\n  x := 1;\n  y := " + "x + (BUMP(x) + (" * 30 + "x" + "))" * 30 + ";\n  writeln(x, ' ', y)\nend.\n")
    x, y = 1, 0
    terms = []
    for _ in range(30):      # Python's own order on the same text
        terms.append(x)
        x += 1
        terms.append(x)
    y = sum(terms) + x
    assert run(src, backend) == f"{x} {y}\n"
    # x = 0 stops the chain before 10 div x; 40 levels of or/and alternation
    guard = "(x = 0) or ((10 div x > 0) and (" * 40 + "true" + "))" * 40
    assert run(with_x(f"b := {guard}"), backend) == "0 true\n"


def test_the_compiled_tier_falls_back_on_deep_code(backend):
    # its Numba source would nest too deeply: it says why and the interpreter runs it
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out, jit="on")
    m.profile = True
    m.run(with_x("while x < 1 do " * 25 + "x := x + 1"), "deep.star")
    assert out.getvalue() == "1 true\n"
    report = "\n".join(m.jit.report())
    assert re.search(r"main block: .*interpreted", report)
    if backend != "cupy":       # the GPU tier leaves every main block to the interpreter, for its own reason
        assert "too many statically nested blocks" in report


def test_a_run_time_error_deep_inside_has_its_exact_position(backend):
    src = ("var T: table(2, 2);\nprocedure P(k: integer);\nbegin\n  " + "if k > 0 then " * 60 + "writeln(ROW(k, T))\n"
           "end;\nbegin\n  " + "begin " * 30 + "P(5)" + " end" * 30 + "\nend.\n")
    err = error_of(src, backend, jit="off")
    assert (err.line, err.column) == (4, 3 + 14 * 60 + 8) and "row index 5 out of range 1..2" in err.message
    assert [f.routine for f in err.stack] == ["main block", "P"]     # closures fold into their routine
    assert err.stack[0].loc.line == 7


def test_nesting_beyond_the_limit_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(parser_module, "MAX_NESTING", 300)
    err = error_of(with_x("x := " + "-" * 400 + "1"))
    assert isinstance(err, starvm.StarSyntaxError) and err.line == 4
    assert err.message == "nested too deeply: more than 300 levels of statements and expressions"


def test_deep_passes_leave_the_recursion_limit_as_it_was():
    before = sys.getrecursionlimit()
    run(with_x("b := " + "not " * 1500 + "true"))
    assert sys.getrecursionlimit() == before


# ---------------------------------------------------------------- integers of any length

@pytest.mark.parametrize("digits", [1, 4299, 4300, 4301, 9000])
def test_decimal_conversions_at_any_length(digits):
    import random
    rnd = random.Random(digits)
    text = str(rnd.randint(1, 9)) + "".join(rnd.choice("0123456789") for _ in range(digits - 1))
    n = int_of_decimal(text)
    assert n.bit_length() >= (digits - 1) * 3.32 and decimal_of_int(n) == text
    assert decimal_of_int(-n) == "-" + text and decimal_of_int(n * 10 ** 7) == text + "0" * 7
    assert sys.get_int_max_str_digits() in (0, 4300)        # nothing lifted the limit for good


def test_huge_literals_and_computed_values_print_exactly(backend):
    big = "7" + "0" * 5000 + "3"
    assert run(with_x(f"x := {big}; writeln(x - 3); writeln(x mod 10)"), backend).splitlines()[:2] == \
        ["7" + "0" * 5001, "3"]
    out = run(with_x("x := 1; for i := 1 to 15000 do x := x * 2; writeln(x)"), backend).splitlines()[0]
    assert out == decimal_of_int(2 ** 15000) and len(out) == 4516


def test_an_error_message_may_show_a_huge_integer(backend):
    big = "9" * 5000
    err = error_of(with_x(f"x := {big}; writeln(ROW(x, T))", "x, i, k: integer; b: boolean; T: table(2, 2)"),
                   backend)
    assert err.message == f"row index {big} out of range 1..2"
    err = error_of(f"var T: table(2, 2);\nbegin\n  writeln(ROW({big}, T))\nend.\n", backend)   # found by the checker
    assert isinstance(err, starvm.StarTypeError) and err.message == f"row index {big} out of range 1..2"


# ---------------------------------------------------------------- parallel for

def test_a_parallel_for_write_that_would_be_lost_is_refused():
    src = ("var T: table(4, 4); X: slice(T); s, i: integer;\nbegin\n  SET(X);\n  parallel for i := 1 to 4 do\n"
           "  begin\n    s := i;\n    X(i) := 0\n  end;\n  writeln(s, ' ', X)\nend.\n")
    err = error_of(src)
    assert (err.line, err.column) == (6, 5) and "the value assigned to 's' is lost" in err.message
    assert "COL(i, T), ROW(i, T)" in err.hint
    assert run(src.replace("parallel for", "for")) == "4 0000\n"     # what the user meant


@pytest.mark.parametrize("body, where", [
    ("CLR(Y)", (6, 9)),                                 # a var parameter cleared whole
    ("begin m := j; k := m end", (6, 19)),             # a var parameter, written last
    ("begin k := 1; if k = 1 then COL(j, T) := COL(j, T) end", None),   # read later: private
    ("begin V := COL(j, T); V := not V; COL(j, T) := V end", None),
    ("begin V := COL(j, T); k := STEP(V); COL(j, T) := V end", None),   # STEP's write to V is used
    ("begin V := COL(j, T); while SOME(V) do k := STEP(V); COL(j, T) := V end", None),
])
def test_private_writes_must_be_read_in_the_same_iteration(body, where):
    src = ("var T: table(4, 4);\nprocedure P(var k: integer; var Y: slice);\nvar j, m: integer; V: slice(T);\n"
           "begin\n  parallel for j := 1 to 4 do\n    " + body + "\nend;\nbegin\nend.\n")
    if where is None:
        run(src)
        return
    err = error_of(src)
    assert (err.line, err.column) == where and "is lost" in err.message, err.render()


# ---------------------------------------------------------------- library errors at the user's call

def test_an_unassigned_argument_of_a_library_routine_is_reported_at_the_call(backend):
    err = error_of("var v: word;\nbegin\n  SETNUM(5, v);\n  writeln(v)\nend.\n", backend)
    assert (err.filename, err.line, err.column) == ("deep.star", 3, 3), err.render()
    assert err.message == "'v' is used before it is assigned a value (in SETNUM, called here)"
    assert err.stack[-1].routine == "SETNUM" and err.stack[-1].loc.filename == "stdlib/graphs.star"


# ---------------------------------------------------------------- options and names

def test_negative_max_steps_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "p.star"
    path.write_text("begin\n  writeln(1)\nend.\n")
    with pytest.raises(SystemExit) as info:
        cli_main(["run", "--max-steps", "-5", str(path)])
    assert info.value.code == 2 and "--max-steps: must be 0 or more, got -5" in capsys.readouterr().err
    with pytest.raises(ValueError, match="max_steps must be a whole number >= 0"):
        starvm.Machine(max_steps=-5)
    assert cli_main(["run", "--max-steps", "0", str(path)]) == 0     # no loop, no call: 0 steps are enough


@pytest.mark.parametrize("src, column", [
    ("var true: integer;\nbegin\n  writeln(true)\nend.", 5),
    ("var x: integer; word: boolean;\nbegin\nend.", 17),
    ("procedure False(a: integer);\nbegin\nend;\nbegin\nend.", 11),
    ("procedure P(div: integer);\nbegin\nend;\nbegin\nend.", 13),
])
def test_reserved_words_cannot_be_declared(src, column):
    err = error_of(src)
    assert isinstance(err, starvm.StarSyntaxError) and (err.line, err.column) == (1, column)
    assert "is a reserved word of Star" in err.message


# ---------------------------------------------------------------- hints

@pytest.mark.parametrize("src, where, message, hint", [
    ("var s: integer;\nbegin\n  if s == 10 then writeln(s)\nend.", (3, 8), "'==' is not a Star operator",
     "single '='"),
    ("begin\n  writeln(\"hello\")\nend.", (2, 11), "unexpected character '\"'", "single quotes: writeln('hello')"),
    ("var n: integer;\nbegin\n  if n := 5 then writeln(n)\nend.", (3, 8),
     "':=' assigns; the condition of 'if' compares with '='", "'if n = ...'"),
    ("var n: integer;\nbegin\n  while n := 5 do n := 1\nend.", (3, 11),
     "':=' assigns; the condition of 'while' compares with '='", "'while n = ...'"),
])
def test_beginner_mistakes_get_a_hint(src, where, message, hint):
    err = error_of(src)
    assert (err.line, err.column) == where and err.message == message and hint in err.hint, err.render()


# ---------------------------------------------------------------- warnings

def warnings_of(src: str) -> tuple[str, list[starvm.StarError]]:
    found = []
    out = io.StringIO()
    m = starvm.Machine(backend="numpy", out=out)
    m.env.warn = found.append
    m.run(src, "w.star")
    return out.getvalue(), found


def test_an_empty_statement_after_then_or_do_is_a_warning():
    src = ("var n, i: integer;\nbegin\n  n := 1;\n  if n > 5 then;\n    writeln(n);\n  for i := 1 to 2 do ;\n"
           "  while n < 0 do;\n  if n > 5 then writeln(1) else writeln(2);\n  if n > 5 then\n    ;\nend.\n")
    out, found = warnings_of(src)
    assert out == "1\n2\n"                                     # it still runs
    assert [(w.line, w.column) for w in found] == [(4, 16), (6, 22), (7, 17)]
    assert all(w.render().startswith(f"w.star:{w.line}:{w.column}: warning: ';' right after") for w in found)


def test_a_function_that_never_assigns_its_result_is_a_warning():
    src = ("var x: integer;\nfunction F(a: integer): integer;\nbegin\n  x := a\nend;\n"
           "function G(a: integer): integer;\nbegin\n  if a > 0 then G := a\nend;\nbegin\n  writeln(F(3), G(2))\nend.\n")
    out, found = warnings_of(src)
    assert out == "02\n" and len(found) == 1
    assert found[0].render().splitlines()[0] == "w.star:2:10: warning: function 'F' never assigns its result"
    assert "returns 0" in found[0].hint


def test_star_check_and_run_print_warnings_on_stderr(tmp_path, capsys):
    path = tmp_path / "w.star"
    path.write_text("var n: integer;\nbegin\n  if n > 5 then;\n    writeln(n)\nend.\n")
    for command in ("check", "run"):
        assert cli_main([command, str(path)]) == 0
        err = capsys.readouterr().err
        assert err.startswith(f"{path}:3:16: warning: ';' right after 'then' is an empty statement"), err


# ---------------------------------------------------------------- sizes known before running

@pytest.mark.parametrize("stmt, where, message", [
    ("ROW(1, T) := BITS('1010')", (3, 3), "ROW(1, T) := ...: the word has 4 bits but the table has 3 columns"),
    ("COL(2, T) := BITS('101')", (3, 3), "COL(2, T) := ...: the slice has 3 bits but the table has 4 rows"),
    ("V := BITS('10')", (3, 5), "length mismatch in assignment: the variable has 4 bits, the value 2"),
    ("w := ROW(5, T)", (3, 8), "row index 5 out of range 1..4"),
    ("n := NUMB(COL(4, T))", (3, 13), "column index 4 out of range 1..3"),
    ("w := ROW(2, T) xor BITS('1111')", (3, 18), "length mismatch in xor: 3 bits and 4 bits"),
    ("if EQ(w, BITS('11')) then n := 3", (3, 6), "length mismatch in EQ: 3 bits and 2 bits"),
    ("if V = COL(1, U) then n := 3", (3, 8), "length mismatch in EQ: 4 bits and 5 bits"),
])
def test_star_check_finds_size_mismatches_of_constant_sizes(stmt, where, message, tmp_path, capsys):
    src = f"var T: table(4, 3); U: table(5, 1); V: slice(T); w: word(T); n: integer;\nbegin\n  {stmt}\nend.\n"
    err = error_of(src)
    assert isinstance(err, starvm.StarTypeError) and (err.line, err.column) == where and err.message == message
    path = tmp_path / "s.star"
    path.write_text(src)
    assert cli_main(["check", str(path)]) == 1 and message in capsys.readouterr().err


def test_sizes_known_only_when_running_are_checked_when_running():
    # a table parameter's size is the caller's: the run checks it (and this one fits)
    src = ("var T: table(4, 3);\nprocedure P(var A: table);\nbegin\n  ROW(1, A) := BITS('101')\nend;\n"
           "begin\n  P(T);\n  writeln(ROW(1, T))\nend.\n")
    assert run_star(src) == "101\n"
