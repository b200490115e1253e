"""The device part of a distributed MIN / MAX (search.extreme_here): each rank's kernel hands
its extreme to the host with its result (``extreme_with_value``: on a GPU kernel 2 writes it
and one 16-byte copy brings it; on the emulated device the value of a row Z marks), checked
against the rows' values read from the table's bits; MIN / MAX over 1, 2 and 3 ranks
(threads of this process, the emulated device or the GPU) against one NumPy machine, with
ties and the values that equal the all-reduction's neutral element (MIN of all ones, MAX of
zeros); which ranks share a GPU and whether CUDA MPS serves them."""
from __future__ import annotations

import numpy as np
import pytest

from starvm.backends.emulated_device import EmulatedDevice
from starvm.distributed.collectives import gpu_peers, mps_running
from starvm.native.min import emulated
from test_rows_device import Ranks


def _words(bits: np.ndarray) -> np.ndarray:
    """n bools as ceil(n/64) little-endian words (row r = bit r % 64 of word r // 64)."""
    n = bits.size
    buf = np.zeros((n + 63) // 64 * 8, dtype=np.uint8)
    packed = np.packbits(bits, bitorder="little")
    buf[:packed.size] = packed
    return buf.view(np.uint64)


def _row_values(T: np.ndarray) -> list[int]:
    """Each row of an n x k bool table as an integer, column 1 the most significant bit."""
    return [int("".join("1" if b else "0" for b in row), 2) if row.size else 0 for row in T]


def _cases(seed: int):
    rng = np.random.default_rng(seed)
    for n in (1, 63, 64, 65, 200):
        for k in (1, 7, 32, 64):
            levels = int(rng.choice([2, 5, 1 << min(k, 20)]))
            vals = rng.integers(0, levels, n)
            T = np.array([[(int(v) >> (k - 1 - c)) & 1 for c in range(k)] for v in vals], dtype=bool).reshape(n, k)
            for density in (0.0, 0.02, 0.5, 1.0):
                yield T, rng.random(n) < density
    yield np.ones((130, 64), dtype=bool), np.ones(130, dtype=bool)      # MIN's value: all ones
    yield np.zeros((130, 64), dtype=bool), np.ones(130, dtype=bool)


def _expected(T: np.ndarray, X: np.ndarray, want_max: bool):
    """(found, the extreme of the marked rows' values) and Z, from the rows' values."""
    values = np.array(_row_values(T), dtype=object)
    if not X.any():
        return (0, 0), np.zeros_like(X)
    best = (max if want_max else min)(values[X])
    return (1, best), X & (values == best)


def _check_extreme_with_value(make_table, extreme_with_value, to_bools):
    for T, X in _cases(1):
        for want_max in (False, True):
            want, want_z = _expected(T, X, want_max)
            z, finish = extreme_with_value(make_table(T), X, want_max)
            assert finish() == want, (T.shape, int(X.sum()), want_max)
            assert to_bools(z, T.shape[0]).tolist() == want_z.tolist()


def test_emulated_kernel_gives_the_extreme_with_its_result():
    dev = EmulatedDevice()
    _check_extreme_with_value(lambda T: dev.table(*T.shape, T),
                              lambda T, X, m: emulated.extreme_with_value(T, dev.from_bools(X), m),
                              lambda z, n: np.asarray(dev.to_bools(z, n)))


def test_cupy_kernel_gives_the_extreme_with_its_result():
    """On the GPU: kernel 2 writes (found, key) and one copy brings it; MAX's key is the
    complement of its value; no marked row gives (0, 0); the buffer is right call after call."""
    from conftest import cupy_or_skip
    B = cupy_or_skip()
    from starvm.native.min import cuda as min_cuda
    _check_extreme_with_value(lambda T: B.table(*T.shape, T),
                              lambda T, X, m: min_cuda.extreme_with_value(T, B.from_bools(X), m),
                              lambda z, n: np.asarray(B.to_bools(z, n)))


def _min_max_cases(seed: int):
    """(T, X) pairs: random values with ties, all ones in 64 columns (MIN's value is the
    neutral element of the min-reduction), all zeros (MAX's), one row, no row marked."""
    rng = np.random.default_rng(seed)
    for n in (1, 5, 64, 65, 130, 200):
        for k in (1, 3, 64):
            levels = int(rng.choice([2, 5, 1 << min(k, 20)]))
            vals = rng.integers(0, levels, n)
            T = np.array([[(int(v) >> (k - 1 - c)) & 1 for c in range(k)] for v in vals], dtype=bool).reshape(n, k)
            yield T, rng.random(n) < float(rng.choice([0.05, 0.7, 1.0]))
    yield np.ones((130, 64), dtype=bool), np.ones(130, dtype=bool)
    yield np.zeros((130, 64), dtype=bool), np.ones(130, dtype=bool)
    yield np.ones((70, 8), dtype=bool), np.zeros(70, dtype=bool)


def _script(T, X):
    def script(mach):
        out = []
        for name in ("MIN", "MAX"):
            Z = mach.slice(np.zeros(T.shape[0], dtype=bool))
            mach.call(name, mach.table(T), X, Z)
            out.append((Z.to_numpy().tolist(), mach.last_call_stats))
        return out
    return script


@pytest.mark.parametrize("size, align", [(1, 64), (2, 64), (3, 1)])
def test_min_max_over_ranks_equal_one_numpy_machine(size, align, monkeypatch):
    """MIN and MAX over emulated-device ranks: the results and steps of one NumPy machine; a
    rank reads its extreme with its kernel (never FND or ROW), and one rank alone reads
    nothing at all (its extreme is the extreme)."""
    calls = {"with_value": 0, "alone": 0}

    def counted(name, f):
        def call(*a):
            calls[name] += 1
            return f(*a)
        return call
    monkeypatch.setattr(emulated, "extreme_with_value", counted("with_value", emulated.extreme_with_value))
    monkeypatch.setattr(emulated, "extreme", counted("alone", emulated.extreme))
    ranks = Ranks(size, align, "host")
    for m in ranks.machines:
        for name in ("fnd", "row_get"):
            monkeypatch.setattr(m.backend.L, name, lambda *a, _n=name: pytest.fail(f"{_n} called"))
    for T, X in _min_max_cases(size):
        everyone, want = ranks.run(_script(T, X))
        assert everyone == [want] * size
    if size == 1:
        assert calls["with_value"] == 0 and calls["alone"] > 0
    else:                               # each extreme ran inside extreme_with_value
        assert calls["with_value"] == calls["alone"] > 0


@pytest.mark.parametrize("size, align", [(1, 64), (2, 64), (3, 1)])
def test_min_max_over_gpu_ranks_equal_one_numpy_machine(size, align):
    """The same over ranks (threads) sharing the GPU: CuPy's kernels and their 16-byte read."""
    ranks = Ranks(size, align, "host", local="cupy")
    for T, X in _min_max_cases(size + 10):
        everyone, want = ranks.run(_script(T, X))
        assert everyone == [want] * size


# ---------------------------------------------------------------- ranks sharing a GPU
def test_gpu_peers_are_the_ranks_on_one_gpu_of_one_host():
    facts = [("h0", "g0", True, False), ("h0", "g0", True, False), ("h0", "g1", True, False),
             ("h1", "g0", True, False), ("h0", "g0", True, False)]
    assert [gpu_peers(facts, r) for r in range(5)] == [(0, 1, 4), (0, 1, 4), (), (), (0, 1, 4)]
    assert gpu_peers(facts[:1], 0) == ()


def test_mps_running_looks_for_the_control_daemons_socket(tmp_path):
    assert not mps_running({"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path)})
    (tmp_path / "control").touch()
    assert mps_running({"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path)})
