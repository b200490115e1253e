"""The Star side of graph input: what the GRAPH_* built-ins do (docs/stdlib.md, "Graph input").

A machine holds an optional graph (``Machine(graph=...)``, ``machine.graph = ...``, the CLI's
``--graph`` / ``--generate``) and how to read it: directed (the arcs as given) or undirected
(both arcs of every edge, ``Graph.undirected()``). The user's choice (``Machine(directed=...)``,
``--directed`` / ``--undirected``) wins over the program's ``GRAPH_READING('undirected')``,
which acts like GRAPH_DEFAULT (a checked literal that takes effect at load); without either
the arcs are read as given. A program may name a bundled default with the statement
``GRAPH_DEFAULT('karate')``: its argument is a string literal checked against the bundled
names, and it takes effect when the program is loaded, before the globals are initialised
(so ``var P: table(GRAPH_N, GRAPH_N);`` works); executing it does nothing. The graph the
user gave always wins over the program's default.

Generated code reaches all this through one helper, ``_graph(what, *tables)``, in
``Machine.ns``; it reads only ``machine.graph`` or a bundled graph by its checked name.
"""
from __future__ import annotations

import numpy as np

from ..errors import StarRuntimeError, StarTypeError
from ..frontend import ast as A
from .generators import sorted_distinct_keys

# the built-in name (as in builtins.py) -> the helper's `what`
OPS = {"GRAPH_N": "n", "GRAPH_M": "m", "GRAPH_VBITS": "vbits", "GRAPH_WBITS": "wbits",
       "GRAPH_ADJ": "adj", "GRAPH_EDGES": "edges", "GRAPH_UNDIRECTED": "undirected"}

READINGS = ("directed", "undirected")


def check_default_name(name: str) -> str | None:
    """None if ``name`` is a bundled graph, else the reason it is not."""
    from . import bundled_names
    names = bundled_names()
    if name.lower() in names:
        return None
    return f"no bundled graph '{name}' (bundled: {', '.join(names) or 'none'})"


def program_default(program: A.Program) -> str | None:
    """The bundled graph a checked program names with GRAPH_DEFAULT('...'), if any."""
    return _program_literal(program, "GRAPH_DEFAULT", "default graph")


def program_reading(program: A.Program) -> bool | None:
    """The reading a checked program states with GRAPH_READING('directed' | 'undirected'):
    True for directed, False for undirected, None if it states none."""
    reading = _program_literal(program, "GRAPH_READING", "graph reading")
    return None if reading is None else reading == "directed"


def check_reading(text: str) -> str | None:
    """None if ``text`` names a reading, else the reason it does not."""
    return None if text.lower() in READINGS else f"a graph is read 'directed' or 'undirected', not '{text}'"


def _program_literal(program: A.Program, builtin: str, what: str) -> str | None:
    """The one string literal a program gives the declaration-like statement ``builtin``."""
    found: list[A.CallStmt] = []

    def walk(s):
        if s is None:
            return
        if isinstance(s, list):
            for x in s:
                walk(x)
        elif isinstance(s, A.Block):
            walk(s.body)
        elif isinstance(s, A.If):
            walk(s.then), walk(s.orelse)
        elif isinstance(s, (A.While, A.For)):
            walk(s.body)
        elif isinstance(s, A.Repeat):
            walk(s.body)
        elif isinstance(s, A.CallStmt) and getattr(s.ref, "name", None) == builtin:
            found.append(s)

    for r in program.routines:
        walk(r.body)
    walk(program.main)
    names = {s.args[0].value.lower() for s in found}
    if len(names) > 1:
        raise StarTypeError(f"a program names one {what}; this one names {len(names)}: "
                            f"{', '.join(sorted(names))}", found[-1].loc)
    return names.pop() if names else None


