"""The forall rule of `parallel for` (spec §4), checked at compile time.

Every iteration reads the values from before the loop, so the iterations' writes must not
overlap. An iteration may write:
  * COL(i, T) or ROW(i, T) where i is the loop variable (each table only one way);
  * bit X(i) of a slice or word declared outside the loop, i the loop variable;
  * variables of its own ("private"): any variable assigned in the body. Each iteration
    must assign a private variable before reading it; after the loop private variables
    keep the values they had before it.
It may not call procedures or functions (their writes cannot be checked), print, or
nest another `parallel for`. A write to a private variable that nothing later in the same
iteration reads is refused: it could only be meant for after the loop, where it never arrives.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import StarTypeError
from ..frontend import ast as A
from .symbols import Symbol

_WRITING_BUILTINS = {"STEP", "SET", "CLR"}


@dataclass
class ForallInfo:
    loop_var: Symbol
    tables: dict[Symbol, str] = field(default_factory=dict)   # table -> 'col' | 'row'
    shared_bits: set[Symbol] = field(default_factory=set)     # vectors written bit i
    private: set[Symbol] = field(default_factory=set)

    @property
    def snapshots(self) -> list[Symbol]:
        """Shared values the body writes: its reads must see them as before the loop."""
        return list(self.tables) + sorted(self.shared_bits, key=lambda s: s.name)


def _refuse(msg: str, node: A.Node, hint: str | None = None) -> StarTypeError:
    return StarTypeError(f"parallel for: {msg}", node.loc, hint=hint or
                         "iterations run as one simultaneous step; each may write only what its own index selects")


def check_parallel_for(loop: A.For) -> ForallInfo:
    info = ForallInfo(loop.var.ref)
    _collect_private(loop.body, info)
    _check_writes(loop.body, info)
    _check_defined_before_use(loop.body, info, set())
    _check_no_lost_writes(loop.body, info)
    return info


def _walk(node):
    """All AST nodes under node (statements and expressions), preorder; a stack, not
    recursion (bodies may nest deeply)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if isinstance(n, (list, tuple)):
            stack.extend(reversed(n))
            continue
        yield n
        children = []
        for v in vars(n).values():
            if isinstance(v, A.Node):
                children.append(v)
            elif isinstance(v, (list, tuple)):
                children.extend(x for x in v if isinstance(x, A.Node))
        stack.extend(reversed(children))


def _collect_private(body, info: ForallInfo) -> None:
    for n in _walk(body):
        if isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            info.private.add(n.target.ref)
        elif isinstance(n, A.For):
            info.private.add(n.var.ref)
        elif isinstance(n, (A.CallStmt, A.Apply)) and getattr(n.ref, "name", None) in _WRITING_BUILTINS | {"REP"}:
            args = n.args
            target = args[-1] if n.ref.name == "REP" else args[0]
            info.private.add(target.ref)
    if info.loop_var in info.private:
        raise _refuse(f"the loop variable '{info.loop_var.display}' cannot be assigned", body)


def _is_loop_index(e, info: ForallInfo) -> bool:
    return isinstance(e, A.Name) and e.ref is info.loop_var


def _check_writes(body, info: ForallInfo) -> None:
    for n in _walk(body):
        if isinstance(n, A.For) and n.parallel and n is not body:
            raise _refuse("a parallel for cannot be nested in another", n)
        if isinstance(n, A.CallStmt):
            if n.ref.__class__.__name__ == "RoutineInfo":
                raise _refuse(f"cannot call procedure '{n.display}' inside the loop", n)
            if n.ref.name in ("WRITELN", "WRITE"):
                raise _refuse("output inside the loop would have no defined order", n)
            if n.ref.name == "ERROR":
                raise _refuse("ERROR inside the loop would stop at no defined iteration; test before or after it", n)
            if n.ref.name.startswith("GRAPH_"):
                raise _refuse(f"{n.ref.name} fills whole tables; call it before the loop", n)
        if isinstance(n, A.Apply) and n.kind == "call":
            raise _refuse(f"cannot call function '{n.ref.display}' inside the loop", n)
        if isinstance(n, A.Assign) and isinstance(n.target, A.Apply):
            tgt = n.target
            if tgt.kind == "bit":
                sym = tgt.func.ref
                if sym not in info.private and not _is_loop_index(tgt.args[0], info):
                    raise _refuse(f"iterations may write only bit {info.loop_var.display} of "
                                  f"'{sym.display}', which is shared", tgt)
                if sym not in info.private:
                    info.shared_bits.add(sym)
            else:  # COL(i, T) := / ROW(i, T) :=
                how = tgt.ref.name.lower()
                table = tgt.args[1].ref
                if not _is_loop_index(tgt.args[0], info):
                    raise _refuse(f"iterations may write only {tgt.ref.name}({info.loop_var.display}, "
                                  f"{table.display}), selected by the loop variable", tgt)
                if info.tables.setdefault(table, how) != how:
                    raise _refuse(f"table '{table.display}' is written both by COL and by ROW; "
                                  "those writes overlap", tgt)
    for sym in info.shared_bits & info.private:
        raise _refuse(f"'{sym.display}' is both assigned whole and written bit by bit", body)


def _reads(e) -> list[A.Name]:
    return [n for n in _walk(e) if isinstance(n, A.Name) and isinstance(n.ref, Symbol)]


