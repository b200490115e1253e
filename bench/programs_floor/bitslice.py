"""The bit-sliced layout of the STAR machine in Numba, for the hand-written floors: a table of
m rows and k columns is a (k, ceil(m/64)) uint64 array, column 0 the most significant bit, row r
at bit r % 64 of word r // 64; a slice (one column) is a (ceil(m/64),) uint64 array. Rows are
numbered from 0 here (row r holds vertex r + 1). Each function is one whole-column step of
stdlib/search.star or stdlib/rows.star written as one fused loop over the words (all the
columns of a word at once), skipping words where the control slice is empty; row reads and
writes (ROW, NUMOF, SETNUM) touch one bit of each column."""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros as _cttz
from numba.extending import overload

ONE = np.uint64(1)
ZERO = np.uint64(0)
ALLW = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def nwords(rows):
    return (rows + 63) >> 6


def trailing_zeros(x):
    """The index of the lowest 1 of a nonzero word (compiled: LLVM's cttz; with NUMBA_DISABLE_JIT,
    as the tests run the floors, plain Python)."""
    x = int(x)
    return (x & -x).bit_length() - 1


@overload(trailing_zeros)
def _trailing_zeros(x):
    return lambda x: _cttz(x)


def popcount(x):
    """The 1s of a word (compiled: the SWAR sum, which LLVM turns into popcnt)."""
    return int(x).bit_count()


@overload(popcount)
def _popcount(x):
    def impl(x):
        x = x - ((x >> ONE) & np.uint64(0x5555555555555555))
        x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
        x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
        return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
    return impl


@njit(cache=True)
def full(rows):
    """SET of a slice of ``rows`` rows (the bits past the last row stay 0)."""
    nw = nwords(rows)
    x = np.full(nw, ALLW)
    if rows & 63:
        x[nw - 1] = (ONE << np.uint64(rows & 63)) - ONE
    return x


@njit(cache=True)
def some(x):
    for w in range(x.shape[0]):
        if x[w]:
            return True
    return False


@njit(cache=True)
def numb(x):
    s = 0
    for w in range(x.shape[0]):
        s += popcount(x[w])
    return s


@njit(cache=True)
def fnd(x):
    """The first row of x, -1 when none."""
    for w in range(x.shape[0]):
        if x[w]:
            return w * 64 + np.int64(trailing_zeros(x[w]))
    return -1


@njit(cache=True)
def setbit(x, r):
    x[r >> 6] |= ONE << np.uint64(r & 63)


@njit(cache=True)
def clearbit(x, r):
    x[r >> 6] &= ~(ONE << np.uint64(r & 63))


@njit(cache=True)
def getbit(x, r):
    return (x[r >> 6] >> np.uint64(r & 63)) & ONE


@njit(cache=True)
def row_get(t, r):
    """NUMOF(ROW(r, t)): the k bits of row r, column 0 the most significant."""
    w, s = r >> 6, np.uint64(r & 63)
    v = np.int64(0)
    for j in range(t.shape[0]):
        v = (v << 1) | np.int64((t[j, w] >> s) & ONE)
    return v


@njit(cache=True)
def row_set(t, r, v):
    """ROW(r, t) := v (its low k bits)."""
    k = t.shape[0]
    w, bit = r >> 6, ONE << np.uint64(r & 63)
    for j in range(k):
        if (v >> (k - 1 - j)) & 1:
            t[j, w] |= bit
        else:
            t[j, w] &= ~bit


@njit(cache=True)
def match(t, x, v, z):
    """MATCH(t, x, v, z): z := the rows of x whose row equals v, one pass over each column
    (AND of the column or its complement, a loop the compiler vectorizes). Whether any."""
    k, nw = t.shape[0], x.shape[0]
    for w in range(nw):
        z[w] = x[w]
    for j in range(k):
        flip = ZERO if (v >> (k - 1 - j)) & 1 else ALLW
        col = t[j]
        for w in range(nw):
            z[w] &= col[w] ^ flip
    anyz = ZERO
    for w in range(nw):
        anyz |= z[w]
    return anyz != ZERO


