"""`parallel for` as one fused array operation (spec §4, forall semantics).

Instead of running the body once per iteration, ``ForallKernel`` runs it once for all
iterations together: a value that differs between iterations is an array with one entry
per iteration (a scalar: shape (m,); a slice or word: shape (m, W) of uint64 words), a value
they share has shape (1, W) or is a Python scalar, and `if` becomes a mask of the active
iterations. The array module is the backend's (``backend.xp``: NumPy on the CPU, CuPy on
the GPU), so the same code serves both.

The result equals running the iterations one by one against the values from before the
loop, bit for bit, and so do the step counts: an operation evaluated under a mask counts
one step per active iteration. Bodies that use something this evaluator does not vectorise
(while/repeat loops, ROW, STEP, word arithmetic, calls, ...) are run iteration by
iteration instead: ``fusable`` decides at compile time.
"""
from __future__ import annotations

import operator
from time import perf_counter

from ...errors import StarRuntimeError
from ...ir.ops import LOGIC_SYMBOL, STEP_INDEX, GroupOp, Node, Op
from ...types import T
from ...execution.values import Bits, Table, Unassigned

# What ForallKernel evaluates is GroupOp.Fusable; what ForallKernel.exec runs as a statement is
# GroupOp.FusableStatements (a value used as a statement, e.g. `COL(i, P);`, is not among them:
# such a loop runs iteration by iteration).
_PY_OPERATOR = {"&": operator.and_, "|": operator.or_, "^": operator.xor}


def fusable(loop: Node) -> bool:
    """Can this `parallel for` run as one array operation?"""
    def ok(n: Node) -> bool:
        if n.op not in GroupOp.Fusable:
            return False
        if n.op is Op.FOR and any(_varies(s, loop) for s in n.src[:2]):
            return False    # an inner loop whose bounds differ between iterations
        if n.op is Op.BLOCK and any(s.op not in GroupOp.FusableStatements for s in n.src):
            return False
        return all(ok(s) for s in n.src)
    return loop.src[2].op in GroupOp.FusableStatements and all(ok(s) for s in loop.src)


def _varies(e: Node, loop: Node) -> bool:
    var, _downto, info, _snaps = loop.arg
    if e.op is Op.VAR:
        return e.arg is var or e.arg in info.private
    return any(_varies(s, loop) for s in e.src)


class _Vec:
    """A batch of bit vectors: words of shape (1, W) (shared) or (m, W) (per iteration)."""
    __slots__ = ("w", "n")

    def __init__(self, w, n):
        self.w = w
        self.n = n