def _check_defined_before_use(stmt, info: ForallInfo, defined: set) -> set:
    """Returns the private variables surely assigned after stmt; refuses reads before writes."""
    def use(expr):
        for n in _reads(expr):
            if n.ref in info.private and n.ref not in defined:
                raise _refuse(f"'{n.display}' is read before this iteration assigns it; its value would "
                              "depend on another iteration", n)

    if stmt is None:
        return defined
    if isinstance(stmt, A.Block):
        for s in stmt.body:
            defined = _check_defined_before_use(s, info, defined)
        return defined
    if isinstance(stmt, A.Assign):
        use(stmt.value)
        if isinstance(stmt.target, A.Name):
            return defined | {stmt.target.ref}
        use(stmt.target.args)
        if stmt.target.kind == "bit":
            use(stmt.target.func)
        return defined
    if isinstance(stmt, A.CallStmt):
        if getattr(stmt.ref, "name", None) in ("SET", "CLR"):   # they write all of Y, read none
            return defined | {stmt.args[0].ref}
        use(stmt.args)
        return defined
    if isinstance(stmt, A.If):
        use(stmt.cond)
        a = _check_defined_before_use(stmt.then, info, set(defined))
        b = _check_defined_before_use(stmt.orelse, info, set(defined))
        return a & b
    if isinstance(stmt, A.While):
        use(stmt.cond)
        _check_defined_before_use(stmt.body, info, set(defined))
        return defined
    if isinstance(stmt, A.Repeat):
        for s in stmt.body:
            defined = _check_defined_before_use(s, info, defined)
        use(stmt.cond)
        return defined
    if isinstance(stmt, A.For):
        use([stmt.start, stmt.stop])
        _check_defined_before_use(stmt.body, info, set(defined) | {stmt.var.ref})
        return defined
    return defined


def _private_reads(e, info: ForallInfo) -> set:
    return {n.ref for n in _reads(e) if n.ref in info.private}


def _check_no_lost_writes(body, info: ForallInfo) -> None:
    """Refuse a write to a whole variable that nothing later in the same iteration reads.
    The iteration's variables are private (each iteration has its own copy, and after the
    loop the variable has its value from before it), so such a write could only have been
    meant for after the loop (`s := i`, `CLR(X)`), where it never arrives."""
    _live(body, info, set(), check=True)


def _steps(e) -> bool:
    """Does e call STEP (`j := STEP(V)` is how a body clears V's first 1: kept for that)?"""
    return any(isinstance(n, A.Apply) and getattr(n.ref, "name", None) == "STEP" for n in _walk(e))


def _lost(target: A.Name, how: str) -> StarTypeError:
    name = target.display
    return _refuse(f"{how} '{name}' is lost: every iteration writes its own copy of '{name}', read by "
                   f"nothing after this in the iteration, and after the loop '{name}' has its value from "
                   "before the loop", target,
                   hint="keep each iteration's result where its index selects (COL(i, T), ROW(i, T), a bit "
                        "X(i)), or use an ordinary 'for' loop")


def _live(stmt, info: ForallInfo, out: set, check: bool) -> set:
    """The private variables whose value on entry to stmt may be read later in the iteration,
    given ``out``, those read after it (a backward liveness pass over the body)."""
    if stmt is None:
        return out
    if isinstance(stmt, (A.Block, list)):
        live = out
        for s in reversed(stmt.body if isinstance(stmt, A.Block) else stmt):
            live = _live(s, info, live, check)
        return live
    if isinstance(stmt, A.Assign):
        tgt = stmt.target
        if isinstance(tgt, A.Name):
            sym = tgt.ref
            if check and sym in info.private and sym not in out and not _steps(stmt.value):
                raise _lost(tgt, "the value assigned to")
            return (out - {sym}) | _private_reads(stmt.value, info)
        used = _private_reads(stmt.value, info) | _private_reads(tgt.args, info)
        if tgt.kind == "bit":           # a bit write keeps the other bits: the vector lives on
            used |= _private_reads(tgt.func, info) | ({tgt.func.ref} & info.private)
        return out | used
    if isinstance(stmt, A.CallStmt):
        if getattr(stmt.ref, "name", None) in ("SET", "CLR") and stmt.args and isinstance(stmt.args[0], A.Name):
            sym = stmt.args[0].ref
            if check and sym in info.private and sym not in out:
                raise _lost(stmt.args[0], f"{stmt.ref.name} of")
            return out - {sym}
        return out | _private_reads(stmt.args, info)
    if isinstance(stmt, A.If):
        return (_private_reads(stmt.cond, info) | _live(stmt.then, info, out, check)
                | _live(stmt.orelse, info, out, check))
    if isinstance(stmt, (A.While, A.Repeat, A.For)):
        # the body may run again: what it reads at its start is live at its end too
        cond = stmt.cond if not isinstance(stmt, A.For) else None
        body = stmt.body
        head = out | _private_reads(cond, info)
        while True:
            grown = head | _live(body, info, head, check=False)
            if grown == head:
                break
            head = grown
        _live(body, info, head, check)
        if isinstance(stmt, A.For):
            return (head - {stmt.var.ref}) | _private_reads([stmt.start, stmt.stop], info)
        return head
    return out
