"""How a graph file's fields appear in error messages."""
from __future__ import annotations


def shown(tok: str) -> str:
    """A field as an error message quotes it: invisible characters (a byte order mark, a
    control character) escaped, so the message says what is there."""
    return tok if tok.isprintable() else tok.encode("unicode_escape").decode("ascii")
