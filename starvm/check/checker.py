"""Name resolution and type checking (spec §2-§4), before anything runs.

The checker annotates the AST in place: every expression gets ``type``, every name its
``ref`` (a Symbol or a RoutineInfo), every application its ``kind``
('call' | 'builtin' | 'bit'). The first error is raised as a StarTypeError with its position.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable

from ..errors import StarTypeError, StarWarning
from ..frontend import ast as A
from ..frontend.deep import deep
from ..frontend.integers import decimal_of_int
from ..types import T
from .builtins import BUILTINS, STATEMENT_BUILTINS, Builtin
from .parallel import check_parallel_for
from .symbols import RoutineInfo, Symbol

_TYPE_OF_KIND = {"integer": T.INT, "boolean": T.BOOL, "slice": T.SLICE, "word": T.WORD, "table": T.TABLE}
_ARITH = {"+", "-", "*", "div", "mod"}
_ORDER = {"<", "<=", ">", ">="}
_EQUALITY = {"=", "<>"}
_LOGIC = {"and", "or", "xor"}


@dataclass
class Environment:
    """What earlier loads into the same machine declared: it persists between loads."""
    globals: dict[str, Symbol] = field(default_factory=dict)
    routines: dict[str, RoutineInfo] = field(default_factory=dict)
    # Looks a routine name up in the standard library; returns parsed routines or None.
    library: Callable[[str], list[A.Routine] | None] | None = None
    # Receives the warnings of a text that checked fine (the program still runs); None: ignore them.
    warn: Callable[[StarWarning], None] | None = field(default_factory=lambda: print_warning)


def print_warning(w: StarWarning) -> None:
    """The default: the warning as compilers print it, on stderr."""
    print(w.render(), file=sys.stderr)


@dataclass
class CheckedUnit:
    """The result of checking one program text: what it adds to the environment."""
    program: A.Program
    globals: list[Symbol]
    routines: list[RoutineInfo]
    main: A.Block | None


def _err(msg: str, node: A.Node, hint: str | None = None) -> StarTypeError:
    return StarTypeError(msg, node.loc, hint=hint)


_PROC_AS_FUNCTION_HINT = ("call {name} as a statement of its own, '{name}(...);': "
                          "a procedure returns its results in its 'var' parameters")


def _text(e: A.Node) -> str:
    """The source text of an expression on one line (for hints that quote it)."""
    loc = e.loc
    line = loc.source.line(loc.line)
    start = loc.column - 1
    if isinstance(e, A.Apply):     # from the name to the matching ')'
        depth, i = 0, line.find("(", start)
        while 0 <= i < len(line):
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            if depth == 0:
                return line[start:i + 1]
            i += 1
    return line[start:loc.end_column - 1 if loc.end_column else start + 1]


def _from_stdlib(r: A.Routine) -> bool:
    """A library routine loaded on demand (a program may have a variable of the same name)."""
    return r.loc is not None and r.loc.source.filename.startswith("stdlib/")


def _kind_word(t: T) -> str:
    return {T.INT: "an integer", T.BOOL: "a boolean", T.SLICE: "a slice", T.WORD: "a word",
            T.TABLE: "a table", T.STR: "a string", T.VOID: "nothing"}[t]


# ---- sizes known before running: tables of constant size, what they give, BITS literals ----
_WORD_PAIRS = {"EQ", "NOTEQ", "LESS", "LESSEQ", "GREAT", "GREATEQ", "ADD", "SUBT"}
_VECTOR_TITLES = {"and": "and", "or": "or", "xor": "xor", "=": "EQ", "<>": "NOTEQ"}   # as the run says


def _const(e) -> int | None:
    """The value of an integer expression of literals (a constant may be set from the command
    line, so only literals count)."""
    if isinstance(e, A.Num):
        return e.value
    if isinstance(e, A.Unary) and e.op in ("-", "+"):
        v = _const(e.operand)
        return None if v is None else (-v if e.op == "-" else v)
    if isinstance(e, A.BinOp) and e.op in ("+", "-", "*"):
        a, b = _const(e.left), _const(e.right)
        if a is None or b is None or max(a.bit_length(), b.bit_length()) > 64:
            return None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def _table_size(sym) -> tuple[int, int] | None:
    spec = getattr(sym, "spec", None)
    if not isinstance(sym, Symbol) or sym.type is not T.TABLE or spec is None or spec.dims is None:
        return None
    n, k = (_const(d) for d in spec.dims)
    return None if n is None or k is None or n < 0 or k < 0 else (n, k)


def _symbol_length(sym) -> int | None:
    if not isinstance(sym, Symbol) or sym.length_of is None:
        return None
    size = _table_size(sym.length_of)
    return None if size is None else size[0] if sym.type is T.SLICE else size[1]


def _length(e) -> int | None:
    """The number of bits of a slice or word expression, when it is known before running."""
    if isinstance(e, A.Name):
        return _symbol_length(e.ref)
    if isinstance(e, A.Apply) and e.kind == "builtin":
        name = e.ref.name
        if name == "BITS":
            return len(e.args[0].value)
        if name in ("COL", "ROW"):
            size = _table_size(getattr(e.args[1], "ref", None))
            return None if size is None else size[0] if name == "COL" else size[1]
        if name in ("FRST", "CONVERT", "ADD", "SUBT"):
            return _length(e.args[0])
        return None
    if isinstance(e, A.Unary) and e.op == "not":
        return _length(e.operand)
    if isinstance(e, A.BinOp) and e.op in ("and", "or", "xor"):
        a = _length(e.left)
        return a if a is not None else _length(e.right)
    return None


def _same_lengths(e, title: str, left, right) -> None:
    a, b = _length(left), _length(right)
    if a is not None and b is not None and a != b:
        raise _err(f"length mismatch in {title}: {a} bits and {b} bits", e)


def _writes(node, sym) -> bool:
    """Does anything under node assign sym: `x := ...`, `x(i) := ...`, or pass x where the
    callee may write it (a var parameter, SET/CLR/STEP/REP)?"""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, A.Assign):
            t = n.target
            if (isinstance(t, A.Name) and t.ref is sym) or (isinstance(t, A.Apply) and getattr(t.func, "ref", None) is sym):
                return True
        if isinstance(n, (A.CallStmt, A.Apply)) and any(isinstance(a, A.Name) and a.ref is sym for a in n.args):
            return True    # passed to a routine or an operation (it may write a var argument)
        for v in vars(n).values():
            if isinstance(v, A.Node):
                stack.append(v)
            elif isinstance(v, list):
                stack.extend(x for x in v if isinstance(x, A.Node))
    return False


def is_bits_literal(e: A.Node) -> bool:
    return isinstance(e, A.Apply) and e.kind == "builtin" and e.ref.name == "BITS"


class Checker:
    def __init__(self, env: Environment):
        self.env = env
        self.scope: dict[str, Symbol] = {}
        self.routine: RoutineInfo | None = None
        self.loop_vars: list[Symbol] = []
        self.new_routines: list[RoutineInfo] = []
        self.warnings: list[StarWarning] = []

    # ------------------------------------------------------------------ entry
    def check_program(self, prog: A.Program) -> CheckedUnit:
        unit = deep(self._check_program, prog)   # deep.py: one recursion per nesting level
        if self.env.warn is not None:
            for w in sorted(prog.warnings + self.warnings, key=lambda w: (w.loc.line, w.loc.column)):
                self.env.warn(w)
        return unit

    def _check_program(self, prog: A.Program) -> CheckedUnit:
        new_globals = []
        for d in prog.globals:
            sym = self._declare(d.name, d.display, d.type, "global", d, self.env.globals)
            sym.constant = d.value
            new_globals.append(sym)
        for r in prog.routines:
            self._declare_routine(r)
        for info in list(self.new_routines):
            self._check_routine(info)
        if prog.main is not None:
            self.scope, self.routine = {}, None
            self._block(prog.main)
        return CheckedUnit(prog, new_globals, self.new_routines, prog.main)

    # ------------------------------------------------------------------ declarations
    def _declare(self, name, display, spec: A.TypeSpec, scope, node, into: dict, by_ref=False) -> Symbol:
        if name in into:
            first = getattr(into[name], "display", display)
            hint = (f"names are case-insensitive ('{first}' and '{display}' are one name; "
                    "'A-B' and 'A_B' too): rename one" if first != display else None)
            raise _err(f"'{display}' is declared twice", node, hint)
        if name in BUILTINS and scope != "result":
            raise _err(f"'{display}' is the name of a built-in operation and cannot be redeclared", node)
        t = _TYPE_OF_KIND[spec.kind]
        sym = Symbol(name, display, t, scope, node.loc, by_ref=by_ref,
                     readonly=(t is T.TABLE and scope == "param" and not by_ref), spec=spec,
                     pyname=("g_" if scope == "global" else "v_") + name)
        if spec.of is not None:
            table = into.get(spec.of.name) or self._lookup_var(spec.of.name)
            if table is None:
                raise _err(f"unknown table '{spec.of.display}' in {spec.kind}({spec.of.display})", spec.of)
            if table.type is not T.TABLE:
                raise _err(f"'{spec.of.display}' is {_kind_word(table.type)}; {spec.kind}(T) needs a table", spec.of)
            sym.length_of = table
        if spec.dims is not None:
            if scope in ("param", "result"):
                raise _err("a table parameter takes the caller's table; give no size", spec)
            for dim in spec.dims:
                self._expect(dim, T.INT, "a table size")
        elif t is T.TABLE and scope in ("local", "global"):
            raise _err(f"table '{display}' needs a size: table(rows, columns)", spec)
        into[name] = sym
        return sym

    def _lookup_var(self, name: str) -> Symbol | None:
        return self.scope.get(name) or self.env.globals.get(name)

    def _declare_routine(self, r: A.Routine) -> RoutineInfo:
        var = self.env.globals.get(r.name)
        if var is not None and not _from_stdlib(r):
            # a call R2(3) would otherwise read the global r2 (names are case-insensitive)
            hint = (f"names are case-insensitive ('{var.display}' and '{r.display}' are one name): rename one"
                    if var.display != r.display else None)
            raise _err(f"'{r.display}' is declared twice: a global variable (at {var.loc}) and a routine", r, hint)
        if r.name in self.env.routines:
            prev = self.env.routines[r.name]
            if any(prev is n for n in self.new_routines):
                raise _err(f"routine '{r.display}' is declared twice (first at {prev.node.loc})", r)
        info = RoutineInfo(r.name, r.display, r, pyname="r_" + r.name)
        self.scope = {}
        # slice(F) / word(F) may name a table parameter declared after it (spec §9's WCOPY):
        # declare the parameters without such a reference first, keep the written order.
        by_param = {}
        for p in sorted(r.params, key=lambda p: p.type.of is not None):
            by_param[id(p)] = self._declare(p.name, p.display, p.type, "param", p, self.scope, p.by_ref)
        info.params = [by_param[id(p)] for p in r.params]
        if r.result is not None:
            if r.result.kind == "table":
                raise _err("a function cannot return a table; use a var parameter", r.result)
            info.result = self._declare(r.name, r.display, r.result, "result", r.result, {})
            info.result.pyname = "result_"
        self.env.routines[r.name] = info
        self.new_routines.append(info)
        return info

    def _check_routine(self, info: RoutineInfo) -> None:
        self.routine = info
        self.scope = {p.name: p for p in info.params}
        for d in info.node.locals:
            info.locals.append(self._declare(d.name, d.display, d.type, "local", d, self.scope))
        self._block(info.node.body)
        self.routine = None
        if info.is_function and not _from_stdlib(info.node) and not _writes(info.node.body, info.result):
            zero = {T.INT: "0", T.BOOL: "false"}.get(info.result.type)
            self.warnings.append(StarWarning(
                f"function '{info.display}' never assigns its result",
                info.node.loc, hint=f"assign it in the body: {info.display} := ...; until then it "
                + (f"returns {zero}" if zero else "has no value")))

    # ------------------------------------------------------------------ statements
    def _block(self, block: A.Block) -> None:
        for s in block.body:
            self._stmt(s)

    def _stmt(self, s) -> None:
        if s is None:
            return
        method = getattr(self, "_s_" + type(s).__name__)
        method(s)

    def _s_Block(self, s: A.Block):
        self._block(s)

    def _s_If(self, s: A.If):
        self._expect(s.cond, T.BOOL, "the condition of 'if'")
        self._stmt(s.then)
        self._stmt(s.orelse)

    def _s_While(self, s: A.While):
        self._expect(s.cond, T.BOOL, "the condition of 'while'")
        self._stmt(s.body)

    def _s_Repeat(self, s: A.Repeat):
        for x in s.body:
            self._stmt(x)
        self._expect(s.cond, T.BOOL, "the condition of 'until'")

    def _s_For(self, s: A.For):
        sym = self._var(s.var)
        if sym.type is not T.INT:
            raise _err(f"the loop variable '{s.var.display}' must be an integer, not {_kind_word(sym.type)}", s.var)
        if sym in self.loop_vars:
            raise _err(f"'{s.var.display}' is already the variable of an enclosing loop", s.var)
        if sym.constant is not None:
            raise _constant_error(s.var)
        self._expect(s.start, T.INT, "a loop bound")
        self._expect(s.stop, T.INT, "a loop bound")
        self.loop_vars.append(sym)
        try:
            self._stmt(s.body)
        finally:
            self.loop_vars.pop()
        if s.parallel:
            s.forall = check_parallel_for(s)

    def _s_Assign(self, s: A.Assign):
        tgt = s.target
        if isinstance(tgt, A.Name):
            sym = self._assignable_var(tgt)
            self._expect_assignable(s.value, sym.type, f"'{tgt.display}'")
            if sym.type.is_vector:
                have, got = _symbol_length(sym), _length(s.value)
                if have is not None and got is not None and have != got:
                    raise _err(f"length mismatch in assignment: the variable has {have} bits, the value {got}", s)
            return
        # X(i) := b, COL(i, T) := V, ROW(i, T) := w
        fn = tgt.func
        sym = self._lookup_var(fn.name)
        if sym is not None:
            if not sym.type.is_vector:
                raise _err(f"'{fn.display}' is {_kind_word(sym.type)}; only a bit of a slice or word can be assigned as {fn.display}(i)", fn)
            self._assignable_var(fn)
            tgt.kind, tgt.type = "bit", T.INT
            self._arity(tgt, 1, f"bit access {fn.display}(i)")
            self._expect(tgt.args[0], T.INT, "a bit index")
            vt = self._expr(s.value)
            if vt not in (T.INT, T.BOOL):
                raise _err(f"a bit takes 0 or 1 (or a boolean), not {_kind_word(vt)}", s.value)
            return
        if fn.name in ("col", "row"):
            b = BUILTINS[fn.name]
            tgt.kind, tgt.ref = "builtin", b
            self._arity(tgt, 2, f"{b.name}(i, T)")
            self._expect(tgt.args[0], T.INT, f"the index of {b.name}")
            table = tgt.args[1]
            if not isinstance(table, A.Name):
                raise _err(f"{b.name}(i, T) := ... needs a table variable as T", table)
            self._writable_table(table)
            want = T.SLICE if fn.name == "col" else T.WORD
            self._expect_assignable(s.value, want, f"{b.name}(i, {table.display})")
            tgt.type = want
            self._constant_index(tgt)
            size, got = _table_size(table.ref), _length(s.value)
            if size is not None and got is not None and got != (size[0] if fn.name == "col" else size[1]):
                index = _const(tgt.args[0])
                index = _text(tgt.args[0]) if index is None else decimal_of_int(index)
                rows, what = ((size[0], "slice"), "rows") if fn.name == "col" else ((size[1], "word"), "columns")
                raise _err(f"{b.name}({index}, {table.display}) := ...: the {rows[1]} has {got} bits but the table "
                           f"has {rows[0]} {what}", tgt)
            return
        if fn.name in self.env.routines or fn.name in BUILTINS:
            raise _err(f"cannot assign to the result of '{fn.display}(...)'", fn)
        raise self._unknown(fn)

    def _s_CallStmt(self, s: A.CallStmt):
        info = self._routine(s.name, statement=True)
        if info is not None:
            s.ref = info
            self._call_args(s, info, s.args)
            return
        b = BUILTINS.get(s.name)
        if b is not None:
            s.ref = b
            if b.name in ("WRITELN", "WRITE"):
                for a in s.args:
                    t = self._expr(a)
                    if t is T.VOID:
                        raise _err("this has no value to print", a)
                return
            self._builtin_args(s, b, s.args)
            return
        sym = self._lookup_var(s.name)
        if sym is not None:
            hint = ("a statement cannot be just a value: assign it (x := ...) or print it "
                    f"(writeln({s.display}); at the prompt, '{s.display}' as an input of its own)"
                    ) if not s.args else "an assignment needs ':='"
            raise _err(f"'{s.display}' is a variable, not a procedure", s, hint=hint)
        raise self._unknown(s)

    # ------------------------------------------------------------------ helpers for names
    def _routine(self, name: str, statement: bool = False) -> RoutineInfo | None:
        """A user or library routine. In an expression a built-in name is the built-in; a call
        statement looks routines up first, so `LESS(T, X, v, Z);` finds the library procedure."""
        info = self.env.routines.get(name)
        if info is None and self.env.library is not None and (statement or name not in BUILTINS):
            found = self.env.library(name)
            if found:
                saved = (self.scope, self.routine, self.loop_vars)
                infos = [self._declare_routine(r) for r in found if r.name not in self.env.routines]
                for i in infos:
                    self._check_routine(i)
                self.scope, self.routine, self.loop_vars = saved
                info = self.env.routines.get(name)
        return info

    def _unknown(self, node) -> StarTypeError:
        display = getattr(node, "display", None) or getattr(node, "name", "?")
        return _err(f"unknown name '{display}'", node)

    def _var(self, n: A.Name) -> Symbol:
        sym = self._lookup_var(n.name)
        if sym is None:
            if self.routine is not None and self.routine.is_function and n.name == self.routine.name:
                sym = self.routine.result
            elif n.name in self.env.routines or n.name in BUILTINS:
                raise _err(f"'{n.display}' is a routine, not a variable", n)
            else:
                raise self._unknown(n)
        n.ref = sym
        n.type = sym.type
        return sym

    def _assignable_var(self, n: A.Name) -> Symbol:
        sym = self._var(n)
        if sym in self.loop_vars:
            raise _err(f"cannot assign to '{n.display}': it is the variable of an enclosing for loop", n)
        if sym.constant is not None:
            raise _constant_error(n)
        if sym.readonly:
            raise _err(f"cannot change table '{n.display}': it is a parameter without 'var'", n,
                       hint=f"declare it as 'var {n.display}: table' to change it")
        return sym

    def _writable_table(self, n: A.Name) -> Symbol:
        sym = self._var(n)
        if sym.type is not T.TABLE:
            raise _err(f"'{n.display}' is {_kind_word(sym.type)}, not a table", n)
        return self._assignable_var(n)

    # ------------------------------------------------------------------ calls
    def _arity(self, node, want: int, what: str):
        if len(node.args) != want:
            raise _err(f"{what} takes {want} argument{'s' if want != 1 else ''}, got {len(node.args)}", node)

    def _call_args(self, node, info: RoutineInfo, args: list) -> None:
        params = info.params
        if len(args) != len(params):
            raise _err(f"'{info.display}' takes {len(params)} argument{'s' if len(params) != 1 else ''}, "
                       f"got {len(args)}", node)
        for a, p in zip(args, params):
            what = f"argument '{p.display}' of '{info.display}'"
            if p.by_ref:
                if not isinstance(a, A.Name):
                    raise _err(f"{what} is a var parameter: pass a variable", a)
                sym = self._assignable_var(a)
                if sym.type is not p.type:
                    raise _err(f"{what} must be {_kind_word(p.type)}, not {_kind_word(sym.type)}", a)
            elif p.type is T.TABLE:
                if not isinstance(a, A.Name):
                    raise _err(f"{what} must be a table variable", a)
                sym = self._var(a)
                if sym.type is not T.TABLE:
                    raise _err(f"{what} must be a table, not {_kind_word(sym.type)}", a)
            else:
                self._expect_assignable(a, p.type, what)

    def _builtin_args(self, node, b: Builtin, args: list) -> T | None:
        self._arity(node, len(b.args), b.name)
        first_vec = None
        for a, kind in zip(args, b.args):
            if kind == "int":
                self._expect(a, T.INT, f"an argument of {b.name}")
            elif kind in ("vec", "vecvar"):
                if kind == "vecvar":
                    if not isinstance(a, A.Name):
                        raise _err(f"{b.name} changes its argument: pass a slice or word variable", a)
                    self._assignable_var(a)
                t = self._expr(a)
                if not t.is_vector:
                    raise _err(f"{b.name} needs a slice or a word, not {_kind_word(t)}", a)
                first_vec = first_vec or t
            elif kind in ("word", "wordvar"):
                if kind == "wordvar":
                    if not isinstance(a, A.Name):
                        raise _err(f"{b.name} changes its last argument: pass a word variable", a)
                    self._assignable_var(a)
                self._expect_assignable(a, T.WORD, f"an argument of {b.name}")
            elif kind == "table":
                if not isinstance(a, A.Name):
                    raise _err(f"{b.name} needs a table variable", a)
                t = self._expr(a)
                if t is not T.TABLE:
                    raise _err(f"{b.name} needs a table, not {_kind_word(t)}", a)
            elif kind == "tablevar":
                if not isinstance(a, A.Name):
                    raise _err(f"{b.name} fills its argument: pass a table variable", a)
                self._writable_table(a)
            elif kind == "graphname":
                if not isinstance(a, A.Str):
                    raise _err(f"{b.name} takes the name of a bundled graph as a string, e.g. {b.name}('karate')", a)
                from ..graphs.star import check_default_name
                reason = check_default_name(a.value)
                if reason:
                    raise _err(reason, a)
                a.type = T.STR
            elif kind == "reading":
                from ..graphs.star import check_reading
                if not isinstance(a, A.Str) or check_reading(a.value):
                    raise _err(f"{b.name} takes 'directed' or 'undirected', e.g. {b.name}('undirected')", a)
                a.type = T.STR
            elif kind == "message":
                if not isinstance(a, A.Str):
                    raise _err(f"{b.name} takes its message as a string, e.g. {b.name}('no path')", a)
                a.type = T.STR
            elif kind == "strlit":
                if not isinstance(a, A.Str) or any(c not in "01" for c in a.value) or not a.value:
                    raise _err(f"{b.name} takes a string of 0s and 1s, e.g. BITS('1011')", a)
                a.type = T.STR
        if b.result == "same":
            return first_vec
        return b.result

    # ------------------------------------------------------------------ expressions
    def _expect(self, e, want: T, what: str) -> None:
        t = self._expr(e)
        if t is not want:
            hint = None
            if want is T.BOOL and isinstance(e, A.BinOp) and e.op in _LOGIC | _EQUALITY:
                hint = "'and', 'or' bind tighter than comparisons (as in Pascal): write (a = 1) and (b = 2)"
            if want is T.BOOL and t is T.INT and isinstance(e, A.Apply) and e.kind == "bit":
                hint = f"a bit reads as the integer 0 or 1: write {_text(e)} = 1"
            raise _err(f"{what} must be {_kind_word(want)}, not {_kind_word(t)}", e, hint)

    def _expect_assignable(self, e, want: T, what: str) -> None:
        t = self._expr(e)
        if t is want or (want is T.SLICE and t is T.WORD and is_bits_literal(e)):
            return
        hint = None
        if want is T.SLICE and t is T.WORD:
            hint = "only a BITS('...') literal turns into a slice; COL(i, T) reads a column"
        if want is T.WORD and t is T.SLICE:
            hint = "CONVERT(Y) turns a slice into a word"
        if want is T.TABLE:
            hint = "a table takes only another table of the same size (T := F copies F)"
        raise _err(f"{what} is {_kind_word(want)}; cannot assign {_kind_word(t)}", e, hint)

    def _expr(self, e) -> T:
        t = getattr(self, "_e_" + type(e).__name__)(e)
        e.type = t
        return t

    def _e_Num(self, e):
        return T.INT

    def _e_Str(self, e):
        return T.STR

    def _e_BoolLit(self, e):
        return T.BOOL

    def _e_Name(self, e: A.Name):
        sym = self._lookup_var(e.name)
        if sym is None and self.routine is not None and self.routine.is_function and e.name == self.routine.name:
            sym = self.routine.result
        if sym is not None:
            e.ref = sym
            return sym.type
        info = self._routine(e.name)
        if info is not None:
            if not info.is_function:
                raise _err(f"procedure '{e.display}' has no value; only functions can be used in expressions", e,
                           hint=_PROC_AS_FUNCTION_HINT.format(name=e.display))
            if info.params:
                n = len(info.params)
                raise _err(f"'{e.display}' takes {n} argument{'s' if n != 1 else ''}, got 0", e)
            e.ref = info
            return info.result.type
        if e.name in STATEMENT_BUILTINS:
            raise _err(f"{BUILTINS[e.name].name} is a statement and has no value", e)
        if e.name in BUILTINS and BUILTINS[e.name].args == ():   # GRAPH_N and the like
            e.ref = BUILTINS[e.name]
            return e.ref.result
        if e.name in BUILTINS:
            raise _err(f"'{e.display}' needs arguments", e)
        raise self._unknown(e)

    def _e_Apply(self, e: A.Apply):
        fn = e.func
        if isinstance(fn, A.Name):
            sym = self._lookup_var(fn.name)
            if sym is not None:
                fn.ref, fn.type = sym, sym.type
                return self._bit_access(e, sym.type)
            info = self.env.routines.get(fn.name)
            if info is not None and info.is_function:
                return self._user_call(e, info)
            b = BUILTINS.get(fn.name)
            if b is not None:
                if fn.name in STATEMENT_BUILTINS:
                    raise _err(f"{b.name} is a statement and has no value", fn,
                               hint=_PROC_AS_FUNCTION_HINT.format(name=fn.display))
                e.kind, e.ref = "builtin", b
                t = self._builtin_args(e, b, e.args)
                if b.name in ("COL", "ROW"):
                    self._constant_index(e)
                elif b.name in _WORD_PAIRS:
                    _same_lengths(e, b.name, e.args[0], e.args[1])
                return t
            info = self._routine(fn.name)
            if info is not None:
                if not info.is_function:
                    raise _err(f"procedure '{fn.display}' has no value; only functions can be used in expressions", fn,
                               hint=_PROC_AS_FUNCTION_HINT.format(name=fn.display))
                return self._user_call(e, info)
            raise self._unknown(fn)
        t = self._expr(fn)
        return self._bit_access(e, t)

    def _user_call(self, e: A.Apply, info: RoutineInfo) -> T:
        e.kind, e.ref = "call", info
        self._call_args(e, info, e.args)
        return info.result.type

    def _constant_index(self, e: A.Apply) -> None:
        """COL(i, T) / ROW(i, T) with a constant i out of the range of a table of constant size."""
        size, i = _table_size(getattr(e.args[1], "ref", None)), _const(e.args[0])
        if size is None or i is None:
            return
        n, what = (size[1], "column") if e.ref.name == "COL" else (size[0], "row")
        if not 0 < i <= n:
            i = decimal_of_int(i)   # str() stops at 4300 digits
            raise _err(f"{what} index {i} out of range 1..{n}" if n else f"{what} index {i} out of range: "
                       "it has none", e)

    def _bit_access(self, e: A.Apply, t: T) -> T:
        if not t.is_vector:
            name = getattr(e.func, "display", "this")
            raise _err(f"'{name}' is {_kind_word(t)}; only a slice or a word has bits to index", e.func)
        e.kind = "bit"
        self._arity(e, 1, "bit access Y(i)")
        self._expect(e.args[0], T.INT, "a bit index")
        return T.INT

    def _e_Unary(self, e: A.Unary):
        t = self._expr(e.operand)
        if e.op == "not":
            if t is T.BOOL or t.is_vector:
                return t
            hint = ("'not' binds tighter than comparisons (as in Pascal): write not (x > 0)"
                    if t is T.INT else None)
            raise _err(f"'not' needs a boolean, a slice or a word, not {_kind_word(t)}", e, hint)
        if t is not T.INT:
            raise _err(f"unary '{e.op}' needs an integer, not {_kind_word(t)}", e)
        return T.INT

    def _e_BinOp(self, e: A.BinOp):
        lt, rt = self._expr(e.left), self._expr(e.right)
        op = e.op
        if op in _ARITH:
            if lt is T.INT and rt is T.INT:
                return T.INT
            raise _err(f"'{op}' needs integers, not {_kind_word(lt)} and {_kind_word(rt)}", e)
        if op in _ORDER:
            if lt is T.INT and rt is T.INT:
                return T.BOOL
            hint = "compare words as numbers with LESS(v, w), GREAT(v, w), ..." if lt is T.WORD else None
            raise _err(f"'{op}' compares integers, not {_kind_word(lt)} and {_kind_word(rt)}", e, hint)
        lt, rt = self._unify_vectors(e, lt, rt)
        if lt.is_vector and rt.is_vector and op in _VECTOR_TITLES:
            _same_lengths(e, _VECTOR_TITLES[op], e.left, e.right)
        if op in _EQUALITY:
            if lt is rt and lt in (T.INT, T.BOOL, T.SLICE, T.WORD):
                return T.BOOL
            hint = None
            if T.INT in (lt, rt) and (lt.is_vector or rt.is_vector):
                hint = ("SOME(X) says whether X has a 1, NUMB(X) counts them, X(i) = 1 tests one bit"
                        if T.SLICE in (lt, rt) else
                        "NUMOF(w) reads a word as a number; SETNUM(i, w) writes one into it")
            raise _err(f"cannot compare {_kind_word(lt)} with {_kind_word(rt)}", e, hint)
        if op in _LOGIC:
            if lt is rt and (lt is T.BOOL or lt.is_vector):
                return lt
            raise _err(f"'{op}' needs two booleans, two slices or two words, not {_kind_word(lt)} and "
                       f"{_kind_word(rt)}", e,
                       hint="'and', 'or' bind tighter than comparisons (as in Pascal): write (a = 1) and (b = 2)"
                       if T.INT in (lt, rt) else None)
        raise _err(f"unknown operator '{op}'", e)

    @staticmethod
    def _unify_vectors(e, lt: T, rt: T) -> tuple[T, T]:
        """A BITS literal beside a slice is a slice."""
        if lt is T.SLICE and rt is T.WORD and is_bits_literal(e.right):
            e.right.type = rt = T.SLICE
        elif rt is T.SLICE and lt is T.WORD and is_bits_literal(e.left):
            e.left.type = lt = T.SLICE
        return lt, rt


def _constant_error(n: A.Name):
    return _err(f"cannot assign to '{n.display}': it is a constant", n,
                hint=f"a constant keeps the value of its declaration, or the one the command line gives: "
                     f"star run FILE --param {n.display}=VALUE")
