"""The checker (spec §2-§4): every refusal is a StarTypeError at the right place with a
clear message, raised before anything runs; `parallel for` bodies obey the forall rule."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm import StarTypeError
from listings import LISTING_4

# Globals of every kind, declared on line 1 so that the statement under test is on line 2.
G = "var n: integer; b: boolean; s: slice; w: word; t: table(4, 4); u: slice(t);\n"


def type_error(src: str, filename: str = "t.star") -> StarTypeError:
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    with pytest.raises(StarTypeError) as info:
        m.load(src, filename)
    err = info.value
    assert isinstance(err, starvm.StarError)
    return err


def check_error(src: str, line: int, col: int, *parts: str) -> StarTypeError:
    err = type_error(src)
    assert (err.filename, err.line, err.column) == ("t.star", line, col), err.render()
    for p in parts:
        assert p in err.message, err.render()
    first = err.render().splitlines()[0]
    assert first == f"t.star:{line}:{col}: error: {err.message}"
    return err


def accepts(src: str) -> starvm.Machine:
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.load(src, "t.star")
    return m


# ---------------------------------------------------------------------------------------
# names and argument counts

@pytest.mark.parametrize("stmt, col, msg", [
    ("x := 1", 7, "unknown name 'x'"),
    ("n := foo(1)", 12, "unknown name 'foo'"),
    ("n := y + 1", 12, "unknown name 'y'"),
    ("foo(1)", 7, "unknown name 'foo'"),
    ("Frob", 7, "unknown name 'Frob'"),
    ("writeln(zz)", 15, "unknown name 'zz'"),
    ("if q then n := 1", 10, "unknown name 'q'"),
    ("for k := 1 to 2 do n := 1", 11, "unknown name 'k'"),
])
def test_unknown_names(stmt, col, msg):
    check_error(G + f"begin {stmt} end.", 2, col, msg)


def test_unknown_name_inside_a_routine():
    check_error("proc p(n: integer);\nvar k: integer;\nbegin\n  k := n + m\nend;", 4, 12, "unknown name 'm'")


def test_unknown_table_in_a_type():
    check_error("var s: slice(q);\nbegin end.", 1, 14, "unknown table 'q'")
    check_error("var n: integer; s: word(n);\nbegin end.", 1, 25, "'n' is an integer", "needs a table")


@pytest.mark.parametrize("stmt, col, msg", [
    ("p(1, 2)", 7, "'p' takes 1 argument, got 2"),
    ("p", 7, "'p' takes 1 argument, got 0"),
    ("q2(1)", 7, "'q2' takes 2 arguments, got 1"),
    ("n := f(1, 2)", 12, "'f' takes 1 argument, got 2"),
    ("n := f", 12, "'f' takes 1 argument, got 0"),
    ("n := SOME(s, s)", 12, "SOME takes 1 argument, got 2"),
    ("n := COL(1)", 12, "COL takes 2 arguments, got 1"),
    ("w := TRIM(1, w)", 12, "TRIM takes 3 arguments, got 2"),
    ("n := s(1, 2)", 12, "takes 1 argument, got 2"),
])
def test_wrong_argument_counts(stmt, col, msg):
    src = ("proc p(a: integer); begin end; proc q2(a, b: integer); begin end; "
           "function f(a: integer): integer; begin f := a end;\n")
    src += "var n: integer; s: slice; w: word;\n"
    err = type_error(src + f"begin {stmt} end.")
    assert (err.line, err.column) == (3, col), err.render()
    assert msg in err.message


# ---------------------------------------------------------------------------------------
# type mismatches

@pytest.mark.parametrize("stmt, col, parts", [
    # a word is not a slice, except a BITS literal
    ("s := ROW(1, t)", 12, ["'s' is a slice; cannot assign a word"]),
    ("u := w", 12, ["'u' is a slice; cannot assign a word"]),
    ("COL(1, t) := w", 20, ["COL(i, t) is a slice; cannot assign a word"]),
    ("w := COL(1, t)", 12, ["'w' is a word; cannot assign a slice"]),
    ("ROW(1, t) := u", 20, ["cannot assign a slice"]),
    # a vector is not an integer, an integer not a boolean
    ("n := s", 12, ["'n' is an integer; cannot assign a slice"]),
    ("n := ROW(1, t)", 12, ["'n' is an integer; cannot assign a word"]),
    ("n := b", 12, ["'n' is an integer; cannot assign a boolean"]),
    ("b := 1", 12, ["'b' is a boolean; cannot assign an integer"]),
    ("s := 1", 12, ["'s' is a slice; cannot assign an integer"]),
    ("t := 1", 12, ["'t' is a table; cannot assign an integer"]),
    ("t := s", 12, ["'t' is a table; cannot assign a slice"]),
    # operators
    ("b := n and b", 14, ["'and' needs two booleans, two slices or two words", "an integer and a boolean"]),
    ("b := b or 1", 14, ["'or' needs", "a boolean and an integer"]),
    ("s := u xor w", 14, ["'xor' needs", "a slice and a word"]),
    ("n := n + b", 14, ["'+' needs integers", "an integer and a boolean"]),
    ("n := s * 2", 14, ["'*' needs integers"]),
    ("n := -b", 12, ["unary '-' needs an integer"]),
    ("n := not n", 12, ["'not' needs a boolean, a slice or a word"]),
    ("b := w < w", 14, ["'<' compares integers, not a word and a word"]),
    ("b := w >= ROW(1, t)", 14, ["'>=' compares integers"]),
    ("b := u > u", 14, ["'>' compares integers, not a slice and a slice"]),
    ("b := u = w", 14, ["cannot compare a slice with a word"]),
    ("b := n = b", 14, ["cannot compare an integer with a boolean"]),
    # conditions and indices
    ("if n then n := 1", 10, ["the condition of 'if' must be a boolean, not an integer"]),
    ("while s do n := 1", 13, ["the condition of 'while' must be a boolean, not a slice"]),
    ("repeat n := 1 until n", 27, ["the condition of 'until' must be a boolean"]),
    ("for n := 1 to b do", 21, ["a loop bound must be an integer, not a boolean"]),
    ("n := s(b)", 14, ["a bit index must be an integer"]),
    ("n := n(1)", 12, ["'n' is an integer; only a slice or a word has bits to index"]),
    ("n(1) := 1", 7, ["'n' is an integer"]),
    ("s(1) := s", 15, ["a bit takes 0 or 1"]),
    # built-in operations
    ("n := FND(n)", 16, ["FND needs a slice or a word, not an integer"]),
    ("SET(n)", 11, ["SET needs a slice or a word"]),
    ("n := STEP(COL(1, t))", 17, ["STEP changes its argument: pass a slice or word variable"]),
    ("w := TRIM(1, 2, u)", 23, ["cannot assign a slice"]),
    ("n := COL(b, t)", 16, ["an argument of COL must be an integer, not a boolean"]),
    ("s := COL(1, n)", 19, ["COL needs a table, not an integer"]),
    ("COL(1, 2) := s", 14, ["needs a table variable"]),
    ("w := BITS('12')", 17, ["BITS takes a string of 0s and 1s"]),
    ("w := BITS(w)", 17, ["BITS takes a string of 0s and 1s"]),
    ("writeln(CLR(s))", 15, ["CLR is a statement and has no value"]),
    ("n := writeln", 12, ["WRITELN is a statement and has no value"]),
    ("n := NUMB", 12, ["'NUMB' needs arguments"]),
    ("n", 7, ["'n' is a variable, not a procedure"]),
])
def test_type_mismatches(stmt, col, parts):
    check_error(G + f"begin {stmt} end.", 2, col, *parts)


def test_bits_literal_may_be_assigned_to_a_slice():
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.run(G + "begin s := BITS('1010'); u := BITS('0110'); COL(2, t) := BITS('1111');\n"
              "if s = BITS('1010') then writeln(s, u, COL(2, t)) end.")
    assert m.out.getvalue() == "101001101111\n"


def test_hint_for_word_to_slice_and_pascal_precedence():
    err = check_error(G + "begin s := ROW(1, t) end.", 2, 12)
    assert "BITS" in err.hint and "hint: " in err.render()
    err = check_error(G + "begin if n = 1 and b then end.", 2, 16, "'and' needs")
    assert "tighter" in err.hint


@pytest.mark.parametrize("decl, line, col, msg", [
    ("var n: integer;\nvar n: integer;\nbegin end.", 2, 5, "'n' is declared twice"),
    ("var t: table;\nbegin end.", 1, 8, "table 't' needs a size"),
    ("proc p(t: table(2, 2)); begin end;", 1, 11, "give no size"),
    ("function f(x: integer): table; begin end;", 1, 25, "a function cannot return a table"),
    ("proc p; begin end;\nproc P; begin end;", 2, 6, "routine 'P' is declared twice"),
    ("var set: integer;\nbegin end.", 1, 5, "'set' is the name of a built-in operation"),
    ("var t: table(b, 2); b: boolean;\nbegin end.", 1, 14, "unknown name 'b'"),
    ("var b: boolean; t: table(b, 2);\nbegin end.", 1, 26, "a table size must be an integer"),
])
def test_declaration_errors(decl, line, col, msg):
    check_error(decl, line, col, msg)


# ---------------------------------------------------------------------------------------
# read-only tables, loop variables, var arguments, routines as values

def test_assignment_to_a_non_var_table_parameter():
    for stmt, col in [("COL(1, T) := COL(2, T)", 32), ("ROW(1, T) := ROW(2, T)", 32), ("T := T", 25)]:
        err = check_error(f"proc p(T: table);\nbegin {stmt} end;", 2, col - 18,
                          "cannot change table 'T': it is a parameter without 'var'")
        assert "var T: table" in err.hint


def test_set_on_a_table_is_refused():
    check_error("proc p(var T: table); var s: slice(T);\nbegin CLR(s); SET(T) end;", 2, 19,
                "SET needs a slice or a word, not a table")


def test_non_var_table_passed_as_a_var_argument():
    check_error("proc q(var T: table); begin end;\nproc p(T: table);\nbegin\n  q(T)\nend;", 4, 5,
                "cannot change table 'T'")


def test_non_var_table_may_be_read_and_passed_on():
    accepts("proc q(T: table; var s: slice(T)); begin s := COL(1, T) end;\n"
            "proc p(T: table; var s: slice(T)); var v: word(T); begin v := ROW(1, T); q(T, s) end;")


@pytest.mark.parametrize("body, col", [
    ("for i := 1 to 3 do i := 2", 26),
    ("for i := 1 to 3 do begin n := 1; i := i + 1 end", 40),
    ("for i := 1 to 3 do for j := 1 to 3 do i := j", 45),
    ("for i := 1 to 3 do for i := 1 to 2 do n := 1", 30),
    ("parallel for i := 1 to 3 do i := 2", 35),
    ("for i := 1 to 3 do inc(i)", 30),
])
def test_assigning_the_loop_variable(body, col):
    src = "proc inc(var k: integer); begin k := k + 1 end;\nvar i, j, n: integer;\n"
    err = check_error(src + f"begin {body} end.", 3, col)
    assert "'i'" in err.message and "loop" in err.message


def test_loop_variable_is_assignable_after_the_loop():
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.run("var i: integer; begin for i := 1 to 3 do writeln(i); i := 10; writeln(i) end.")
    assert m.out.getvalue() == "1\n2\n3\n10\n"


@pytest.mark.parametrize("arg, col, msg", [
    ("1 + 2", 11, "argument 'x' of 'q' is a var parameter: pass a variable"),
    ("n + 1", 11, "argument 'x' of 'q' is a var parameter: pass a variable"),
    ("5", 9, "argument 'x' of 'q' is a var parameter: pass a variable"),
    ("f(1)", 9, "argument 'x' of 'q' is a var parameter: pass a variable"),
    ("b", 9, "argument 'x' of 'q' must be an integer, not a boolean"),
])
def test_var_argument_must_be_a_variable_of_the_type(arg, col, msg):
    src = "proc q(var x: integer); begin end;\nfunction f(a: integer): integer; begin f := a end;\n"
    check_error(src + f"var n: integer; b: boolean;\nbegin q({arg}) end.", 4, col, msg)


def test_var_slice_argument_must_be_a_variable():
    check_error("proc q(var s: slice); begin end;\nvar T: table(2, 2);\nbegin q(COL(1, T)) end.", 3, 9,
                "is a var parameter: pass a variable")


@pytest.mark.parametrize("stmt, col, msg", [
    ("n := q", 12, "procedure 'q' has no value"),
    ("n := q(1)", 12, "procedure 'q' has no value"),
    ("n := 1 + q(2)", 16, "procedure 'q' has no value"),
    ("writeln(q)", 15, "procedure 'q' has no value"),
    ("q := 1", 7, "'q' is a routine, not a variable"),
])
def test_procedure_used_as_a_value(stmt, col, msg):
    src = "proc q(x: integer); begin end;\nfunction f(a: integer): integer; begin f := a end;\nvar n: integer;\n"
    check_error(src + f"begin {stmt} end.", 4, col, msg)


def test_function_result_assignment_and_use():
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.run("function sq(x: integer): integer; begin sq := x * x end;\n"
          "function one: integer; begin one := 1 end;\n"
          "begin writeln(sq(3) + one, ' ', one()) end.")
    assert m.out.getvalue() == "10 1\n"


def test_errors_are_found_before_anything_runs():
    out = io.StringIO()
    m = starvm.Machine(backend="numpy", out=out)
    with pytest.raises(StarTypeError):
        m.run("begin writeln('ran'); x := 1 end.", "t.star")
    assert out.getvalue() == ""


def test_first_error_is_reported_in_routines_before_main():
    err = type_error("proc p; begin a := 1 end;\nbegin b := 1 end.")
    assert (err.line, err.message) == (1, "unknown name 'a'")


# ---------------------------------------------------------------------------------------
# parallel for: the forall rule

PF = ("proc p(n, k: integer; var P: table; var X: slice);\n"
      "var V, W: slice; i, j: integer;\n"
      "begin\n")


def pf_error(body: str, col: int, *parts: str, line: int = 4) -> StarTypeError:
    err = check_error(PF + body + "\nend;", line, col, *parts)
    assert err.message.startswith("parallel for: "), err.message
    assert err.hint and "simultaneous" in err.hint
    return err


def test_pfor_refuses_col_write_not_selected_by_the_loop_variable():
    pf_error("parallel for i := 1 to n do COL(k, P) := COL(i, P)", 29, "COL(i, P)", "loop variable")
    pf_error("parallel for i := 1 to n do COL(i + 0, P) := COL(i, P)", 29, "COL(i, P)")
    pf_error("parallel for i := 1 to n do ROW(k, P) := ROW(i, P)", 29, "ROW(i, P)")


def test_pfor_refuses_shared_bit_writes_not_indexed_by_the_loop_variable():
    pf_error("parallel for i := 1 to n do X(k) := 1", 29, "bit i of 'X'", "shared")
    pf_error("parallel for i := 1 to n do X(n - i + 1) := 1", 29, "bit i of 'X'")


def test_pfor_refuses_reading_a_private_variable_before_assigning_it():
    pf_error("parallel for i := 1 to n do begin V := V or COL(i, P); COL(i, P) := V end", 40,
             "'V' is read before this iteration assigns it")
    # assigned on one branch only
    pf_error("parallel for i := 1 to n do begin if i > 1 then V := COL(i, P); COL(i, P) := V end",
             78, "'V' is read before")
    pf_error("parallel for i := 1 to n do begin j := j + 1; X(i) := 1 end", 40, "'j' is read before")


def test_pfor_refuses_calls():
    src_q = "proc q(n: integer); begin end;\nfunction f(x: integer): integer; begin f := x end;\n"
    err = check_error(src_q + PF + "parallel for i := 1 to n do q(i)\nend;", 6, 29, "parallel for: ",
                      "cannot call procedure 'q'")
    assert err.message.startswith("parallel for:")
    err = check_error(src_q + PF + "parallel for i := 1 to n do j := f(i)\nend;", 6, 34,
                      "cannot call function 'f'")
    assert err.message.startswith("parallel for:")


def test_pfor_refuses_output():
    pf_error("parallel for i := 1 to n do writeln(i)", 29, "output")
    pf_error("parallel for i := 1 to n do begin V := COL(i, P); write(V) end", 51, "output")


def test_pfor_refuses_graph_input():
    pf_error("parallel for i := 1 to n do GRAPH_ADJ(P)", 29, "GRAPH_ADJ fills whole tables")


def test_pfor_refuses_a_table_written_by_col_and_row():
    pf_error("parallel for i := 1 to n do begin COL(i, P) := X; ROW(i, P) := ROW(i, P) end", 51,
             "table 'P' is written both by COL and by ROW")


def test_pfor_refuses_nesting():
    err = type_error(PF + "parallel for i := 1 to n do parallel for j := 1 to n do COL(j, P) := X\nend;")
    assert err.message.startswith("parallel for:") and err.line == 4


def test_pfor_accepts_the_warshall_adapt_body():
    accepts(LISTING_4)                                    # tests/listings.py
    accepts("proc w(n: integer; var P: table); var i, k: integer;\nbegin\n"
            "for k := 1 to n do parallel for i := 1 to n do\n"
            "  if COL(i, P)(k) = 1 then COL(i, P) := COL(i, P) or COL(k, P)\nend;")


@pytest.mark.parametrize("body", [
    "parallel for i := 1 to n do X(i) := COL(i, P)(i)",
    "parallel for i := 1 to n do ROW(i, P) := ROW(i, P) or ROW(k, P)",
    "parallel for i := n downto 1 do begin if i > 1 then V := COL(i, P) else V := X; COL(i, P) := V end",
    "parallel for i := 1 to n do begin SET(V); V(i) := 0; COL(i, P) := V end",
    "parallel for i := 1 to n do begin V := COL(i, P); j := STEP(V); X(i) := V(1) end",
    "parallel for i := 1 to n do begin j := 0; for k := 1 to n do j := j + COL(i, P)(k); X(i) := j mod 2 end",
])
def test_pfor_accepts_independent_bodies(body):
    accepts(PF + body + "\nend;")


PF_RUN = """
proc colxor(n, k: integer; var P: table);
var i: integer;
begin
  parallel for i := 1 to n do COL(i, P) := COL(i, P) xor COL(k, P)
