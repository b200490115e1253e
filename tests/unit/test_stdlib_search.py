"""stdlib/search.star: the associative search procedures of spec §9 against a NumPy model.

Tables of 1, 63, 64, 65 and 300 rows and 1, 5, 16 columns (random, all zeros, all ones),
random / full / empty control slices X. Each call's step count is checked against the exact
formula of docs/stdlib.md: it depends on k (and the bits of v), never on the number of rows.
"""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm.resources import stdlib_dir

ROWS = [1, 63, 64, 65, 300]
WIDTHS = [1, 5, 16]

_MACHINES: dict[str, starvm.Machine] = {}


def get_machine(backend: str) -> starvm.Machine:
    """One machine per backend for the whole module (the library is compiled once). The
    interpreter alone: at the suite's threshold (tests/conftest.py) --jit auto compiles nothing,
    but installing the tier and its estimate of each call cost a quarter of these tests' time;
    the tier on the library is tests/jit's."""
    if backend not in _MACHINES:
        _MACHINES[backend] = starvm.Machine(backend=backend, out=io.StringIO(), native=False, jit="off")
    return _MACHINES[backend]


def nums(bits: np.ndarray) -> np.ndarray:
    """The rows of a bool table as unsigned numbers, column 1 the most significant bit."""
    k = bits.shape[1]
    return bits.astype(np.int64) @ (np.int64(1) << np.arange(k - 1, -1, -1, dtype=np.int64))


def num(word: np.ndarray) -> int:
    return int(nums(np.asarray(word, bool)[None, :])[0])


