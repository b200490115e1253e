"""The parts of a main block a tier may take whole: runs of its top-level statements between
those that fill tables from the graph input (GRAPH_ADJ, GRAPH_EDGES) and calls of procedures.

Why: the GPU tier runs a routine as one kernel, and a kernel cannot stop for the host to read
a graph into its tables. A main block reads its graph first and then loops over it, so the
interpreter's code (targets/python/codegen.py) gives each such run a function
of its own (``part_name``), called by ``main_`` in order; the GPU tier compiles those
functions (jit/cuda_tier.py: on ``--jit auto`` those with a loop) and graph input stays on
the host between them. Scalars of the
graph (GRAPH_N, GRAPH_M, ...) may be read inside a part: they are fixed once the graph is
read. ``MainPart`` is what the tiers ask of a routine (its name, parameters, locals, result),
for such a run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from .ops import GroupOp, Node, Op
from .walk import walk

GRAPH_TABLES = ("adj", "edges")     # Op.GRAPH that fill tables
GRAPH_SCALARS = ("n", "m", "vbits", "wbits", "undirected")    # fixed once the graph is read


def fills_from_graph(stmt: Node) -> bool:
    """Does the statement fill a table from the graph input (at any depth)?"""
    return any(n.op is Op.GRAPH and n.arg in GRAPH_TABLES for n in walk(stmt))


def main_parts(main: Node) -> list[tuple[int, int]]:
    """[start, end) ranges of main.src: the maximal runs of statements that fill no table from
    the graph and are no call of a procedure (which runs as its routine's tier decides: a
    routine around a native kernel may be faster interpreted), those that do something
    (GRAPH_DEFAULT and GRAPH_READING are empty blocks)."""
    out, start = [], 0
    stmts = list(main.src)
    for i in range(len(stmts) + 1):
        if i == len(stmts) or fills_from_graph(stmts[i]) or stmts[i].op is Op.CALL:
            if any(not (s.op is Op.BLOCK and not s.src) for s in stmts[start:i]):
                out.append((start, i))
            start = i + 1
    return out


def has_loop(body: Node) -> bool:
    return any(n.op in GroupOp.Loops for n in walk(body))


def loops_over_rows(body: Node) -> bool:
    """Does a body loop over the rows of a table one at a time (a `while`/`repeat`, or a `for`
    up to NROWS), as COMPACT's or GATHER's Star bodies do, not over its columns as MIN's?"""
    return any(n.op in GroupOp.CondLoops or (n.op is Op.FOR and any(x.op is Op.NROWS for b in n.src[:2] for x in walk(b)))
               for n in walk(body))


def part_name(unit_id: int, k: int) -> str:
    """The Python name of a unit's k-th main part (the machine's namespace is shared by units)."""
    return f"main{unit_id}_{k}_"


@dataclass
class MainPart:
    """A run of main-block statements as a routine without parameters, locals or result: the
    fields of check.symbols.RoutineInfo the tiers read. ``part`` tells them it is no Star
    routine: no call is counted, ticked or put on the call stack on its entry."""
    pyname: str
    loc: object = None
    display: str = "main block"
    name: str = "main block"
    params: list = field(default_factory=list)
    locals: list = field(default_factory=list)
    result: None = None
    part: bool = True

    def __post_init__(self):
        self.node = SimpleNamespace(loc=self.loc)

    @property
    def is_function(self) -> bool:
        return False

    @property
    def out_params(self) -> list:
        return []

    def __hash__(self):
        return hash(self.pyname)
