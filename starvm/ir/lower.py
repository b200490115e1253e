"""Lower the checked AST to IR nodes (``ops.py``)."""
from __future__ import annotations

from ..check.checker import CheckedUnit
from ..check.symbols import RoutineInfo, Symbol
from ..frontend import ast as A
from ..frontend.deep import deep
from ..types import T
from .ops import Node, Op

_BUILTIN_OPS = {
    "SET": Op.SET, "CLR": Op.CLR, "FND": Op.FND, "STEP": Op.STEP, "NUMB": Op.NUMB,
    "CONVERT": Op.CONVERT, "FRST": Op.FRST, "SOME": Op.SOME, "TRIM": Op.TRIM, "REP": Op.REP,
    "EQ": Op.EQ, "NOTEQ": Op.NOTEQ, "LESS": Op.LESS, "LESSEQ": Op.LESSEQ, "GREAT": Op.GREAT,
    "GREATEQ": Op.GREATEQ, "ADD": Op.ADD, "SUBT": Op.SUBT, "COL": Op.COL_GET, "ROW": Op.ROW_GET,
    "LEN": Op.LEN, "NROWS": Op.NROWS, "NCOLS": Op.NCOLS,
}
_VECTOR_LOGIC = {"and": Op.AND, "or": Op.OR, "xor": Op.XOR}
_GRAPH_OPS = {"GRAPH_N": "n", "GRAPH_M": "m", "GRAPH_VBITS": "vbits", "GRAPH_WBITS": "wbits",
              "GRAPH_ADJ": "adj", "GRAPH_EDGES": "edges", "GRAPH_UNDIRECTED": "undirected"}


class LoweredUnit:
    def __init__(self, routines: list[tuple[RoutineInfo, Node]], main: Node | None, globals_: list[Symbol]):
        self.routines = routines
        self.main = main
        self.globals = globals_


def lower_unit(unit: CheckedUnit) -> LoweredUnit:
    return deep(_lower_unit, unit)   # one recursion per nesting level (frontend/deep.py)


def _lower_unit(unit: CheckedUnit) -> LoweredUnit:
    lw = _Lowerer()
    for sym in unit.globals + [s for info in unit.routines for s in info.locals]:
        if sym.spec is not None and sym.spec.dims is not None:
            sym.dims = tuple(lw.expr(d) for d in sym.spec.dims)
    routines = [(info, lw.block(info.node.body)) for info in unit.routines]
    main = lw.block(unit.main) if unit.main is not None else None
    return LoweredUnit(routines, main, unit.globals)


