"""The standard-library routines the fuzzer calls, on the reference model: each Star body of
stdlib/*.star ported line by line to the model's plain-Python operations (model.py), counting
every base operation it executes as the interpreter does. Independent of starvm's native
kernels and of their step formulas (starvm/native/steps.py), so a fuzzed program checks both.

Each function takes ``c(op)``, the model's step counter, and model values (MTable, lists of
bools for slices and words, ints); it returns the values of the var parameters.
"""
from __future__ import annotations

from .model import AND, FND, NOT, OR, SOME, STEP, XOR, MTable, from_number


def _bit(c, v, i):
    c("BIT_GET")
    return v[i - 1]


def _col(c, T, j):
    c("COL_GET")
    return T.col(j)


def _and(c, a, b):
    c("AND")
    return AND(a, b)


def _or(c, a, b):
    c("OR")
    return OR(a, b)


def _not(c, a):
    c("NOT")
    return NOT(a)


def _xor(c, a, b):
    c("XOR")
    return XOR(a, b)


# ---------------------------------------------------------------- stdlib/search.star
def MATCH(c, T, X, v):
    Z = list(X)
    for j in range(1, T.k + 1):
        if _bit(c, v, j):
            Z = _and(c, Z, _col(c, T, j))
        else:
            Z = _and(c, Z, _not(c, _col(c, T, j)))
    return Z


def MIN(c, T, X):
    Z = list(X)
    for j in range(1, T.k + 1):
        Y = _and(c, Z, _not(c, _col(c, T, j)))
        c("SOME")
        if SOME(Y):
            Z = Y
    return Z


def MAX(c, T, X):
    Z = list(X)
    for j in range(1, T.k + 1):
        Y = _and(c, Z, _col(c, T, j))
        c("SOME")
        if SOME(Y):
            Z = Y
    return Z


def HIT(c, T, F, X):
    Z = list(X)
    for j in range(1, T.k + 1):
        Z = _and(c, Z, _not(c, _xor(c, _col(c, T, j), _col(c, F, j))))
    return Z


def SETMIN(c, T, F, X):
    E = list(X)
    c("CLR")
    Z = [False] * T.n
    for j in range(1, T.k + 1):
        A = _col(c, T, j)
        B = _col(c, F, j)
        Z = _or(c, Z, _and(c, E, _and(c, B, _not(c, A))))
        E = _and(c, E, _not(c, _xor(c, A, B)))
    return Z


# ---------------------------------------------------------------- stdlib/graphs.star helpers
def SETNUM(c, i, w):
    w = list(w)
    for j in range(len(w), 0, -1):
        c("BIT_SET")
        w[j - 1] = bool(i % 2)
        i //= 2
    return w


def NUMOF(c, w):
    s = 0
    for j in range(1, len(w) + 1):
        s = s * 2 + (1 if _bit(c, w, j) else 0)
    return s


# ---------------------------------------------------------------- stdlib/rows.star
def IOTA(c, T):
    w = [False] * T.k
    for i in range(1, T.n + 1):
        w = SETNUM(c, i, w)
        c("ROW_SET")
        T.set_row(i, w)


def GATHER(c, T, IX, X, R):
    Y = list(X)
    while True:
        c("SOME")
        if not SOME(Y):
            break
        c("STEP")
        i, Y = STEP(Y)
        c("ROW_GET")
        r = NUMOF(c, IX.row(i))
        c("ROW_GET")
        c("ROW_SET")
        R.set_row(i, T.row(r))


def SCATTER(c, T, IX, X, R):
    Y = list(X)
    while True:
        c("SOME")
        if not SOME(Y):
            break
        c("STEP")
        i, Y = STEP(Y)
        c("ROW_GET")
        r = NUMOF(c, IX.row(i))
        c("ROW_GET")
        w = T.row(i)
        c("ROW_SET")
        R.set_row(r, w)


def COMPACT(c, T, X, R):
    Y, j = list(X), 0
    while True:
        c("SOME")
        if not SOME(Y):
            break
        c("STEP")
        i, Y = STEP(Y)
        j += 1
        c("ROW_GET")
        w = T.row(i)
        c("ROW_SET")
        R.set_row(j, w)


def EXPAND(c, T, X, R):
    Y, j = list(X), 0
    while True:
        c("SOME")
        if not SOME(Y):
            break
        c("STEP")
        i, Y = STEP(Y)
        j += 1
        c("ROW_GET")
        w = T.row(j)
        c("ROW_SET")
        R.set_row(i, w)


def GROUPMIN(c, G, K, X):
    Y = list(X)
    c("CLR")
    Z = [False] * G.n
    while True:
        c("SOME")
        if not SOME(Y):
            break
        c("FND")
        i = FND(Y)
        c("ROW_GET")
        S = MATCH(c, G, Y, G.row(i))
        Y = _and(c, Y, _not(c, S))
        M = MIN(c, K, S)
        c("FND")
        c("BIT_SET")
        Z[FND(M) - 1] = True
    return Z


# ---------------------------------------------------------------- stdlib/warshall.star
def WARSHALL_ADAPT(c, n, P: MTable):
    for k in range(1, n + 1):
        before = MTable(P.n, P.k, P.rows)          # parallel for: every iteration reads P as it was
        for i in range(1, n + 1):
            W = _col(c, before, k)
            V = _col(c, before, i)
            if _bit(c, V, k):
                V = _or(c, V, W)
            c("COL_SET")
            P.set_col(i, V)


def code(value: int, bits: int):
    """A row number as an index table's row (column 1 the most significant bit)."""
    return from_number(value, bits)
