"""A deliberately simple reference STAR-machine: spec §3 read literally, in plain Python.

Slices and words are lists of bools (element 0 = bit 1), a table is a list of rows (each a
list of bools). Nothing is packed and nothing is clever, so that it can be checked by eye
against the spec. ``Interp`` runs the small program trees that ``gen.py`` builds (the same
trees ``gen.render`` turns into Star source) and counts the base operations it executes, by
kind, as the interpreter's step counter names them (``Interp.counts``, compared with
``Machine.stats``); the standard-library routines a program calls run as literal ports of
their Star bodies (stdlib_model.py). Used only by tests and bench/fuzz_differential.py.
"""
from __future__ import annotations

import copy


# ------------------------------------------------------------------ spec §3, literally
def FND(y):
    for i, b in enumerate(y):
        if b:
            return i + 1
    return 0


def STEP(y):               # returns (position, new value)
    i = FND(y)
    y2 = list(y)
    if i:
        y2[i - 1] = False
    return i, y2


def NUMB(y):
    return sum(1 for b in y if b)


def CONVERT(y):
    return list(y)


def FRST(y):
    i = FND(y)
    return [k == i - 1 for k in range(len(y))] if i else [False] * len(y)


def SOME(y):
    return any(y)


def AND(x, y):
    assert len(x) == len(y)
    return [a and b for a, b in zip(x, y)]


def OR(x, y):
    assert len(x) == len(y)
    return [a or b for a, b in zip(x, y)]


def XOR(x, y):
    assert len(x) == len(y)
    return [a != b for a, b in zip(x, y)]


def NOT(x):
    return [not a for a in x]


def TRIM(i, j, w):
    assert 1 <= i <= j <= len(w)
    return list(w[i - 1:j])


def REP(i, j, v, w):       # returns the new w
    assert 1 <= i <= j <= len(w) and len(v) == j - i + 1
    return list(w[:i - 1]) + list(v) + list(w[j:])


def number(w) -> int:
    """A word as an unsigned number: bit 1 is the most significant (spec §2)."""
    x = 0
    for b in w:
        x = 2 * x + (1 if b else 0)
    return x


def from_number(x: int, n: int):
    return [bool((x >> (n - 1 - i)) & 1) for i in range(n)]


def ADD(v, w):
    assert len(v) == len(w)
    return from_number((number(v) + number(w)) % (2 ** len(v)), len(v))


def SUBT(v, w):
    assert len(v) == len(w)
    return from_number((number(v) - number(w)) % (2 ** len(v)), len(v))


COMPARE = {
    "EQ": lambda a, b: a == b, "NOTEQ": lambda a, b: a != b, "LESS": lambda a, b: a < b,
    "LESSEQ": lambda a, b: a <= b, "GREAT": lambda a, b: a > b, "GREATEQ": lambda a, b: a >= b,
}


class MTable:
    def __init__(self, n: int, k: int, rows=None):
        self.n, self.k = n, k
        self.rows = [list(r) for r in rows] if rows is not None else [[False] * k for _ in range(n)]

    def col(self, i):
        assert 1 <= i <= self.k
        return [r[i - 1] for r in self.rows]

    def row(self, i):
        assert 1 <= i <= self.n
        return list(self.rows[i - 1])

    def set_col(self, i, y):
        assert 1 <= i <= self.k and len(y) == self.n
        for r, b in zip(self.rows, y):
            r[i - 1] = b

    def set_row(self, i, w):
        assert 1 <= i <= self.n and len(w) == self.k
        self.rows[i - 1] = list(w)


class Int64Overflow(ArithmeticError):
    """An integer result beyond 64 bits in ``Interp(prog, int64=True)``: the compiled tier
    computes in 64 bits and stops there with an error (the interpreter's integers are
    unbounded); the differential harness compares it with this run."""


_I64 = (-(1 << 63), (1 << 63) - 1)


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def fmt(x) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, str):
        return x
    if isinstance(x, MTable):
        return "\n".join("".join("1" if b else "0" for b in r) for r in x.rows)
    return "".join("1" if b else "0" for b in x)


