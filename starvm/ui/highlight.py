"""A Pygments lexer for Star, the language of the STAR-machine.

Registered under the ``pygments.lexers`` entry point (``pyproject.toml``), so after
``pip install`` it is found by name::

    pygmentize -l star programs/warshall_c.star
    pygments.lexers.get_lexer_by_name("star")

The REPL (``starvm/ui/repl.py``) uses it to colour the input as it is typed.
"""
from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Text, Whitespace)

from ..check.builtins import BUILTINS

__all__ = ["StarLexer", "KEYWORDS", "TYPES", "WORD_OPERATORS", "CONSTANTS", "BUILTIN_NAMES"]

# The reserved words of grammar/star.lark, grouped as they are coloured.
KEYWORDS = ("program", "var", "const", "proc", "procedure", "function", "begin", "end", "if", "then",
            "else", "while", "do", "repeat", "until", "for", "to", "downto", "parallel")
TYPES = ("integer", "boolean", "slice", "word", "table")
WORD_OPERATORS = ("and", "or", "not", "xor", "div", "mod")
CONSTANTS = ("true", "false")
# The base operations of spec §3 and the other built-ins, as the checker knows them.
BUILTIN_NAMES = tuple(b.name for b in BUILTINS.values())

_IDENT_END = r"(?![A-Za-z0-9_])"


class StarLexer(RegexLexer):
    """Star: keywords and names are case-insensitive; comments are ``{ }``, ``(* *)``,
    ``/* */`` and ``//``; strings are single-quoted with ``''`` for a quote."""

    name = "Star"
    aliases = ["star"]
    filenames = ["*.star"]
    mimetypes = ["text/x-star"]
    url = "https://github.com/"   # the project has no public home yet
    flags = re.IGNORECASE | re.MULTILINE | re.DOTALL

    tokens = {
        "root": [
            (r"[ \t\f\r\n]+", Whitespace),
            (r"/\*.*?\*/", Comment.Multiline),
            (r"\(\*.*?\*\)", Comment.Multiline),
            (r"\{[^}]*\}", Comment.Multiline),
            (r"//[^\n]*", Comment.Single),
            (r"'", String.Single, "string"),
            # a routine header: the name (which may contain hyphens) is a function name
            (r"(proc|procedure|function)(\s+)([A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z_][A-Za-z0-9_]*)*)",
             bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (r"(program)(\s+)([A-Za-z_][A-Za-z0-9_]*)", bygroups(Keyword.Declaration, Whitespace, Name.Namespace)),
            (words(("var",), suffix=_IDENT_END), Keyword.Declaration),
            (words(KEYWORDS, suffix=_IDENT_END), Keyword),
            (words(TYPES, suffix=_IDENT_END), Keyword.Type),
            (words(WORD_OPERATORS, suffix=_IDENT_END), Operator.Word),
            (words(CONSTANTS, suffix=_IDENT_END), Keyword.Constant),
            (words(BUILTIN_NAMES, suffix=_IDENT_END), Name.Builtin),
            (r"[A-Za-z_][A-Za-z0-9_]*", Name),
            (r"[0-9]+", Number.Integer),
            (r":[ \t]*=", Operator),            # ":=", also ": =" as in the paper's listings
            (r"<>|<=|>=|[=<>+\-*]", Operator),
            (r"[();,:.\[\]]", Punctuation),
        ],
        "string": [
            (r"''", String.Escape),
            (r"[^'\n]+", String.Single),
            (r"'", String.Single, "#pop"),
            (r"\n", Text, "#pop"),               # an unterminated string ends at the line end
        ],
    }