def make_graph_helper(machine):
    """The ``_graph`` helper of generated code, bound to one machine."""
    cache: dict[str, object] = {}
    readings: list = []     # [(graph, its undirected reading)]: the last one made

    def directed() -> bool:
        user = getattr(machine, "graph_directed", None)
        program = getattr(machine, "graph_reading", None)
        return user if user is not None else (program if program is not None else True)

    def current():
        g = given()
        if directed():
            return g
        if not readings or readings[0][0] is not g:
            readings[:] = [(g, g.undirected())]
        return readings[0][1]

    def given():
        g = machine.graph
        if g is not None:
            return g
        name = machine.graph_default
        if name is None:
            raise StarRuntimeError(
                "no graph: the program asks for one but none is set",
                hint="run it with --graph FILE or --generate SPEC (Machine(graph=...)), "
                     "or name a bundled default in the program: GRAPH_DEFAULT('karate')")
        if name not in cache:
            from . import bundled
            cache[name] = bundled(name)
        return cache[name]

    def fill_adjacency(P):
        g = current()
        if (P.n, P.k) != (g.n, g.n):
            raise StarRuntimeError(f"GRAPH_ADJ(P): P must be a {g.n} x {g.n} table, got {P.n} x {P.k}")
        own_rows = getattr(g, "fill_adjacency", None)    # a graph held per rank (distributed/graph_input.py)
        if own_rows is not None and hasattr(P.backend, "layout"):
            own_rows(P)                                  # builds this rank's rows only
            return
        words = adjacency_words(g)
        set_words = getattr(P.backend, "table_set_words", None)   # distributed: a rank keeps its rows
        if set_words is not None:
            set_words(P, words)
        elif P.data.size:
            P.data[...] = P.backend.xp.asarray(words)     # in place: the table keeps its storage

    def graph(what, *tables):
        g = current()
        if what == "n":
            return g.n
        if what == "m":
            return g.m
        if what == "vbits":
            return g.vbits
        if what in ("wbits", "edges"):
            unread = g.meta.get("weights_error") if isinstance(getattr(g, "meta", None), dict) else None
            if unread is not None:         # a file loaded with --weights auto whose weights are not integers
                from ..errors import GraphFileError
                raise GraphFileError(*unread)
        if what == "wbits":
            return g.wbits
        if what == "undirected":
            return not directed()
        if what == "adj":
            fill_adjacency(tables[0])
            return None
        if what == "edges":
            L, R, W = tables
            for t, name, need, width in ((L, "L", g.vbits, "GRAPH_VBITS"), (R, "R", g.vbits, "GRAPH_VBITS"),
                                         (W, "W", g.wbits, "GRAPH_WBITS")):
                if t.n != g.m or t.k < need:
                    raise StarRuntimeError(f"GRAPH_EDGES: {name} must have GRAPH_M = {g.m} rows and at least "
                                           f"{width} = {need} columns, got {t.n} x {t.k}")
            # the codes go straight into the packed columns (backends/codes.py), on the table's side
            for t, codes in ((L, g.src), (R, g.dst), (W, g.weight)):
                t.backend.table_set_ints(t, codes)
            return None
        raise AssertionError(what)

    return graph


def adjacency_words(g) -> np.ndarray:
    """GRAPH_ADJ's n x n table as its packed words (n columns x ceil(n/64) uint64): arc
    i -> j sets row i of column j. Built from the arcs by a sort of their word positions and
    an OR per word (np.bitwise_or.reduceat), never as an n x n bool array."""
    n = g.n
    words = (n + 63) // 64
    out = np.zeros((n, words), dtype=np.uint64)
    if g.m:
        row, col = g.src - 1, g.dst - 1
        pos = sorted_distinct_keys(col * (words * 64) + row)    # repeated arcs set one bit (threads sort a big list)
        word = pos >> 6
        bit = np.left_shift(np.uint64(1), (pos & 63).astype(np.uint64))
        starts = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])
        out.reshape(-1)[word[starts]] = np.bitwise_or.reduceat(bit, starts)
    return out
