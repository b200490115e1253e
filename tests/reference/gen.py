"""Random VALID, TERMINATING Star programs for differential testing.

A program is a small tree (tuples, see model.Interp for their meaning); ``render`` turns it
into Star source and ``model.Interp`` runs it on the reference model. Indices are valid by
construction (``((e) mod N + N) mod N + 1``), vector lengths match by construction (three
kinds: S = slice(T) of n bits, W = word(T) of k bits, C = a word of n bits), and every loop
terminates (for loops have literal bounds, `while SOME(X)` loops STEP their control vector,
which the body may not write, `repeat` loops count down a counter the body may not write,
recursion counts a literal depth down to 0). Programs call procedures and functions with var
and value parameters, a local table, a recursive procedure and function, and the standard
library's routines that have native kernels (``LIBRARY``, with index tables that hold valid
row numbers), so every route of the harness (natives on and off, ...) is exercised.

Options (``Gen(..., recursion_pct=, fn_output_pct=, error_pct=)``, all off by default so that
the reliability campaign's seeds give the same programs): how often a program uses recursion
at all and how often its functions may write output (the compiled tier refuses both, so the
routine calling them runs interpreted: bench/fuzz_compiled.py lowers the odds to see the
tier compile the rest), and how often a program holds one statement that stops it with a
runtime error (``error_stmt``: division by zero, a COL/ROW/bit/TRIM index out of range).

Randomness comes from an object with ``int(lo, hi)``: ``RandomSource`` (random.Random, for the
long fuzz run) or ``HypothesisSource`` (a Hypothesis ``data`` object, for the test suite).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

SIZES_N = [1, 2, 3, 5, 8, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 191, 192, 193, 255, 256, 257, 299, 300]
SIZES_K = [1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65]
COMPARES = ["EQ", "NOTEQ", "LESS", "LESSEQ", "GREAT", "GREATEQ"]


# The standard-library routines a program may call (main block only), all with native kernels:
# the fuzzer checks the natives' results and step reports against the model's ports of the
# Star bodies (stdlib_model.py).
LIBRARY = ["MATCH", "MIN", "MAX", "HIT", "SETMIN", "IOTA", "GATHER", "SCATTER", "GROUPMIN", "WARSHALL-adapt",
           "COMPACT", "EXPAND"]


class RandomSource:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def int(self, lo, hi):
        return self.r.randint(lo, hi)


class HypothesisSource:
    def __init__(self, data):
        from hypothesis import strategies as st
        self.data, self.st = data, st

    def int(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))


@dataclass
class Routine:
    name: str
    params: list            # (name, kind, by_ref)
    locals: dict            # name -> kind
    body: list
    result: tuple | None = None
    result_kind: str | None = None


@dataclass
class Program:
    n: int
    k: int
    globals: dict
    routines: dict
    main: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)      # name -> (rows, columns)
    max_depth: int | None = None                    # the recursion limit a deep call needs (Gen's edge_pct)
    edges: bool = False                             # Gen.edges drew its statements


@dataclass
class Scope:
    table: str
    writable_table: bool
    ints: list                      # writable integers
    ro_ints: list                   # readable only (loop variables in scope)
    bools: list
    vecs: dict                      # kind -> names
    loopvars: list                  # free for-loop variables
    ctrs: list                      # free repeat counters
    calls: bool                     # may call P1 / F1 / F2
    frozen: frozenset = frozenset()
    parallel: bool = False          # inside a parallel for body (no calls, no STEP, no output)
    pfor_ok: bool = False
    output: bool = True             # may writeln (functions: Gen's fn_output_pct)

    def but(self, **kw):
        d = dict(vars(self))
        d.update(kw)
        return Scope(**d)


class Gen:
    def __init__(self, src, max_stmts: int = 8, *, recursion_pct: int | None = None,
                 fn_output_pct: int | None = None, error_pct: int = 0, mutual_pct: int = 0, edge_pct: int = 0):
        """None: the original behaviour (every program may recurse, functions may print),
        drawing nothing more, so existing seeds give the same programs."""
        self.R = src
        self.max_stmts = max_stmts
        self.recursion_pct = recursion_pct
        self.fn_output_pct = fn_output_pct
        self.error_pct = error_pct
        self.mutual_pct = mutual_pct    # how often RP recurses through RQ (drawn last: seeds keep their programs)
        self.edge_pct = edge_pct        # how often a program goes to the machine's edges (edges(): drawn after that)
        self.recursion = True
        self.error_at = None            # where error_stmt put a failing statement: "main", "P1", "F1"

    # ------------------------------------------------------------------ helpers
    def pick(self, seq):
        return seq[self.R.int(0, len(seq) - 1)]

    def chance(self, pct):
        return self.R.int(1, 100) <= pct

    def length(self, kind):
        return self.k if kind == "W" else self.n

    def bits(self, m):
        style = self.R.int(0, 3)
        if style == 0:
            return "".join("1" if self.chance(50) else "0" for _ in range(m))
        if style == 1:
            return "0" * m if self.chance(50) else "1" * m
        if style == 2:   # sparse
            return "".join("1" if self.chance(5) else "0" for _ in range(m))
        return "".join("0" if self.chance(5) else "1" for _ in range(m))

    # ------------------------------------------------------------------ expressions
    def idx(self, sc, N, d):
        c = self.R.int(0, 3)
        if c == 0:
            return ("lit", self.pick([1, N, (N + 1) // 2, min(N, 64), min(N, 65)]))
        if c == 1:
            return ("lit", self.R.int(1, N))
        return ("idx", self.int_(sc, d - 1), N)

    def int_(self, sc, d):
        readable = sc.ints + sc.ro_ints
        c = self.R.int(0, 12 if d > 0 else 2)
        if c == 0:
            return ("lit", self.R.int(0, 9))
        if c in (1, 2):
            return ("var", self.pick(readable))
        if c == 3:
            return ("fnd", self.vec(sc, self.vkind(sc), d - 1))
        if c == 4:
            return ("numb", self.vec(sc, self.vkind(sc), d - 1))
        if c == 5:
            kind = self.vkind(sc)
            return ("bit", self.vec(sc, kind, d - 1), self.idx(sc, self.length(kind), d - 1))
        if c in (6, 7):
            return ("bin", self.pick(["+", "-"]), self.int_(sc, d - 1), self.int_(sc, d - 1))
        if c == 8:
            return ("bin", "*", self.int_(sc, d - 1), ("lit", self.R.int(0, 3)))
        if c == 9:
            return ("bin", self.pick(["div", "mod"]), self.int_(sc, d - 1),
                    ("lit", self.pick([1, 2, 3, 7, 64])) if self.chance(70) else ("neg", ("lit", self.R.int(1, 5))))
        if c == 10:
            return ("neg", self.int_(sc, d - 1))
        if c == 11 and sc.calls and not sc.parallel:
            if self.recursion and self.chance(30):      # recursive
                return ("fcall", "RF", [("var", sc.table), ("lit", self.R.int(0, 4)), self.vec(sc, "W", d - 1)])
            return ("fcall", "F1", [("var", sc.table), self.vec(sc, "S", d - 1), self.int_(sc, d - 1)])
        return ("var", self.pick(readable))

    def vkind(self, sc):
        kinds = [k for k in ("S", "W", "C") if k in sc.vecs or k == "C"]
        return self.pick(kinds)

    def bool_(self, sc, d):
        c = self.R.int(0, 10 if d > 0 else 1)
        if c == 0:
            return ("lit", self.chance(50))
        if c == 1 and sc.bools:
            return ("var", self.pick(sc.bools))
        if c == 2:
            return ("some", self.vec(sc, self.vkind(sc), d - 1))
        if c == 3:
            kind = self.pick(["W", "C"])
            return ("cmp", self.pick(COMPARES), self.vec(sc, kind, d - 1), self.vec(sc, kind, d - 1))
        if c == 4:   # compare sub-words of equal length
            m = self.R.int(1, self.k)
            i1, i2 = self.R.int(1, self.k - m + 1), self.R.int(1, self.k - m + 1)
            return ("cmp", self.pick(COMPARES),
                    ("trim", ("lit", i1), ("lit", i1 + m - 1), self.vec(sc, "W", d - 1)),
                    ("trim", ("lit", i2), ("lit", i2 + m - 1), self.vec(sc, "W", d - 1)))
        if c in (5, 6):
            return ("bin", self.pick(["=", "<>", "<", "<=", ">", ">="]), self.int_(sc, d - 1), self.int_(sc, d - 1))
        if c == 7:
            return ("bin", self.pick(["and", "or"]), self.bool_(sc, d - 1), self.bool_(sc, d - 1))
        if c == 8:
            return ("not", self.bool_(sc, d - 1))
        if c == 9:
            kind = self.vkind(sc)
            return ("veq", self.pick(["=", "<>"]), self.vec(sc, kind, d - 1), self.vec(sc, kind, d - 1))
        kind = self.vkind(sc)
        return ("bin", "=", ("bit", self.vec(sc, kind, d - 1), self.idx(sc, self.length(kind), d - 1)), ("lit", 1))

    def vec(self, sc, kind, d, top=False):
        """A vector of the kind; a BITS literal is a word, so a slice gets one only as the
        whole value of an assignment (top=True), spec §4."""
        names = sc.vecs.get(kind, [])
        c = self.R.int(0, 9 if d > 0 else 2)
        if kind == "S" and c in (0, 1, 2) and not top and not names:
            c = 3
        if kind == "S" and c == 0 and not top:
            c = 1
        if c == 0 or (c == 1 and not names):
            return ("bits", self.bits(self.length(kind)))
        if c in (1, 2):
            if names:
                return ("var", self.pick(names))
            c = 3
        if c == 3:
            if kind == "S":
                return ("col", self.idx(sc, self.k, d - 1), sc.table)
            if kind == "W":
                return ("row", self.idx(sc, self.n, d - 1), sc.table)
            return ("convert", self.vec(sc, "S", d - 1))
        if c == 4:
            return ("frst", self.vec(sc, kind, d - 1))
        if c in (5, 6):
            return ("bin", self.pick(["and", "or", "xor"]), self.vec(sc, kind, d - 1), self.vec(sc, kind, d - 1))
        if c == 7:
            return ("not", self.vec(sc, kind, d - 1))
        if c == 8 and kind != "S":
            return ("arith", self.pick(["ADD", "SUBT"]), self.vec(sc, kind, d - 1), self.vec(sc, kind, d - 1))
        if c == 9 and kind == "W" and sc.calls and not sc.parallel:
            return ("fcall", "F2", [("var", sc.table), self.vec(sc, "W", d - 1)])
        if kind == "W" and self.chance(30):
            return ("convert", self.vec(sc, "W", d - 1))
        return ("not", self.vec(sc, kind, d - 1))

    def bitval(self, sc, d):
        c = self.R.int(0, 3)
        if c == 0:
            return ("lit", self.R.int(0, 1))
        if c == 1:
            return self.bool_(sc, d)
        kind = self.vkind(sc)
        return ("bit", self.vec(sc, kind, d - 1), self.idx(sc, self.length(kind), d - 1))

    # ------------------------------------------------------------------ statements
    def writable_vecs(self, sc, kinds=("S", "W", "C")):
        return [(k, v) for k in kinds for v in sc.vecs.get(k, []) if v not in sc.frozen]

    def stmts(self, sc, depth, count=None):
        count = self.R.int(1, self.max_stmts if depth == 0 else 3) if count is None else count
        return [self.stmt(sc, depth) for _ in range(count)]

    def stmt(self, sc, depth):
        d = 3
        while True:
            c = self.R.int(0, 24)
            if c == 0:
                return ("asg", self.pick(sc.ints), self.int_(sc, d))
            if c == 1 and sc.bools:
                return ("asg", self.pick(sc.bools), self.bool_(sc, d))
            if c in (2, 3):
                wv = self.writable_vecs(sc)
                if wv:
                    kind, name = self.pick(wv)
                    return ("asg", name, self.vec(sc, kind, d, top=True))
            if c == 4:
                wv = self.writable_vecs(sc)
                if wv:
                    return (self.pick(["set", "clr"]), self.pick(wv)[1])
            if c == 5:
                wv = self.writable_vecs(sc)
                if wv:
                    kind, name = self.pick(wv)
                    return ("bitset", name, self.idx(sc, self.length(kind), d), self.bitval(sc, d))
            if c == 6 and sc.writable_table:
                return ("colset", self.idx(sc, self.k, d), sc.table, self.vec(sc, "S", d, top=True))
            if c == 7 and sc.writable_table:
                return ("rowset", self.idx(sc, self.n, d), sc.table, self.vec(sc, "W", d))
            if c == 8:
                wv = self.writable_vecs(sc, ("W", "C"))
                if wv:
                    return self.rep(sc, wv, d)
            if c == 9 and not sc.parallel:
                wv = self.writable_vecs(sc)
                if wv:
                    return ("step", self.pick(sc.ints), self.pick(wv)[1])
            if c == 10:
                els = self.stmts(sc, depth + 1, self.R.int(1, 2)) if self.chance(50) else None
                return ("if", self.bool_(sc, d), self.stmts(sc, depth + 1, self.R.int(1, 2)), els)
            if c == 11 and depth < 2 and sc.loopvars and not sc.parallel:
                return self.for_(sc, depth)
            if c == 12 and depth == 0 and not sc.parallel:
                wv = self.writable_vecs(sc)
                if wv:
                    name = self.pick(wv)[1]
                    target = self.pick(sc.ints)
                    inner = sc.but(frozen=sc.frozen | {name})
                    return ("while", name, target, self.stmts(inner, depth + 1))
            if c == 13 and depth < 2 and sc.ctrs and not sc.parallel:
                ctr = sc.ctrs[0]
                inner = sc.but(ctrs=sc.ctrs[1:], ints=[x for x in sc.ints if x != ctr])
                return ("repeat", ctr, self.R.int(1, 4), self.stmts(inner, depth + 1))
            if c in (14, 15) and not sc.parallel and sc.output:
                return ("writeln", self.out_args(sc))
            if c == 16 and sc.calls and not sc.parallel:
                svars = [v for v in sc.vecs["S"] if v not in sc.frozen and v != "PS"]
                if svars:
                    return ("pcall", "P1", [("var", sc.table), ("var", self.pick(svars)), self.vec(sc, "W", d),
                                            ("var", self.pick(sc.ints)), self.int_(sc, d)])
            if c in (17, 18) and sc.pfor_ok and not sc.parallel:
                return self.pfor(sc)
            if c == 19:
                return ("asg", self.pick(sc.ints), self.int_(sc, d))
            if c in (20, 21, 22, 23) and sc.calls and not sc.parallel and sc.table == "T":
                svars = [v for v in sc.vecs["S"] if v not in sc.frozen and v != "PS"]
                if svars:
                    return self.library(sc, svars, d)
            if c == 24 and sc.calls and not sc.parallel and self.recursion:
                svars = [v for v in sc.vecs["S"] if v not in sc.frozen and v != "PS"]
                if svars:
                    return ("pcall", "RP", [("var", sc.table), ("lit", self.R.int(0, 4)), ("var", self.pick(svars)),
                                            ("var", self.pick(sc.ints))])

    def library(self, sc, svars, d):
        """A call of a standard-library routine on the global tables: T and T2 (n x k), IX (n
        row numbers, 1..n) and PG (pn x pn)."""
        name = self.pick(LIBRARY)
        tab = ("var", self.pick(["T", "T2"]))
        other = ("var", "T2" if tab[1] == "T" else "T")
        z = ("var", self.pick(svars))
        if name == "MATCH":
            return ("lib", name, [tab, self.vec(sc, "S", d), self.vec(sc, "W", d), z])
        if name in ("MIN", "MAX"):
            return ("lib", name, [tab, self.vec(sc, "S", d), z])
        if name in ("HIT", "SETMIN"):
            return ("lib", name, [tab, other if self.chance(80) else tab, self.vec(sc, "S", d), z])
        if name == "IOTA":
            return ("lib", name, [("var", self.pick(["T", "T2", "IX"]))])
        if name in ("GATHER", "SCATTER"):            # R is never T: the body's row order would matter
            return ("lib", name, [tab, ("var", "IX"), self.vec(sc, "S", d), other])
        if name == "GROUPMIN":
            return ("lib", name, [("var", "IX"), tab, self.vec(sc, "S", d), z])
        if name == "COMPACT":                        # in place allowed: rows only move up
            return ("lib", name, [tab, self.vec(sc, "S", d), other if self.chance(70) else tab])
        if name == "EXPAND":
            return ("lib", name, [tab, self.vec(sc, "S", d), other])
        m = self.pn if self.chance(80) else self.R.int(0, self.pn)     # m < pn: the Star body
        return ("lib", name, [("lit", m), ("var", "PG")])

    def error_stmt(self, sc):
        """A statement that stops the program with a runtime error when it runs (the checker
        cannot see it: the bad value is computed)."""
        ints = sc.ints + sc.ro_ints

        def beyond(N):                  # N+1 .. 2N, never a constant
            return ("bin", "+", ("idx", self.int_(sc, 1), N), ("lit", N))
        c = self.R.int(0, 5)
        if c == 0:
            v = self.pick(ints)
            return ("asg", self.pick(sc.ints), ("bin", self.pick(["div", "mod"]), self.int_(sc, 1),
                                                 ("bin", "-", ("var", v), ("var", v))))
        if c == 1:
            return ("asg", self.pick(sc.ints), ("numb", ("col", beyond(self.k), sc.table)))
        if c == 2:
            return ("asg", self.pick(sc.ints), ("numb", ("row", beyond(self.n), sc.table)))
        if c == 3 and sc.writable_table:
            return ("colset", beyond(self.k), sc.table, self.vec(sc, "S", 1, top=True))
        if c == 4:
            kind = self.vkind(sc)
            return ("asg", self.pick(sc.ints), ("bit", self.vec(sc, kind, 1), beyond(self.length(kind))))
        return ("asg", self.pick(sc.ints), ("numb", ("trim", ("lit", 1), beyond(self.k), self.vec(sc, "W", 1)))
                ) if "W" in sc.vecs else ("asg", self.pick(sc.ints), ("numb", ("col", beyond(self.k), sc.table)))

    def rep(self, sc, wv, d):
        kind, name = self.pick(wv)
        L = self.length(kind)
        if self.chance(25):   # one bit at a computed position
            e1, e2 = self.idx(sc, L, d), self.idx(sc, L, d)
            return ("rep", e1, e1, ("trim", e2, e2, self.vec(sc, kind, d - 1)), name)
        i = self.R.int(1, L)
        j = self.R.int(i, L)
        if self.chance(40):
            return ("rep", ("lit", i), ("lit", j), ("bits", self.bits(j - i + 1)), name)
        i2 = self.R.int(1, L - (j - i))
        return ("rep", ("lit", i), ("lit", j), ("trim", ("lit", i2), ("lit", i2 + j - i), self.vec(sc, kind, d - 1)), name)

    def out_args(self, sc):
        args = []
        for _ in range(self.R.int(1, 3)):
            if args:
                args.append(("str", " "))
            c = self.R.int(0, 4)
            if c == 0:
                args.append(self.int_(sc, 2))
            elif c == 1:
                args.append(self.bool_(sc, 2))
            elif c == 2:
                args.append(self.vec(sc, self.vkind(sc), 2))
            elif c == 3:
                args.append(("var", sc.table))
            else:
                args.append(("str", self.pick(["it''s", "x", "", "a b"])))
        return args

    def for_(self, sc, depth):
        var = sc.loopvars[0]
        if depth == 0 and self.chance(40):
            hi = self.pick([self.n, self.k])
            lo = self.R.int(1, 2)
        else:
            lo = self.R.int(0, 3)
            hi = lo + self.R.int(-1, 4)
        down = self.chance(30)
        if down:
            lo, hi = hi, lo
        inner = sc.but(loopvars=sc.loopvars[1:], ro_ints=sc.ro_ints + [var])
        return ("for", var, ("lit", lo), ("lit", hi), down, self.stmts(inner, depth + 1))

    def pfor(self, sc):
        """A `parallel for` obeying the forall rule: writes COL(p,T), ROW(p,T) or X(p) only,
        private variables (pa, PS, pw) assigned before they are read."""
        form = self.R.int(0, 2)
        if form == 0:
            N, write = self.k, sc.table
        elif form == 1:
            N, write = self.n, sc.table
        else:
            wv = self.writable_vecs(sc, ("S", "W"))
            wv = [(k, v) for k, v in wv if v not in ("PS", "pw")]
            if not wv:
                return ("asg", self.pick(sc.ints), ("lit", 0))
            kind, write = self.pick(wv)
            N = self.length(kind)
        lo = self.R.int(1, N)
        hi = self.R.int(lo, N) if self.chance(50) else N
        if self.chance(50):
            lo = 1
        down = self.chance(30)
        if down:
            lo, hi = hi, lo
        ro = sc.ro_ints + ["p"]
        inner = sc.but(parallel=True, ro_ints=ro, ints=[], bools=[],
                       vecs={k: [v for v in names if v not in ("PS", "pw")] for k, names in sc.vecs.items()},
                       loopvars=[], ctrs=[])
        body, private = [], []
        for _ in range(self.R.int(0, 2)):
            c = self.R.int(0, 2)
            if c == 0:
                body.append(("asg", "pa", self.int_(inner, 2)))
                if "pa" not in private:
                    private.append("pa")
                    inner = inner.but(ro_ints=inner.ro_ints + ["pa"])
            elif c == 1:
                body.append(("asg", "PS", self.vec(inner, "S", 2, top=True)))
                if "PS" not in private:
                    private.append("PS")
                    inner = inner.but(vecs={**inner.vecs, "S": inner.vecs["S"] + ["PS"]})
            else:
                body.append(("asg", "pw", self.vec(inner, "W", 2)))
                if "pw" not in private:
                    private.append("pw")
                    inner = inner.but(vecs={**inner.vecs, "W": inner.vecs["W"] + ["pw"]})
        readonly = inner.but(frozen=frozenset(n for names in inner.vecs.values() for n in names))
        if form == 0:
            w = ("colset", ("var", "p"), write, self.vec(readonly, "S", 3, top=True))
        elif form == 1:
            w = ("rowset", ("var", "p"), write, self.vec(readonly, "W", 3))
        else:
            w = ("bitset", write, ("var", "p"), self.bitval(readonly, 3))
        if self.chance(40):
            w = ("if", self.bool_(readonly, 2), [w], None)
        body.append(w)
        body = _without_lost_writes(body, private)     # the checker refuses those (check/parallel.py)
        private = [v for v in private if any(s[0] == "asg" and s[1] == v for s in body)]
        return ("pfor", "p", ("lit", lo), ("lit", hi), down, body, [write], private)

    # ------------------------------------------------------------------ programs
    def program(self) -> Program:
        R = self.R
        self.n = self.pick(SIZES_N) if R.int(0, 2) else R.int(1, 300)
        self.k = self.pick(SIZES_K) if R.int(0, 2) else R.int(1, 70)
        n, k = self.n, self.k
        self.pn = min(n, R.int(1, 20))
        if self.recursion_pct is not None:
            self.recursion = self.chance(self.recursion_pct)
        fn_output = True if self.fn_output_pct is None else self.chance(self.fn_output_pct)
        ixbits = max(1, n.bit_length()) + R.int(0, 1)
        g = {"a": "int", "b": "int", "c": "int", "i": "int", "j": "int", "r1": "int", "r2": "int",
             "p": "int", "pa": "int", "f": "bool", "X": "S", "Y": "S", "Z": "S", "PS": "S",
             "v": "W", "w": "W", "u": "W", "pw": "W", "q": "C"}
        # the routines: bodies see only their parameters and locals
        rsc = Scope("Q", True, ["m1", "e1", "a1"], [], ["g1"], {"S": ["S1", "X1"], "W": ["w1", "v1"]},
                    ["i1"], ["r3"], calls=False)
        p1 = Routine("P1", [("Q", "table", True), ("S1", "S", True), ("w1", "W", False), ("m1", "int", True),
                            ("e1", "int", False)],
                     {"a1": "int", "i1": "int", "r3": "int", "X1": "S", "v1": "W", "g1": "bool", "L1": "table"}, [])
        p1.body = self.stmts(rsc.but(pfor_ok=False), 1, R.int(1, 4))
        if self.chance(50):                     # a local table: a copy of Q, worked on, maybe copied back
            p1.body += [("tasg", "L1", "Q")] + self.stmts(rsc.but(table="L1"), 1, R.int(1, 3))
            if self.chance(60):
                p1.body.append(("tasg", "Q", "L1"))
        fsc = rsc.but(writable_table=False, ints=["e1", "a1"], vecs={"S": ["S1", "X1"]}, output=fn_output)
        f1 = Routine("F1", [("Q", "table", False), ("S1", "S", False), ("e1", "int", False)],
                     {"a1": "int", "i1": "int", "r3": "int", "X1": "S", "g1": "bool"}, [])
        f1.body = self.stmts(fsc, 1, R.int(0, 3))
        f1.result, f1.result_kind = self.int_(fsc, 2), "int"
        f2sc = rsc.but(writable_table=False, ints=["a1"], bools=[], vecs={"W": ["w1"]}, loopvars=[], ctrs=[],
                       output=fn_output)
        f2 = Routine("F2", [("Q", "table", False), ("w1", "W", False)], {"a1": "int"}, [])
        f2.body = self.stmts(f2sc, 2, R.int(0, 2))
        f2.result, f2.result_kind = self.vec(f2sc, "W", 2), "W"
        # recursion: a procedure and a function calling themselves d levels deep
        r1sc = Scope("Q", False, ["m1", "a1"], ["d"], [], {"S": ["S1", "X1"], "W": ["v1"]}, ["i1"], ["r3"],
                     calls=False)
        rp = Routine("RP", [("Q", "table", False), ("d", "int", False), ("S1", "S", True), ("m1", "int", True)],
                     {"a1": "int", "i1": "int", "r3": "int", "X1": "S", "v1": "W"}, [])
        recurse = ("pcall", "RP", [("var", "Q"), ("bin", "-", ("var", "d"), ("lit", 1)), ("var", "S1"), ("var", "m1")])
        rp.body = [("if", ("bin", ">", ("var", "d"), ("lit", 0)),
                    self.stmts(r1sc, 1, R.int(1, 2)) + [recurse] + self.stmts(r1sc, 1, R.int(0, 2)),
                    self.stmts(r1sc, 1, R.int(1, 2)) if self.chance(50) else None)]
        r2sc = Scope("Q", False, ["a1"], ["d"], [], {"W": ["w1"]}, [], [], calls=False)
        rf = Routine("RF", [("Q", "table", False), ("d", "int", False), ("w1", "W", False)], {"a1": "int"}, [],
                     result_kind="int")
        deeper = ("fcall", "RF", [("var", "Q"), ("bin", "-", ("var", "d"), ("lit", 1)), self.vec(r2sc, "W", 2)])
        rf.body = [("if", ("bin", "<=", ("var", "d"), ("lit", 0)),
                    [("asg", "RF", self.int_(r2sc, 2))],
                    self.stmts(r2sc, 2, R.int(0, 1)) + [("asg", "RF", ("bin", "+", deeper, self.int_(r2sc, 1)))])]
        prog = Program(n, k, g, {"P1": p1, "F1": f1, "F2": f2, "RP": rp, "RF": rf},
                       tables={"T": (n, k), "T2": (n, k), "IX": (n, ixbits), "PG": (self.pn, self.pn)})
        main = []
        cols = list(range(1, k + 1))
        for _ in range(min(k, R.int(0, 6))):
            main.append(("colset", ("lit", self.pick(cols)), "T", ("bits", self.bits(n))))
        for _ in range(R.int(0, 4)):
            main.append(("rowset", ("lit", R.int(1, n)), "T", ("bits", self.bits(k))))
        for _ in range(min(k, R.int(0, 4))):
            main.append(("colset", ("lit", self.pick(cols)), "T2", ("bits", self.bits(n))))
        index_rows = [("lib", "IOTA", [("var", "IX")])]    # IX: valid row numbers, for GATHER and SCATTER
        if self.chance(80):                     # row numbers 1..n, a few of them moved
            for _ in range(R.int(0, 4)):
                code = format(R.int(1, n), f"0{ixbits}b")
                index_rows.append(("rowset", ("lit", R.int(1, n)), "IX", ("bits", code)))
        else:                                   # many rows name row 1 (or row n): repeats
            code = format(self.pick([1, n]), f"0{ixbits}b")
            for r in range(1, n + 1, max(1, n // 8)):
                index_rows.append(("rowset", ("lit", r), "IX", ("bits", code)))
        ix_at = len(main)
        for _ in range(R.int(0, self.pn)):
            main.append(("rowset", ("lit", R.int(1, self.pn)), "PG", ("bits", self.bits(self.pn))))
        for name in ("X", "Y"):
            if self.chance(70):
                main.append(("asg", name, ("bits", self.bits(n))))
        for name in ("v", "w"):
            if self.chance(70):
                main.append(("asg", name, ("bits", self.bits(k))))
        main.append(("asg", "q", ("convert", ("var", "X"))))
        sc = Scope("T", True, ["a", "b", "c"], [], ["f"], {"S": ["X", "Y", "Z", "PS"], "W": ["v", "w", "u", "pw"],
                                                            "C": ["q"]},
                   ["i", "j"], ["r1", "r2"], calls=True, pfor_ok=True)
        main += self.stmts(sc, 0)
        if self.error_pct and self.chance(self.error_pct):
            self.error_at = self.pick(["main", "main", "P1", "F1"])
            where = {"main": (main, sc), "P1": (p1.body, rsc), "F1": (f1.body, fsc)}[self.error_at]
            _insert_somewhere(self, where[0], self.error_stmt(where[1]))
        if _calls(main, ("GATHER", "SCATTER")) or self.chance(10):
            main[ix_at:ix_at] = index_rows      # (loading rows.star costs time: only where needed)
        main += [("writeln", [("var", "T")]), ("writeln", [("var", "T2")]), ("writeln", [("var", "IX")]),
                 ("writeln", [("var", "PG")]),
                 ("writeln", [("var", x) if j % 2 == 0 else ("str", " ") for j, x in
                              enumerate(_join(["a", "b", "c", "pa", "f"]))]),
                 ("writeln", [("var", x) if j % 2 == 0 else ("str", " ") for j, x in
                              enumerate(_join(["X", "Y", "Z", "PS", "q"]))]),
                 ("writeln", [("var", x) if j % 2 == 0 else ("str", " ") for j, x in
                              enumerate(_join(["v", "w", "u", "pw"]))])]
        prog.main = main
        if self.mutual_pct and self.recursion and self.chance(self.mutual_pct):
            # mutual recursion: RP calls RQ one level down, RQ calls RP; drawn after everything
            # else, so that a seed's program is otherwise the one it was without it
            then = rp.body[0][2]
            then[then.index(recurse)] = ("pcall", "RQ", recurse[2])
            rq = Routine("RQ", list(rp.params), {"a1": "int", "i1": "int", "r3": "int", "X1": "S", "v1": "W"}, [])
            rq.body = self.stmts(r1sc, 1, R.int(0, 1)) + [
                ("pcall", "RP", [("var", "Q"), ("var", "d"), ("var", "S1"), ("var", "m1")])]
            prog.routines["RQ"] = rq
        if self.edge_pct and self.chance(self.edge_pct):
            self.edges(prog, sc, p1)
        return prog

    def edges(self, prog: Program, sc: Scope, p1: Routine) -> None:
        """Where compiled code meets its machine's limits (issue 36): integers near and past
        2^63 (the minimum div and mod -1, products crossing 2^63) in the main block and in P1
        after it wrote its table; a recursion thousands of calls deep (the limit raised to fit:
        ``Program.max_depth``); a `parallel for` running one index past what it writes (a
        runtime error in an iteration)."""
        R, main = self.R, prog.main
        prog.edges = True
        big = (1 << 63) - 1
        least = ("bin", "-", ("neg", ("lit", big)), ("lit", 1))
        edge = [("lit", big), ("lit", big - 1), ("lit", 1 << 62), ("lit", 3037000500), ("lit", 3037000499),
                ("lit", 1 << 32), least, ("neg", ("lit", big))]
        small = lambda: ("lit", R.int(1, 3)) if self.chance(60) else ("neg", ("lit", R.int(1, 3)))  # noqa: E731

        def value(ints):
            c = R.int(0, 5)
            if c == 0:
                return ("bin", self.pick(["+", "-", "*", "div", "mod"]), self.pick(edge), small())
            if c == 1:
                return ("bin", self.pick(["div", "mod"]), least, ("neg", ("lit", 1)))
            if c == 2:
                return ("neg", least if self.chance(50) else ("var", self.pick(ints)))
            if c == 3:
                v = ("var", self.pick(ints))
                return ("bin", "*", v, v)
            return ("bin", self.pick(["+", "-", "*"]), self.pick(edge), ("var", self.pick(ints)))
        for _ in range(R.int(1, 3)):
            _insert_somewhere(self, main, ("asg", self.pick(sc.ints), value(sc.ints)))
        if self.chance(50):
            p1.body.append(("asg", self.pick(["m1", "a1"]), value(["m1", "e1", "a1"])))
        # after the setup (q, a word of n bits, is assigned last) and before the closing writelns
        start = next(i for i, s in enumerate(main) if s[:2] == ("asg", "q")) + 1
        tail = len(main) - 7
        if self.recursion and self.chance(50):
            depth = self.pick([1500, 4000, 9000])
            main.insert(R.int(start, tail), ("pcall", "RP", [("var", "T"), ("lit", depth), ("var", self.pick(["X", "Y", "Z"])),
                                                         ("var", self.pick(sc.ints))]))
            prog.max_depth = 2 * depth + 100     # RP through RQ: two calls a level
        if self.chance(40):
            loop = self.pfor(sc)
            if loop[0] == "pfor":
                _, var, lo, hi, down, body, written, private = loop
                w = body[-1] if body[-1][0] != "if" else body[-1][2][0]
                past = ("lit", 1 + (self.k if w[0] == "colset" else self.n if w[0] == "rowset"
                                    else self.length("W" if w[1] in sc.vecs.get("W", ()) else "S")))
                lo, hi = (past, hi) if down else (lo, past)
                main.insert(R.int(start, len(main) - 7), ("pfor", var, lo, hi, down, body, written, private))
                self.error_at = self.error_at or "main"


def _insert_somewhere(gen, stmts, new) -> None:
    """Put ``new`` into ``stmts`` or into one of the statement lists nested in it (not into a
    parallel for: its body has its own rules), at a random place."""
    nested = {"if": (2, 3), "for": (5,), "while": (3,), "repeat": (3,)}
    lists = [stmts]
    todo = list(stmts)
    while todo:
        s = todo.pop()
        for i in nested.get(s[0], ()):
            if s[i]:
                lists.append(s[i])
                todo.extend(s[i])
    target = gen.pick(lists)
    target.insert(gen.R.int(0, len(target)), new)


def _calls(stmts, names) -> bool:
    """Does a statement list call one of the library routines ``names``, at any depth?"""
    for s in stmts:
        if s[0] == "lib" and s[1] in names:
            return True
        if any(isinstance(part, list) and part and isinstance(part[0], tuple) and _calls(part, names)
               for part in s[1:]):
            return True
    return False


def _join(names):
    out = []
    for x in names:
        if out:
            out.append(" ")
        out.append(x)
    return out


# ---------------------------------------------------------------------- rendering
_KIND_TYPE = {"int": "integer", "bool": "boolean", "S": "slice(T)", "W": "word(T)", "C": "word"}


def render(prog: Program) -> str:
    out = [f"program fuzz;  {{ n = {prog.n}, k = {prog.k} }}",
           "var " + " ".join(f"{name}: table({r}, {c});" for name, (r, c) in prog.tables.items())]
    by_type: dict[str, list] = {}
    for name, kind in prog.globals.items():
        if kind != "table":
            by_type.setdefault(_KIND_TYPE[kind], []).append(name)
    for ty, names in by_type.items():
        out.append(f"    {', '.join(names)}: {ty};")
    for r in prog.routines.values():
        out.append(_routine(r))
    out.append("begin")
    out += _block(prog.main, 1)
    out.append("end.")
    return "\n".join(out) + "\n"


def _ptype(kind, table="Q"):
    return {"int": "integer", "bool": "boolean", "table": "table", "S": f"slice({table})",
            "W": f"word({table})"}[kind]


def _routine(r: Routine) -> str:
    params = "; ".join(f"{'var ' if ref else ''}{n}: {_ptype(k)}" for n, k, ref in r.params)
    if r.result_kind is None:
        head = f"proc {r.name}({params});"
    else:
        head = f"function {r.name}({params}): {'integer' if r.result_kind == 'int' else 'word'};"
    lines = [head]
    if r.locals:
        lines.append("var " + " ".join(f"{n}: {_ptype(k) if k != 'table' else 'table(NROWS(Q), NCOLS(Q))'};"
                                       for n, k in r.locals.items()))
    lines.append("begin")
    body = list(r.body)
    if r.result is not None:
        body.append(("asg", r.name, r.result))
    lines += _block(body, 1)
    lines.append("end;")
    return "\n".join(lines)


def _block(stmts, ind):
    out = []
    for i, s in enumerate(stmts):
        lines = _stmt(s, ind)
        if i < len(stmts) - 1:
            lines[-1] += ";"
        out += lines
    return out


def _compound(stmts, ind):
    return ["  " * ind + "begin"] + _block(stmts, ind + 1) + ["  " * ind + "end"]


def _stmt(s, ind):
    pad = "  " * ind
    op = s[0]
    if op == "asg":
        return [f"{pad}{s[1]} := {x(s[2])}"]
    if op in ("set", "clr"):
        return [f"{pad}{op.upper()}({s[1]})"]
    if op == "bitset":
        return [f"{pad}{s[1]}({x(s[2])}) := {x(s[3])}"]
    if op == "colset":
        return [f"{pad}COL({x(s[1])}, {s[2]}) := {x(s[3])}"]
    if op == "rowset":
        return [f"{pad}ROW({x(s[1])}, {s[2]}) := {x(s[3])}"]
    if op == "rep":
        return [f"{pad}REP({x(s[1])}, {x(s[2])}, {x(s[3])}, {s[4]})"]
    if op == "step":
        return [f"{pad}{s[1]} := STEP({s[2]})"]
    if op == "if":
        out = [f"{pad}if {x(s[1])} then"] + _compound(s[2], ind + 1)
        if s[3] is not None:
            out += [f"{pad}else"] + _compound(s[3], ind + 1)
        return out
    if op in ("for", "pfor"):
        kw = "parallel for" if op == "pfor" else "for"
        return [f"{pad}{kw} {s[1]} := {x(s[2])} {'downto' if s[4] else 'to'} {x(s[3])} do"] + _compound(s[5], ind + 1)
    if op == "while":
        return ([f"{pad}while SOME({s[1]}) do", f"{pad}begin", f"{pad}  {s[2]} := STEP({s[1]});"]
                + _block(s[3], ind + 1) + [f"{pad}end"])
    if op == "repeat":
        body = list(s[3]) + [("asg", s[1], ("bin", "-", ("var", s[1]), ("lit", 1)))]
        return [f"{pad}{s[1]} := {s[2]};", f"{pad}repeat"] + _block(body, ind + 1) + [f"{pad}until {s[1]} <= 0"]
    if op == "writeln":
        return [f"{pad}writeln({', '.join(x(a) for a in s[1])})"]
    if op in ("pcall", "lib"):
        return [f"{pad}{s[1]}({', '.join(x(a) for a in s[2])})"]
    if op == "tasg":
        return [f"{pad}{s[1]} := {s[2]}"]
    raise AssertionError(op)


def x(e) -> str:
    op = e[0]
    if op == "lit":
        v = e[1]
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)
    if op == "str":
        return f"'{e[1]}'"
    if op == "var":
        return e[1]
    if op == "bits":
        return f"BITS('{e[1]}')"
    if op == "idx":
        n = e[2]
        return f"((({x(e[1])}) mod {n} + {n}) mod {n} + 1)"
    if op == "bin":
        return f"({x(e[2])} {e[1]} {x(e[3])})"
    if op == "neg":
        return f"(-{x(e[1])})"
    if op == "not":
        return f"(not {x(e[1])})"
    if op in ("fnd", "numb", "some", "frst", "convert"):
        return f"{op.upper()}({x(e[1])})"
    if op == "bit":
        inner = e[1]
        base = x(inner)
        if inner[0] not in ("var",) and not base.startswith(("COL", "ROW", "FRST", "CONVERT", "ADD", "SUBT")):
            base = f"({base})"
        return f"{base}({x(e[2])})"
    if op == "col":
        return f"COL({x(e[1])}, {e[2]})"
    if op == "row":
        return f"ROW({x(e[1])}, {e[2]})"
    if op == "trim":
        return f"TRIM({x(e[1])}, {x(e[2])}, {x(e[3])})"
    if op in ("cmp", "arith"):
        return f"{e[1]}({x(e[2])}, {x(e[3])})"
    if op == "veq":
        return f"({x(e[2])} {e[1]} {x(e[3])})"
    if op == "fcall":
        return f"{e[1]}({', '.join(x(a) for a in e[2])})"
    raise AssertionError(op)


def _names(node) -> set[str]:
    """Every string inside a generated node (the variables it reads, among other words)."""
    if isinstance(node, str):
        return {node}
    if isinstance(node, (tuple, list)):
        return set().union(*(_names(x) for x in node)) if node else set()
    return set()


def _without_lost_writes(body: list, private: list) -> list:
    """The body without assignments to a private variable that nothing after them in the
    iteration reads (a backward pass): their value could only reach past the loop, where it
    never arrives, and such bodies are refused. No random draw: a seed keeps the rest."""
    live, kept = set(), []
    for stmt in reversed(body):
        if stmt[0] == "asg" and stmt[1] in private:
            if stmt[1] not in live:
                continue
            live = (live - {stmt[1]}) | _names(stmt[2])
        else:
            live |= _names(stmt)
        kept.append(stmt)
    return kept[::-1]
