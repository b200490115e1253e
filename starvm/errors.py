"""One error base class for everything a Star program can get wrong.

Every error carries a source location; ``render()`` prints it the way compilers do::

    prog.star:12:7: error: row index 1001 out of range 1..1000
       12 |       v := ROW(i, P);
          |            ^
    Star call stack (innermost last):
      main block at prog.star:20:3
      WARSHALL at prog.star:12:12
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A Star source text and the name it is reported under."""
    filename: str
    text: str

    def line(self, lineno: int) -> str:
        lines = self.text.split("\n")   # as the parser counts lines (not at \f, \v, ...)
        return lines[lineno - 1].rstrip("\r") if 1 <= lineno <= len(lines) else ""


@dataclass(frozen=True)
class Loc:
    """A position in a Star source: 1-based line and column."""
    source: Source
    line: int
    column: int
    end_column: int | None = None  # exclusive; None = one character

    def __repr__(self) -> str:
        return f"Loc({self})"

    @property
    def filename(self) -> str:
        return self.source.filename

    def __str__(self) -> str:
        return f"{self.source.filename}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Frame:
    """One entry of the Star call stack: the routine and where it was executing."""
    routine: str
    loc: Loc | None


class StarError(Exception):
    """Base of all errors reported against Star source (syntax, type, runtime)."""
    kind = "error"

    def __init__(self, message: str, loc: Loc | None = None, stack: list[Frame] | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.stack = stack or []
        self.hint = hint

    @property
    def filename(self) -> str | None:
        return self.loc.filename if self.loc else None

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    @property
    def column(self) -> int | None:
        return self.loc.column if self.loc else None

    def __str__(self) -> str:
        return self.render()

    def render(self) -> str:
        head = f"{self.loc}: {self.kind}: {self.message}" if self.loc else f"{self.kind}: {self.message}"
        out = [head]
        if self.loc is not None:
            text = self.loc.source.line(self.loc.line).expandtabs(1)
            if text:
                gutter = f"{self.loc.line:>5} | "
                out.append(gutter + text)
                width = 1
                if self.loc.end_column and self.loc.end_column > self.loc.column:
                    width = self.loc.end_column - self.loc.column
                out.append(" " * (len(gutter) - 2) + "| " + " " * (self.loc.column - 1) + "^" + "~" * (width - 1))
        if self.hint:
            out.append(f"hint: {self.hint}")
        if self.stack:
            out.append("Star call stack (innermost last):")
            for fr in self.stack:
                out.append(f"  {fr.routine} at {fr.loc}" if fr.loc else f"  {fr.routine}")
        return "\n".join(out)


class StarWarning(StarError):
    """Not an error: something legal that is most likely a mistake (the program still runs).
    Never raised; the checker hands it to ``Environment.warn``, which prints it by default."""
    kind = "warning"


class StarSyntaxError(StarError):
    """The text is not a Star program."""


class StarTypeError(StarError):
    """Names, types, argument counts: everything the checker refuses before running."""


class StarRuntimeError(StarError):
    """Raised while a program runs (index out of range, length mismatch, ...)."""


class StarInterrupt(StarError):
    """The user interrupted a running program (Ctrl-C)."""


class GraphFileError(StarError):
    """A graph file (starvm.graphs) is malformed or cannot be read: ``filename`` and ``line``
    (1-based; None where the file has no lines, e.g. .npy) say where."""

    def __init__(self, message: str, filename: str, line: int | None = None):
        where = f"{filename}:{line}" if line else str(filename)
        super().__init__(f"{where}: {message}")
        self.graph_file, self.graph_line = str(filename), line

    filename = property(lambda self: self.graph_file)
    line = property(lambda self: self.graph_line)


def _in_library(loc: Loc | None) -> bool:
    return loc is not None and loc.filename.startswith("stdlib/")


def at_the_users_call(err: StarError) -> StarError:
    """An error inside a library routine is reported at the innermost call outside the library:
    the user's call is what the user can change (an argument of the wrong width, a variable
    passed before it has a value, data that takes the routine out of range). The message names
    the routine; the stack keeps the library frames, so where it failed is still shown."""
    if not (_in_library(err.loc) and err.stack):
        return err
    frames = err.stack
    for i in range(len(frames) - 1, 0, -1):
        if frames[i - 1].loc is not None and not _in_library(frames[i - 1].loc) and _in_library(frames[i].loc):
            routine = frames[i].routine
            if err.message.startswith("argument "):   # the routine's check of its argument
                err.message = err.message.replace("argument ", f"{routine}'s argument ", 1)
            else:
                err.message = f"{err.message} (in {routine}, called here)"
            err.args = (err.message,)
            err.loc = frames[i - 1].loc
            return err
    return err
