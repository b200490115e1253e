"""The Star front end (spec §4): what the parser accepts, the AST it builds, where it says
things went wrong."""
from __future__ import annotations

import io

import pytest

import starvm
from starvm.errors import StarSyntaxError
from starvm.frontend import ast as A
from starvm.frontend.parser import fold, parse


def walk(node):
    """Every AST node under node, depth first."""
    if isinstance(node, (list, tuple)):
        for x in node:
            yield from walk(x)
        return
    if not isinstance(node, A.Node):
        return
    yield node
    for v in vars(node).values():
        if isinstance(v, (A.Node, list, tuple)):
            yield from walk(v)


def nodes(tree, cls):
    return [n for n in walk(tree) if isinstance(n, cls)]


def main_stmts(src: str):
    return parse(src, "t.star").main.body


def one_stmt(stmt_src: str):
    body = main_stmts(f"begin {stmt_src} end.")
    assert len(body) == 1, body
    return body[0]


def expr(expr_src: str):
    s = one_stmt(f"x := {expr_src}")
    assert isinstance(s, A.Assign)
    return s.value


def output(src: str) -> str:
    out = io.StringIO()
    starvm.Machine(backend="numpy", out=out).run(src, "t.star")
    return out.getvalue()


# ---------------------------------------------------------------------------------------
# positions

POS_SRC = """\
program demo;
proc Foo(n: integer; var P: table);
var X: slice(P);
    i: integer;
begin
  X := COL(n, P);
  if SOME(X) then
    i := STEP(X)
end;
begin
  writeln('x', 1 + 2)
end.
"""


def test_positions_of_declarations():
    prog = parse(POS_SRC, "pos.star")
    assert prog.name == "demo"
    (r,) = prog.routines
    assert (r.loc.line, r.loc.column) == (2, 6)          # the routine's name
    assert r.loc.filename == "pos.star"
    n, p = r.params
    assert (n.loc.line, n.loc.column) == (2, 10)
    assert (p.loc.line, p.loc.column) == (2, 26)
    x, i = r.locals
    assert (x.loc.line, x.loc.column) == (3, 5)
    assert (x.type.of.loc.line, x.type.of.loc.column) == (3, 14)
    assert (i.loc.line, i.loc.column) == (4, 5)


def test_positions_of_statements_and_expressions():
    prog = parse(POS_SRC, "pos.star")
    asg, if_ = prog.routines[0].body.body
    assert isinstance(asg, A.Assign)
    assert (asg.loc.line, asg.target.loc.line, asg.target.loc.column) == (6, 6, 3)
    col = asg.value
    assert isinstance(col, A.Apply) and col.func.name == "col"
    assert (col.loc.line, col.loc.column) == (6, 8)
    assert [(a.loc.line, a.loc.column) for a in col.args] == [(6, 12), (6, 15)]
    assert isinstance(if_, A.If)
    assert (if_.loc.line, if_.loc.column) == (7, 3)
    assert (if_.cond.loc.line, if_.cond.loc.column) == (7, 6)
    assert (if_.then.loc.line, if_.then.target.loc.column) == (8, 5)
    (call,) = prog.main.body
    assert isinstance(call, A.CallStmt)
    assert (call.loc.line, call.loc.column) == (11, 3)
    s, plus = call.args
    assert (s.loc.line, s.loc.column) == (11, 11)
    assert isinstance(plus, A.BinOp) and plus.op == "+"
    assert (plus.loc.line, plus.loc.column) == (11, 18)   # a binary operation sits at its operator
    assert (plus.left.loc.column, plus.right.loc.column) == (16, 20)


def test_positions_of_loops():
    src = "begin\n  for i := 1 to 3 do ;\n  parallel for i := 1 to 3 do ;\n  while b do ;\n  repeat until b\nend."
    f, pf, w, r = main_stmts(src)
    assert (f.loc.line, f.loc.column) == (2, 3)
    assert (f.var.loc.line, f.var.loc.column) == (2, 7)
    assert (pf.loc.line, pf.loc.column) == (3, 3)
    assert (pf.var.loc.line, pf.var.loc.column) == (3, 16)
    assert (w.loc.line, w.loc.column) == (4, 3)
    assert (r.loc.line, r.loc.column) == (5, 3)