class ForallKernel:
    """One `parallel for` loop compiled for a backend."""
    # and, or, xor of two batches of words: the array operator (NumPy's and CuPy's alike)
    logic_op = {op: _PY_OPERATOR[LOGIC_SYMBOL[op]] for op in GroupOp.BinaryLogic}

    def __init__(self, loop: Node, backend, counts: list[int], symbols: list, timing: list | None = None):
        self.loop = loop
        self.symbols = symbols          # the outer variables the body mentions
        self.timing = timing if timing is not None else [0, 0.0]   # [loops run, seconds]
        self.B = backend
        self.xp = backend.xp
        self.counts = counts
        self.var, self.downto, self.info, self.snaps = loop.arg
        self.body = loop.src[2]

    # ---------------------------------------------------------------- entry point
    def __call__(self, start: int, stop: int, values: tuple) -> None:
        """values: the current values of ``self.symbols``, in that order."""
        t0 = perf_counter()
        try:
            self._run(start, stop, values)
        finally:
            self.B.synchronize()
            self.timing[0] += 1
            self.timing[1] += perf_counter() - t0

    def _run(self, start: int, stop: int, values: tuple) -> None:
        xp = self.xp
        idx = xp.arange(start, stop + 1, dtype=xp.int64) if not self.downto else \
            xp.arange(start, stop - 1, -1, dtype=xp.int64)
        self.m = int(idx.size)
        if self.m == 0:
            return
        self.env = dict(zip(self.symbols, values))
        self.local = {self.var: idx}
        self.words_cache = {}
        self.exec_block(self.body, None)

    # ---------------------------------------------------------------- helpers
    def active(self, mask) -> int:
        return self.m if mask is None else int(mask.sum())

    def count(self, op: Op, mask) -> None:
        self.counts[STEP_INDEX[op]] += self.active(mask)

    def fail(self, node: Node, msg: str):
        return StarRuntimeError(msg, node.loc)

    def _nwords(self, n: int) -> int:
        return (n + 63) // 64

    def vec(self, x) -> _Vec:
        """A machine value (Bits) as a shared batch vector."""
        if isinstance(x, _Vec):
            return x
        key = id(x)
        if key not in self.words_cache:
            self.words_cache[key] = _Vec(self.B.to_words(x.v, x.n)[None, :], x.n)
        return self.words_cache[key]

    def _index(self, node: Node, i, hi: int, what: str, mask):
        """Check 1 <= i <= hi on the active iterations; returns 0-based indices safe to gather."""
        xp = self.xp
        if isinstance(i, int):
            if not 0 < i <= hi and self.active(mask):
                raise self.fail(node, f"{what} index {i} out of range 1..{hi}" if hi else
                                f"{what} index {i} out of range: it has none")
            return i - 1
        act = i if mask is None else i[mask]
        if act.size and (int(act.min()) < 1 or int(act.max()) > hi):
            bad = int(act.min()) if int(act.min()) < 1 else int(act.max())
            raise self.fail(node, f"{what} index {bad} out of range 1..{hi}" if hi else
                            f"{what} index {bad} out of range: it has none")
        i0 = i - 1
        return i0 if mask is None else xp.where(mask, i0, 0)

    # ---------------------------------------------------------------- statements
    def exec_block(self, block: Node, mask) -> None:
        for s in block.src:
            self.exec(s, mask)

    def bit_set_operands(self, s, target, mask):
        """``X(i) := b``'s bit index (checked against X) and bit (0 or 1), counted as a BIT_SET."""
        i = self.eval(s.src[1], mask)
        b = self.eval(s.src[2], mask)
        j = self._index(s, i, target.n, "bit", mask)
        bad = (b != 0) & (b != 1)
        if bool(bad if isinstance(bad, bool) else (bad if mask is None else bad & mask).any()):
            raise self.fail(s, "a bit takes 0 or 1")
        self.count(Op.BIT_SET, mask)
        return j, b

    def exec(self, s: Node, mask) -> None:
        xp, op = self.xp, s.op
        if op is Op.BLOCK:
            self.exec_block(s, mask)
        elif op is Op.IF:
            cond = self.eval(s.src[0], mask)
            if isinstance(cond, bool):
                self.exec_block(s.src[1] if cond else s.src[2], mask)
                return
            then_mask = cond if mask is None else (mask & cond)
            else_mask = ~cond if mask is None else (mask & ~cond)
            if s.src[1].src and bool(then_mask.any()):
                self.exec_block(s.src[1], then_mask)
            if s.src[2].src and bool(else_mask.any()):
                self.exec_block(s.src[2], else_mask)
        elif op is Op.FOR:
            var, downto = s.arg
            a, b = self.eval(s.src[0], mask), self.eval(s.src[1], mask)
            for k in (range(a, b - 1, -1) if downto else range(a, b + 1)):
                self.local[var] = k
                self.exec_block(s.src[2], mask)
        elif op is Op.ASSIGN:
            self.assign(s.arg, self.eval(s.src[0], mask), mask, s)
        elif op is Op.COL_SET:
            i = self.eval(s.src[0], mask)
            table: Table = self.value(s.src[1].arg)
            v = self.vec(self.eval(s.src[2], mask))
            if v.n != table.n:
                raise self.fail(s, f"COL(i, T) := ...: the slice has {v.n} bits but the table has {table.n} rows")
            j = self._index(s, i, table.k, "column", mask)
            self.count(Op.COL_SET, mask)
            words = xp.broadcast_to(v.w, (self.m, v.w.shape[1]))
            if mask is None:
                table.data[j] = words
            else:
                table.data[j[mask]] = words[mask]
        elif op is Op.BIT_SET:
            target = self.value(s.src[0].arg)        # a shared slice/word written at bit i
            j, b = self.bit_set_operands(s, target, mask)
            if isinstance(target, _Vec):             # a private slice/word: each iteration its own
                self.local[s.src[0].arg] = _set_bit(xp, target, j, b, mask, self.m)
                return
            bits = _unpack(xp, self.B.to_words(target.v, target.n))
            jj = xp.broadcast_to(xp.asarray(j, dtype=xp.int64), (self.m,))
            bb = xp.broadcast_to(xp.asarray(b, dtype=bool), (self.m,))
            bits[jj if mask is None else jj[mask]] = bb if mask is None else bb[mask]
            target.v = self.B.from_words(_pack(xp, bits), target.n)
        else:
            raise AssertionError(f"not fusable: {op}")

    def assign(self, sym, value, mask, node) -> None:
        xp = self.xp
        old = self.local.get(sym, self.env.get(sym))
        if sym.type.is_vector:
            new = self.vec(value)
            if isinstance(old, _Vec):
                old_n, old_w = old.n, old.w
            elif isinstance(old, Bits) and not isinstance(old, Unassigned):
                old_n, old_w = old.n, self.vec(old).w
            else:
                old_n, old_w = -1, None
            if old_n >= 0 and old_n != new.n:
                raise self.fail(node, f"length mismatch in assignment: the variable has {old_n} bits, "
                                      f"the value {new.n}")
            if mask is not None:
                if old_w is None:
                    old_w = xp.zeros_like(new.w)
                new = _Vec(xp.where(mask[:, None], new.w, old_w), new.n)
            self.local[sym] = new
        else:
            if mask is not None:
                old = old if old is not None else 0
                value = xp.where(mask, value, old)
            self.local[sym] = value

    # ---------------------------------------------------------------- expressions
    def value(self, sym):
        if sym in self.local:
            return self.local[sym]
        v = self.env[sym]
        if isinstance(v, Unassigned):
            raise StarRuntimeError(f"'{v.name}' is used before it is assigned a value")
        return v

    def eval(self, e: Node, mask):
        """The value of ``e`` in the active iterations: the method ``_e_<OP>`` of its op (an op
        -> method table that a target's subclass overrides entry by entry, as
        distributed/forall.py does for the operations on a split slice)."""
        handler = getattr(self, "_e_" + e.op.name, None)
        if handler is None:
            raise AssertionError(f"not fusable: {e.op}")
        return handler(e, mask)

    def _e_CONST(self, e, mask):
        return e.arg

    def _e_VAR(self, e, mask):
        return self.value(e.arg)

    def _e_BITS(self, e, mask):
        bits = [c == "1" for c in e.arg]
        return _Vec(self.B.to_words(self.B.from_bools(bits), len(bits))[None, :], len(bits))

    def _e_COPY(self, e, mask):
        return self.eval(e.src[0], mask)

    def _e_BINARY(self, e, mask):
        return self.binary(e, mask)

    def _e_UNARY(self, e, mask):
        a = self.eval(e.src[0], mask)
        if e.arg == "neg":
            return -a
        return (not a) if isinstance(a, bool) else ~a

    def _e_NROWS(self, e, mask):
        return self.value(e.src[0].arg).n

    def _e_NCOLS(self, e, mask):
        return self.value(e.src[0].arg).k

    def _e_LEN(self, e, mask):
        return self.vec(self.eval(e.src[0], mask)).n

    def _e_COL_GET(self, e, mask):
        i = self.eval(e.src[0], mask)
        table: Table = self.value(e.src[1].arg)
        j = self._index(e, i, table.k, "column", mask)
        self.count(e.op, mask)
        return _Vec(table.data[j][None, :] if isinstance(j, int) else table.data[j], table.n)

    # NOT, SOME, NUMB and X(i) evaluate their vector operand once, then hand it to the method
    # that computes the operation (a subclass overrides those for the forms of operand it keeps)
    def _e_BIT_GET(self, e, mask):
        return self._bit_get(e, self.vec(self.eval(e.src[0], mask)), mask)

    def _bit_get(self, e, v, mask):
        xp = self.xp
        i = self.eval(e.src[1], mask)
        j = self._index(e, i, v.n, "bit", mask)
        self.count(e.op, mask)
        if isinstance(j, int) and v.w.shape[0] == 1:
            return int((int(v.w[0, j >> 6]) >> (j & 63)) & 1)
        jj = xp.broadcast_to(xp.asarray(j, dtype=xp.int64), (self.m,))
        words = xp.broadcast_to(v.w, (self.m, v.w.shape[1]))
        w = xp.take_along_axis(words, (jj >> 6)[:, None], axis=1)[:, 0]
        return ((w >> (jj & 63).astype(xp.uint64)) & xp.uint64(1)).astype(xp.int64)

    def _two_vectors(self, e, mask):
        """The operands of and, or, xor, =, <> (GroupOp.BinaryLogic, SliceCompare): two vectors of
        one length; the step counted."""
        a, b = (self.vec(self.eval(s, mask)) for s in e.src)
        if a.n != b.n:
            raise self.fail(e, f"length mismatch in {e.op.name.lower()}: {a.n} bits and {b.n} bits")
        a, b = self._pair(a, b)
        self.count(e.op, mask)
        return a, b

    def _pair(self, a, b):
        """Two operands of one length in the form the operation takes (here: as they are)."""
        return a, b

    def _e_logic(self, e, mask):
        a, b = self._two_vectors(e, mask)
        return _Vec(self.logic_op[e.op](a.w, b.w), a.n)

    _e_AND = _e_OR = _e_XOR = _e_logic

    def _e_same(self, e, mask):
        a, b = self._two_vectors(e, mask)
        same = (a.w == b.w).all(axis=1)
        return self._scalar(same if e.op is Op.EQ else ~same)

    _e_EQ = _e_NOTEQ = _e_same

    def _e_NOT(self, e, mask):
        return self._not(e, self.vec(self.eval(e.src[0], mask)), mask)

    def _not(self, e, a, mask):
        xp = self.xp
        self.count(e.op, mask)
        w = ~a.w
        if a.n % 64:
            w[:, -1] &= xp.uint64((1 << (a.n % 64)) - 1)
        return _Vec(w, a.n)

    def _e_SOME(self, e, mask):
        return self._some(e, self.vec(self.eval(e.src[0], mask)), mask)

    def _some(self, e, a, mask):
        self.count(e.op, mask)
        return self._scalar((a.w != 0).any(axis=1))

    def _e_NUMB(self, e, mask):
        return self._numb(e, self.vec(self.eval(e.src[0], mask)), mask)

    def _numb(self, e, a, mask):
        self.count(e.op, mask)
        return self._scalar(_popcount_rows(self.xp, a.w))

    def _scalar(self, arr):
        """A per-iteration result that is the same for all iterations is a Python scalar."""
        if arr.shape[0] == 1:
            x = arr[0]
            return bool(x) if arr.dtype == bool else int(x)
        return arr

    def short_circuit(self, e: Node, mask):
        """`and` / `or` evaluate their right side only where the left one does not decide,
        as the sequential code does (so the step counts agree)."""
        a = self.eval(e.src[0], mask)
        is_and = e.arg == "and"
        if isinstance(a, bool):
            return self.eval(e.src[1], mask) if a == is_and else a
        undecided = a if is_and else ~a
        sub = undecided if mask is None else (mask & undecided)
        if not bool(sub.any()):
            return a
        b = self.eval(e.src[1], sub)
        return (a & b) if is_and else (a | b)

    def binary(self, e: Node, mask):
        xp = self.xp
        o = e.arg
        if o in ("and", "or") and e.type is T.BOOL:
            return self.short_circuit(e, mask)
        a, b = (self.eval(s, mask) for s in e.src)
        if o == "+":
            return a + b
        if o == "-":
            return a - b
        if o == "*":
            return a * b
        if o in ("div", "mod"):
            zero = (b == 0)
            if isinstance(zero, bool):
                if zero and self.active(mask):
                    raise self.fail(e, "division by zero" if o == "div" else "division by zero (mod)")
            elif bool((zero if mask is None else zero & mask).any()):
                raise self.fail(e, "division by zero" if o == "div" else "division by zero (mod)")
            if isinstance(a, int) and isinstance(b, int):
                q = abs(a) // abs(b)
                q = q if (a >= 0) == (b >= 0) else -q
            else:
                safe_b = xp.where(b == 0, 1, b) if not isinstance(b, int) else b
                q = xp.abs(a) // xp.abs(safe_b)
                q = xp.where((xp.asarray(a) >= 0) == (xp.asarray(safe_b) >= 0), q, -q)
            return q if o == "div" else a - q * b
        if o in ("=", "<>", "<", "<=", ">", ">="):
            r = {"=": lambda: a == b, "<>": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
                 ">": lambda: a > b, ">=": lambda: a >= b}[o]()
            return bool(r) if isinstance(a, (int, bool)) and isinstance(b, (int, bool)) else r
        if o == "and":
            return (a and b) if isinstance(a, bool) and isinstance(b, bool) else (a & b)
        if o == "or":
            return (a or b) if isinstance(a, bool) and isinstance(b, bool) else (a | b)
        if o == "xor":
            return a != b
        raise AssertionError(o)


