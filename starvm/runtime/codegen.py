"""Compile IR to Python source: one Python function per Star routine, plus ``main_``/``init_``.

Executing generated Python is what makes the interpreter fast: a Star loop becomes a Python
loop, a scalar statement one Python statement, a base operation one call of
``runtime/ops.py``. Positions are not lost: every IR node that can fail is wrapped in
markers while its line is built; ``finish_line`` strips them and records, for each
generated line, the column span of each node and its Star ``Loc``. When something fails,
``tracemap.py`` maps the failing instruction's position back to the Star source.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..check.symbols import RoutineInfo, Symbol
from ..errors import Loc
from ..ir.lower import LoweredUnit
from ..ir.ops import BASE_OPS, Node, Op
from ..types import T
from .forall import fusable
from .ops import op_name

_OPEN, _MID, _CLOSE = "\x01", "\x02", "\x03"
_PY_BINARY = {"+": "+", "-": "-", "*": "*", "=": "==", "<>": "!=", "<": "<", "<=": "<=",
              ">": ">", ">=": ">=", "and": "and", "or": "or", "xor": "!="}
_unit_ids = itertools.count(1)


@dataclass
class LineInfo:
    loc: Loc | None                                    # the statement's position
    spans: list[tuple[int, int, Loc]] = field(default_factory=list)   # (col, end_col, loc)


@dataclass
class GeneratedUnit:
    filename: str                      # the pseudo file name of the generated code
    source: str
    lines: dict[int, LineInfo]         # generated line number -> positions
    routine_names: dict[str, str]      # Python function name -> Star display name
    constants: dict[str, object]       # values the code refers to (BITS literals)


class CodeGen:
    def __init__(self, backend, star_filename: str, counts: list[int] | None = None, fuse: bool = True,
                 fused_timing: list | None = None, step_limit: bool = False, progress: bool = False,
                 debug: bool = False):
        self.B = backend
        # starvm/debug: call _dbg() before every statement (and each loop test); off: no code at all
        self.debug = debug
        self._entry = False            # the next _dbg() is a routine's first event: _dbg(1)
        self.progress = progress       # wrap outermost for loops in _progress() (starvm/progress.py)
        self._for_depth = 0
        self.counts = counts if counts is not None else []
        self.fused_timing = fused_timing
        self.fuse = fuse
        self.step_limit = step_limit   # emit _tick() in every loop body and routine (limits.py)
        # constants (fused loops, BITS literals) live in the machine's one namespace beside
        # every other unit's: the unit's number keeps their names apart
        self.unit_id = next(_unit_ids)
        self.filename = f"<star-{self.unit_id}:{star_filename}>"
        self.out: list[str] = []
        self.lines: dict[int, LineInfo] = {}
        self.consts: dict[str, object] = {}
        self.locs: dict[int, Loc] = {}
        self.tmp = itertools.count()
        self.names: dict[str, str] = {}

    # ------------------------------------------------------------------ lines
    def mark(self, node: Node, code: str) -> str:
        if node.loc is None:
            return code
        k = len(self.locs)
        self.locs[k] = node.loc
        return f"{_OPEN}{k}{_MID}{code}{_CLOSE}"

    def emit(self, indent: int, text: str, loc: Loc | None = None) -> None:
        """Strip the markers of one generated line, remembering where each node landed."""
        info = LineInfo(loc)
        plain, stack, i = [], [], 0
        prefix = "    " * indent
        col = len(prefix)
        while i < len(text):
            c = text[i]
            if c == _OPEN:
                j = text.index(_MID, i)
                stack.append((int(text[i + 1:j]), col))
                i = j + 1
                continue
            if c == _CLOSE:
                k, start = stack.pop()
                info.spans.append((start, col, self.locs[k]))
                i += 1
                continue
            plain.append(c)
            col += 1
            i += 1
        self.out.append(prefix + "".join(plain))
        self.lines[len(self.out)] = info

    # ------------------------------------------------------------------ units
    def unit(self, lowered: LoweredUnit) -> GeneratedUnit:
        for info, body in lowered.routines:
            self.routine(info, body)
        self.names["init_"] = "initialization"
        self.emit(0, "def init_():")
        globs = [s.pyname for s in lowered.globals]
        if globs:
            self.emit(1, "global " + ", ".join(globs))
        for sym in lowered.globals:
            self.emit(1, f"{sym.pyname} = {self.initial(sym)}", sym.loc)
        self.emit(1, "pass")
        if lowered.main is not None:
            self.names["main_"] = "main block"
            self.emit(0, "def main_():")
            self.global_decl(lowered.main, 1)
            self._entry = True
            self.block(lowered.main, 1)
        return GeneratedUnit(self.filename, "\n".join(self.out) + "\n", self.lines, self.names, self.consts)

    def global_decl(self, body: Node, indent: int) -> None:
        assigned = sorted({s.pyname for s in _assigned_symbols(body) if s.scope == "global"})
        if assigned:
            self.emit(indent, "global " + ", ".join(assigned))

    def initial(self, sym: Symbol) -> str:
        if sym.constant is not None:   # a program constant: its value from the user (params.py) or its declaration
            return f"_param({sym.name!r}, {sym.constant!r})"
        if sym.type is T.INT:
            return "0"
        if sym.type is T.BOOL:
            return "False"
        if sym.type is T.TABLE:
            n, k = sym.dims
            return f"_new_table({self.x(n)}, {self.x(k)})"
        if sym.length_of is not None:
            table = sym.length_of.pyname
            return f"_zeros({table}.n)" if sym.type is T.SLICE else f"_zeros({table}.k)"
        return f"_UN({sym.display!r})"

    def routine(self, info: RoutineInfo, body: Node) -> None:
        self.names[info.pyname] = info.display
        params = ", ".join(p.pyname for p in info.params)
        self.emit(0, f"def {info.pyname}({params}):", info.node.loc)
        self.global_decl(body, 1)
        # the recursion limit counts Star calls exactly, as the compiled tier does: _depth is
        # [calls in progress, Machine.max_depth]; _too_deep() reports at the caller's call
        self.emit(1, "if _depth[0] >= _depth[1]: _too_deep()", info.node.loc)
        self.emit(1, "_depth[0] += 1")
        self.emit(1, "try:")
        self.tick(2, info.node.loc)
        for p in info.params:
            if p.length_of is not None:
                n = f"{p.length_of.pyname}.n" if p.type is T.SLICE else f"{p.length_of.pyname}.k"
                what = f"argument {p.display!r} ({p.type}({p.length_of.display}))"
                self.emit(2, f"_check_len({p.pyname}, {n}, {what!r})", p.loc)
        for sym in info.locals + ([info.result] if info.result else []):
            self.emit(2, f"{sym.pyname} = {self.initial(sym)}", sym.loc)
        self._entry = True
        self.block(body, 2)
        outs = [p.pyname for p in info.out_params]
        if info.is_function:
            outs.insert(0, info.result.pyname)
        if len(outs) == 1 and info.is_function:
            self.emit(2, f"return {outs[0]}")
        elif outs:
            self.emit(2, f"return ({', '.join(outs)},)")
        self.emit(1, "finally:")
        self.emit(2, "_depth[0] -= 1")

    # ------------------------------------------------------------------ statements
    def block(self, node: Node, indent: int) -> None:
        if not node.src:
            self.emit(indent, "pass")
        for s in node.src:
            self.stmt(s, indent)

    def stmt(self, s: Node, ind: int) -> None:
        op = s.op
        if self.debug and op is not Op.BLOCK:
            self.hook(ind, s.loc)
        if op is Op.BLOCK:
            self.block(s, ind)
        elif op is Op.ASSIGN:
            sym, value = s.arg, s.src[0]
            if sym.type.is_vector:
                self.emit(ind, f"{sym.pyname} = _asg({sym.pyname}, {self.x(value)})", s.loc)
            elif sym.type is T.TABLE:
                self.emit(ind, f"_table_assign({sym.pyname}, {self.x(value)})", s.loc)
            else:
                self.emit(ind, f"{sym.pyname} = {self.x(value)}", s.loc)
        elif op is Op.CALL:
            info, outs = s.arg
            call = self.mark(s, f"{info.pyname}({', '.join(self.x(a) for a in s.src)})")
            targets = [t.pyname for t in outs]
            if info.is_function:
                targets.insert(0, "_")
            if len(targets) == 1 and info.is_function:
                self.emit(ind, call, s.loc)
            elif targets:
                self.emit(ind, f"{', '.join(targets)}, = {call}", s.loc)
            else:
                self.emit(ind, call, s.loc)
        elif op is Op.ERROR:
            self.emit(ind, self.mark(s, f"_error({s.arg!r})"), s.loc)
        elif op is Op.WRITE:
            fn = "_writeln" if s.arg else "_write"
            self.emit(ind, f"{fn}({', '.join(self.fmt(a) for a in s.src)})", s.loc)
        elif op is Op.IF:
            cond, then, orelse = s.src
            self.emit(ind, f"if {self.x(cond)}:", s.loc)
            self.block(then, ind + 1)
            if orelse.src:
                self.emit(ind, "else:")
                self.block(orelse, ind + 1)
        elif op is Op.WHILE:
            cond, body = s.src
            self.emit(ind, f"while {self.x(cond)}:", s.loc)
            self.tick(ind + 1, s.loc)
            self.block(body, ind + 1)
            if self.debug:   # the next test of the condition is an event of the while line
                self.hook(ind + 1, s.loc)
        elif op is Op.REPEAT:
            body, cond = s.src
            self.emit(ind, "while True:", s.loc)
            self.tick(ind + 1, s.loc)
            self.block(body, ind + 1)
            if self.debug:   # the until test is an event of its own line
                self.hook(ind + 1, cond.loc)
            self.emit(ind + 1, f"if {self.x(cond)}:", cond.loc)
            self.emit(ind + 2, "break")
        elif op is Op.FOR:
            self.for_loop(s, ind)
        elif op is Op.PFOR:
            self.parallel_for(s, ind)
        elif op in (Op.SET, Op.CLR, Op.BIT_SET, Op.REP, Op.COL_SET, Op.ROW_SET):
            self.emit(ind, self.x(s), s.loc)
        else:  # an expression used as a statement (a function call)
            self.emit(ind, self.x(s), s.loc)

    def hook(self, ind: int, loc) -> None:
        """One debugger event (starvm/debug/events.py reads the Star position of this line)."""
        self.emit(ind, "_dbg(1)" if self._entry else "_dbg()", loc)
        self._entry = False

    def tick(self, ind: int, loc) -> None:
        """One step of the step limit (generated only when the machine has a limit)."""
        if self.step_limit:
            self.emit(ind, "_tick()", loc)

    def for_loop(self, s: Node, ind: int, tick: bool = True) -> None:
        var, downto = s.arg[0], s.arg[1]
        start, stop, body = s.src
        rng = (f"range({self.x(start)}, {self.x(stop)} - 1, -1)" if downto
               else f"range({self.x(start)}, {self.x(stop)} + 1)")
        if self.progress and self._for_depth == 0 and s.loc is not None:
            rng = f"_progress({rng}, {f'for {var.display} (line {s.loc.line})'!r})"
        self.emit(ind, f"for {var.pyname} in {rng}:", s.loc)
        if tick:
            self.tick(ind + 1, s.loc)
        self._for_depth += 1
        try:
            self.block(body, ind + 1)
        finally:
            self._for_depth -= 1
        if self.debug and tick:   # advancing the loop variable: an event of the for line
            self.hook(ind + 1, s.loc)

    def parallel_for(self, s: Node, ind: int) -> None:
        """Forall semantics: the body reads snapshots of what it writes; private variables
        are restored after the loop. A fusable body runs as one array operation (forall.py)."""
        var, downto, info, snaps = s.arg
        self.tick(ind, s.loc)   # one step for the whole loop, fused or not
        for orig, snap in snaps.items():
            how = "_snapshot" if orig.type is T.TABLE else "_copy"
            self.emit(ind, f"{snap.pyname} = {how}({orig.pyname})", s.loc)
        if self.fuse and fusable(s):
            symbols = sorted({n.arg for n in _walk(s.src[2]) if n.op is Op.VAR and n.arg is not var},
                             key=lambda x: x.pyname)
            name = f"_forall{self.unit_id}_{next(self.tmp)}"
            self.consts[name] = self.B.forall_kernel(s, self.counts, symbols, self.fused_timing)
            values = "".join(f"{x.pyname}, " for x in symbols)
            call = f"{name}({self.x(s.src[0])}, {self.x(s.src[1])}, ({values}))"
            self.emit(ind, self.mark(s, call), s.loc)
            return
        saved = []
        for sym in sorted(info.private, key=lambda x: x.name):
            tmp = f"_saved{next(self.tmp)}"
            saved.append((sym, tmp))
            self.emit(ind, f"{tmp} = _save({sym.pyname})")
        self.for_loop(Node(Op.FOR, s.src, (var, downto), loc=s.loc), ind, tick=False)
        for sym, tmp in saved:
            self.emit(ind, f"{sym.pyname} = {tmp}")

    # ------------------------------------------------------------------ expressions
    def fmt(self, e: Node) -> str:
        code = self.x(e)
        if e.type is T.STR:
            return code
        if e.type is T.INT:
            return f"str({code})"
        if e.type is T.BOOL:
            return f"('true' if {code} else 'false')"
        if e.type is T.TABLE:
            return f"_fmt_table({code})"
        return self.mark(e, f"_fmt_bits({code})")

    def x(self, e: Node) -> str:
        op = e.op
        if op is Op.CONST:
            return ascii(e.arg) if isinstance(e.arg, str) else repr(e.arg)
        if op is Op.VAR:
            return e.arg.pyname
        if op is Op.BITS:
            name = f"_k{self.unit_id}_{len(self.consts)}_{next(self.tmp)}"
            bits = [c == "1" for c in e.arg]
            self.consts[name] = self.B.from_bools(bits)
            return f"_Bits({name}, {len(bits)})"
        if op is Op.COPY:
            return self.mark(e, f"_copy({self.x(e.src[0])})")
        if op is Op.BINARY:
            a, b = (self.x(s) for s in e.src)
            if e.arg == "div":
                return self.mark(e, f"_div({a}, {b})")
            if e.arg == "mod":
                return self.mark(e, f"_mod({a}, {b})")
            return f"({a} {_PY_BINARY[e.arg]} {b})"
        if op is Op.UNARY:
            a = self.x(e.src[0])
            return f"(-{a})" if e.arg == "neg" else f"(not {a})"
        if op is Op.LEN:
            return self.mark(e, f"_len({self.x(e.src[0])})")
        if op is Op.NROWS:
            return f"{self.x(e.src[0])}.n"
        if op is Op.NCOLS:
            return f"{self.x(e.src[0])}.k"
        if op is Op.GRAPH:   # graph input, starvm/graphs/star.py
            return self.mark(e, f"_graph({e.arg!r}{''.join(', ' + self.x(s) for s in e.src)})")
        if op is Op.CALL:
            return self.call_expr(e)
        if op in BASE_OPS:
            return self.mark(e, f"{op_name(op)}({', '.join(self.x(s) for s in e.src)})")
        raise AssertionError(f"cannot generate {op}")

    def call_expr(self, e: Node) -> str:
        info, outs = e.arg
        call = self.mark(e, f"{info.pyname}({', '.join(self.x(a) for a in e.src)})")
        if not outs:
            return call
        # a function with var parameters inside an expression: copy them back as it returns
        t = f"_t{next(self.tmp)}"
        backs = ", ".join(f"({o.pyname} := {t}[{i + 1}])" for i, o in enumerate(outs))
        return f"(({t} := {call}), {backs})[0][0]"


def _walk(node: Node):
    yield node
    for s in node.src:
        yield from _walk(s)


def _assigned_symbols(node: Node):
    """Symbols the statements under node assign (they need a `global` declaration)."""
    if node.op is Op.ASSIGN:
        yield node.arg
    elif node.op in (Op.FOR, Op.PFOR):
        yield node.arg[0]
        if node.op is Op.PFOR:
            yield from node.arg[2].private
    elif node.op is Op.CALL:
        yield from node.arg[1]
    for s in node.src:
        yield from _assigned_symbols(s)