@njit(cache=True)
def min_rows(t, x):
    """MIN(t, x, z): the rows of x with the least value, by the column scan from the most
    significant bit (a column whose zeros meet z keeps only those)."""
    z = x.copy()
    y = np.empty_like(x)
    for j in range(t.shape[0]):
        col = t[j]
        anyy = ZERO
        for w in range(x.shape[0]):
            yw = z[w] & ~col[w]
            y[w] = yw
            anyy |= yw
        if anyy:
            z, y = y, z
    return z


@njit(cache=True)
def wcopy(t, x, v):
    """WCOPY(v, x, t): the rows x of t := v."""
    k = t.shape[0]
    for j in range(k):
        col = t[j]
        if (v >> (k - 1 - j)) & 1:
            for w in range(x.shape[0]):
                col[w] |= x[w]
        else:
            for w in range(x.shape[0]):
                col[w] &= ~x[w]


@njit(cache=True)
def setinf(t):
    t[:, :] = ALLW


@njit(cache=True)
def setmin(a, b, x):
    """SETMIN(a, b, x, z): the rows of x with a < b (unsigned, from the most significant bit)."""
    z = np.zeros_like(x)
    for w in range(x.shape[0]):
        eq = x[w]
        if eq:
            lt = ZERO
            for j in range(a.shape[0]):
                aw, bw = a[j, w], b[j, w]
                lt |= eq & ~aw & bw
                eq &= ~(aw ^ bw)
            z[w] = lt
    return z


@njit(cache=True)
def hit(a, b, x):
    """HIT(a, b, x, z): the rows of x where a = b."""
    z = np.zeros_like(x)
    for w in range(x.shape[0]):
        eq = x[w]
        j = 0
        while eq and j < a.shape[0]:
            eq &= ~(a[j, w] ^ b[j, w])
            j += 1
        z[w] = eq
    return z


@njit(cache=True)
def addt(a, b, x, c):
    """ADDT(a, b, x, c): c := a + b (mod 2^k) on the rows x, a ripple carry from the least
    significant column."""
    k = a.shape[0]
    for w in range(x.shape[0]):
        xw = x[w]
        if xw:
            carry = ZERO
            for j in range(k - 1, -1, -1):
                aw, bw = a[j, w], b[j, w]
                s = aw ^ bw ^ carry
                carry = (aw & bw) | (carry & (aw ^ bw))
                c[j, w] = (c[j, w] & ~xw) | (s & xw)


@njit(cache=True)
def iota(rows, k):
    """IOTA: a table of ``rows`` rows holding 1 .. rows."""
    t = np.zeros((k, nwords(rows)), np.uint64)
    for r in range(rows):
        row_set(t, r, r + 1)
    return t


@njit(cache=True)
def gather(t, ix, x, r):
    """GATHER(t, ix, x, r): ROW(i, r) := ROW(ix(i), t) for the rows i of x (row numbers from 1)."""
    for w in range(x.shape[0]):
        m = x[w]
        while m:
            i = w * 64 + np.int64(trailing_zeros(m))
            m &= m - ONE
            row_set(r, i, row_get(t, row_get(ix, i) - 1))


@njit(cache=True)
def scatter(t, ix, x, r):
    """SCATTER(t, ix, x, r): ROW(ix(i), r) := ROW(i, t) for the rows i of x, top-down."""
    for w in range(x.shape[0]):
        m = x[w]
        while m:
            i = w * 64 + np.int64(trailing_zeros(m))
            m &= m - ONE
            row_set(r, row_get(ix, i) - 1, row_get(t, i))


