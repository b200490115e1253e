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

from ...check.symbols import RoutineInfo, Symbol
from ...errors import Loc, StarTypeError
from ...frontend.deep import deep
from ...frontend.integers import decimal_of_int
from ...ir.lower import LoweredUnit
from ...ir.main_parts import main_parts, part_name
from ...ir.ops import BASE_OPS, GroupOp, Node, Op
from ...types import T
from ..numpy.forall import fusable

_OPEN, _MID, _CLOSE = "\x01", "\x02", "\x03"
# Python's compiler nests at most 200 parentheses, 100 indentation levels and 20 loop/try
# blocks per function. A deeper expression is computed through temporaries (`linear`), a
# statement nested deeper is moved into a closure of its own (`outline`).
_EXPR_DEPTH = 24        # deeper expressions are computed one operation per line
_OUTLINE_INDENT = 24    # statement nesting (indentation) after which a compound moves out
_OUTLINE_BLOCKS = 8     # loops nested in one Python function after which a loop moves out
_MAX_INDENT = 90        # a conditional and/or nesting deeper than this is refused
_DEEP_PROGRAM = 150     # IR deeper than this is generated with deep.py's room for recursion
_FUSE_HEIGHT = 200      # a parallel for body deeper than this runs iteration by iteration
_PY_BINARY = {"+": "+", "-": "-", "*": "*", "=": "==", "<>": "!=", "<": "<", "<=": "<=",
              ">": ">", ">=": ">=", "and": "and", "or": "or", "xor": "!="}
_unit_ids = itertools.count(1)


def op_name(op: Op) -> str:
    """The name the generated code calls a base operation by (runtime/ops.py binds the
    interpreter's functions under these names)."""
    return "_op_" + op.name.lower()


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
    outlined: set[str] = field(default_factory=set)   # closures of deeply nested statements:
    # a frame of one continues the Star frame of the function it belongs to (tracemap.py)
    main_parts: dict[str, Node] = field(default_factory=dict)   # functions main_ calls for its parts
    # (ir/main_parts.py): name -> the statements, which a tier may run whole (jit/cuda_tier.py)