class _Lowerer:
    def __init__(self):
        # Inside a parallel for, reads of what the body writes go to the pre-loop snapshot.
        self.redirect: dict[Symbol, Symbol] = {}

    # ---------------- statements
    def block(self, b: A.Block | None) -> Node:
        if b is None:
            return Node(Op.BLOCK)
        stmts = b.body if isinstance(b, A.Block) else [b]
        return Node(Op.BLOCK, tuple(self.stmt(s) for s in stmts if s is not None), loc=getattr(b, "loc", None))

    def stmt(self, s) -> Node:
        return getattr(self, "_s_" + type(s).__name__)(s)

    def _s_Block(self, s):
        return self.block(s)

    def _s_If(self, s: A.If):
        return Node(Op.IF, (self.expr(s.cond), self.block(s.then), self.block(s.orelse)), loc=s.loc)

    def _s_While(self, s: A.While):
        return Node(Op.WHILE, (self.expr(s.cond), self.block(s.body)), loc=s.loc)

    def _s_Repeat(self, s: A.Repeat):
        body = Node(Op.BLOCK, tuple(self.stmt(x) for x in s.body if x is not None), loc=s.loc)
        return Node(Op.REPEAT, (body, self.expr(s.cond)), loc=s.loc)

    def _s_For(self, s: A.For):
        start, stop = self.expr(s.start), self.expr(s.stop)
        if not s.parallel:
            return Node(Op.FOR, (start, stop, self.block(s.body)), arg=(s.var.ref, s.downto), loc=s.loc)
        info = s.forall
        snaps = {}
        for sym in info.snapshots:
            snaps[sym] = Symbol(sym.name, sym.display, sym.type, "snapshot", sym.loc, pyname="snap_" + sym.name)
        saved = self.redirect
        self.redirect = {**saved, **snaps}
        try:
            body = self.block(s.body)
        finally:
            self.redirect = saved
        return Node(Op.PFOR, (start, stop, body), arg=(s.var.ref, s.downto, info, snaps), loc=s.loc)

    def _s_Assign(self, s: A.Assign):
        tgt, value = s.target, self.expr(s.value)
        if isinstance(tgt, A.Name):
            sym = tgt.ref
            if sym.type is T.SLICE:
                value.type = T.SLICE   # a BITS literal assigned to a slice
            if value.op is Op.VAR and value.type.is_vector:
                value = Node(Op.COPY, (value,), type=value.type, loc=value.loc)
            return Node(Op.ASSIGN, (value,), arg=sym, type=sym.type, loc=s.loc)
        if tgt.kind == "bit":
            var = Node(Op.VAR, arg=tgt.func.ref, type=tgt.func.ref.type, loc=tgt.func.loc)
            return Node(Op.BIT_SET, (var, self.expr(tgt.args[0]), value), loc=tgt.loc)
        op = Op.COL_SET if tgt.ref.name == "COL" else Op.ROW_SET
        table = Node(Op.VAR, arg=tgt.args[1].ref, type=T.TABLE, loc=tgt.args[1].loc)
        return Node(op, (self.expr(tgt.args[0]), table, value), loc=tgt.loc)

    def _s_CallStmt(self, s: A.CallStmt):
        if isinstance(s.ref, RoutineInfo):
            return self._call(s.ref, s.args, s.loc)
        name = s.ref.name
        if name == "ERROR":
            return Node(Op.ERROR, arg=s.args[0].value, loc=s.loc)
        if name in ("WRITELN", "WRITE"):
            return Node(Op.WRITE, tuple(self.expr(a) for a in s.args), arg=(name == "WRITELN"), loc=s.loc)
        return self._builtin(name, s.args, s.loc, None)

    # ---------------- expressions
    def expr(self, e) -> Node:
        return getattr(self, "_e_" + type(e).__name__)(e)

    def _e_Num(self, e):
        return Node(Op.CONST, arg=e.value, type=T.INT, loc=e.loc)

    def _e_Str(self, e):
        return Node(Op.CONST, arg=e.value, type=T.STR, loc=e.loc)

    def _e_BoolLit(self, e):
        return Node(Op.CONST, arg=e.value, type=T.BOOL, loc=e.loc)

    def _e_Name(self, e: A.Name):
        if isinstance(e.ref, RoutineInfo):
            return self._call(e.ref, [], e.loc)
        if not isinstance(e.ref, Symbol):   # a built-in without arguments (GRAPH_N, ...)
            return self._builtin(e.ref.name, [], e.loc, e.type)
        return self._read(e.ref, e.loc)

    def _read(self, sym: Symbol, loc) -> Node:
        sym = self.redirect.get(sym, sym)
        return Node(Op.VAR, arg=sym, type=sym.type, loc=loc)

    def _e_Apply(self, e: A.Apply):
        if e.kind == "bit":
            return Node(Op.BIT_GET, (self.expr(e.func), self.expr(e.args[0])), type=T.INT, loc=e.loc)
        if e.kind == "call":
            return self._call(e.ref, e.args, e.loc)
        return self._builtin(e.ref.name, e.args, e.loc, e.type)

    def _builtin(self, name: str, args, loc, type_) -> Node:
        if name == "BITS":
            return Node(Op.BITS, arg=args[0].value, type=type_, loc=loc)
        if name in ("GRAPH_DEFAULT", "GRAPH_READING"):   # take effect at load (Machine.compile); running does nothing
            return Node(Op.BLOCK, loc=loc)
        if name.startswith("GRAPH_"):   # graph input: the tables it fills are the variables themselves
            src = tuple(Node(Op.VAR, arg=a.ref, type=a.ref.type, loc=a.loc) for a in args)
            return Node(Op.GRAPH, src, arg=_GRAPH_OPS[name], type=type_, loc=loc)
        src = []
        for a in args:
            node = self.expr(a)
            if node.op is Op.VAR and node.type.is_vector and name in ("STEP", "SET", "CLR") \
                    or (name == "REP" and a is args[-1]):
                # the operation changes this variable: it names the variable itself, not a snapshot
                node = Node(Op.VAR, arg=a.ref, type=a.ref.type, loc=a.loc)
            src.append(node)
        return Node(_BUILTIN_OPS[name], tuple(src), type=type_, loc=loc)

    def _call(self, info: RoutineInfo, args, loc) -> Node:
        src, outs = [], []
        for a, p in zip(args, info.params):
            node = self.expr(a)
            if p.by_ref:
                node = Node(Op.VAR, arg=a.ref, type=a.ref.type, loc=a.loc)
                if p.type is not T.TABLE:
                    outs.append(a.ref)
            elif node.op is Op.VAR and node.type.is_vector:
                node = Node(Op.COPY, (node,), type=node.type, loc=node.loc)
            src.append(node)
        rtype = info.result.type if info.is_function else T.VOID
        return Node(Op.CALL, tuple(src), arg=(info, tuple(outs)), type=rtype, loc=loc)

    def _e_BinOp(self, e: A.BinOp):
        a, b = self.expr(e.left), self.expr(e.right)
        lt = e.left.type
        if lt.is_vector:
            if e.op in _VECTOR_LOGIC:
                return Node(_VECTOR_LOGIC[e.op], (a, b), type=e.type, loc=e.loc)
            return Node(Op.EQ if e.op == "=" else Op.NOTEQ, (a, b), type=T.BOOL, loc=e.loc)
        return Node(Op.BINARY, (a, b), arg=e.op, type=e.type, loc=e.loc)

    def _e_Unary(self, e: A.Unary):
        a = self.expr(e.operand)
        if e.op == "+":
            return a
        if e.op == "not" and e.type.is_vector:
            return Node(Op.NOT, (a,), type=e.type, loc=e.loc)
        return Node(Op.UNARY, (a,), arg="neg" if e.op == "-" else "not", type=e.type, loc=e.loc)
