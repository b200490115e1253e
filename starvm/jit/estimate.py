"""How much an interpreted call of a routine is expected to cost: what `--jit auto` weighs
against what compiling it costs (``JitRoutine.__call__``: compile once the work of the calls
run interpreted so far passes the tier's threshold).

The estimate is evaluated at each call from its arguments: loop trip counts from the bounds,
table sizes for the rest, each base operation priced as the backend that would interpret it
takes (``HOST_PRICES`` for NumPy, ``DEVICE_PRICES`` for a GPU).
"""
from __future__ import annotations

import re
from typing import NamedTuple

from ..ir.ops import BASE_OPS, GroupOp, Op
from ..types import T
from ..ir.walk import walk


def estimator(info, body, tier, pricing=None):
    """args -> what one interpreted call is expected to cost, in units of about a microsecond
    (``pricing``: HOST_PRICES or DEVICE_PRICES): loop trip counts from the bounds (evaluated
    where they are parameters, globals, constants or table sizes), and the largest table
    dimension for `while`/`repeat` loops and unknown bounds."""
    pricing = pricing or HOST_PRICES
    params = list(info.params) if info else []
    globs = sorted(_globals_named(body), key=lambda g: g.pyname)
    memo: dict = {}

    def estimate(args) -> int:
        # the estimate depends on the arguments only through integers and sizes: remember it
        ns = tier.context.ns
        pairs = list(zip(params, args)) + [(g, ns.get(g.pyname)) for g in globs]
        key = tuple(_shape(v) for _s, v in pairs)
        if key not in memo:
            if len(memo) > 256:
                memo.clear()
            memo[key] = _estimate(pairs)
        return memo[key]

    def _estimate(pairs) -> int:
        env, size = {}, 64
        for sym, value in pairs:
            env[sym] = value
            if sym.type is T.TABLE and hasattr(value, "n"):
                size = max(size, value.n, value.k)
            elif sym.type.is_vector and isinstance(getattr(value, "n", None), int):
                size = max(size, value.n)
        return int(min(_block_cost(body, env, size, tier.bodies, 0, pricing), 1e300))   # deep loops: inf
    return estimate


def _shape(value):
    if isinstance(value, (bool, int)):
        return value
    n, k = getattr(value, "n", None), getattr(value, "k", None)
    return (n, k)


def _globals_named(body):
    return {n.arg for n in walk(body) if n.op is Op.VAR and n.arg.scope == "global"}


def _value(e, env):
    op = e.op
    if op is Op.CONST and isinstance(e.arg, int) and not isinstance(e.arg, bool):
        return e.arg
    if op is Op.VAR:
        v = env.get(e.arg)
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if op in GroupOp.Sizes and e.src[0].op is Op.VAR:
        t = env.get(e.src[0].arg)
        return getattr(t, "n" if op is Op.NROWS else "k", None)
    if op is Op.BINARY and e.arg in ("+", "-", "*", "div"):
        a, b = _value(e.src[0], env), _value(e.src[1], env)
        if a is None or b is None:
            return None
        if e.arg == "div":
            return a // b if b else None
        return a + b if e.arg == "+" else a - b if e.arg == "-" else a * b
    return None


# Units of the estimate, about a microsecond each: a scalar statement or a loop iteration
# (about 0.1 us interpreted) is _SCALAR; a base operation costs what the backend that runs it
# interpreted takes (``Prices``).
_SCALAR = 0.1


class Prices(NamedTuple):
    """An interpreted base operation costs ``op`` units plus one for every ``rows_a_unit``
    rows of its longest operand (a vector op passes over all its words)."""
    op: float
    rows_a_unit: int


# On the host (NumPy): STEP over a 400 000-row slice and two ROW moves take about 44 us.
HOST_PRICES = Prices(op=1.0, rows_a_unit=32768)
# On a GPU an interpreted operation is a launch or more and often a read back (SOME, bit
# tests): MATCH's body, about 100 operations, took 1.6 ms a call at 2^20 rows and 2.2 ms at
# 2^27 on an H100 (bench/results/natives_gpu_h100_match_jitauto.md).
DEVICE_PRICES = Prices(op=20.0, rows_a_unit=1 << 24)


def _block_cost(node, env, size, bodies, depth, prices) -> float:
    cost = 0.0
    for s in node.src if node.op is Op.BLOCK else (node,):
        cost += _stmt_cost(s, env, size, bodies, depth, prices)
    return cost


def _stmt_cost(s, env, size, bodies, depth, prices) -> float:
    op = s.op
    if op in GroupOp.ForLoops:
        a, b = _value(s.src[0], env), _value(s.src[1], env)
        trips = size if a is None or b is None else max(0, (a - b if s.arg[1] else b - a) + 1)
        return 1 + trips * (_SCALAR + _block_cost(s.src[2], env, size, bodies, depth, prices))
    if op in GroupOp.CondLoops:
        body = s.src[1] if op is Op.WHILE else s.src[0]
        return 1 + size * (_SCALAR + _block_cost(body, env, size, bodies, depth, prices))
    if op is Op.IF:
        return 1 + max(_block_cost(s.src[1], env, size, bodies, depth, prices),
                       _block_cost(s.src[2], env, size, bodies, depth, prices))
    if op is Op.BLOCK:
        return _block_cost(s, env, size, bodies, depth, prices)
    cost = _SCALAR
    for n in walk(s):
        if n.op in BASE_OPS:
            cost += prices.op + size / prices.rows_a_unit
        elif n.op is Op.CALL and n.arg[0].pyname in bodies and depth < 8:
            cost += 1.0 + _block_cost(bodies[n.arg[0].pyname][1], {}, size, bodies, depth + 1, prices)
    return cost


# ------------------------------------------------------------------ what compiling it costs
# Numba's compile of a routine grows with the kernel calls in its generated code and its
# callees' (each is typed, inlined and optimised by LLVM): on the 2-core host, table
# statements (COL reads and writes, or, and, NUMB) took about 0.07 s of CPU a call on top of
# ~1.3 s (49 calls 4.6 s, 268 calls 19.5 s user time, kernels cached), integer statements far
# less (issue 36: 2000 statements in 28.8 s). The price sits between.
COMPILE_BASE_S = 1.0
COMPILE_S_PER_CALL = 0.03
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_.]*)\(")
_FREE = {"np.int64", "range", "njit", "borrow"}


def compile_seconds(source: str, func: str) -> float:
    """About how long Numba takes to compile ``func`` of a generated module (with the module's
    functions it calls), from its kernel calls."""
    blocks = _functions(source)
    seen, todo, calls = set(), [func], 0
    while todo:
        f = todo.pop()
        if f in seen or f not in blocks:
            continue
        seen.add(f)
        names = _CALL.findall(blocks[f])
        calls += sum(1 for n in names if n not in _FREE)
        todo.extend(n for n in names if n in blocks)
    return COMPILE_BASE_S + COMPILE_S_PER_CALL * calls


_BLOCKS: dict = {}


def _functions(source: str) -> dict[str, str]:
    """Function name -> its text, for each top-level def of a generated module."""
    key = hash(source)
    if key not in _BLOCKS:
        if len(_BLOCKS) > 64:
            _BLOCKS.clear()
        out, name, lines = {}, None, []
        for line in source.splitlines():
            if line.startswith("def "):
                if name:
                    out[name] = "\n".join(lines)
                name, lines = line[4:line.index("(")], []
            elif name:
                lines.append(line)
        if name:
            out[name] = "\n".join(lines)
        _BLOCKS[key] = out
    return _BLOCKS[key]