@njit(cache=True)
def scatter_ones(ix, x, r):
    """SCATTER of a column of ones into the slice r: r(ix(i)) := 1 for the rows i of x."""
    for w in range(x.shape[0]):
        m = x[w]
        while m:
            i = w * 64 + np.int64(trailing_zeros(m))
            m &= m - ONE
            setbit(r, row_get(ix, i) - 1)


@njit(cache=True)
def groupmin(g, key, x, groups):
    """GROUPMIN(g, key, x, z): for every value of g among the rows of x (values 1 .. groups),
    the first row of x holding it whose key is smallest."""
    best = np.full(groups + 1, -1, np.int64)
    bestkey = np.zeros(groups + 1, np.int64)
    for w in range(x.shape[0]):
        m = x[w]
        while m:
            i = w * 64 + np.int64(trailing_zeros(m))
            m &= m - ONE
            v, kv = row_get(g, i), row_get(key, i)
            if best[v] < 0 or kv < bestkey[v]:
                best[v], bestkey[v] = i, kv
    z = np.zeros_like(x)
    for v in range(groups + 1):
        if best[v] >= 0:
            setbit(z, best[v])
    return z


@njit(cache=True)
def first_of_each_key(key, x):
    """GROUPMIN(key, key, x, z): the first row of x of every distinct key (a stable sort of
    the keys, for keys too wide to index an array)."""
    rows = np.empty(numb(x), np.int64)
    n = 0
    for w in range(x.shape[0]):
        m = x[w]
        while m:
            rows[n] = w * 64 + np.int64(trailing_zeros(m))
            m &= m - ONE
            n += 1
    keys = np.empty(n, np.int64)
    for q in range(n):
        keys[q] = row_get(key, rows[q])
    order = np.argsort(keys, kind="mergesort")
    z = np.zeros_like(x)
    for q in range(n):
        if q == 0 or keys[order[q]] != keys[order[q - 1]]:
            setbit(z, rows[order[q]])
    return z


@njit(cache=True)
def compact(t, x, rows_out):
    """COMPACT(t, x, r) into a fresh table r of ``rows_out`` rows: the rows of x, in order, at its top."""
    r = np.zeros((t.shape[0], nwords(rows_out)), np.uint64)
    j = 0
    for w in range(x.shape[0]):
        m = x[w]
        while m:
            i = w * 64 + np.int64(trailing_zeros(m))
            m &= m - ONE
            row_set(r, j, row_get(t, i))
            j += 1
    return r


@njit(cache=True)
def expand(t, x, r):
    """EXPAND(t, x, r): ROW(i_j, r) := ROW(j, t) for the j-th row i_j of x."""
    j = 0
    for w in range(x.shape[0]):
        m = x[w]
        while m:
            i = w * 64 + np.int64(trailing_zeros(m))
            m &= m - ONE
            row_set(r, i, row_get(t, j))
            j += 1


def pack(codes: np.ndarray, k: int) -> np.ndarray:
    """The (k, ceil(m/64)) columns of m unsigned numbers (GRAPH_EDGES's packing, in NumPy)."""
    m = codes.size
    nw = (m + 63) >> 6
    out = np.zeros((k, nw), np.uint64)
    for j in range(k):
        bits = ((codes >> (k - 1 - j)) & 1).astype(np.uint8)
        packed = np.packbits(bits, bitorder="little")
        buf = np.zeros(nw * 8, np.uint8)
        buf[:packed.size] = packed
        out[j] = buf.view(np.uint64)
    return out


def unpack(t: np.ndarray, rows: int) -> np.ndarray:
    """The m numbers of a packed table (int64)."""
    k = t.shape[0]
    v = np.zeros(rows, np.int64)
    for j in range(k):
        bits = np.unpackbits(t[j].view(np.uint8), bitorder="little", count=rows).astype(np.int64)
        v = (v << 1) | bits
    return v


def unpack_slice(x: np.ndarray, rows: int) -> np.ndarray:
    return np.unpackbits(x.view(np.uint8), bitorder="little", count=rows).astype(bool)
