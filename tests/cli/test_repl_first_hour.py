"""The prompt as a first hour meets it (issue 37): a declaration without its closing ';',
:load / :run of names declared already (say :reset), :vars without the library routines."""
from __future__ import annotations

import pytest

from starvm.ui.repl import Session


@pytest.fixture
def session(backend):
    return Session(backend=backend)


@pytest.mark.parametrize("decl", ["var n: integer", "var n: integer;", "var P: table(4, 4)", "const n = 3",
                                  "var n: integer   // a comment after it", "var n, m: integer; X: slice"])
def test_a_declaration_needs_no_closing_semicolon(session, decl):
    assert session.feed(decl) == ""
    assert session.errors == 0


def test_declarations_without_semicolons_then_use(session):
    for text in ["var n: integer", "const k = 41", "proc bump(var a: integer); begin a := a + 1 end", "n := k",
                 "bump(n)"]:
        assert session.feed(text) == "", text
    assert session.feed("n") == "42\n"
    assert session.feed(":vars") == "n: integer = 42\nk: constant integer = 41\nproc bump(var a: integer)\n"


def test_an_unfinished_declaration_is_still_an_error(session):
    out = session.feed("var P: table(4,")
    assert session.errors == 1 and "error:" in out


def test_load_and_run_of_names_declared_already_suggest_reset(session, tmp_path):
    prog = tmp_path / "p.star"
    prog.write_text("var n: integer;\nbegin n := 7; writeln(n) end.\n")
    assert session.feed(f":run {prog}") == "7\n"
    for command in (":load", ":run"):
        out = session.feed(f"{command} {prog}")
        assert out.splitlines()[0] == f"{prog}:1:5: error: 'n' is declared twice"
        assert out.splitlines()[-1] == (f"hint: :reset forgets every name declared so far (a fresh machine); "
                                        f"then {command} {prog} again")
    session.feed(":reset")
    assert session.feed(f":run {prog}") == "7\n"


def test_reset_hint_is_added_to_the_case_hint(session, tmp_path):
    prog = tmp_path / "p.star"
    prog.write_text("var N: integer;\n")
    session.feed("var n: integer")
    out = session.feed(f":load {prog}")
    assert "names are case-insensitive" in out and f"; or :reset forgets every name" in out


def test_vars_lists_the_users_names_only(session):
    session.feed("var P: table(4, 4); X, Y: slice(P)")
    session.feed("X := COL(1, P); MATCH(P, X, ROW(1, P), Y); MIN(P, X, Y)")
    out = session.feed(":vars")
    assert out == "P: table 4 x 4\nX: slice of 4 bits = 0000\nY: slice of 4 bits = 0000\n"
    everything = session.feed(":vars --all")
    assert everything.startswith(out)
    assert "proc MATCH(T: table; X: slice; v: word; var Z: slice)" in everything
    assert "proc MIN(" in everything


def test_vars_with_only_library_routines_says_how_to_list_them():
    import numpy as np

    import starvm
    m = starvm.Machine(backend="numpy")
    m.call("WARSHALL-C", 3, m.table(np.eye(3, dtype=bool)))     # loads the library routine
    s = Session(m)
    loaded = len(m.env.routines)
    assert loaded >= 1
    assert s.feed(":vars") == (f"nothing declared yet ({loaded} library routine{'s' if loaded > 1 else ''} loaded: "
                               ":vars --all lists them)\n")
    assert "proc WARSHALL-C(n: integer; var P: table)\n" in s.feed(":vars --all")
    assert Session(backend="numpy").feed(":vars") == "nothing declared yet\n"


def test_vars_usage(session):
    assert session.feed(":vars everything") == "usage: :vars [--all]\n"
