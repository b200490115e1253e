"""The Star side of graph input: what the GRAPH_* built-ins do (docs/stdlib.md, "Graph input").

A machine holds an optional graph (``Machine(graph=...)``, ``machine.graph = ...``, the CLI's
``--graph`` / ``--generate``). A program may name a bundled default with the statement
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

# the built-in name (as in builtins.py) -> the helper's `what`
OPS = {"GRAPH_N": "n", "GRAPH_M": "m", "GRAPH_VBITS": "vbits", "GRAPH_WBITS": "wbits",
       "GRAPH_ADJ": "adj", "GRAPH_EDGES": "edges"}


def check_default_name(name: str) -> str | None:
    """None if ``name`` is a bundled graph, else the reason it is not."""
    from . import bundled_names
    names = bundled_names()
    if name.lower() in names:
        return None
    return f"no bundled graph '{name}' (bundled: {', '.join(names) or 'none'})"


def program_default(program: A.Program) -> str | None:
    """The bundled graph a checked program names with GRAPH_DEFAULT('...'), if any."""
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
        elif isinstance(s, A.CallStmt) and getattr(s.ref, "name", None) == "GRAPH_DEFAULT":
            found.append(s)

    for r in program.routines:
        walk(r.body)
    walk(program.main)
    names = {s.args[0].value.lower() for s in found}
    if len(names) > 1:
        raise StarTypeError(f"a program names one default graph; this one names {len(names)}: "
                            f"{', '.join(sorted(names))}", found[-1].loc)
    return names.pop() if names else None


def make_graph_helper(machine):
    """The ``_graph`` helper of generated code, bound to one machine."""
    cache: dict[str, object] = {}

    def current():
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

    def fill(table, bools, what):
        want = bools.shape
        if (table.n, table.k) != want:
            raise StarRuntimeError(f"{what} must be a {want[0]} x {want[1]} table, got {table.n} x {table.k}")
        B = table.backend
        B.table_copy(table, B.table(want[0], want[1], bools))

    def graph(what, *tables):
        g = current()
        if what == "n":
            return g.n
        if what == "m":
            return g.m
        if what == "vbits":
            return g.vbits
        if what == "wbits":
            return g.wbits
        if what == "adj":
            fill(tables[0], g.adjacency(), "GRAPH_ADJ(P): P")
            return None
        if what == "edges":
            L, R, W = tables
            for t, name, need, width in ((L, "L", g.vbits, "GRAPH_VBITS"), (R, "R", g.vbits, "GRAPH_VBITS"),
                                         (W, "W", g.wbits, "GRAPH_WBITS")):
                if t.n != g.m or t.k < need:
                    raise StarRuntimeError(f"GRAPH_EDGES: {name} must have GRAPH_M = {g.m} rows and at least "
                                           f"{width} = {need} columns, got {t.n} x {t.k}")
            bl, br, bw = g.edges_bits(L.k, W.k)
            if R.k != L.k:
                br = g.edges_bits(R.k, W.k)[1]
            for t, bits, name in ((L, bl, "L"), (R, br, "R"), (W, bw, "W")):
                fill(t, np.ascontiguousarray(bits), f"GRAPH_EDGES: {name}")
            return None
        raise AssertionError(what)

    return graph
