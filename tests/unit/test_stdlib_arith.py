"""stdlib/arith.star: associative arithmetic and row copies of spec §9 against a NumPy model.

Rows 1, 63, 64, 65, 300; widths 1, 5, 16; random / all-zero / all-one tables; random, full
and empty control slices. The result table R starts with random bits: rows not marked by X
must keep them. R may be T itself (in place). Exact step counts as in docs/stdlib.md.
"""
from __future__ import annotations

import numpy as np
import pytest

from test_stdlib_search import ROWS, WIDTHS, cases, expect, get_machine, nums, steps


def bits(values: np.ndarray, k: int) -> np.ndarray:
    return ((np.asarray(values, np.int64)[:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(bool)


# proc -> (model on numbers mod 2^k, exact steps(k, o, z) where o/z = ones/zeros of v)
WORD_OPS = {
    "ADDV": (lambda a, v: a + v,
             lambda k, o, z: expect(CLR=1, COL_GET=2 * k, COL_SET=k, BIT_GET=k, XOR=k, NOT=1 + o,
                                    AND=2 * k + z, OR=k + o)),
    "SUBV": (lambda a, v: a - v,
             lambda k, o, z: expect(CLR=1, COL_GET=2 * k, COL_SET=k, BIT_GET=k, XOR=k, NOT=1 + k + o,
                                    AND=2 * k + z, OR=k + o)),
}
TABLE_OPS = {
    "ADDT": (lambda a, b: a + b,
             lambda k: expect(CLR=1, COL_GET=3 * k, COL_SET=k, XOR=2 * k, AND=4 * k, OR=2 * k, NOT=1)),
    "SUBT_T": (lambda a, b: a - b,
               lambda k: expect(CLR=1, COL_GET=3 * k, COL_SET=k, XOR=2 * k, AND=4 * k, OR=2 * k, NOT=1 + 2 * k)),
}


@pytest.mark.parametrize("k", WIDTHS)
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("proc", list(WORD_OPS))
def test_word_arith(backend, proc, n, k):
    m = get_machine(backend)
    model, formula = WORD_OPS[proc]
    rng = np.random.default_rng(17 * n + k)
    for t, x in cases(n, k, n * k + 1):
        for v in (rng.random(k) < 0.5, np.zeros(k, bool), np.ones(k, bool)):
            r0 = rng.random((n, k)) < 0.5
            R = m.table(r0)
            m.reset_stats()
            m.call(proc, m.table(t), m.slice(x), m.word(v), R)
            vnum = int(nums(v[None, :])[0])
            want = np.where(x[:, None], bits(model(nums(t), vnum) % 2 ** k, k), r0)
            assert np.array_equal(R.to_numpy(), want), (proc, t.astype(int), x, v)
            o = int(v.sum())
            assert steps(m) == formula(k, o, k - o)
            # in place: R is T
            T = m.table(t)
            m.call(proc, T, m.slice(x), m.word(v), T)
            assert np.array_equal(T.to_numpy(), np.where(x[:, None], bits(model(nums(t), vnum) % 2 ** k, k), t))


@pytest.mark.parametrize("k", WIDTHS)
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("proc", list(TABLE_OPS))
def test_table_arith(backend, proc, n, k):
    m = get_machine(backend)
    model, formula = TABLE_OPS[proc]
    rng = np.random.default_rng(19 * n + k)
    for t, x in cases(n, k, n * k + 2):
        for f in (rng.random((n, k)) < 0.5, t, np.ones((n, k), bool)):
            r0 = rng.random((n, k)) < 0.5
            R = m.table(r0)
            m.reset_stats()
            m.call(proc, m.table(t), m.table(f), m.slice(x), R)
            want = np.where(x[:, None], bits(model(nums(t), nums(f)) % 2 ** k, k), r0)
            assert np.array_equal(R.to_numpy(), want)
            assert steps(m) == formula(k)
            F = m.table(f)                       # in place: R is F (the second operand)
            m.call(proc, m.table(t), F, m.slice(x), F)
            assert np.array_equal(F.to_numpy(), np.where(x[:, None], bits(model(nums(t), nums(f)) % 2 ** k, k), f))


@pytest.mark.parametrize("k", WIDTHS)
@pytest.mark.parametrize("n", ROWS)
def test_wcopy(backend, n, k):
    m = get_machine(backend)
    rng = np.random.default_rng(23 * n + k)
    for f, x in cases(n, k, n + 3 * k):
        for w in (rng.random(k) < 0.5, np.zeros(k, bool), np.ones(k, bool)):
            F = m.table(f)
            m.reset_stats()
            m.call("WCOPY", m.word(w), m.slice(x), F)
            assert np.array_equal(F.to_numpy(), np.where(x[:, None], w[None, :], f))
            o = int(w.sum())
            assert steps(m) == expect(BIT_GET=k, COL_GET=k, COL_SET=k, NOT=1, OR=o, AND=k - o)
            assert "ROW_GET" not in m.stats and "ROW_SET" not in m.stats


@pytest.mark.parametrize("k", WIDTHS)
@pytest.mark.parametrize("n", ROWS)
def test_tmerge(backend, n, k):
    m = get_machine(backend)
    rng = np.random.default_rng(29 * n + k)
    for t, x in cases(n, k, n + 5 * k):
        f = rng.random((n, k)) < 0.5
        F = m.table(f)
        m.reset_stats()
        m.call("TMERGE", m.table(t), m.slice(x), F)
        assert np.array_equal(F.to_numpy(), np.where(x[:, None], t, f))
        assert steps(m) == expect(COL_GET=2 * k, COL_SET=k, AND=2 * k, OR=k, NOT=1)


def test_add_then_subtract_is_identity(machine):
    """SUBV undoes ADDV and SUBT_T undoes ADDT (modulo 2^k), on a 300 x 16 table."""
    rng = np.random.default_rng(31)
    t = rng.random((300, 16)) < 0.5
    f = rng.random((300, 16)) < 0.5
    x = rng.random(300) < 0.7
    T, X, v = machine.table(t), machine.slice(x), machine.word(rng.random(16) < 0.5)
    machine.call("ADDV", T, X, v, T)
    machine.call("SUBV", T, X, v, T)
    assert np.array_equal(T.to_numpy(), t)
    F = machine.table(f)
    machine.call("ADDT", T, F, X, T)
    machine.call("SUBT_T", T, F, X, T)
    assert np.array_equal(T.to_numpy(), t)
