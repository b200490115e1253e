"""Every primitive of the Backend protocol against a plain-Python model.

The model is deliberately naive: a vector is a Python list of bools (element 0 = bit 1),
a table a list of rows, a word read as a number is ``int('0101...', 2)`` (bit 1 the most
significant, spec §2). Nothing here packs bits, so the model cannot share a packing bug
with a backend. Backend vectors are only ever looked at through ``to_bools`` and the
primitives themselves (``equal``, ``numb``, ...), so the tests run unchanged on any backend.
Indices passed to primitives are 0-based (the machine layer does the 1-based checking).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from starvm.backends import get_backend
from starvm.execution.values import Table

LENGTHS = [0, 1, 63, 64, 65, 1000]
NONEMPTY = [n for n in LENGTHS if n]
DIMS = [1, 63, 64, 65, 200]
SHAPES = [(n, k) for n in DIMS for k in DIMS]
EMPTY_SHAPES = [(0, 0), (0, 1), (0, 65), (1, 0), (65, 0)]


# ------------------------------------------------------------------------------ the model
def m_int(bits: list[bool]) -> int:
    """A word as an unsigned number, bit 1 the most significant."""
    return int("".join("1" if b else "0" for b in bits), 2) if bits else 0


def m_bits(x: int, n: int) -> list[bool]:
    """The n-bit word of x mod 2^n, bit 1 first."""
    if n == 0:
        return []
    return [c == "1" for c in format(x % (1 << n), f"0{n}b")]


def m_fnd(bits):
    for i, b in enumerate(bits):
        if b:
            return i + 1
    return 0


def m_frst(bits):
    out = [False] * len(bits)
    p = m_fnd(bits)
    if p:
        out[p - 1] = True
    return out


def rand_bits(rng: random.Random, n: int, density: float | None = None) -> list[bool]:
    d = rng.random() if density is None else density
    return [rng.random() < d for _ in range(n)]


def samples(n: int, seed: int = 0) -> list[list[bool]]:
    """Test vectors of length n: random (several densities), all zeros, all ones, single bits."""
    rng = random.Random(1000 * n + seed)
    out = [rand_bits(rng, n, 0.5), rand_bits(rng, n, 0.05), rand_bits(rng, n, 0.95), rand_bits(rng, n),
           [False] * n, [True] * n]
    if n:
        for p in {0, n - 1, n // 2, min(63, n - 1), min(64, n - 1)}:
            one = [False] * n
            one[p] = True
            out.append(one)
            most = [True] * n
            most[p] = False
            out.append(most)
    return out


# ------------------------------------------------------------------------------ helpers
@pytest.fixture
def B(backend):
    return get_backend(backend)


def arr(bits) -> np.ndarray:
    return np.array(bits, dtype=bool).reshape(-1)


def vec(B, bits):
    return B.from_bools(arr(bits))


def bools(B, v, n) -> list[bool]:
    got = B.to_bools(v, n)
    assert isinstance(got, np.ndarray), "to_bools returns a host NumPy array"
    assert got.shape == (n,)
    assert got.dtype == np.bool_
    return [bool(x) for x in got]


def host(a) -> np.ndarray:
    """A backend array (NumPy or CuPy) on the host."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "get"):
        return a.get()
    return np.asarray(a)


def check_vec(B, v, want: list[bool], what: str = ""):
    """v holds exactly `want`: the same bits, and no stray bits past its length."""
    n = len(want)
    assert bools(B, v, n) == want, what
    assert B.numb(v) == sum(want), f"{what}: NUMB counts bits past the length (stray bits)"
    assert B.equal(v, vec(B, want)), f"{what}: not equal to the same bits made by from_bools"
    assert B.fnd(v) == m_fnd(want), what


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def is_bool(x) -> bool:
    return isinstance(x, (bool, np.bool_))


def check_unchanged(B, v, want, what="argument"):
    assert bools(B, v, len(want)) == want, f"the {what} was mutated"


