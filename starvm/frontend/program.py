"""A Star text parsed once (``starvm.compile``): what ``Machine.compile`` accepts instead of a
text. Loading and running it on a machine is ``starvm.api.Program``'s, so that the machine can
recognise a parsed program without importing the embedding API."""
from __future__ import annotations

import copy

from . import ast as A
from .parser import parse


class ParsedProgram:
    """A Star text parsed once. ``source``, ``filename``; ``has_main``; ``routines`` and
    ``globals``: the names it declares."""

    def __init__(self, ast: A.Program, source: str, filename: str):
        self._ast = ast
        self.source = source
        self.filename = filename

    @property
    def ast(self) -> A.Program:
        """A fresh copy of the parsed program (the checker annotates the tree it is given)."""
        return copy.deepcopy(self._ast)

    @property
    def has_main(self) -> bool:
        return self._ast.main is not None

    @property
    def routines(self) -> list[str]:
        return [r.display for r in self._ast.routines]

    @property
    def globals(self) -> list[str]:
        return [g.display for g in self._ast.globals]

    def __repr__(self) -> str:
        return f"<starvm.Program {self.filename}: {len(self._ast.routines)} routines, " \
               f"{len(self._ast.globals)} globals{', main block' if self.has_main else ''}>"


def program_ast(text, filename: str) -> tuple[A.Program, str]:
    """What ``Machine.compile`` parses: a text, or a parsed program (a copy of its tree, no parsing)."""
    if isinstance(text, ParsedProgram):
        return text.ast, text.filename
    return parse(text, filename), filename