_SHIFTS = {}


def _shifts(xp):
    if xp not in _SHIFTS:
        _SHIFTS[xp] = xp.arange(64, dtype=xp.uint64)
    return _SHIFTS[xp]


def _set_bit(xp, v: _Vec, j, b, mask, m: int) -> _Vec:
    """Bit j (0-based; a number or one per iteration) of every iteration's copy of v set to b,
    in the iterations the mask selects."""
    words = xp.array(xp.broadcast_to(v.w, (m, v.w.shape[1])))
    rows = xp.arange(m)
    jj = xp.broadcast_to(xp.asarray(j, dtype=xp.int64), (m,))
    bb = xp.broadcast_to(xp.asarray(b, dtype=xp.uint64), (m,))
    if mask is not None:
        rows, jj, bb = rows[mask], jj[mask], bb[mask]
    shift = (jj & 63).astype(xp.uint64)
    cur = words[rows, jj >> 6]
    words[rows, jj >> 6] = (cur & ~(xp.uint64(1) << shift)) | (bb << shift)
    return _Vec(words, v.n)


def _unpack(xp, words):
    """uint64 words (W,) -> bool bits (64 W,), bit 0 of word 0 first."""
    return (((words[:, None] >> _shifts(xp)) & xp.uint64(1)) != 0).reshape(-1)


def _pack(xp, bits):
    """bool bits (64 W,) -> uint64 words (W,)."""
    b = bits.reshape(-1, 64).astype(xp.uint64) << _shifts(xp)
    return b.sum(axis=1, dtype=xp.uint64)      # distinct powers of two: the sum is the OR


def _popcount_rows(xp, w):
    """Number of 1 bits in each row of a (m, W) uint64 array (SWAR popcount)."""
    u = xp.uint64
    x = w - ((w >> u(1)) & u(0x5555555555555555))
    x = (x & u(0x3333333333333333)) + ((x >> u(2)) & u(0x3333333333333333))
    x = (x + (x >> u(4))) & u(0x0F0F0F0F0F0F0F0F)
    x = (x * u(0x0101010101010101)) >> u(56)
    return x.sum(axis=1).astype(xp.int64)