# ------------------------------------------------------------------------------ vectors: construction
@pytest.mark.parametrize("n", LENGTHS)
def test_zeros_ones(B, n):
    check_vec(B, B.zeros(n), [False] * n, "zeros")
    check_vec(B, B.ones(n), [True] * n, "ones")
    assert bool(B.some(B.ones(n))) == (n > 0)
    assert not B.some(B.zeros(n))


@pytest.mark.parametrize("n", LENGTHS)
def test_from_bools_to_bools_roundtrip(B, n):
    for bits in samples(n):
        v = vec(B, bits)
        assert bools(B, v, n) == bits
        assert B.numb(v) == sum(bits)


@pytest.mark.parametrize("n", NONEMPTY)
def test_from_bools_does_not_alias_its_input(B, n):
    bits = samples(n)[0]
    a = arr(bits)
    v = B.from_bools(a)
    a[:] = ~a
    assert bools(B, v, n) == bits


@pytest.mark.parametrize("n", NONEMPTY)
def test_to_bools_returns_a_copy(B, n):
    bits = samples(n)[3]
    v = vec(B, bits)
    got = B.to_bools(v, n)
    got[:] = ~got
    assert bools(B, v, n) == bits


# ------------------------------------------------------------------------------ vectors: bits
@pytest.mark.parametrize("n", NONEMPTY)
def test_get_bit(B, n):
    for bits in samples(n):
        v = vec(B, bits)
        positions = range(n) if n <= 65 else sorted({0, 1, 62, 63, 64, 65, 127, 128, 500, n - 2, n - 1})
        for i in positions:
            got = B.get_bit(v, i)
            assert is_int(got) or isinstance(got, np.integer), f"get_bit returns {type(got)}"
            assert got == int(bits[i]), f"bit {i + 1} of {n}"


@pytest.mark.parametrize("n", NONEMPTY)
def test_set_bit(B, n):
    rng = random.Random(n)
    for bits in samples(n):
        v = vec(B, bits)
        positions = range(n) if n <= 65 else sorted({0, 63, 64, 65, n - 1} | {rng.randrange(n) for _ in range(8)})
        for i in positions:
            for b in (0, 1, True, False):
                w = B.set_bit(v, i, b)
                want = list(bits)
                want[i] = bool(b)
                check_vec(B, w, want, f"set bit {i + 1} of {n} to {b}")
        check_unchanged(B, v, bits)


@pytest.mark.parametrize("n", LENGTHS)
def test_fnd_numb_some(B, n):
    for bits in samples(n):
        v = vec(B, bits)
        f = B.fnd(v)
        assert is_int(f) and f == m_fnd(bits)
        c = B.numb(v)
        assert is_int(c) and c == sum(bits)
        s = B.some(v)
        assert is_bool(s) and bool(s) == any(bits)
        check_unchanged(B, v, bits)


@pytest.mark.parametrize("n", LENGTHS)
def test_step_visits_the_ones_top_down(B, n):
    for bits in samples(n)[:6]:
        v = vec(B, bits)
        cur, seen = v, []
        want_cur = list(bits)
        for _ in range(sum(bits) + 1):
            pos, nxt = B.step(cur)
            assert is_int(pos)
            assert pos == m_fnd(want_cur)
            if pos:
                want_cur[pos - 1] = False
                seen.append(pos)
            check_vec(B, nxt, want_cur, "STEP result")
            cur = nxt
        assert seen == [i + 1 for i, b in enumerate(bits) if b]
        assert B.step(cur)[0] == 0
        check_unchanged(B, v, bits)


@pytest.mark.parametrize("n", LENGTHS)
def test_frst(B, n):
    for bits in samples(n):
        v = vec(B, bits)
        check_vec(B, B.frst(v), m_frst(bits), "FRST")
        check_unchanged(B, v, bits)


# ------------------------------------------------------------------------------ vectors: logic
def pairs(n, seed=0):
    s1, s2 = samples(n, seed), samples(n, seed + 1)
    rng = random.Random(n * 7 + seed)
    out = list(zip(s1, s2)) + [(a, a) for a in s1[:3]]
    for a in s1:
        out.append((a, s2[rng.randrange(len(s2))]))
    return out


