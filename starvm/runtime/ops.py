"""The machine layer: each base operation of spec §3 as one checked, counted function.

``make_ops`` binds these functions to a backend and to the machine's counters; the
generated code calls them by name (``_op_or``, ``_op_col_get``, ...). They check indices and
lengths (raising StarRuntimeError without a position: the executor adds it), count the step,
and call the one backend primitive that does the work.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from ..errors import StarRuntimeError
from ..ir.ops import BASE_OPS, STEP_INDEX as IDX, Op
from ..execution.limits import check_table
from ..execution.values import Bits, Table, Unassigned
from ..targets.python.codegen import op_name


def _unassigned_or(x, msg: str):
    if isinstance(x, Unassigned):
        return StarRuntimeError(f"'{x.name}' is used before it is assigned a value")
    return StarRuntimeError(msg)


def _mismatch(what: str, a, b):
    for x in (a, b):
        if isinstance(x, Unassigned):
            raise _unassigned_or(x, "")
    raise StarRuntimeError(f"length mismatch in {what}: {a.n} bits and {b.n} bits")


def _index(what: str, i, n: int, x=None):
    if x is not None and isinstance(x, Unassigned):
        raise _unassigned_or(x, "")
    raise StarRuntimeError(f"{what} index {i} out of range 1..{n}" if n else f"{what} index {i} out of range: it has none")


def make_ops(B, counts: list[int]) -> dict[str, object]:
    """The base operations bound to backend B, counting into ``counts`` (indexed by IDX)."""
    C = counts
    I = IDX

    def op_set(x):
        if x.n < 0:
            raise _unassigned_or(x, "")
        C[I[Op.SET]] += 1
        x.v = B.ones(x.n)

    def op_clr(x):
        if x.n < 0:
            raise _unassigned_or(x, "")
        C[I[Op.CLR]] += 1
        x.v = B.zeros(x.n)

    def op_bit_get(x, i):
        if not 0 < i <= x.n:
            _index("bit", i, x.n, x)
        C[I[Op.BIT_GET]] += 1
        return B.get_bit(x.v, i - 1)

    def op_bit_set(x, i, b):
        if not 0 < i <= x.n:
            _index("bit", i, x.n, x)
        if b is not True and b is not False and b not in (0, 1):
            raise StarRuntimeError(f"a bit takes 0 or 1, not {b}")
        C[I[Op.BIT_SET]] += 1
        x.v = B.set_bit(x.v, i - 1, b)

    def op_fnd(x):
        C[I[Op.FND]] += 1
        return B.fnd(x.v)

    def op_step(x):
        C[I[Op.STEP]] += 1
        pos, x.v = B.step(x.v)
        return pos

    def op_numb(x):
        C[I[Op.NUMB]] += 1
        return B.numb(x.v)

    def op_convert(x):
        C[I[Op.CONVERT]] += 1
        return Bits(x.v, x.n)

    def op_frst(x):
        C[I[Op.FRST]] += 1
        return Bits(B.frst(x.v), x.n)

    def op_some(x):
        C[I[Op.SOME]] += 1
        return B.some(x.v)

    def binary(op, prim, title):
        k = I[op]

        def f(a, b):
            if a.n != b.n:
                _mismatch(title, a, b)
            C[k] += 1
            return Bits(prim(a.v, b.v), a.n)
        return f

    def op_not(x):
        C[I[Op.NOT]] += 1
        return Bits(B.not_(x.v, x.n), x.n)

    def op_trim(i, j, w):
        if not 1 <= i <= j <= w.n:
            if isinstance(w, Unassigned):
                raise _unassigned_or(w, "")
            raise StarRuntimeError(f"TRIM({i}, {j}, w) needs 1 <= i <= j <= {w.n} (the length of w)")
        C[I[Op.TRIM]] += 1
        return Bits(B.trim(w.v, i - 1, j - 1), j - i + 1)

    def op_rep(i, j, v, w):
        if not 1 <= i <= j <= w.n:
            if isinstance(w, Unassigned):
                raise _unassigned_or(w, "")
            raise StarRuntimeError(f"REP({i}, {j}, v, w) needs 1 <= i <= j <= {w.n} (the length of w)")
        if v.n != j - i + 1:
            raise _unassigned_or(v, f"REP({i}, {j}, v, w) needs v of {j - i + 1} bits, not {v.n}")
        C[I[Op.REP]] += 1
        w.v = B.rep(w.v, i - 1, v.v, v.n)

    def comparison(op, test, title):
        k = I[op]

        def f(a, b):
            if a.n != b.n:
                _mismatch(title, a, b)
            C[k] += 1
            return test(B.compare(a.v, b.v))
        return f

    def op_eq(a, b):
        if a.n != b.n:
            _mismatch("EQ", a, b)
        C[I[Op.EQ]] += 1
        return B.equal(a.v, b.v)

    def op_noteq(a, b):
        if a.n != b.n:
            _mismatch("NOTEQ", a, b)
        C[I[Op.NOTEQ]] += 1
        return not B.equal(a.v, b.v)

    def arith(op, prim, title):
        k = I[op]

        def f(a, b):
            if a.n != b.n:
                _mismatch(title, a, b)
            C[k] += 1
            return Bits(prim(a.v, b.v, a.n), a.n)
        return f

    def op_col_get(i, t):
        if not 0 < i <= t.k:
            _index("column", i, t.k)
        C[I[Op.COL_GET]] += 1
        return Bits(B.col_get(t, i - 1), t.n)

    def op_col_set(i, t, v):
        if not 0 < i <= t.k:
            _index("column", i, t.k)
        if v.n != t.n:
            raise _unassigned_or(v, f"COL({i}, T) := ...: the slice has {v.n} bits but the table has {t.n} rows")
        C[I[Op.COL_SET]] += 1
        B.col_set(t, i - 1, v.v)

    def op_row_get(i, t):
        if not 0 < i <= t.n:
            _index("row", i, t.n)
        C[I[Op.ROW_GET]] += 1
        return Bits(B.row_get(t, i - 1), t.k)

    def op_row_set(i, t, w):
        if not 0 < i <= t.n:
            _index("row", i, t.n)
        if w.n != t.k:
            raise _unassigned_or(w, f"ROW({i}, T) := ...: the word has {w.n} bits but the table has {t.k} columns")
        C[I[Op.ROW_SET]] += 1
        B.row_set(t, i - 1, w.v)

    ops = {
        Op.SET: op_set, Op.CLR: op_clr, Op.BIT_GET: op_bit_get, Op.BIT_SET: op_bit_set,
        Op.FND: op_fnd, Op.STEP: op_step, Op.NUMB: op_numb, Op.CONVERT: op_convert,
        Op.FRST: op_frst, Op.SOME: op_some,
        Op.AND: binary(Op.AND, B.and_, "and"), Op.OR: binary(Op.OR, B.or_, "or"),
        Op.XOR: binary(Op.XOR, B.xor, "xor"), Op.NOT: op_not,
        Op.TRIM: op_trim, Op.REP: op_rep, Op.EQ: op_eq, Op.NOTEQ: op_noteq,
        Op.LESS: comparison(Op.LESS, lambda c: c < 0, "LESS"),
        Op.LESSEQ: comparison(Op.LESSEQ, lambda c: c <= 0, "LESSEQ"),
        Op.GREAT: comparison(Op.GREAT, lambda c: c > 0, "GREAT"),
        Op.GREATEQ: comparison(Op.GREATEQ, lambda c: c >= 0, "GREATEQ"),
        Op.ADD: arith(Op.ADD, B.add, "ADD"), Op.SUBT: arith(Op.SUBT, B.subt, "SUBT"),
        Op.COL_GET: op_col_get, Op.COL_SET: op_col_set, Op.ROW_GET: op_row_get, Op.ROW_SET: op_row_set,
    }
    assert set(ops) == set(BASE_OPS)
    return {op_name(op): f for op, f in ops.items()}


def timed_ops(ops: dict[str, object], times: list[float], sync) -> dict[str, object]:
    """The same operations, each adding its wall time to ``times`` (for --profile)."""
    out = {}
    for op in BASE_OPS:
        name, k = op_name(op), IDX[op]
        f = ops[name]

        def g(*args, _f=f, _k=k):
            t0 = perf_counter()
            try:
                return _f(*args)
            finally:
                sync()
                times[_k] += perf_counter() - t0
        out[name] = g
    return out


def make_helpers(B, out_write) -> dict[str, object]:
    """Non-counted helpers of the generated code: copies, assignment checks, arithmetic, output."""

    def copy(x):
        return Bits(x.v, x.n)

    def save(x):
        return Bits(x.v, x.n) if isinstance(x, Bits) else x

    def asg(old, new):
        if old.n != new.n and old.n >= 0:
            raise _unassigned_or(new, f"length mismatch in assignment: the variable has {old.n} bits, "
                                      f"the value {new.n}")
        if isinstance(old, Bits) and isinstance(new, Bits):
            # Assign in place: a `var` parameter and the caller's variable are one Bits object
            # (spec §4: by reference), so both names see the new value. `new` is always a
            # fresh object (a COPY or an operation's result), so nothing else shares it.
            old.v, old.n = new.v, new.n
            return old
        return new

    def check_len(x, n, what):
        if x.n != n:
            raise _unassigned_or(x, f"{what} must have {n} bits, got {x.n}")
        return x

    def vec_len(x):
        if x.n < 0:
            raise _unassigned_or(x, "")
        return x.n

    def zeros(n):
        return Bits(B.zeros(n), n)

    def new_table(n, k):
        if n < 0 or k < 0:
            raise StarRuntimeError(f"a table cannot have a negative size: table({n}, {k})")
        check_table(B, n, k)
        return B.table(n, k)

    def table_assign(dst, src):
        if (dst.n, dst.k) != (src.n, src.k):
            raise StarRuntimeError(f"cannot assign a {src.n} x {src.k} table to a {dst.n} x {dst.k} one")
        if dst is not src:
            B.table_copy(dst, src)

    def div(a, b):
        if b == 0:
            raise StarRuntimeError("division by zero")
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q

    def mod(a, b):
        if b == 0:
            raise StarRuntimeError("division by zero (mod)")
        return a - div(a, b) * b

    def fmt_bits(x):
        return (B.to_bools(x.v, x.n).astype(np.uint8) + 48).tobytes().decode("ascii")

    def fmt_table(t: Table):
        rows = B.table_to_bools(t).astype(np.uint8) + 48
        return "\n".join(r.tobytes().decode("ascii") for r in rows)

    def write(*parts):
        out_write("".join(parts))

    def writeln(*parts):
        out_write("".join(parts) + "\n")

    def error(message):   # the ERROR statement
        raise StarRuntimeError(message)

    return {
        "_Bits": Bits, "_UN": Unassigned, "_copy": copy, "_save": save, "_asg": asg,
        "_check_len": check_len, "_len": vec_len, "_zeros": zeros, "_new_table": new_table,
        "_table_assign": table_assign, "_div": div, "_mod": mod, "_fmt_bits": fmt_bits,
        "_fmt_table": fmt_table, "_write": write, "_writeln": writeln, "_error": error,
        "_snapshot": B.table_snapshot,
    }