# ---------------------------------------------------------------------------------------
# case, comments, declarations

def test_keywords_and_names_are_case_insensitive():
    src = """PROGRAM Demo;
    PROCEDURE Foo(VAR N: Integer); BEGIN N := N + 1 END;
    Var T: Table(2, 2); S: Slice(T); W: WORD(t); B: Boolean; K: INTEGER;
    Begin
      K := 0; foo(k); FOO(K);
      If TRUE And Not False Then WriteLn(k) Else writeln(0);
      S := COL(1, t); w := Row(1, T);
      WRITELN(S, W, b)
    End."""
    prog = parse(src)
    assert [d.name for d in prog.globals] == ["t", "s", "w", "b", "k"]
    assert [d.display for d in prog.globals] == ["T", "S", "W", "B", "K"]
    assert [d.type.kind for d in prog.globals] == ["table", "slice", "word", "boolean", "integer"]
    assert prog.globals[1].type.of.name == "t"
    assert prog.routines[0].name == "foo" and prog.routines[0].display == "Foo"
    assert output(src) == "2\n0000false\n"


@pytest.mark.parametrize("comment", [
    "/* a C comment */",
    "/* a C comment\n   over two lines; end. */",
    "{ a Pascal comment }",
    "{ a Pascal comment\n  over two lines (* *) }",
    "(* a Pascal comment *)",
    "(* a Pascal comment\n   over two lines { } *)",
    "// a line comment\n",
    "// a line comment with end. begin ;\n",
])
def test_comment_styles(comment):
    src = f"{comment}\nvar n: integer;{comment}\nbegin {comment} n := {comment} 1 + {comment} 2; {comment}\n writeln(n) end.{comment}"
    assert output(src) == "3\n"


def test_comment_markers_inside_strings_are_text():
    assert output("begin writeln('{ /* (* // *) */ }') end.") == "{ /* (* // *) */ }\n"


def test_paren_star_is_a_comment_but_paren_space_star_is_not():
    assert output("var n: integer; begin n := ( 2 * 3); writeln(n) (*!*) end.") == "6\n"


def test_proc_and_procedure_and_function():
    prog = parse("""
        proc a; begin end;
        procedure b(); begin end;
        proc c(x, y: integer; var P, Q: table; b: boolean; var s: slice; w: word);
        begin end;
        function f(x: integer): integer; begin f := x end;
        function g: boolean; begin g := true end;
        function h(T: table): slice(T); begin h := COL(1, T) end;
        function v(T: table): Word; begin v := ROW(1, T) end
    """)
    a, b, c, f, g, h, v = prog.routines
    assert [r.name for r in prog.routines] == ["a", "b", "c", "f", "g", "h", "v"]
    assert a.params == [] and b.params == [] and not a.is_function
    assert [(p.name, p.type.kind, p.by_ref) for p in c.params] == [
        ("x", "integer", False), ("y", "integer", False), ("p", "table", True), ("q", "table", True),
        ("b", "boolean", False), ("s", "slice", True), ("w", "word", False)]
    assert f.is_function and f.result.kind == "integer"
    assert g.result.kind == "boolean" and g.params == []
    assert h.result.kind == "slice" and h.result.of.name == "t"
    assert v.result.kind == "word" and v.result.of is None
    assert prog.main is None


def test_local_table_and_vector_types():
    (r,) = parse("""
        proc p(n: integer; T: table);
        var L: table(n, 2 * n + 1); a: slice; b: slice(T); c: word; d: word(L);
        begin end;""").routines
    L, a, b, c, d = r.locals
    rows, cols = L.type.dims
    assert L.type.kind == "table"
    assert isinstance(rows, A.Name) and rows.name == "n"
    assert isinstance(cols, A.BinOp) and cols.op == "+"
    assert (a.type.kind, a.type.of) == ("slice", None)
    assert (b.type.kind, b.type.of.name) == ("slice", "t")
    assert (c.type.kind, c.type.of) == ("word", None)
    assert (d.type.kind, d.type.of.name) == ("word", "l")