@pytest.mark.parametrize("n", LENGTHS)
def test_and_or_xor(B, n):
    for a, b in pairs(n):
        va, vb = vec(B, a), vec(B, b)
        check_vec(B, B.and_(va, vb), [x and y for x, y in zip(a, b)], "and")
        check_vec(B, B.or_(va, vb), [x or y for x, y in zip(a, b)], "or")
        check_vec(B, B.xor(va, vb), [x != y for x, y in zip(a, b)], "xor")
        check_unchanged(B, va, a)
        check_unchanged(B, vb, b)


@pytest.mark.parametrize("n", LENGTHS)
def test_not_masks_bits_past_the_length(B, n):
    for a in samples(n):
        va = vec(B, a)
        na = B.not_(va, n)
        check_vec(B, na, [not x for x in a], "not")
        check_vec(B, B.not_(na, n), a, "not not")
        check_unchanged(B, va, a)
    assert not B.some(B.not_(B.ones(n), n))
    assert B.fnd(B.not_(B.ones(n), n)) == 0
    assert B.equal(B.not_(B.zeros(n), n), B.ones(n))
    # not of a vector from a table column or a row (table padding must not leak in)
    if n:
        t = B.table(n, 3, np.zeros((n, 3), dtype=bool))
        check_vec(B, B.not_(B.col_get(t, 1), n), [True] * n, "not COL")
        t2 = B.table(3, n, np.zeros((3, n), dtype=bool))
        check_vec(B, B.not_(B.row_get(t2, 2), n), [True] * n, "not ROW")