end;
proc seqxor(n, k: integer; var P: table);
var i: integer;
begin
  for i := 1 to n do COL(i, P) := COL(i, P) xor COL(k, P)
end;
proc diag(n: integer; var P: table; var X: slice);
var i: integer;
begin
  parallel for i := 1 to n do X(i) := COL(i, P)(i)
end;
"""


def test_pfor_runs_with_forall_semantics(machine):
    rng = np.random.default_rng(7)
    a = rng.random((9, 9)) < 0.5
    machine.load(PF_RUN)
    k = 4
    P = machine.table(a)
    machine.call("colxor", 9, k, P)
    want = a ^ a[:, [k - 1]]          # every iteration sees the old column k
    assert np.array_equal(P.to_numpy(), want)
    Q = machine.table(a)
    machine.call("seqxor", 9, k, Q)   # the ordinary loop zeroes column k first
    want_seq = a.copy()
    for i in range(9):
        want_seq[:, i] ^= want_seq[:, k - 1]
    assert np.array_equal(Q.to_numpy(), want_seq)
    X = machine.slice(np.zeros(9, bool))
    machine.call("diag", 9, machine.table(a), X)
    assert np.array_equal(X.to_numpy(), np.diag(a))


# ---------------------------------------------------------------------------------------
# a failed load changes nothing

def test_failed_load_leaves_the_machine_unchanged():
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.load("proc a(var n: integer); begin n := 1 end;\nvar g: integer;")
    bad = ("proc a(var n: integer); begin n := 5 end;\n"
           "proc b(var n: integer); begin n := 2 end;\n"
           "var h: integer;\n"
           "proc c; begin y := 1 end;")
    with pytest.raises(StarTypeError):
        m.load(bad, "bad.star")
    assert m.call("a", 0) == (1,)                     # the old a, not the failed text's
    with pytest.raises(starvm.StarError, match="unknown routine 'b'"):
        m.call("b", 0)
    with pytest.raises(starvm.StarError):
        m.global_("h")
    assert m.global_("g") == 0
    # the names of the failed text are free: loading them again is no redeclaration
    m.load("proc b(var n: integer); begin n := 2 end;\nvar h: integer;\nproc c; begin end;")
    assert m.call("b", 0) == (2,)


def test_failed_load_by_syntax_error_or_failing_initialisation_changes_nothing():
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.load("proc a(var n: integer); begin n := 1 end;")
    with pytest.raises(starvm.StarSyntaxError):
        m.load("proc a(var n: integer); begin n := 3 end;\nproc b; begin")
    assert m.call("a", 0) == (1,)
    # checks pass, but the global table cannot be made: the load still fails as a whole
    with pytest.raises(starvm.StarRuntimeError):
        m.load("proc a(var n: integer); begin n := 7 end;\nvar g: integer; t: table(0 - 1, 2);", "f.star")
    assert m.call("a", 0) == (1,)
    with pytest.raises(starvm.StarError):
        m.global_("g")
    m.load("var g: integer; t: table(1, 2);")
    assert m.global_("g") == 0


def test_failed_run_does_not_define_a_main_block():
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.run("begin writeln('first') end.")
    with pytest.raises(StarTypeError):
        m.run("begin writeln('second'); x := 1 end.")
    assert m.out.getvalue() == "first\n"