def test_local_table_runs():
    src = """
    proc p(n: integer);
    var L: table(n, n + 1); s: slice(L); w: word(L);
    begin writeln(NROWS(L), ' ', NCOLS(L), ' ', LEN(s), ' ', LEN(w)) end;
    begin p(3) end."""
    assert output(src) == "3 4 3 4\n"


# ---------------------------------------------------------------------------------------
# hyphenated names

def test_hyphenated_procedure_names():
    assert fold("WARSHALL-C") == fold("warshall_c") == "warshall_c"
    prog = parse("""
        proc WARSHALL-C(n: integer); begin end;
        proc WARSHALL - adapt (n : integer); begin end;
        begin
          WARSHALL-C(1); WARSHALL_C(2); warshall - c(3);
          WARSHALL - adapt(4); Warshall_Adapt(5)
        end.""")
    c, adapt = prog.routines
    assert (c.name, c.display) == ("warshall_c", "WARSHALL-C")
    assert (adapt.name, adapt.display) == ("warshall_adapt", "WARSHALL-adapt")
    calls = prog.main.body
    assert [s.name for s in calls] == ["warshall_c"] * 3 + ["warshall_adapt"] * 2
    assert all(isinstance(s, A.CallStmt) for s in calls)
    assert calls[3].display == "WARSHALL-adapt"


def test_hyphenated_names_call_the_same_routine():
    src = """
        proc count-up(var n: integer); begin n := n + 1 end;
        var k: integer;
        begin k := 0; count-up(k); COUNT_UP(k); count - Up(k); writeln(k) end."""
    assert output(src) == "3\n"


def test_minus_in_an_expression_is_still_subtraction():
    e = expr("a - b")
    assert isinstance(e, A.BinOp) and e.op == "-"
    assert output("var a, b: integer; begin a := 5; b := 3; a := a - b; writeln(a - 1) end.") == "1\n"


# ---------------------------------------------------------------------------------------
# statements

def test_statement_level_equals_is_assignment():
    s = one_stmt("v=v or w")
    assert isinstance(s, A.Assign)
    assert s.target.name == "v"
    assert isinstance(s.value, A.BinOp) and s.value.op == "or"
    s = one_stmt("i = STEP (x)")
    assert isinstance(s, A.Assign) and isinstance(s.value, A.Apply)
    s = one_stmt("COL(i, P) = V")
    assert isinstance(s, A.Assign) and isinstance(s.target, A.Apply)


def test_equals_inside_expressions_is_comparison():
    s = one_stmt("if v = w then x = 1")
    assert isinstance(s.cond, A.BinOp) and s.cond.op == "="
    assert isinstance(s.then, A.Assign)
    e = expr("a = b")
    assert isinstance(e, A.BinOp) and e.op == "="


@pytest.mark.parametrize("op", [":=", ": =", ":  =", ":\t="])
def test_assign_token_may_contain_blanks(op):
    s = one_stmt(f"i {op} STEP(X)")
    assert isinstance(s, A.Assign) and s.target.name == "i"
    s = one_stmt(f"COL ( i , P ) {op}V")
    assert isinstance(s, A.Assign) and s.target.func.name == "col"
    s = parse(f"begin for k{op}1 to 2 do ; end.").main.body[0]
    assert isinstance(s, A.For)


def test_bit_access():
    e = expr("X(i)")
    assert isinstance(e, A.Apply) and e.func.name == "x" and [a.name for a in e.args] == ["i"]
    e = expr("COL(i,P)(k)")
    assert isinstance(e, A.Apply) and isinstance(e.func, A.Apply)
    assert e.func.func.name == "col" and e.args[0].name == "k"
    s = one_stmt("X(i) := 1")
    assert isinstance(s, A.Assign) and isinstance(s.target, A.Apply) and s.target.func.name == "x"
    src = """var T: table(3, 3); X: slice(T);
        begin X := BITS('010'); X(3) := 1; COL(2, T) := X;
        writeln(X(1), X(2), X(3), ' ', COL(2, T)(3), ' ', COL(1, T)(3)) end."""
    assert output(src) == "011 1 0\n"


