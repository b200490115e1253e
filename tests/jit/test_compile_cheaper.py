"""compile_cost.cheaper(), held around the tier's compiles (cache.compile_overload): a
recursive function's partial typing done once, checked against its full typing (and the
compile done again as Numba does where they differ); the garbage collector paused for the
compile and running again after it, a failed one too. Generated code under it agrees with
the interpreter: tests/jit/test_compiled_recursion.py and the rest of tests/jit."""
from __future__ import annotations

import gc

import numba
import pytest
from numba.core import types
from numba.core.typeinfer import TypeInferer

from starvm.jit import cache, compile_cost


@numba.njit
def refined(n):             # recursive calls typed int64 first; the function returns float64
    if n <= 0:
        return 1
    return refined(n - 1) + 0.5


@numba.njit
def fib_cheaper(n):         # two recursive call sites
    if n <= 1:
        return n
    return fib_cheaper(n - 1) + fib_cheaper(n - 2)


@numba.njit
def fib_numba(n):
    if n <= 1:
        return n
    return fib_numba(n - 1) + fib_numba(n - 2)


@numba.njit
def untypable(n):
    return n + "a"


@pytest.fixture
def partial_typings(monkeypatch):
    """How many times Numba typed a function again for its recursive calls."""
    count = [0]
    numba_copy = TypeInferer.copy

    def copy(self, skip_recursion=False):
        count[0] += skip_recursion
        return numba_copy(self, skip_recursion)
    monkeypatch.setattr(TypeInferer, "copy", copy)
    return count


def test_recursive_calls_are_typed_once(partial_typings, monkeypatch):
    cache.compile_overload(fib_cheaper, (types.int64,))
    once = partial_typings[0]
    monkeypatch.setattr(compile_cost, "enabled", False)
    cache.compile_overload(fib_numba, (types.int64,))
    assert once == 1
    assert partial_typings[0] - once > 1
    assert fib_cheaper(20) == fib_numba(20) == 6765
    assert fib_cheaper.nopython_signatures == fib_numba.nopython_signatures


def test_a_return_type_the_partial_typing_missed_compiles_as_numba_types_it(monkeypatch):
    raised = []

    class Changed(compile_cost.PartialTypeChanged):
        def __init__(self, *args):
            raised.append(args)
            super().__init__(*args)
    monkeypatch.setattr(compile_cost, "PartialTypeChanged", Changed)
    cache.compile_overload(refined, (types.int64,))
    assert len(raised) == 1
    assert refined.nopython_signatures[0].return_type == types.float64
    assert refined(3) == 2.5


def test_the_collector_runs_again_after_a_compile_even_a_failed_one():
    assert gc.isenabled()
    with pytest.raises(Exception):
        cache.compile_overload(untypable, (types.int64,))
    assert gc.isenabled()
    with compile_cost.cheaper():
        assert not gc.isenabled()
        with compile_cost.cheaper():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
