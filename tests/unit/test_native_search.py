"""The GPU's fused MATCH / MIN / MAX agree bit for bit with the Star bodies in stdlib/search.star."""
from __future__ import annotations

import numpy as np
import pytest

import starvm
from starvm.native import factory_for


def model(name, T, X, v):
    n, k = T.shape
    vals = [int("".join("1" if b else "0" for b in r), 2) if k else 0 for r in T]
    act = [i for i in range(n) if X[i]]
    if name == "MATCH":
        pat = int("".join("1" if b else "0" for b in v), 2)
        return np.array([X[i] and vals[i] == pat for i in range(n)])
    if not act:
        return np.zeros(n, bool)
    best = (min if name == "MIN" else max)(vals[i] for i in act)
    return np.array([X[i] and vals[i] == best for i in range(n)])


@pytest.mark.parametrize("name", ["MATCH", "MIN", "MAX"])
@pytest.mark.parametrize("n,k", [(1, 1), (63, 5), (64, 8), (65, 3), (1000, 32), (700, 64)])
def test_fused_search_equals_star_body(backend, name, n, k):
    if factory_for(name.lower(), backend) is None:
        pytest.skip(f"no fused {name} on {backend}")
    rng = np.random.default_rng(n * 100 + k)
    fast = starvm.Machine(backend=backend, native=True)
    body = starvm.Machine(backend=backend, native=False)
    for trial in range(4):
        T = rng.random((n, k)) < (0.5 if trial < 2 else 0.9)
        if trial == 3:
            T[:] = T[0]                                   # all rows equal
        X = [rng.random(n) < 0.5, np.ones(n, bool), np.zeros(n, bool), rng.random(n) < 0.02][trial]
        v = T[int(rng.integers(n))] if rng.random() < 0.7 else rng.random(k) < 0.5
        results = []
        for m in (fast, body):
            Z = m.slice(np.zeros(n, bool))
            args = (m.table(T), m.slice(X)) + ((m.word(v),) if name == "MATCH" else ()) + (Z,)
            m.call(name, *args)
            results.append(Z.to_numpy())
        np.testing.assert_array_equal(results[0], results[1])
        np.testing.assert_array_equal(results[0], model(name, T, X, v))
    assert fast.native_timing[0] == 4 and body.native_timing[0] == 0