def test_parallel_for_downto_repeat():
    pf, f, r = main_stmts("""begin
        parallel for i := 1 to n do COL(i, P) := X;
        for i := n downto 1 do ;
        repeat i := i - 1; j := j + 1 until i = 0
    end.""")
    assert isinstance(pf, A.For) and pf.parallel and not pf.downto
    assert isinstance(pf.body, A.Assign)
    assert isinstance(f, A.For) and f.downto and not f.parallel and f.body is None
    assert isinstance(r, A.Repeat) and len(r.body) == 2
    assert isinstance(r.cond, A.BinOp) and r.cond.op == "="
    src = """var i, j: integer;
        begin for i := 3 downto 1 do write(i); writeln;
        i := 0; repeat i := i + 2 until i > 5; writeln(i);
        j := 0; for i := 1 downto 2 do j := 1; writeln(j) end."""
    assert output(src) == "321\n6\n0\n"


def test_writeln_and_write_with_and_without_arguments():
    a, b, c, d, e = main_stmts("begin writeln; writeln(); write('a', 1); write; WriteLn(x, 'y') end.")
    assert all(isinstance(s, A.CallStmt) for s in (a, b, c, d, e))
    assert [s.name for s in (a, b, c, d, e)] == ["writeln", "writeln", "write", "write", "writeln"]
    assert [len(s.args) for s in (a, b, c, d, e)] == [0, 0, 2, 0, 2]
    assert output("begin write('a'); write; writeln; writeln(); write(1, 'b'); writeln('c') end.") == "a\n\n1bc\n"


@pytest.mark.parametrize("lit, value", [
    ("'abc'", "abc"), ("''", ""), ("'it''s'", "it's"), ("''''", "'"), ("'a''''b'", "a''b"),
    ("' x ; end. '", " x ; end. "),
])
def test_string_literals(lit, value):
    (arg,) = one_stmt(f"writeln({lit})").args
    assert isinstance(arg, A.Str) and arg.value == value
    assert output(f"begin writeln({lit}) end.") == value + "\n"


def test_operator_precedence_is_pascal():
    e = expr("a + b * c")
    assert e.op == "+" and e.right.op == "*"
    e = expr("not a and b")
    assert e.op == "and" and isinstance(e.left, A.Unary) and e.left.op == "not"
    e = expr("a or b and c")
    assert e.op == "or" and e.right.op == "and"
    e = expr("(a = 1) and (b < 2)")
    assert e.op == "and" and e.left.op == "=" and e.right.op == "<"
    e = expr("-a mod 3")
    assert e.op in ("mod", "-")
    assert output("var a: integer; begin a := 2 + 3 * 4 - 10 div 3; writeln(a, ' ', 17 mod 5, ' ', -(2 - 5)) end.") == "11 2 3\n"


def test_empty_statements_and_dangling_else():
    body = main_stmts("begin ; ; if a then if b then x := 1 else x := 2; end.")
    (if_,) = body
    assert if_.orelse is None
    assert isinstance(if_.then, A.If) and if_.then.orelse is not None


def test_program_header_and_main_block_are_optional():
    assert parse("").routines == [] and parse("").main is None
    prog = parse("proc p; begin end;")
    assert prog.name is None and prog.main is None
    prog = parse("program x; begin end.")
    assert prog.name == "x" and prog.main is not None and prog.main.body == []


# ---------------------------------------------------------------------------------------
# syntax errors

def syntax_error(src: str, filename: str = "bad.star") -> StarSyntaxError:
    with pytest.raises(StarSyntaxError) as info:
        parse(src, filename)
    return info.value