class CodeGen:
    """The interpreter's renderer. What a base operation or a one-operand value becomes is in
    the op -> template tables below (a subclass overrides entries); statements are the cases
    of ``stmt``."""
    # a base operation: the function of runtime/ops.py that generated code calls (op_name)
    op_function: dict[Op, str] = {op: op_name(op) for op in BASE_OPS}
    # a value of one operand: its template; one that can fail is marked with its position
    checked_template: dict[Op, str] = {Op.COPY: "_copy({})", Op.LEN: "_len({})"}
    plain_template: dict[Op, str] = {Op.NROWS: "{}.n", Op.NCOLS: "{}.k"}

    def __init__(self, backend, star_filename: str, counts: list[int] | None = None, fuse: bool = True,
                 fused_timing: list | None = None, step_limit: bool = False, progress: bool = False,
                 debug: bool = False):
        self.B = backend
        # starvm/debug: call _dbg() before every statement (and each loop test); off: no code at all
        self.debug = debug
        self._entry = False            # the next _dbg() is a routine's first event: _dbg(1)
        self.progress = progress       # wrap outermost for loops in _progress() (starvm/ui/progress.py)
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
        self.outlined: set[str] = set()   # closures holding a deeply nested statement (tracemap.py)
        self._heights: dict[int, int] = {}
        self.cur_ind = 0                  # where the temporaries of the expression being built go
        self.cur_loc: Loc | None = None   # the statement they belong to
        self._fn: _Function | None = None # the Python function being generated

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
        if _max_depth(lowered) > _DEEP_PROGRAM:   # frontend/deep.py: room for one recursion per level
            return deep(self._unit, lowered)
        return self._unit(lowered)

    def _unit(self, lowered: LoweredUnit) -> GeneratedUnit:
        for info, body in lowered.routines:
            self.routine(info, body)
        self.names["init_"] = "initialization"
        self.emit(0, "def init_():")
        globs = [s.pyname for s in lowered.globals]
        if globs:
            self.emit(1, "global " + ", ".join(globs))
        for sym in lowered.globals:
            self.cur_ind, self.cur_loc = 1, sym.loc
            self.emit(1, f"{sym.pyname} = {self.initial(sym)}", sym.loc)
        self.emit(1, "pass")
        parts = {}
        if lowered.main is not None:
            parts = self.main_block(lowered.main)
        return GeneratedUnit(self.filename, "\n".join(self.out) + "\n", self.lines, self.names, self.consts,
                             self.outlined, parts)

    def main_block(self, main: Node) -> dict[str, Node]:
        """``main_``; where the main block has parts a tier may take whole (ir/main_parts.py),
        each part is a function of its own that ``main_`` calls, a frame of which continues the
        main block's (``outlined``). Returns the parts: name -> their statements."""
        ranges = [] if self.debug else main_parts(main)    # the debugger steps through main_ itself
        parts = {}
        for k, (a, b) in enumerate(ranges):
            name = part_name(self.unit_id, k)
            body = Node(Op.BLOCK, main.src[a:b], loc=main.src[a].loc)
            parts[name] = body
            self.names[name] = "main block"
            self.outlined.add(name)
            self.emit(0, f"def {name}():", body.loc)
            self.global_decl(body, 1)
            self.function_body(body, 1, "main block", [], 0)
        self.names["main_"] = "main block"
        self.emit(0, "def main_():")
        self.global_decl(main, 1)
        self._entry = True
        if not parts:
            self.function_body(main, 1, "main block", [], 0)
            return parts
        at, end = 0, len(main.src)
        for (a, b), name in [*zip(ranges, parts), ((end, end), None)]:
            if a > at:       # the statements between parts (graph input, calls): main_'s own
                self.function_body(Node(Op.BLOCK, main.src[at:a], loc=main.src[at].loc), 1, "main block", [], 0)
            if name is not None:
                self.emit(1, f"{name}()", main.src[a].loc)
            at = b
        return parts

    # ------------------------------------------------------------------ buffers and closures
    def _swap(self, out: list[str], lines: dict[int, LineInfo]):
        saved = self.out, self.lines
        self.out, self.lines = out, lines
        return saved

    def _append(self, out: list[str], lines: dict[int, LineInfo]) -> None:
        """Append lines generated into a buffer of their own (numbered from 1 there)."""
        for i, text in enumerate(out, 1):
            self.out.append(text)
            self.lines[len(self.out)] = lines[i]

    def function_body(self, body: Node, ind: int, display: str, names: list[str], loops: int) -> None:
        """The statements of one Python function, at indentation ``ind``. Statements nested too
        deeply are generated as closures (``outline``) defined before the statements; ``names``
        are the function's own variables, which the closures share (nonlocal)."""
        snaps = sorted({snap.pyname for n in _walk(body) if n.op is Op.PFOR for snap in n.arg[3].values()})
        outer = self._fn
        self._fn = _Function(ind, display, names + snaps, loops)
        # the globals any closure may assign (one walk, not one per closure)
        self._fn.globals = sorted({x.pyname for x in _assigned_symbols(body) if x.scope == "global"})
        try:
            saved = self._swap([], {})
            try:
                self.block(body, ind)
                body_buf = self.out, self.lines
            finally:
                self._swap(*saved)
            if self._fn.closures:
                for name in snaps:   # a closure may read a snapshot another one takes
                    self.emit(ind, f"{name} = None")
                for closure in self._fn.closures:
                    self._append(*closure)
            self._append(*body_buf)
        finally:
            self._fn = outer

    def outline(self, s: Node, ind: int) -> None:
        """Generate statement ``s`` as a closure of the current function, called here: its
        nesting starts again at the closure's first level."""
        fn = self._fn
        name = f"_o{self.unit_id}_{next(self.tmp)}"
        self.names[name] = fn.display
        self.outlined.add(name)
        saved = self._swap([], {})
        loops, fn.loops = fn.loops, 0
        try:
            self.emit(fn.ind, f"def {name}():", s.loc)
            if fn.globals:
                self.emit(fn.ind + 1, "global " + ", ".join(fn.globals))
            if fn.names:
                self.emit(fn.ind + 1, "nonlocal " + ", ".join(fn.names))
            self.stmt(s, fn.ind + 1)
            fn.closures.append((self.out, self.lines))
        finally:
            self._swap(*saved)
            fn.loops = loops
        self.emit(ind, self.mark(s, f"{name}()"), s.loc)

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
        own = info.locals + ([info.result] if info.result else [])
        for sym in own:
            self.cur_ind, self.cur_loc = 2, sym.loc
            self.emit(2, f"{sym.pyname} = {self.initial(sym)}", sym.loc)
        self._entry = True
        names = [p.pyname for p in info.params] + [sym.pyname for sym in own]
        self.function_body(body, 2, info.display, names, loops=1)   # inside `try:`, one block
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
        fn = self._fn
        if op in GroupOp.Compound and fn is not None and (
                ind - fn.ind >= _OUTLINE_INDENT or (op in GroupOp.Loops and fn.loops >= _OUTLINE_BLOCKS)):
            self.outline(s, ind)
            return
        self.cur_ind, self.cur_loc = ind, s.loc
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
            if self.height(cond) > _EXPR_DEPTH:   # its temporaries are computed at every test
                self.emit(ind, "while True:", s.loc)
                self.cur_ind = ind + 1
                self.emit(ind + 1, f"if not {self.x(cond)}:", s.loc)
                self.emit(ind + 2, "break")
            else:
                self.emit(ind, f"while {self.x(cond)}:", s.loc)
            self.loop_body(body, ind, s.loc)
            if self.debug:   # the next test of the condition is an event of the while line
                self.hook(ind + 1, s.loc)
        elif op is Op.REPEAT:
            body, cond = s.src
            self.emit(ind, "while True:", s.loc)
            self.loop_body(body, ind, s.loc)
            if self.debug:   # the until test is an event of its own line
                self.hook(ind + 1, cond.loc)
            self.cur_ind, self.cur_loc = ind + 1, cond.loc
            self.emit(ind + 1, f"if {self.x(cond)}:", cond.loc)
            self.emit(ind + 2, "break")
        elif op is Op.FOR:
            self.for_loop(s, ind)
        elif op is Op.PFOR:
            self.parallel_for(s, ind)
        else:  # a base operation that changes its operand, or an expression used as a statement
            self.emit(ind, self.x(s), s.loc)

    def hook(self, ind: int, loc) -> None:
        """One debugger event (starvm/debug/events.py reads the Star position of this line)."""
        self.emit(ind, "_dbg(1)" if self._entry else "_dbg()", loc)
        self._entry = False

    def loop_body(self, body: Node, ind: int, loc, tick: bool = True) -> None:
        """The body of a Python loop just emitted at ``ind`` (one more nested block)."""
        if tick:
            self.tick(ind + 1, loc)
        if self._fn is not None:
            self._fn.loops += 1
        try:
            self.block(body, ind + 1)
        finally:
            if self._fn is not None:
                self._fn.loops -= 1

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
        self._for_depth += 1
        try:
            self.loop_body(body, ind, s.loc, tick)
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
        if self.fuse and fusable(s) and self.height(s) <= _FUSE_HEIGHT:   # forall.py recurses per level
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
            self.consts["_istr"] = decimal_of_int   # str() stops at 4300 digits
            return f"_istr({code})"
        if e.type is T.BOOL:
            return f"('true' if {code} else 'false')"
        if e.type is T.TABLE:
            return f"_fmt_table({code})"
        return self.mark(e, f"_fmt_bits({code})")

    def x(self, e: Node) -> str:
        """The Python expression computing ``e``. One deeper than _EXPR_DEPTH is computed by
        lines of temporaries emitted before the statement's line (``linear``)."""
        if e.op is not Op.CONST and e.op is not Op.VAR and self.height(e) > _EXPR_DEPTH:
            return self.linear(e)
        return self.code(e, [self.x(s) for s in e.src] if e.op is not Op.CALL else None)

    def code(self, e: Node, args: list[str] | None) -> str:
        """The Python expression of node ``e`` whose operands are computed by ``args``."""
        op = e.op
        if op is Op.CONST:
            if isinstance(e.arg, str):
                return ascii(e.arg)
            if isinstance(e.arg, int) and not isinstance(e.arg, bool) and e.arg.bit_length() > 3000:
                name = f"_k{self.unit_id}_{len(self.consts)}_{next(self.tmp)}"   # repr() stops at 4300 digits
                self.consts[name] = e.arg
                return name
            return repr(e.arg)
        if op is Op.VAR:
            return e.arg.pyname
        if op is Op.BITS:
            name = f"_k{self.unit_id}_{len(self.consts)}_{next(self.tmp)}"
            bits = [c == "1" for c in e.arg]
            self.consts[name] = self.B.from_bools(bits)
            return f"_Bits({name}, {len(bits)})"
        if op is Op.CALL:
            return self.call_expr(e, args)
        if op in self.checked_template:
            return self.mark(e, self.checked_template[op].format(args[0]))
        if op in self.plain_template:
            return self.plain_template[op].format(args[0])
        if op is Op.BINARY:
            a, b = args
            if e.arg == "div":
                return self.mark(e, f"_div({a}, {b})")
            if e.arg == "mod":
                return self.mark(e, f"_mod({a}, {b})")
            return f"({a} {_PY_BINARY[e.arg]} {b})"
        if op is Op.UNARY:
            return f"(-{args[0]})" if e.arg == "neg" else f"(not {args[0]})"
        if op is Op.GRAPH:   # graph input, starvm/graphs/star.py
            return self.mark(e, f"_graph({e.arg!r}{''.join(', ' + a for a in args)})")
        if op in self.op_function:
            return self.mark(e, f"{self.op_function[op]}({', '.join(args)})")
        raise AssertionError(f"cannot generate {op}")

    def height(self, e: Node) -> int:
        """Levels of nodes from e down (memoised: asked at every level of a deep tree)."""
        h = self._heights.get(id(e))
        if h is None:
            h = 1 + max((self.height(s) for s in e.src), default=0)
            self._heights[id(e)] = h
        return h

    def temp(self, code: str) -> str:
        name = f"_h{next(self.tmp)}"
        self.emit(self.cur_ind, f"{name} = {code}", self.cur_loc)
        return name

    def linear(self, e: Node) -> str:
        """``e`` computed one operation per line, in Python's order of evaluation: every
        operand that is not a constant goes to a temporary before the next one is computed
        (a call may change a variable read later). Returns the temporary holding ``e``."""
        if e.op is Op.CONST:
            return self.code(e, [])
        if self.height(e) <= _EXPR_DEPTH:
            return self.temp(self.x(e))
        if e.op is Op.BINARY and e.arg in ("and", "or"):
            return self.linear_logic(e)
        return self.temp(self.code(e, [self.linear(s) for s in e.src]))

    def linear_logic(self, e: Node) -> str:
        """A chain of `and` (or of `or`), computed with Python's short circuit: an operand is
        computed only while the result is still open. Nested chains of the same operator are
        one chain; only `and` inside `or` inside `and` ... indents."""
        op = e.arg
        operands, stack = [], [e]
        while stack:
            n = stack.pop()
            if n.op is Op.BINARY and n.arg == op:
                stack += [n.src[1], n.src[0]]
            else:
                operands.append(n)
        t = f"_h{next(self.tmp)}"
        self.emit(self.cur_ind, f"{t} = {self.linear(operands[0])}", self.cur_loc)
        for o in operands[1:]:
            self.emit(self.cur_ind, f"if {t}:" if op == "and" else f"if not {t}:", self.cur_loc)
            self.cur_ind += 1
            if self.cur_ind > _MAX_INDENT:
                raise StarTypeError(f"'and' and 'or' nested too deeply in one expression (more than "
                                    f"{_MAX_INDENT} levels)", e.loc, hint="compute parts of the condition "
                                    "into boolean variables first")
            try:
                self.emit(self.cur_ind, f"{t} = {self.linear(o)}", self.cur_loc)
            finally:
                self.cur_ind -= 1
        return t

    def call_expr(self, e: Node, args: list[str] | None = None) -> str:
        info, outs = e.arg
        if args is None:
            args = [self.x(a) for a in e.src]
        call = self.mark(e, f"{info.pyname}({', '.join(args)})")
        if not outs:
            return call
        # a function with var parameters inside an expression: copy them back as it returns
        t = f"_t{next(self.tmp)}"
        backs = ", ".join(f"({o.pyname} := {t}[{i + 1}])" for i, o in enumerate(outs))
        return f"(({t} := {call}), {backs})[0][0]"


@dataclass
class _Function:
    """The Python function being generated: where its statements start, its Star name, the
    variables its closures share, the loops open at this point, its closures' lines."""
    ind: int
    display: str
    names: list[str]
    loops: int
    closures: list = field(default_factory=list)
    globals: list[str] = field(default_factory=list)


def _walk(node: Node):
    """The nodes under node, preorder (a stack, not recursion: trees may be deep)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.src))


def _max_depth(lowered: LoweredUnit) -> int:
    roots = [body for _info, body in lowered.routines] + ([lowered.main] if lowered.main is not None else [])
    stack, deepest = [(r, 1) for r in roots], 0
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((s, d + 1) for s in n.src)
    return deepest


def _assigned_symbols(node: Node):
    """Symbols the statements under node assign (they need a `global` declaration)."""
    for n in _walk(node):
        if n.op is Op.ASSIGN:
            yield n.arg
        elif n.op in GroupOp.ForLoops:
            yield n.arg[0]
            if n.op is Op.PFOR:
                yield from n.arg[2].private
        elif n.op is Op.CALL:
            yield from n.arg[1]