@pytest.mark.parametrize("n", LENGTHS)
def test_equal(B, n):
    for a, b in pairs(n):
        e = B.equal(vec(B, a), vec(B, b))
        assert is_bool(e) and bool(e) == (a == b)
    for a in samples(n):
        assert B.equal(vec(B, a), vec(B, a))
        for i in sorted({0, n // 2, n - 1}) if n else []:
            b = list(a)
            b[i] = not b[i]
            assert not B.equal(vec(B, a), vec(B, b)), f"differ in bit {i + 1}"


# ------------------------------------------------------------------------------ words: TRIM, REP
def ranges(n, rng):
    out = {(0, n - 1), (0, 0), (n - 1, n - 1), (n // 2, n // 2), (0, n // 2), (n // 2, n - 1)}
    if n >= 66:
        out |= {(63, 64), (1, 64), (64, 127 if n > 127 else n - 1), (0, 63), (0, 64)}
    for _ in range(6):
        i = rng.randrange(n)
        out.add((i, rng.randrange(i, n)))
    return sorted(out)


@pytest.mark.parametrize("n", NONEMPTY)
def test_trim(B, n):
    rng = random.Random(n + 5)
    for w in samples(n)[:6]:
        vw = vec(B, w)
        for i, j in ranges(n, rng):
            check_vec(B, B.trim(vw, i, j), w[i:j + 1], f"TRIM bits {i + 1}..{j + 1} of {n}")
        check_unchanged(B, vw, w)


@pytest.mark.parametrize("n", NONEMPTY)
def test_rep(B, n):
    rng = random.Random(n + 9)
    for w in samples(n)[:6]:
        vw = vec(B, w)
        for i, j in ranges(n, rng):
            m = j - i + 1
            for v in (rand_bits(rng, m, 0.5), [True] * m, [False] * m):
                vv = vec(B, v)
                got = B.rep(vw, i, vv, m)
                want = w[:i] + v + w[j + 1:]
                check_vec(B, got, want, f"REP bits {i + 1}..{j + 1} of {n}")
                check_unchanged(B, vv, v)
        check_unchanged(B, vw, w)


# ------------------------------------------------------------------------------ words as numbers
def number_pairs(n, seed=0):
    out = pairs(n, seed)
    rng = random.Random(n * 13 + seed)
    if n:
        a = rand_bits(rng, n, 0.5)
        for i in sorted({0, n // 2, n - 1}):
            b = list(a)
            b[i] = not b[i]
            out += [(a, b), (b, a)]                     # differ in one bit only
        one = m_bits(1, n)
        out += [([True] * n, one), (one, [True] * n), ([False] * n, one), (one, [False] * n),
                (m_bits(1 << (n - 1), n), [True] * n)]
        if n >= 2:
            # a larger number that has fewer ones and a 1 in the last bit: bit order matters
            out += [([True] + [False] * (n - 1), [False] + [True] * (n - 1)),
                    ([False] * (n - 1) + [True], [True] + [False] * (n - 1))]
    return out


@pytest.mark.parametrize("n", LENGTHS)
def test_compare_as_unsigned_numbers_bit1_most_significant(B, n):
    for a, b in number_pairs(n):
        va, vb = vec(B, a), vec(B, b)
        c = B.compare(va, vb)
        x, y = m_int(a), m_int(b)
        assert is_int(c) or isinstance(c, np.integer)
        assert c == (x > y) - (x < y), f"compare({''.join('01'[t] for t in a)[:70]}, ...)"
        check_unchanged(B, va, a)
        check_unchanged(B, vb, b)


@pytest.mark.parametrize("n", LENGTHS)
def test_add_subt_modulo_2_pow_n(B, n):
    for a, b in number_pairs(n, 3):
        va, vb = vec(B, a), vec(B, b)
        x, y = m_int(a), m_int(b)
        check_vec(B, B.add(va, vb, n), m_bits(x + y, n), "ADD")
        check_vec(B, B.subt(va, vb, n), m_bits(x - y, n), "SUBT")
        check_unchanged(B, va, a)
        check_unchanged(B, vb, b)


@pytest.mark.parametrize("n", NONEMPTY)
def test_add_subt_known_values(B, n):
    ones, zero, one = [True] * n, [False] * n, m_bits(1, n)
    check_vec(B, B.add(vec(B, ones), vec(B, one), n), zero, "all ones + 1 wraps to 0")
    check_vec(B, B.subt(vec(B, zero), vec(B, one), n), ones, "0 - 1 wraps to all ones")
    check_vec(B, B.add(vec(B, one), vec(B, one), n), m_bits(2, n), "1 + 1 = 2 (carry goes towards bit 1)")
    if n >= 2:
        assert m_bits(2, n)[-2:] == [True, False]
    check_vec(B, B.subt(vec(B, one), vec(B, one), n), zero, "1 - 1")


# ------------------------------------------------------------------------------ tables
def rand_table(rng: random.Random, n: int, k: int) -> list[list[bool]]:
    d = rng.choice([0.5, 0.1, 0.9])
    return [[rng.random() < d for _ in range(k)] for _ in range(n)]


def tarr(rows, n, k) -> np.ndarray:
    return np.array(rows, dtype=bool).reshape(n, k)


def table_rows(B, t) -> list[list[bool]]:
    a = B.table_to_bools(t)
    assert isinstance(a, np.ndarray), "table_to_bools returns a host NumPy array"
    assert a.shape == (t.n, t.k)
    assert a.dtype == np.bool_
    return [[bool(x) for x in r] for r in a]


def model_words(rows, n, k) -> list[list[int]]:
    """The storage layout as the spec gives it: column c is a list of ceil(n/64) 64-bit
    words; row r (1-based) is bit (r-1) mod 64 of word (r-1) div 64."""
    nw = (n + 63) // 64
    out = [[0] * nw for _ in range(k)]
    for r in range(1, n + 1):
        for c in range(k):
            if rows[r - 1][c]:
                out[c][(r - 1) // 64] |= 1 << ((r - 1) % 64)
    return out


def check_table(B, t, rows, what=""):
    n, k = t.n, t.k
    assert (n, k) == (len(rows), len(rows[0]) if rows else t.k)
    assert table_rows(B, t) == rows, what
    data = host(t.data)
    assert data.dtype == np.uint64, "Table.data must be uint64"
    assert data.shape == (k, (n + 63) // 64), "Table.data must be k x ceil(n/64)"
    assert [[int(x) for x in col] for col in data] == model_words(rows, n, k), f"{what}: storage layout"


@pytest.mark.parametrize("n,k", SHAPES + EMPTY_SHAPES)
def test_table_from_bools_and_layout(B, n, k):
    rng = random.Random(n * 1000 + k)
    rows = rand_table(rng, n, k)
    t = B.table(n, k, tarr(rows, n, k))
    assert isinstance(t, Table)
    assert (t.n, t.k) == (n, k) and t.shape == (n, k)
    check_table(B, t, rows)
    z = B.table(n, k)
    check_table(B, z, [[False] * k for _ in range(n)], "zero table")


@pytest.mark.parametrize("n,k", [(1, 1), (64, 2), (65, 3), (200, 5)])
def test_table_layout_single_bits(B, n, k):
    """One 1 at a time: exactly one bit of Table.data is set, at the spec's place."""
    for r in sorted({1, 2, 63, 64, 65, 66, 128, 129, n} & set(range(1, n + 1))):
        for c in range(1, k + 1):
            rows = [[False] * k for _ in range(n)]
            rows[r - 1][c - 1] = True
            t = B.table(n, k, tarr(rows, n, k))
            data = host(t.data)
            assert int(np.count_nonzero(data)) == 1
            assert int(data[c - 1, (r - 1) // 64]) == 1 << ((r - 1) % 64), (r, c)


@pytest.mark.parametrize("n,k", [(63, 65), (200, 1)])
def test_table_does_not_alias_its_input_and_output(B, n, k):
    rows = rand_table(random.Random(3), n, k)
    a = tarr(rows, n, k)
    t = B.table(n, k, a)
    a[:] = ~a
    check_table(B, t, rows, "the input array was aliased")
    out = B.table_to_bools(t)
    out[:] = ~out
    check_table(B, t, rows, "table_to_bools returned a view")


@pytest.mark.parametrize("n,k", SHAPES + EMPTY_SHAPES)
def test_col_get_row_get(B, n, k):
    rng = random.Random(n * 31 + k)
    rows = rand_table(rng, n, k)
    t = B.table(n, k, tarr(rows, n, k))
    for j in range(k):
        check_vec(B, B.col_get(t, j), [rows[i][j] for i in range(n)], f"COL {j + 1}")
    for i in range(n):
        check_vec(B, B.row_get(t, i), rows[i], f"ROW {i + 1}")
    check_table(B, t, rows, "reading changed the table")


@pytest.mark.parametrize("n,k", SHAPES + EMPTY_SHAPES)
def test_col_set_row_set_random_sequence(B, n, k):
    """A random mix of column and row writes and reads against the model table."""
    rng = random.Random(n * 17 + k)
    rows = rand_table(rng, n, k)
    t = B.table(n, k, tarr(rows, n, k))
    steps = 2 * (n + k) if n * k else 6
    for s in range(steps):
        what = rng.randrange(4)
        if what == 0 and k:
            j = rng.randrange(k)
            col = rng.choice([rand_bits(rng, n, 0.5), [True] * n, [False] * n])
            v = vec(B, col)
            B.col_set(t, j, v)
            check_unchanged(B, v, col, "slice written by col_set")
            for i in range(n):
                rows[i][j] = col[i]
        elif what == 1 and n:
            i = rng.randrange(n)
            row = rng.choice([rand_bits(rng, k, 0.5), [True] * k, [False] * k])
            v = vec(B, row)
            B.row_set(t, i, v)
            check_unchanged(B, v, row, "word written by row_set")
            rows[i] = list(row)
        elif what == 2 and k:
            j = rng.randrange(k)
            check_vec(B, B.col_get(t, j), [rows[i][j] for i in range(n)], f"COL {j + 1} after writes")
        elif what == 3 and n:
            i = rng.randrange(n)
            check_vec(B, B.row_get(t, i), rows[i], f"ROW {i + 1} after writes")
    check_table(B, t, rows, "after writes")


@pytest.mark.parametrize("n,k", [(1, 1), (63, 64), (64, 65), (65, 63), (200, 200)])
def test_vectors_never_alias_tables(B, n, k):
    rng = random.Random(n + 100 * k)
    rows = rand_table(rng, n, k)
    t = B.table(n, k, tarr(rows, n, k))
    for j in sorted({0, k - 1, k // 2}):
        cur = table_rows(B, t)
        old = [cur[i][j] for i in range(n)]
        c = B.col_get(t, j)
        B.col_set(t, j, B.not_(c, n))                 # overwrite the column...
        check_vec(B, c, old, "a slice read by COL changed when the column was written")
        B.row_set(t, 0, B.ones(k))                    # ...and a row across it
        B.row_set(t, n - 1, B.zeros(k))
        check_vec(B, c, old, "a slice read by COL changed when a row was written")
    for i in sorted({0, n - 1, n // 2}):
        cur = table_rows(B, t)[i]
        r = B.row_get(t, i)
        B.row_set(t, i, B.not_(r, k))
        check_vec(B, r, cur, "a word read by ROW changed when the row was written")
        B.col_set(t, 0, B.ones(n))
        check_vec(B, r, cur, "a word read by ROW changed when a column was written")
    # the other way round: a table write keeps no reference to the vector written
    cur = table_rows(B, t)
    col = rand_bits(rng, n, 0.5)
    v = vec(B, col)
    B.col_set(t, 0, v)
    for i in range(n):
        cur[i][0] = col[i]
    w = B.set_bit(v, 0, not col[0])
    w = B.not_(w, n)
    check_table(B, t, cur, "the table changed with a vector derived from one written into it")
    check_unchanged(B, v, col)


@pytest.mark.parametrize("n,k", [(1, 1), (65, 64), (200, 63)] + EMPTY_SHAPES)
def test_table_copy_and_snapshot(B, n, k):
    rng = random.Random(n * 3 + k)
    rows_src, rows_dst = rand_table(rng, n, k), rand_table(rng, n, k)
    src = B.table(n, k, tarr(rows_src, n, k))
    dst = B.table(n, k, tarr(rows_dst, n, k))
    B.table_copy(dst, src)
    check_table(B, dst, rows_src, "table_copy")
    check_table(B, src, rows_src, "table_copy changed its source")
    snap = B.table_snapshot(src)
    assert snap is not src
    check_table(B, snap, rows_src, "snapshot")
    if n and k:
        B.col_set(src, 0, B.not_(B.col_get(src, 0), n))
        B.row_set(src, n - 1, B.row_get(src, n - 1))
        changed = table_rows(B, src)
        assert changed != rows_src
        check_table(B, dst, rows_src, "table_copy left dst aliased to src")
        check_table(B, snap, rows_src, "the snapshot follows later writes to the table")
        B.row_set(snap, 0, B.ones(k))
        B.col_set(dst, k - 1, B.zeros(n))
        check_table(B, src, changed, "writing a copy changed the original")


@pytest.mark.parametrize("n,k", EMPTY_SHAPES)
def test_empty_tables(B, n, k):
    t = B.table(n, k)
    assert table_rows(B, t) == [[False] * k for _ in range(n)]
    for j in range(k):
        c = B.col_get(t, j)
        check_vec(B, c, [], "column of a 0-row table")
        B.col_set(t, j, B.zeros(0))
    for i in range(n):
        r = B.row_get(t, i)
        check_vec(B, r, [], "row of a 0-column table")
        B.row_set(t, i, B.ones(0))
    check_table(B, t, [[False] * k for _ in range(n)])


@pytest.mark.parametrize("n", [1, 63, 64, 65, 200])
def test_column_ops_compose_with_vector_ops(B, n):
    """The usual Star pattern: read columns, combine them, write back (a Warshall step)."""
    rng = random.Random(n * 5)
    rows = rand_table(rng, n, n)
    t = B.table(n, n, tarr(rows, n, n))
    for kk in range(min(n, 8)):
        w = B.col_get(t, kk)
        x = B.row_get(t, kk)
        while B.some(x):
            i, x = B.step(x)
            B.col_set(t, i - 1, B.or_(B.col_get(t, i - 1), w))
        # model: column i |= column kk for each i with P(kk, i) = 1 (read before the updates)
        piv_col = [rows[r][kk] for r in range(n)]
        piv_row = list(rows[kk])
        for i in range(n):
            if piv_row[i]:
                for r in range(n):
                    rows[r][i] = rows[r][i] or piv_col[r]
    check_table(B, t, rows)