def assert_rendered(err: StarSyntaxError, filename: str, line: int, col: int, message_part: str):
    assert (err.filename, err.line, err.column) == (filename, line, col), err.render()
    assert message_part in err.message
    lines = err.render().splitlines()
    assert lines[0] == f"{filename}:{line}:{col}: error: {err.message}"
    src_line = err.loc.source.line(line)
    assert lines[1].endswith(src_line.expandtabs(1))
    caret = lines[2].index("^")
    text_start = len(lines[1]) - len(src_line.expandtabs(1))
    assert lines[2][:caret].strip() == "|"
    assert caret - text_start == col - 1
    return lines


def test_unterminated_string():
    err = syntax_error("begin\n  writeln('abc);\nend.\n")
    lines = assert_rendered(err, "bad.star", 2, 11, "unterminated string")
    assert lines[1].endswith("  writeln('abc);")
    assert lines[2].endswith("^")


@pytest.mark.parametrize("opener", ["/*", "(*", "{"])
def test_unterminated_comment(opener):
    err = syntax_error(f"begin\n  x := 1; {opener} never closed\n  y := 2\nend.\n")
    assert_rendered(err, "bad.star", 2, 11, "unterminated comment")


@pytest.mark.parametrize("src, col", [
    ("begin\n  x := (* never closed\nend.\n", 8),       # where '(' could open an expression
    ("begin\n  writeln(1, (* never closed\nend.\n", 14),
    ("proc p(* never closed\n", 7),
])
def test_unterminated_paren_star_comment_where_a_parenthesis_fits(src, col):
    err = syntax_error(src)
    line = 1 if src.startswith("proc") else 2
    assert_rendered(err, "bad.star", line, col, "unterminated comment")


def test_paren_then_star_is_not_a_comment():
    err = syntax_error("begin\n  x := ( * 2)\nend.")
    assert_rendered(err, "bad.star", 2, 10, "unexpected '*'")


def test_crlf_line_endings():
    assert output("var n: integer;\r\nbegin\r\n  n := 2;\r\n  writeln(n)\r\nend.\r\n") == "2\n"
    err = syntax_error("begin\r\n  n := ;\r\nend.\r\n")
    lines = assert_rendered(err, "bad.star", 2, 8, "unexpected ';'")
    assert "\r" not in "".join(lines)


def test_unexpected_token():
    err = syntax_error("var n: integer;\nbegin\n  n := ;\nend.\n")
    assert_rendered(err, "bad.star", 3, 8, "unexpected ';'")
    assert "expected" in err.message.split("unexpected ';'", 1)[1]


def test_unexpected_token_missing_semicolon():
    err = syntax_error("proc p(n: integer)\nbegin end;\n")
    # reported at the end of the header that lacks it, not at the next line's 'begin'
    assert_rendered(err, "bad.star", 1, 19, "missing ';'")


def test_unexpected_string_token():
    err = syntax_error("begin\n  writeln('a' 'b')\nend.")
    assert_rendered(err, "bad.star", 2, 15, "unexpected string 'b'")


def test_unexpected_character():
    err = syntax_error("begin x := 3 $ 4 end.")
    assert_rendered(err, "bad.star", 1, 14, "unexpected character '$'")


def test_trailing_text_after_the_program():
    err = syntax_error("begin end.\nextra")
    assert_rendered(err, "bad.star", 2, 1, "unexpected 'extra'")
    assert "end of file" in err.message


@pytest.mark.parametrize("src, line, col", [
    ("proc p(", 1, 8),
])
def test_unexpected_end_of_file(src, line, col):
    err = syntax_error(src)
    assert_rendered(err, "bad.star", line, col, "unexpected end of file")


def test_missing_final_dot():
    err = syntax_error("begin x := 1 end")
    assert_rendered(err, "bad.star", 1, 17, "missing '.' after the program's final 'end'")


def test_semicolon_before_else_is_reported_at_the_semicolon():
    err = syntax_error("begin\n  if x > 0 then x := 1;\n  else x := 2\nend.")
    assert_rendered(err, "bad.star", 2, 23, "';' before 'else' ends the 'if' statement")


