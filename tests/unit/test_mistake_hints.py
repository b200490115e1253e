"""Typical student mistakes get a one-line hint, at the line of the mistake (issue 21).
The corpus tests/star/mistake_*.star checks the positions; this file checks the hints."""
from __future__ import annotations

import io

import pytest

import starvm
from starvm.ui.repl import Session


def error_of(src: str, backend: str = "numpy") -> starvm.StarError:
    with pytest.raises(starvm.StarError) as info:
        m = starvm.Machine(backend=backend)
        m.run(src, "lab.star")
    return info.value


def test_procedure_used_as_a_function_hints_at_a_call_statement():
    err = error_of("var T: table(4, 4); X, Z: slice(T);\nbegin\n  SET(X);\n  Z := MIN(T, X, Z)\nend.")
    assert (err.line, err.column) == (4, 8)
    assert "call MIN as a statement" in err.hint and "'var' parameters" in err.hint


def test_bit_as_a_condition_hints_at_comparing_with_1():
    err = error_of("var v: word; i: integer;\nbegin\n  v := BITS('1011'); i := 2;\n"
                   "  if v(i) then writeln(i)\nend.")
    assert (err.line, err.column) == (4, 6)
    assert err.hint == "a bit reads as the integer 0 or 1: write v(i) = 1"


def test_bare_value_after_a_statement_hints_at_writeln():
    err = error_of("var T: table(4, 4); X, Z: slice(T);\nbegin\n  SET(X);\n  MIN(T, X, Z); Z\nend.")
    assert (err.line, err.column) == (4, 17)
    assert "writeln(Z)" in err.hint and ":=" in err.hint


def test_bare_expression_statement():
    err = error_of("var x: integer;\nbegin\n  x := 1;\n  x + 1;\nend.")
    assert (err.line, err.column, err.message) == (4, 3, "a statement cannot be just an expression")
    assert "writeln" in err.hint


def test_library_argument_of_the_wrong_width_is_reported_at_the_call(backend):
    src = ("var T: table(4, 8); X: slice(T); w: word;\nbegin\n  w := BITS('101');\n  SET(X);\n"
           "  MATCH(T, X, w, X);\n  writeln(X)\nend.")
    err = error_of(src, backend)
    assert (err.filename, err.line, err.column) == ("lab.star", 5, 3), err.render()
    assert "MATCH's argument 'v'" in err.message and "8 bits, got 3" in err.message
    # the stack still shows where the library checks it
    assert err.stack[-1].routine == "MATCH" and err.stack[-1].loc.filename == "stdlib/search.star"


def test_prompt_says_that_a_statement_equals_sign_assigned():
    s = Session(backend="numpy", out=io.StringIO())
    assert s.feed("var x, y: integer;") == ""
    assert s.feed("x := 1; y := 2") == ""
    out = s.feed("x = y")
    assert out.startswith("note: '=' as a statement assigns") and "writeln(x = ...)" in out
    assert s.feed("x") == "2\n"                    # it did assign
    assert s.feed("writeln(x = y)") == "true\n"   # and this is how to compare
    assert s.feed("x := 3") == ""                 # ':=' says nothing


@pytest.mark.parametrize("data", [[[0, 2], [1, 0]], [[5]], [[1, 0], [0, -1]]])
def test_machine_table_refuses_numbers_and_names_the_helper(backend, data):
    import numpy as np
    m = starvm.Machine(backend=backend)
    with pytest.raises(ValueError, match=r"Machine\.table_from_ints\(values, width\)"):
        m.table(np.array(data))
    m.run("var T: table(2, 2); begin end.", "t.star")
    with pytest.raises(ValueError, match="table_from_ints"):
        m.globals["T"] = np.array([[0, 3], [1, 0]])


def test_machine_table_takes_0_and_1_of_any_dtype(backend):
    import numpy as np
    m = starvm.Machine(backend=backend)
    for dtype in (np.int8, np.int64, np.float64, bool):
        t = m.table(np.array([[1, 0, 1], [0, 0, 1]], dtype=dtype))
        assert t.to_ints().tolist() == [5, 1]
    assert m.table(np.zeros((0, 3), dtype=np.int64)).to_ints().tolist() == []


@pytest.mark.parametrize("cond, hint_part", [
    ("not n > 0", "write not (x > 0)"),
    ("S = 1", "SOME(X) says whether X has a 1"),
    ("w = 5", "NUMOF(w) reads a word as a number"),
])
def test_comparison_mistakes_hint(cond, hint_part):
    err = error_of(f"var n: integer; S: slice; w: word;\nbegin\n  n := 1; S := BITS('01'); w := BITS('01');\n"
                   f"  if {cond} then writeln(1)\nend.")
    assert err.line == 4 and hint_part in err.hint


def test_declared_twice_in_another_case_says_names_are_case_insensitive():
    err = error_of("var x: integer; X: slice;\nbegin\n  x := 1\nend.")
    assert (err.line, err.column) == (1, 17) and "'x' and 'X' are one name" in err.hint
    err = error_of("var x: integer; x: slice;\nbegin\n  x := 1\nend.")
    assert err.hint is None


def test_the_mistake_corpus_is_a_lab_worth():
    """tests/star/mistake_*.star: at least 30 typical mistakes, each with its expected report
    (conftest runs each on every backend and compares the first line, position included)."""
    import re
    from pathlib import Path
    star = Path(__file__).resolve().parents[1] / "star"
    files = sorted(star.glob("mistake_*.star"))
    assert len(files) >= 30
    for f in files:
        first = f.with_suffix(".error").read_text().strip()
        assert re.match(rf"{re.escape(f.name)}:\d+:\d+: error: ", first), first
