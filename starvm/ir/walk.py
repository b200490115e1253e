"""Walks over the IR that every renderer and tier asks: the nodes under a node, the routines
a body calls, the globals it names, and what a call of a routine may do (write globals,
tables, output), each over ``bodies`` (pyname -> (RoutineInfo | None, body))."""
from __future__ import annotations

from ..check.symbols import RoutineInfo, Symbol
from ..types import T
from .ops import GroupOp, Node, Op


def walk(node: Node):
    """The nodes under node, preorder; a stack, not recursion (a deep tree would make nested
    generators quadratic and overflow the recursion limit)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.src))


def direct_globals(body: Node) -> set[Symbol]:
    """The global variables a body names itself (reads, writes, loop variables, var arguments)."""
    out = set()
    for n in walk(body):
        if n.op is Op.VAR and n.arg.scope == "global":
            out.add(n.arg)
        elif n.op is Op.ASSIGN and n.arg.scope == "global":
            out.add(n.arg)
        elif n.op in GroupOp.ForLoops and n.arg[0].scope == "global":
            out.add(n.arg[0])
        elif n.op is Op.PFOR:
            out.update(s for s in n.arg[2].private if s.scope == "global")
        if n.op is Op.CALL:
            out.update(t for t in n.arg[1] if t.scope == "global")
    return out


def callees(body: Node) -> list[RoutineInfo]:
    """The routines body calls, each once, in the order of their first call."""
    seen, out = set(), []
    for n in walk(body):
        if n.op is Op.CALL and n.arg[0].pyname not in seen:
            seen.add(n.arg[0].pyname)
            out.append(n.arg[0])
    return out


def small_int(e: Node) -> bool:
    """A value far from 64 bits' ends: a size or a small constant."""
    if e.op is Op.CONST:
        return isinstance(e.arg, int) and abs(e.arg) < (1 << 62)
    return e.op in GroupOp.Sizes or e.op is Op.LEN


def writes_globals(bodies, pyname: str, seen=None) -> bool:
    """May a call of pyname assign a global that is no table (itself or what it calls)?"""
    seen = seen if seen is not None else set()
    if pyname in seen:
        return False
    seen.add(pyname)
    _info, body = bodies[pyname]
    for n in walk(body):
        if n.op is Op.ASSIGN and n.arg.scope == "global" and n.arg.type is not T.TABLE:
            return True
        if n.op in GroupOp.ForLoops and n.arg[0].scope == "global":
            return True
        if n.op is Op.CALL and (any(t.scope == "global" for t in n.arg[1]) or writes_globals(bodies, n.arg[0].pyname, seen)):
            return True
        if n.op in GroupOp.InPlace - GroupOp.TableWrite and any(
                s.op is Op.VAR and s.arg.scope == "global" for s in n.src):
            return True
    return False


def writes_tables(bodies, pyname: str, seen=None) -> bool:
    """May a call of pyname change a table it did not make (call.run saves those)?"""
    seen = seen if seen is not None else set()
    if pyname in seen or pyname not in bodies:
        return False
    seen.add(pyname)
    return may_write_tables(bodies, bodies[pyname][1], seen)


def may_write_tables(bodies, node: Node, seen=None) -> bool:
    """May running ``node`` (a body, or a statement of one) change a table, itself or in what
    it calls?"""
    for n in walk(node):
        if n.op in GroupOp.TableWrite or n.op is Op.PFOR or n.op is Op.GRAPH or (
                n.op is Op.ASSIGN and n.arg.type is T.TABLE):
            return True
        if n.op is Op.CALL and writes_tables(bodies, n.arg[0].pyname, seen):
            return True
    return False


def writes_output(bodies, pyname: str, seen=None) -> bool:
    """May a call of pyname write output (itself or what it calls)?"""
    seen = seen if seen is not None else set()
    if pyname in seen:
        return False
    seen.add(pyname)
    for n in walk(bodies[pyname][1]):
        if n.op is Op.WRITE or (n.op is Op.CALL and writes_output(bodies, n.arg[0].pyname, seen)):
            return True
    return False