@pytest.mark.parametrize("src, line, col, word", [
    ("begin\n  x := 1;\n", 1, 1, "'begin'"),
    ("proc p(n: integer);\nbegin\n  if n > 0 then\n", 2, 1, "'begin' of p"),   # a routine's body
    ("function f: integer;\nvar k: integer;\nbegin\n  f := 1\n\nvar y: integer;\nbegin end.", 3, 1, "'begin' of f"),
    ("begin\n  repeat\n    x := 1\nend.", 2, 3, "'repeat'"),
])
def test_end_of_file_inside_a_block_names_where_it_opened(src, line, col, word):
    err = syntax_error(src)
    assert_rendered(err, "bad.star", line, col, f"{word} at line {line} is never closed")


def test_missing_end_in_a_routine_names_its_begin_not_the_final_dot():
    src = ("proc P(var x: integer);\nbegin\n  if x > 0 then\n  begin\n    x := x - 1;\nend;\n\n"
           "var y: integer;\nbegin\n  y := 3;\n  P(y);\n  writeln(y)\nend.\n")
    err = syntax_error(src)
    # the 'end' at line 6 is indented as the routine's 'begin': the inner 'begin' lacks its own
    assert_rendered(err, "bad.star", 4, 3, "'begin' at line 4 is never closed")
    assert "line 8" in err.message


def test_missing_semicolon_at_the_end_of_the_line_that_lacks_it():
    err = syntax_error("var x, y: integer;\nbegin\n  x := 1   // one\n  y := 2\nend.")
    assert_rendered(err, "bad.star", 3, 9, "missing ';' at the end of this line")
    err = syntax_error("begin x := 1 y := 2 end.")
    assert_rendered(err, "bad.star", 1, 14, "missing ';' before 'y'")


def test_comparisons_joined_by_and_hint_at_parentheses():
    err = syntax_error("var a, b: integer;\nbegin\n  if a > 0 and b > 0 then writeln(1)\nend.")
    assert_rendered(err, "bad.star", 3, 18, "two comparisons joined by 'and' need parentheses")
    assert "(a > 0) and (b > 0)" in err.hint


def test_caret_lines_up_after_tabs():
    err = syntax_error("begin\n\t\tx := ;\nend.")
    assert_rendered(err, "bad.star", 2, 8, "unexpected ';'")


def test_assignment_to_a_hyphenated_name_is_a_syntax_error():
    err = syntax_error("proc a-b; begin end;\nbegin\n  a-b := 1\nend.")
    assert_rendered(err, "bad.star", 3, 5, "hyphenated name")


def test_load_reports_syntax_errors_under_the_file_name():
    m = starvm.Machine(backend="numpy")
    with pytest.raises(starvm.StarSyntaxError) as info:
        m.load("begin\n  writeln(1\nend.", "prog.star")
    assert isinstance(info.value, starvm.StarError)
    assert (info.value.filename, info.value.line, info.value.column) == ("prog.star", 3, 1)
    assert info.value.render().startswith("prog.star:3:1: error: unexpected 'end'")


def test_utf8_byte_order_mark_is_ignored():
    prog = parse("\ufeffvar x: integer;\nbegin x := 1 end.", "bom.star")
    assert prog is not None


def test_utf8_byte_order_mark_keeps_error_columns():
    with pytest.raises(StarSyntaxError) as e:
        parse("\ufeffvar x integer;\nbegin end.", "bom.star")
    assert (e.value.loc.line, e.value.loc.column) == (1, 7)


@pytest.mark.parametrize("src, line, col, message", [
    ("var x: integer;\nbegin\n  while x > 0\n  begin x := 1 end\nend.", 3, 14, "missing 'do' at the end of this line"),
    ("var x: integer;\nbegin\n  if x > 0\n    x := 1\nend.", 3, 11, "missing 'then' at the end of this line"),
    ("var x: integer\n  y: slice;\nbegin end.", 1, 15, "missing ';' at the end of this line"),
])
def test_a_left_out_word_is_named_at_the_end_of_its_line(src, line, col, message):
    assert_rendered(syntax_error(src), "bad.star", line, col, message)
