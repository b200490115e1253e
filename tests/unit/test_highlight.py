"""The Pygments lexer for Star (starvm/ui/highlight.py) and its registration as a plug-in."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import subprocess_env

pytest.importorskip("pygments")
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, Punctuation, String  # noqa: E402

from starvm.ui.highlight import StarLexer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

SAMPLE = """\
program demo;
proc WARSHALL-C(n: integer; var P: table);
var X: Slice; i : integer;
begin
  I : = STEP(x) ; x := x Or COL(1, P);  { brace } (* paren *) /* c */ // line
  writeln('it''s ', 42 div 2 <> 3, TRUE)
end;
"""


def tokens(text):
    return [(t, v) for t, v in StarLexer().get_tokens(text) if v.strip()]


def test_sample_tokens():
    toks = tokens(SAMPLE)
    assert (Keyword.Declaration, "program") in toks
    assert (Name.Namespace, "demo") in toks
    assert (Keyword.Declaration, "proc") in toks
    assert (Name.Function, "WARSHALL-C") in toks          # a hyphenated routine name is one token
    assert (Keyword.Declaration, "var") in toks
    assert (Keyword.Type, "integer") in toks and (Keyword.Type, "Slice") in toks   # case-insensitive
    assert (Keyword.Type, "table") in toks
    assert (Keyword, "begin") in toks and (Keyword, "end") in toks
    assert (Name.Builtin, "STEP") in toks and (Name.Builtin, "COL") in toks
    assert (Name.Builtin, "writeln") in toks
    assert (Operator, ": =") in toks and (Operator, ":=") in toks and (Operator, "<>") in toks
    assert (Operator.Word, "Or") in toks and (Operator.Word, "div") in toks
    assert (Keyword.Constant, "TRUE") in toks
    assert (Number.Integer, "42") in toks
    assert (String.Escape, "''") in toks
    assert (Comment.Multiline, "{ brace }") in toks
    assert (Comment.Multiline, "(* paren *)") in toks
    assert (Comment.Multiline, "/* c */") in toks
    assert (Comment.Single, "// line") in toks
    assert (Punctuation, ";") in toks
    assert (Name, "x") in toks and (Name, "I") in toks
    assert not [t for t, _ in toks if t in Error]


def test_every_base_operation_is_a_builtin():
    from starvm.check.builtins import BUILTINS
    for b in BUILTINS.values():
        assert tokens(b.name.lower() + "(x)")[0] == (Name.Builtin, b.name.lower())
    # a name that merely starts with a keyword or a built-in is a plain name
    assert tokens("ending")[0] == (Name, "ending")
    assert tokens("COLx")[0] == (Name, "COLx")


def test_multiline_comments_and_strings():
    toks = tokens("{ two\nlines } (* and\nthese *) /* and\nthose */ x")
    assert [t for t, _ in toks] == [Comment.Multiline] * 3 + [Name]
    toks = tokens("writeln('{ not a comment } // nor this')")
    assert all(t not in Comment for t, _ in toks)


STAR_FILES = sorted([*ROOT.glob("programs/*.star"), *ROOT.glob("stdlib/*.star"), *ROOT.glob("tests/star/*.star")])
# the mistake corpus holds lexical errors on purpose (an unterminated comment or string, '[')
STAR_FILES = [p for p in STAR_FILES if not (p.name.startswith("mistake_") and any(
    w in p.with_suffix(".error").read_text() for w in ("unterminated", "unexpected character")))]


@pytest.mark.parametrize("path", STAR_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_error_tokens(path):
    text = path.read_text()
    toks = list(StarLexer().get_tokens(text))
    bad = [v for t, v in toks if t in Error]
    assert not bad, f"{path.name}: error tokens {bad[:10]}"
    assert "".join(v for _, v in toks).rstrip("\n") == text.rstrip("\n")


def test_lexer_metadata():
    assert StarLexer.aliases == ["star"] and "*.star" in StarLexer.filenames


def test_entry_point_registration_makes_pygmentize_find_star(tmp_path):
    """pyproject declares the plug-in; a distribution carrying that entry point (as the
    installed wheel does) makes `pygmentize -l star` and get_lexer_by_name('star') work."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    eps = meta["project"]["entry-points"]["pygments.lexers"]
    assert eps == {"star": "starvm.ui.highlight:StarLexer"}
    # A stand-in distribution with the same entry points, found by importlib.metadata.
    info = tmp_path / "starvm_lexer_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: starvm-lexer-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[pygments.lexers]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()))
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    r = subprocess.run([sys.executable, "-m", "pygments", "-l", "star", "-f", "raw",
                        str(ROOT / "programs" / "warshall_c.star")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Token.Name.Function\t'WARSHALL-C'" in r.stdout
    assert "Token.Error" not in r.stdout
    probe = ("from pygments.lexers import get_lexer_by_name, get_lexer_for_filename;"
             "print(get_lexer_by_name('star').name, get_lexer_for_filename('x.star').name)")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.split() == ["Star", "Star"], r.stderr
