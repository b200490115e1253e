"""Signatures of the base operations of spec §3 and the other built-in names.

Argument kinds:
  int, bool    — a scalar of that type
  vec          — a slice or a word
  vecvar       — a slice or word *variable* (the operation changes it)
  word, wordvar, table, strlit — as named
Result: a T, 'same' (the type of the first vector argument), or None for a statement.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..types import T


@dataclass(frozen=True)
class Builtin:
    name: str                      # display name
    args: tuple[str, ...] | None   # None: any number of printable arguments
    result: T | str | None
    doc: str


_B = Builtin
BUILTINS: dict[str, Builtin] = {b.name.lower(): b for b in [
    _B("SET", ("vecvar",), None, "all bits of Y become 1"),
    _B("CLR", ("vecvar",), None, "all bits of Y become 0"),
    _B("FND", ("vec",), T.INT, "position of the first 1 in Y, 0 if none"),
    _B("STEP", ("vecvar",), T.INT, "as FND, then clears that bit"),
    _B("NUMB", ("vec",), T.INT, "number of 1s in Y"),
    _B("CONVERT", ("vec",), T.WORD, "a word whose i-th bit is Y(i)"),
    _B("FRST", ("vec",), "same", "Y with only its first 1 kept"),
    _B("SOME", ("vec",), T.BOOL, "Y has at least one 1"),
    _B("TRIM", ("int", "int", "word"), T.WORD, "the sub-word w(i)..w(j)"),
    _B("REP", ("int", "int", "word", "wordvar"), None, "replace w(i)..w(j) by v"),
    _B("EQ", ("word", "word"), T.BOOL, "v = w as unsigned numbers"),
    _B("NOTEQ", ("word", "word"), T.BOOL, "v <> w"),
    _B("LESS", ("word", "word"), T.BOOL, "v < w"),
    _B("LESSEQ", ("word", "word"), T.BOOL, "v <= w"),
    _B("GREAT", ("word", "word"), T.BOOL, "v > w"),
    _B("GREATEQ", ("word", "word"), T.BOOL, "v >= w"),
    _B("ADD", ("word", "word"), T.WORD, "v + w modulo 2^len"),
    _B("SUBT", ("word", "word"), T.WORD, "v - w modulo 2^len"),
    _B("COL", ("int", "table"), T.SLICE, "the i-th column of T"),
    _B("ROW", ("int", "table"), T.WORD, "the i-th row of T"),
    _B("BITS", ("strlit",), T.WORD, "a word literal, bit 1 first: BITS('1011')"),
    _B("LEN", ("vec",), T.INT, "the length of a slice or word"),
    _B("NROWS", ("table",), T.INT, "the number of rows of T"),
    _B("NCOLS", ("table",), T.INT, "the number of columns of T"),
    # graph input (docs/stdlib.md "Graph input", starvm/graphs/star.py)
    _B("GRAPH_N", (), T.INT, "the number of vertices of the current graph"),
    _B("GRAPH_M", (), T.INT, "the number of arcs of the current graph (rows of GRAPH_EDGES)"),
    _B("GRAPH_VBITS", (), T.INT, "bits of a vertex code: the least c with 2^c > GRAPH_N"),
    _B("GRAPH_WBITS", (), T.INT, "bits of the largest weight, at least 1"),
    _B("GRAPH_ADJ", ("tablevar",), None, "P := the n x n adjacency table of the current graph"),
    _B("GRAPH_EDGES", ("tablevar", "tablevar", "tablevar"), None,
       "L, R, W := the arcs' source codes, target codes and weights, one row per arc"),
    _B("GRAPH_DEFAULT", ("graphname",), None, "the bundled graph used when the user gives none"),
    _B("GRAPH_READING", ("reading",), None,
       "read the graph 'directed' (arcs as given) or 'undirected' (both arcs of every edge), "
       "unless the user says otherwise"),
    _B("GRAPH_UNDIRECTED", (), T.BOOL, "true when the graph is read as undirected"),
    _B("ERROR", ("message",), None, "stop the program with a Star error: the message, at this "
       "statement, with the call stack"),
    _B("WRITELN", None, None, "print the arguments and a newline"),
    _B("WRITE", None, None, "print the arguments"),
]}

# Builtins usable only as statements / only inside expressions.
STATEMENT_BUILTINS = {"set", "clr", "rep", "writeln", "write", "graph_adj", "graph_edges", "graph_default",
                      "graph_reading", "error"}