def cases(n: int, k: int, seed: int):
    """(table, X) pairs: random with few distinct values (so that ties and matches occur),
    all zeros, all ones; X random, all ones, empty."""
    rng = np.random.default_rng(seed)
    vals = rng.integers(0, 2 ** k, size=min(4, 2 ** k))
    rand = ((vals[rng.integers(0, len(vals), n)][:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(bool)
    for t in (rand, rng.random((n, k)) < 0.5, np.zeros((n, k), bool), np.ones((n, k), bool)):
        for x in (rng.random(n) < 0.6, np.ones(n, bool), np.zeros(n, bool)):
            yield t, x


def pattern_words(t: np.ndarray, rng) -> list[np.ndarray]:
    k = t.shape[1]
    return [t[rng.integers(0, t.shape[0])].copy(), rng.random(k) < 0.5, np.zeros(k, bool), np.ones(k, bool)]


def steps(m: starvm.Machine) -> dict[str, int]:
    return {name: c for name, c in m.stats.items() if c}


def expect(**kw) -> dict[str, int]:
    return {name: c for name, c in kw.items() if c}


# ---- the word-pattern procedures: reference and exact step counts (o = ones of v, z = zeros)
PATTERN = {
    "MATCH": (lambda a, v: a == v, lambda k, o, z: expect(COL_GET=k, BIT_GET=k, AND=k, NOT=z)),
    "NOTEQ": (lambda a, v: a != v, lambda k, o, z: expect(COL_GET=k, BIT_GET=k, AND=k + 1, NOT=z + 1)),
    "LESS": (lambda a, v: a < v, lambda k, o, z: expect(CLR=1, COL_GET=k, BIT_GET=k, AND=k + o, OR=o, NOT=k)),
    "LESSEQ": (lambda a, v: a <= v,
               lambda k, o, z: expect(CLR=1, COL_GET=k, BIT_GET=k, AND=k + o, OR=o + 1, NOT=k)),
    "GREAT": (lambda a, v: a > v, lambda k, o, z: expect(CLR=1, COL_GET=k, BIT_GET=k, AND=k + z, OR=z, NOT=z)),
    "GREATEQ": (lambda a, v: a >= v,
                lambda k, o, z: expect(CLR=1, COL_GET=k, BIT_GET=k, AND=k + z, OR=z + 1, NOT=z)),
}


@pytest.mark.parametrize("k", WIDTHS)
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("proc", list(PATTERN))
def test_pattern_search(backend, proc, n, k):
    m = get_machine(backend)
    model, formula = PATTERN[proc]
    rng = np.random.default_rng(n * 100 + k)
    for t, x in cases(n, k, n + k):
        T = m.table(t)
        for v in pattern_words(t, rng):
            X = m.slice(x)
            Z = m.slice(rng.random(n) < 0.5)          # garbage in: Z is fully overwritten
            m.reset_stats()
            m.call(proc, T, X, m.word(v), Z)
            want = x & model(nums(t), num(v))
            assert np.array_equal(Z.to_numpy(), want), (proc, t.astype(int), x, v)
            assert np.array_equal(X.to_numpy(), x), "X must not change"
            o = int(v.sum())
            assert steps(m) == formula(k, o, k - o)


EXTREME = {
    "MIN": (np.min, lambda k: expect(COL_GET=k, NOT=k, AND=k, SOME=k)),
    "MAX": (np.max, lambda k: expect(COL_GET=k, AND=k, SOME=k)),
}


@pytest.mark.parametrize("k", WIDTHS)
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("proc", list(EXTREME))
def test_min_max(backend, proc, n, k):
    m = get_machine(backend)
    pick, formula = EXTREME[proc]
    for t, x in cases(n, k, 7 * n + k):
        X = m.slice(x)
        Z = m.slice(np.ones(n, bool))
        m.reset_stats()
        m.call(proc, m.table(t), X, Z)
        a = nums(t)
        want = x & (a == pick(a[x])) if x.any() else np.zeros(n, bool)
        assert np.array_equal(Z.to_numpy(), want)
        assert steps(m) == formula(k)


TWO_TABLES = {
    "HIT": (lambda a, b: a == b, lambda k: expect(COL_GET=2 * k, XOR=k, NOT=k, AND=k)),
    "SETMIN": (lambda a, b: a < b, lambda k: expect(CLR=1, COL_GET=2 * k, AND=3 * k, NOT=2 * k, XOR=k, OR=k)),
}


@pytest.mark.parametrize("k", WIDTHS)
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("proc", list(TWO_TABLES))
def test_compare_tables(backend, proc, n, k):
    m = get_machine(backend)
    model, formula = TWO_TABLES[proc]
    rng = np.random.default_rng(3 * n + k)
    for t, x in cases(n, k, 11 * n + k):
        # F: equal to T in some rows, random elsewhere, and the all-0 / all-1 tables
        f_rand = np.where(rng.random((n, 1)) < 0.4, t, rng.random((n, k)) < 0.5)
        for f in (f_rand, t, np.zeros((n, k), bool), np.ones((n, k), bool)):
            Z = m.slice(rng.random(n) < 0.5)
            m.reset_stats()
            m.call(proc, m.table(t), m.table(f), m.slice(x), Z)
            assert np.array_equal(Z.to_numpy(), x & model(nums(t), nums(f)))
            assert steps(m) == formula(k)


FIG4_T = ["1010", "0011", "1011", "1011", "1011", "1010"]


def test_match_fig4(machine):
    """The paper's Fig. 4 (spec §5): rows 3 and 5 match 1011 among the active rows 1, 3, 5, 6."""
    t = np.array([[c == "1" for c in r] for r in FIG4_T])
    Z = machine.slice(np.zeros(6, bool))
    machine.reset_stats()
    machine.call("MATCH", machine.table(t), machine.slice([1, 0, 1, 0, 1, 1]), machine.word([1, 0, 1, 1]), Z)
    assert Z.to_numpy().astype(int).tolist() == [0, 0, 1, 0, 1, 0]
    assert steps(machine) == {"COL_GET": 4, "BIT_GET": 4, "AND": 4, "NOT": 1}


RESOLVE = """
var T: table(3, 2); X, Z: slice(T); v: word(T);
begin
  ROW(1, T) := BITS('01'); ROW(2, T) := BITS('10'); ROW(3, T) := BITS('11');
  X := BITS('111'); v := BITS('10');
  LESS(T, X, v, Z); writeln(Z);
  GREATEQ(T, X, v, Z); writeln(Z);
  NOTEQ(T, X, v, Z); writeln(Z);
  MIN(T, X, Z); writeln(Z);
  writeln(LESS(v, BITS('11')), ' ', NOTEQ(v, v));
end.
"""


def test_statement_resolves_to_library_and_expression_to_builtin(backend):
    """`LESS(T, X, v, Z);` is the library procedure; `LESS(v, w)` in an expression the built-in.
    Here stdlib/search.star is loaded first (see the next test)."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out, native=False)
    m.load_file(stdlib_dir() / "search.star")
    m.run(RESOLVE, "resolve.star")
    assert out.getvalue() == "100\n011\n101\n100\ntrue false\n"


def test_statement_loads_library_routine_named_like_a_builtin(backend):
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out).run(RESOLVE, "resolve.star")
    assert out.getvalue() == "100\n011\n101\n100\ntrue false\n"


def test_step_count_independent_of_rows(backend):
    """The same k and v on 1 row and on 300 rows: identical step counts for every procedure."""
    m = get_machine(backend)
    rng = np.random.default_rng(5)
    v = m.word(rng.random(16) < 0.5)
    counts = []
    for n in (1, 300):
        t = m.table(rng.random((n, 16)) < 0.5)
        f = m.table(rng.random((n, 16)) < 0.5)
        x = m.slice(rng.random(n) < 0.5)
        z = m.slice(np.zeros(n, bool))
        got = []
        for proc in PATTERN:
            m.reset_stats(); m.call(proc, t, x, v, z); got.append(steps(m))
        for proc in EXTREME:
            m.reset_stats(); m.call(proc, t, x, z); got.append(steps(m))
        for proc in TWO_TABLES:
            m.reset_stats(); m.call(proc, t, f, x, z); got.append(steps(m))
        counts.append(got)
    assert counts[0] == counts[1]
