"""Which operations of a program act on slices and which on words, read from its IR.

and, or, xor, not, SET, CLR, FND, STEP, NUMB, FRST and SOME apply to slices (a bit column of
every row: work for the associative array) and to words (one row: work for the control
unit). The step counters keep the kind, not the operand, and so on every route; but the
program text says, at each place such an operation is written, which it is. Where every
place a kind is written (in the main blocks and the routines they reach) has the same
operand type, every step of that kind had it: the classification is exact, and the same on
every route since it reads only the program. A kind written on both is "both" (priced as a
slice operation, an upper bound; docs/costs.md).
"""
from __future__ import annotations

from ..ir.ops import GroupOp, Node, Op
from ..types import T

# the kinds whose operand may be a slice or a word; the others are one or the other by
# definition (COL: slices, ROW / TRIM / REP / EQ ... / ADD: words) or are priced alike
SHARED = GroupOp.SliceOrWord


def _operand_type(node: Node) -> T | None:
    if node.op in GroupOp.Logic:
        return node.type if node.type in (T.SLICE, T.WORD) else _first(node)
    return _first(node)


def _first(node: Node) -> T | None:
    return node.src[0].type if node.src and node.src[0].type in (T.SLICE, T.WORD) else None


def _walk(node: Node, found: dict[Op, set], calls: list):
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if n.op in SHARED:
            t = _operand_type(n)
            if t is not None:
                found.setdefault(n.op, set()).add(t)
        elif n.op is Op.CALL and n.arg is not None:
            info = n.arg[0] if isinstance(n.arg, tuple) else n.arg
            calls.append(getattr(info, "pyname", None))
        stack.extend(s for s in n.src if isinstance(s, Node))


def _from_library(info) -> bool:
    from ..stdlib import index
    where = getattr(getattr(info.node, "loc", None), "filename", "") or ""
    return any(where == f"stdlib/{p.name}" or where == str(p) for p in set(index().values()))


def operand_classes(lowered_units) -> dict[str, str]:
    """{kind name: "slice" | "word" | "both"} for the shared kinds the code reaches: the main
    blocks and the program's own routines (an embedding may call any of them), and the
    standard-library routines they call, transitively (a library file comes whole; its
    routines the program does not reach do not count)."""
    bodies: dict[str, Node] = {}
    roots: list[Node] = []
    for lw in lowered_units:
        for info, body in lw.routines:
            bodies[info.pyname] = body
            if not _from_library(info):
                roots.append(body)
        if lw.main is not None:
            roots.append(lw.main)
    found: dict[Op, set] = {}
    calls: list = []
    todo = roots
    seen: set = set()
    while todo:
        for body in todo:
            _walk(body, found, calls)
        todo = []
        for name in calls:
            if name in bodies and name not in seen:
                seen.add(name)
                todo.append(bodies[name])
        calls = []
    out = {}
    for op, types in found.items():
        out[op.name] = "both" if len(types) > 1 else ("slice" if T.SLICE in types else "word")
    return out


def machine_classes(machine) -> dict[str, str]:
    return operand_classes(getattr(machine, "lowered", {}).values())