_UNARY = {"fnd": "FND", "numb": "NUMB", "some": "SOME", "frst": "FRST", "convert": "CONVERT"}   # looked up per call


# ------------------------------------------------------------------ the program trees of gen.py
class Interp:
    """Runs a gen.Program on the model; ``out`` collects what it prints."""

    def __init__(self, prog, int64: bool = False):
        self.prog = prog
        self.int64 = int64                     # stop at the first integer result beyond 64 bits
        self.out: list[str] = []
        self.snap: dict[str, object] = {}      # inside a parallel for: pre-loop values of what it writes
        self.counts: dict[str, int] = {}       # base operations executed, by kind (Machine.stats' names)
        self.calls: dict[str, int] = {}        # routine calls run, by name (library routines too)

    def i64(self, x: int) -> int:
        if self.int64 and not _I64[0] <= x <= _I64[1]:
            raise Int64Overflow(x)
        return x

    def c(self, op: str) -> None:
        self.counts[op] = self.counts.get(op, 0) + 1

    def run(self) -> str:
        p = self.prog
        frame = {}
        for name, kind in p.globals.items():
            frame[name] = self.zero(kind, p.n, p.k)
        for name, (rows, cols) in getattr(p, "tables", {}).items():
            frame[name] = MTable(rows, cols)
        self.block(p.main, frame)
        return "".join(self.out)

    @staticmethod
    def zero(kind, n, k):
        if kind == "int":
            return 0
        if kind == "bool":
            return False
        if kind == "table":
            return MTable(n, k)
        if kind == "S" or kind == "C":
            return [False] * n
        if kind == "W":
            return [False] * k
        raise AssertionError(kind)

    # ---------------------------------------------------------------- statements
    def block(self, stmts, f):
        for s in stmts:
            self.stmt(s, f)

    def stmt(self, s, f):
        op = s[0]
        if op == "asg":
            _, name, e = s
            v = self.ev(e, f)
            if isinstance(v, list):
                assert len(v) == len(f[name])
                f[name][:] = v          # in place: a var parameter shares the caller's list
            else:
                f[name] = v
        elif op == "tasg":              # table := table: a copy, into the same object
            _, dst, src = s
            f[dst].rows = [list(r) for r in self.read(src, f).rows]
        elif op == "set":
            self.c("SET")
            f[s[1]][:] = [True] * len(f[s[1]])
        elif op == "clr":
            self.c("CLR")
            f[s[1]][:] = [False] * len(f[s[1]])
        elif op == "bitset":
            _, name, idx, e = s
            i, b = self.ev(idx, f), self.ev(e, f)
            assert 1 <= i <= len(f[name]) and b in (0, 1, True, False)
            self.c("BIT_SET")
            f[name][i - 1] = bool(b)
        elif op == "colset":
            _, idx, t, e = s
            i, y = self.ev(idx, f), self.ev(e, f)
            self.c("COL_SET")
            f[t].set_col(i, y)
        elif op == "rowset":
            _, idx, t, e = s
            i, w = self.ev(idx, f), self.ev(e, f)
            self.c("ROW_SET")
            f[t].set_row(i, w)
        elif op == "rep":
            _, i, j, v, name = s
            i, j, v = self.ev(i, f), self.ev(j, f), self.ev(v, f)
            self.c("REP")
            f[name][:] = REP(i, j, v, f[name])
        elif op == "step":
            _, iname, vname = s
            self.c("STEP")
            pos, new = STEP(f[vname])
            f[vname][:] = new
            f[iname] = pos
        elif op == "lib":
            self.library(s[1], s[2], f)
        elif op == "if":
            _, c, a, b = s
            if self.ev(c, f):
                self.block(a, f)
            elif b is not None:
                self.block(b, f)
        elif op == "for":
            _, var, lo, hi, down, body = s
            lo, hi = self.ev(lo, f), self.ev(hi, f)
            for i in (range(lo, hi - 1, -1) if down else range(lo, hi + 1)):
                f[var] = i
                self.block(body, f)
        elif op == "while":
            _, vname, iname, body = s
            while self.c("SOME") or SOME(f[vname]):      # c() is None: count, then test
                self.c("STEP")
                pos, new = STEP(f[vname])
                f[vname][:] = new
                f[iname] = pos
                self.block(body, f)
        elif op == "repeat":
            _, ctr, count, body = s
            f[ctr] = count
            while True:
                self.block(body, f)
                f[ctr] = f[ctr] - 1
                if f[ctr] <= 0:
                    break
        elif op == "pfor":
            self.pfor(s, f)
        elif op == "writeln":
            self.out.append("".join(fmt(self.ev(e, f)) for e in s[1]) + "\n")
        elif op == "pcall":
            self.call(s[1], s[2], f)
        else:
            raise AssertionError(op)

    def pfor(self, s, f):
        """Forall semantics (spec §4): every iteration reads the values from before the loop;
        private variables keep, after the loop, the values they had before it."""
        _, var, lo, hi, down, body, writes, private = s
        lo, hi = self.ev(lo, f), self.ev(hi, f)
        saved = {p: copy.deepcopy(f[p]) for p in private}
        outer = self.snap
        self.snap = dict(outer)
        for w in writes:
            self.snap[w] = copy.deepcopy(f[w])
        for i in (range(lo, hi - 1, -1) if down else range(lo, hi + 1)):
            f[var] = i
            self.block(body, f)
        self.snap = outer
        for p, v in saved.items():
            if isinstance(v, list):
                f[p][:] = v
            else:
                f[p] = v

    def call(self, name, args, f):
        r = self.prog.routines[name]
        self.calls[name] = self.calls.get(name, 0) + 1
        g = {}
        for (pname, kind, by_ref), a in zip(r.params, args):
            if by_ref:
                g[pname] = f[a[1]]          # a = ('var', name): the caller's object itself
            else:
                v = self.ev(a, f)
                g[pname] = list(v) if isinstance(v, list) else v
        n, k = g[r.params[0][0]].n, g[r.params[0][0]].k
        for lname, kind in r.locals.items():
            g[lname] = self.zero(kind, n, k)
        if r.result_kind is not None and r.result is None:     # the body assigns the result
            g[r.name] = self.zero(r.result_kind, n, k)
        saved_snap, self.snap = self.snap, {}
        self.block(r.body, g)
        self.snap = saved_snap
        for (pname, kind, by_ref), a in zip(r.params, args):
            if by_ref and kind in ("int", "bool"):
                f[a[1]] = g[pname]
        if r.result is not None:
            return self.ev(r.result, g)
        if r.result_kind is not None:
            return g[r.name]
        return None

    def library(self, name, args, f):
        """A standard-library routine (stdlib_model.py): value arguments evaluated in order,
        var arguments are the caller's objects."""
        from . import stdlib_model as L
        c = self.c
        self.calls[name] = self.calls.get(name, 0) + 1
        v = [self.ev(a, f) if a[0] != "var" else self.read(a[1], f) for a in args]
        if name in ("MATCH", "MIN", "MAX", "HIT", "SETMIN", "GROUPMIN"):
            z = args[-1][1]                 # var Z: slice(T)
            ins = [list(x) if isinstance(x, list) else x for x in v[:-1]]
            f[z][:] = {"MATCH": L.MATCH, "MIN": L.MIN, "MAX": L.MAX, "HIT": L.HIT,
                       "SETMIN": L.SETMIN, "GROUPMIN": L.GROUPMIN}[name](c, *ins)
        elif name == "IOTA":
            L.IOTA(c, f[args[0][1]])
        elif name in ("GATHER", "SCATTER"):
            T, IX, X = v[0], v[1], list(v[2])
            (L.GATHER if name == "GATHER" else L.SCATTER)(c, T, IX, X, f[args[3][1]])
        elif name in ("COMPACT", "EXPAND"):
            (L.COMPACT if name == "COMPACT" else L.EXPAND)(c, v[0], list(v[1]), f[args[2][1]])
        elif name == "WARSHALL-adapt":
            L.WARSHALL_ADAPT(c, v[0], f[args[1][1]])
        else:
            raise AssertionError(name)

    # ---------------------------------------------------------------- expressions
    def read(self, name, f):
        return self.snap[name] if name in self.snap else f[name]

    def ev(self, e, f):
        op = e[0]
        if op == "lit":
            return e[1]
        if op == "str":                     # as written in Star: a quote is doubled
            return e[1].replace("''", "'")
        if op == "var":
            return self.read(e[1], f)
        if op == "bits":
            return [c == "1" for c in e[1]]
        if op == "idx":                     # ((e mod N + N) mod N) + 1 with Star's truncating mod
            x, n = self.ev(e[1], f), e[2]
            m = x - trunc_div(x, n) * n
            m = m + n
            return m - trunc_div(m, n) * n + 1
        if op == "bin":
            o, a = e[1], self.ev(e[2], f)
            if isinstance(a, bool) and o in ("and", "or"):
                # boolean and/or short-circuit in starvm (the right side may call a function
                # that prints): found by the differential fuzzer, seed 7624
                if (o == "and" and not a) or (o == "or" and a):
                    return a
                return self.ev(e[3], f)
            b = self.ev(e[3], f)
            if isinstance(a, list):
                self.c(o.upper())
                return {"and": AND, "or": OR, "xor": XOR}[o](a, b)
            if o == "+":
                return self.i64(a + b)
            if o == "-":
                return self.i64(a - b)
            if o == "*":
                return self.i64(a * b)
            if o == "div":
                return self.i64(trunc_div(a, b))
            if o == "mod":
                return a - trunc_div(a, b) * b
            if o == "and":
                return a and b
            if o == "or":
                return a or b
            if o == "=":
                return a == b
            if o == "<>":
                return a != b
            if o == "<":
                return a < b
            if o == "<=":
                return a <= b
            if o == ">":
                return a > b
            if o == ">=":
                return a >= b
            raise AssertionError(o)
        if op == "neg":
            return self.i64(-self.ev(e[1], f))
        if op == "not":
            a = self.ev(e[1], f)
            if isinstance(a, list):
                self.c("NOT")
                return NOT(a)
            return not a
        if op in _UNARY:
            a = self.ev(e[1], f)
            self.c(op.upper())
            return globals()[_UNARY[op]](a)
        if op == "bit":
            v, i = self.ev(e[1], f), self.ev(e[2], f)
            assert 1 <= i <= len(v)
            self.c("BIT_GET")
            return 1 if v[i - 1] else 0
        if op == "col":
            t, i = self.read(e[2], f), self.ev(e[1], f)
            self.c("COL_GET")
            return t.col(i)
        if op == "row":
            t, i = self.read(e[2], f), self.ev(e[1], f)
            self.c("ROW_GET")
            return t.row(i)
        if op == "trim":
            i, j, w = self.ev(e[1], f), self.ev(e[2], f), self.ev(e[3], f)
            self.c("TRIM")
            return TRIM(i, j, w)
        if op == "cmp":
            a, b = self.ev(e[2], f), self.ev(e[3], f)
            assert len(a) == len(b)
            self.c(e[1])
            return COMPARE[e[1]](number(a), number(b))
        if op == "veq":
            a, b = self.ev(e[2], f), self.ev(e[3], f)
            self.c("EQ" if e[1] == "=" else "NOTEQ")
            return (a == b) if e[1] == "=" else (a != b)
        if op == "arith":
            a, b = self.ev(e[2], f), self.ev(e[3], f)
            self.c(e[1])
            return ADD(a, b) if e[1] == "ADD" else SUBT(a, b)
        if op == "fcall":
            return self.call(e[1], e[2], f)
        raise AssertionError(op)
