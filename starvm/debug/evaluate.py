"""Star expressions evaluated in a stopped frame (``print EXPR``, ``break N if EXPR``, ``show``).

The expression goes through the ordinary stages: parsed as the argument of a ``writeln``,
checked by the checker in the scope of the frame's routine (its parameters and locals, then
the globals), lowered, and turned into one Python expression by the code generator. It is
evaluated with the machine's namespace as globals and the frame's locals, so it reads the
same variables the program's own code does. Evaluating changes nothing the program can see:
the step counters are restored afterwards and events are muted while it runs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..check import Checker
from ..errors import Loc, Source, StarError
from ..frontend import ast as A
from ..frontend.parser import parse
from ..ir.lower import _Lowerer
from ..targets.python.codegen import CodeGen
from ..execution.values import Bits, Table, Unassigned
from ..types import T
from .events import routine_of


class DebugError(Exception):
    """A mistake in a debugger command: one message, and the session goes on."""


@dataclass
class Compiled:
    text: str
    code: object             # a Python code object ("eval")
    consts: dict             # BITS literals the code refers to
    type: T


def compile_expression(machine, text: str, pyname: str) -> Compiled:
    """Check and compile ``text`` as an expression in the scope of routine ``pyname``."""
    expr = re.sub(r"[\s;]+$", "", text.strip())
    if not expr:
        raise DebugError("an expression is needed")
    src = f"begin writeln(\n{expr}\n) end."
    try:
        prog = parse(src, "<expression>")
        stmts = [s for s in prog.main.body if s is not None]
        if len(stmts) != 1 or not isinstance(stmts[0], A.CallStmt) or len(stmts[0].args) != 1:
            raise DebugError(f"not one expression: {expr}")
        stmt = stmts[0]
        checker = Checker(machine.env)
        info = routine_of(machine, pyname)
        if info is not None:
            checker.routine = info
            checker.scope = {p.name: p for p in info.params}
            checker.scope.update({s.name: s for s in info.locals})
        checker._stmt(stmt)
        node = _Lowerer().stmt(stmt).src[0]
    except StarError as e:
        raise DebugError(_relocated(e, src, expr).render()) from None
    gen = CodeGen(machine.backend, "<expression>", machine.counts)
    gen.emit(0, gen.x(node))
    return Compiled(expr, compile(gen.out[-1], "<star-expression>", "eval"), gen.consts, node.type)


def _relocated(err: StarError, wrapped: str, expr: str) -> StarError:
    """Positions in the wrapper ``begin writeln(\n<expr>\n) end.`` reported against the
    expression itself (line 2 of the wrapper is its line 1; anything after it, its end)."""
    loc = err.loc
    if loc is not None and loc.source.text == wrapped:
        src = Source("<expression>", expr)
        err.loc = Loc(src, 1, loc.column, loc.end_column) if loc.line == 2 else Loc(src, 1, len(expr) + 1)
    return err


def evaluate(machine, events, compiled: Compiled, frame):
    """The value of a compiled expression in ``frame`` (None: the main block's level)."""
    ns = dict(machine.ns)
    ns.update(compiled.consts)
    ns["_tick"] = _no_tick
    local = dict(frame.f_locals) if frame is not None and frame.f_code.co_name != "main_" else {}
    saved = list(machine.counts)
    events.muted += 1
    try:
        return eval(compiled.code, ns, local)
    except StarError as e:
        raise DebugError(f"error: {e.message}") from None
    except RecursionError:
        raise DebugError("error: recursion too deep while evaluating the expression") from None
    finally:
        events.muted -= 1
        machine.counts[:] = saved


def _no_tick():
    return None


def bit_string(machine, v: Bits) -> str:
    return "".join("1" if b else "0" for b in machine.backend.to_bools(v.v, v.n))


def format_value(machine, value, typ: T, name: str = "") -> str:
    """A value as the debugger prints it."""
    if isinstance(value, Unassigned) or value is None:
        return "(not assigned yet)"
    if typ is T.BOOL or isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Table):
        return draw_table(value.to_numpy(), name or "table")
    if isinstance(value, Bits):
        bits = bit_string(machine, value)
        shown = bits if len(bits) <= 128 else bits[:128] + f"... ({value.n} bits)"
        return f"{typ} {shown}"
    return str(value)


def parse_rows(spec: str | None, n: int, window: int = 32) -> tuple[int, int]:
    """'A-B', 'A:B' or 'A' (a window of ``window`` rows from A) -> 1-based (first, last)."""
    if not spec:
        return 1, min(n, 64)
    m = re.fullmatch(r"\s*(\d+)\s*(?:[-:]\s*(\d+))?\s*", spec)
    if not m:
        raise DebugError(f"rows are A-B or A, not {spec!r}")
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else first + window - 1
    if first < 1 or first > max(n, 1) or last < first:
        raise DebugError(f"rows {spec} are outside 1..{n}")
    return first, min(last, n)


def draw_table(bits, name: str, first: int = 1, last: int | None = None, max_cols: int = 128) -> str:
    """Rows ``first..last`` of an (n, k) bool array as the REPL's :show draws a table."""
    n, k = bits.shape
    last = min(n, 64) if last is None else last
    kc = min(k, max_cols)
    ones = int(bits.sum())
    out = [f"{name}: table {n} x {k}, {ones} ones" + (f" (rows {first}-{last} shown)" if (first, last) != (1, n) else "")]
    if k >= 10:
        out.append("       " + "".join(str((c + 1) // 10 % 10) if (c + 1) % 10 == 0 else " " for c in range(kc)))
    out.append("       " + "".join(str((c + 1) % 10) for c in range(kc)))
    for r in range(first - 1, last):
        row = "".join("1" if b else "." for b in bits[r, :kc])
        out.append(f"{r + 1:>5} |{row}" + (" ..." if k > kc else ""))
    if last < n:
        out.append(f"      ... {n - last} more rows (show {name} {last + 1}-{min(n, last + 64)})")
    return "\n".join(out)


def draw_vector(bits_str: str, name: str, typ: T, first: int = 1, last: int | None = None) -> str:
    """A slice or word as the REPL's :show draws one, restricted to bits ``first..last``."""
    n = len(bits_str)
    last = n if last is None else last
    ones = [str(i + 1) for i, b in enumerate(bits_str) if b == "1"]
    where = ", ".join(ones[:32]) + (", ..." if len(ones) > 32 else "")
    out = [f"{name}: {typ} of {n} bits, {len(ones)} ones" + (f" (at {where})" if ones else "")]
    for start in range(first - 1, last, 64):
        out.append(f"{start + 1:>6} | {bits_str[start:min(start + 64, last)]}")
    return "\n".join(out)
