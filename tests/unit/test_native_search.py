"""The fused MIN / MAX / HIT / SETMIN kernels (the GPU's, and the emulated device's behind the
auto backend) agree bit for bit with the Star bodies in stdlib/search.star, and report the
bodies' steps. MATCH has no native kernel on one device (the GPU tier's compiled body is within
2x of it, docs/architecture.md): its library call equals the model on every backend and runs
compiled on the GPU; its CUDA kernel, which distributed GPU ranks still run
(distributed/search.py), is checked against a NumPy model here."""
from __future__ import annotations

import numpy as np
import pytest

import starvm
from reference.search_model import M64, model_bools as model, pack as _pack, reference as _reference, \
    row_mask as _row_mask, values as _values, word_of as _word
from starvm.native import native_for


def reference(name, T, X, n, v=0):
    return _reference(name, _values(T, n), X, n, v)


def on_device(backend):
    """The backend to run a kernel on: on auto, one whose every table lives on the device (its
    CPU side has no search kernels, so a small table there would compare the body with itself)."""
    if backend != "auto":
        return backend
    from starvm.backends import get_backend
    from starvm.backends.auto_backend import AutoBackend
    auto = get_backend("auto")
    return AutoBackend(auto.host, auto.dev, gpu_rows=1, gpu_bits=0)


@pytest.mark.parametrize("name", ["MIN", "MAX"])
@pytest.mark.parametrize("n,k", [(1, 1), (63, 5), (64, 8), (65, 3), (1000, 32), (700, 64)])
def test_fused_search_equals_star_body(backend, name, n, k):
    if native_for(name.lower(), backend, enabled=True) is None:
        pytest.skip(f"no fused {name} on {backend}")
    rng = np.random.default_rng(n * 100 + k)
    fast = starvm.Machine(backend=on_device(backend), native=True)
    body = starvm.Machine(backend=on_device(backend), native=False)
    kernels = 0        # calls placed on a side that has the kernel
    placed = 0         # calls whose tables are not on the NumPy backend (on auto: on its device)
    for trial in range(4):
        T = rng.random((n, k)) < (0.5 if trial < 2 else 0.9)
        if trial == 3:
            T[:] = T[0]                                   # all rows equal
        X = [rng.random(n) < 0.5, np.ones(n, bool), np.zeros(n, bool), rng.random(n) < 0.02][trial]
        v = T[int(rng.integers(n))] if rng.random() < 0.7 else rng.random(k) < 0.5
        results, stats = [], []
        for m in (fast, body):
            Z = m.slice(np.zeros(n, bool))
            args = (m.table(T), m.slice(X)) + ((m.word(v),) if name == "MATCH" else ()) + (Z,)
            m.call(name, *args)
            results.append(Z.to_numpy())
            stats.append(m.last_call_stats)
            if m is fast:
                kernels += native_for(name.lower(), args[0].backend, enabled=True) is not None
                placed += args[0].backend.is_device
        np.testing.assert_array_equal(results[0], results[1])
        np.testing.assert_array_equal(results[0], model(name, T, X, v))
        assert stats[0] == stats[1], "the kernel reports the Star body's steps"
    assert body.native_timing[0] == 0
    assert fast.native_timing[0] == kernels == placed == 4


# ---------------------------------------------------------------- the kernels themselves
# the search kernels (native/match/cuda.py, native/min/cuda.py) against a NumPy model of the bit-sliced data: every size class
# (one word, a partial last word, several blocks of the MIN/MAX reduction), every k class
# (k = 64: keys using all 64 bits, ~0 included), all-zero and all-one tables and control
# slices, ties across blocks, the worst case for the second MIN/MAX kernel (every block the
# best so far when it ran), and outputs poisoned: the memory the result is allocated from is
# filled with ones first, so a word the kernels forget to write shows.

def _cupy_or_skip():
    from conftest import cupy_or_skip
    cupy_or_skip()          # skips only without CuPy or a CUDA device; any other error fails
    import cupy as cp
    from gpu_sources.native_kernels import cuda_search
    return cp, cuda_search()


def _table(rng, n, k, mode):
    W = (n + 63) // 64
    mask = _row_mask(n)
    if mode == "random":
        T = rng.integers(0, M64, size=(k, W), dtype=np.uint64, endpoint=True)
    elif mode == "ones":
        T = np.full((k, W), M64, dtype=np.uint64)
    elif mode == "zeros":
        T = np.zeros((k, W), dtype=np.uint64)
    elif mode == "ties":                           # values 0..3 only: many rows tie
        T = np.zeros((k, W), dtype=np.uint64)
        T[-min(k, 2):] = rng.integers(0, M64, size=(min(k, 2), W), dtype=np.uint64, endpoint=True)
    elif mode == "dense":                          # mostly ones, a few zeros
        T = np.full((k, W), M64, dtype=np.uint64)
        for c in range(k):
            T[c] &= ~(rng.integers(0, M64, size=W, dtype=np.uint64, endpoint=True)
                      & rng.integers(0, M64, size=W, dtype=np.uint64, endpoint=True)
                      & rng.integers(0, M64, size=W, dtype=np.uint64, endpoint=True))
    elif mode == "descending":                     # value decreasing with the row: every block
        vals = np.arange(n, 0, -1, dtype=np.uint64)  # of MIN improves on the ones before it
        if k < 64:
            vals = np.minimum(vals, np.uint64((1 << k) - 1))
        T = np.zeros((k, W), dtype=np.uint64)
        for c in range(k):
            T[c] = _pack(((vals >> np.uint64(k - 1 - c)) & np.uint64(1)).astype(bool))
    else:
        raise ValueError(mode)
    return T & mask


def _control(rng, n, mode):
    W = (n + 63) // 64
    mask = _row_mask(n)
    if mode == "ones":
        return mask.copy()
    if mode == "zeros":
        return np.zeros(W, dtype=np.uint64)
    if mode == "one_row":
        return _pack(np.arange(n) == int(rng.integers(n)))
    if mode == "sparse":
        return _pack(rng.random(n) < 0.01)
    return _pack(rng.random(n) < 0.5)


def _poison(cp, words):
    junk = cp.full(words, M64, dtype=cp.uint64)    # the pool hands this block out next
    del junk


class _T:                                          # what the search kernels read of a table
    def __init__(self, data, n):
        self.data, self.n, self.k = data, n, data.shape[0]


SIZES = [1, 63, 64, 65, 1000, 70_001]
KS = [1, 7, 32, 64]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", KS)
def test_kernels_equal_numpy_model(n, k):
    cp, sc = _cupy_or_skip()
    rng = np.random.default_rng([n, k])
    W = (n + 63) // 64
    for tmode in ("random", "ones", "zeros", "ties", "dense", "descending"):
        T = _table(rng, n, k, tmode)
        dT = cp.asarray(T)
        vals = _values(T, n)
        for xmode in ("random", "ones", "zeros", "one_row", "sparse"):
            X = _control(rng, n, xmode)
            dX = cp.asarray(X)
            if rng.random() < 0.7:                 # a value present, or any k-bit value
                probe = int(vals[int(rng.integers(n))])
            else:
                probe = int(rng.integers(0, M64, dtype=np.uint64, endpoint=True)) >> (64 - k)
            dv = cp.asarray(_word(probe, k))
            for name in ("MIN", "MAX", "MATCH"):
                _poison(cp, W)
                if name == "MATCH":
                    got = sc.match(_T(dT, n), dX, dv, k)
                else:
                    got = sc.extreme(_T(dT, n), dX, name == "MAX")
                want = reference(name, T, X, n, probe)
                np.testing.assert_array_equal(cp.asnumpy(got), want, err_msg=f"{name} {tmode} X={xmode}")


@pytest.mark.parametrize("block,wpt,batch", [(128, 1, 8), (256, 2, 4), (512, 4, 16), (32, 1, 0), (256, 1, 1)])
def test_kernel_launch_shapes(block, wpt, batch):
    """Other launch shapes and column batches (bench/check_search_gpu.py times them) give the
    same results."""
    cp, sc = _cupy_or_skip()
    old = sc.launch_shape()
    sc.configure(block, wpt, batch)
    try:
        rng = np.random.default_rng([block, wpt, batch])
        for n, k in [(65, 7), (70_001, 32), (200_000, 13), (100_000, 64)]:
            W = (n + 63) // 64
            for tmode in ("random", "ties", "descending"):
                T = _table(rng, n, k, tmode)
                X = _control(rng, n, "random" if tmode != "descending" else "ones")
                dT, dX = cp.asarray(T), cp.asarray(X)
                probe = int(_values(T, n)[n // 2])
                for name in ("MIN", "MAX", "MATCH"):
                    _poison(cp, W)
                    got = (sc.match(_T(dT, n), dX, cp.asarray(_word(probe, k)), k)
                           if name == "MATCH" else sc.extreme(_T(dT, n), dX, name == "MAX"))
                    np.testing.assert_array_equal(cp.asnumpy(got), reference(name, T, X, n, probe),
                                                  err_msg=f"{name} n={n} k={k} {tmode}")
    finally:
        sc.configure(old["block"], old["words_per_thread"], old["batch"])


@pytest.mark.parametrize("name", ["MATCH", "MIN", "MAX"])
def test_machine_call_ignores_old_z(name):
    """Through the machine, Z's previous contents (all ones here) never leak into the result."""
    cp, _ = _cupy_or_skip()
    rng = np.random.default_rng(5)
    fast = starvm.Machine(backend="cupy", native=True)
    for n, k in [(1, 1), (63, 7), (64, 32), (65, 64), (1000, 32), (20_000, 7)]:
        T = rng.random((n, k)) < 0.5
        for X in (rng.random(n) < 0.5, np.ones(n, bool), np.zeros(n, bool)):
            v = T[int(rng.integers(n))]
            Z = fast.slice(np.ones(n, bool))
            args = (fast.table(T), fast.slice(X)) + ((fast.word(v),) if name == "MATCH" else ()) + (Z,)
            fast.call(name, *args)
            np.testing.assert_array_equal(Z.to_numpy(), model(name, T, X, v))


def row_values(bits) -> list[int]:
    """The rows as unsigned numbers (Python ints: 64-bit rows included), column 1 the most significant."""
    return [int("".join("1" if b else "0" for b in row), 2) if len(row) else 0 for row in bits]


def _match_args(rng, n, k, trial):
    """Bits of T, X and v for one MATCH call: random rows, dense rows, all rows equal; v a row
    of T or any word; X all, some, none, most."""
    T = rng.random((n, k)) < (0.5 if trial < 2 else 0.9)
    if trial == 3:
        T[:] = T[0]
    X = [np.ones(n, bool), rng.random(n) < 0.5, np.zeros(n, bool), rng.random(n) < 0.9][trial]
    v = T[int(rng.integers(n))] if trial != 1 else rng.random(k) < 0.5
    return T, X, v


def _row_ints(bits):
    """row_values, vectorised below 64 columns."""
    k = bits.shape[1]
    if k >= 64:
        return row_values(bits)
    return (bits.astype(np.uint64) << np.arange(k - 1, -1, -1, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)


def _match_call(m, T, X, v):
    Z = m.slice(np.ones(len(X), bool))                    # poisoned: every bit must be written
    args = (m.table(T), m.slice(X), m.word(v), Z)
    m.call("MATCH", *args)
    return Z.to_numpy(), m.last_call_stats, args[0].backend.name


@pytest.mark.parametrize("n,k", [(1, 1), (63, 5), (65, 3), (1000, 32), (700, 64), (70_001, 7)])
def test_match_without_a_kernel_equals_the_model(backend, n, k):
    """The library MATCH (no native kernel on any backend) against a plain Python model and the
    interpreter's steps, compiled (`jit="on"`: Numba on NumPy, the GPU tier where the tables
    are on a GPU, on cupy and on auto's device) and interpreted."""
    assert all(native_for("match", b, enabled=True) is None for b in ("numpy", "cupy", "emulated")), "its kernel is deleted"
    rng = np.random.default_rng([n, k])
    compiled = starvm.Machine(backend=on_device(backend), jit="on", native=True)
    interpreted = starvm.Machine(backend=on_device(backend), jit="off", native=False)
    sides = set()
    for trial in range(4):
        T, X, v = _match_args(rng, n, k, trial)
        got, steps, side = _match_call(compiled, T, X, v)
        want, want_steps, _ = _match_call(interpreted, T, X, v)
        sides.add(side)
        value = row_values([v])[0]
        model_rows = np.array([a == value for a in _row_ints(T)], dtype=bool)
        np.testing.assert_array_equal(got, X & model_rows, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(want, got)
        assert steps == want_steps, "compiled code reports the Star body's steps"
    assert compiled.native_timing[0] == 0
    routine = next(r for r in compiled.jit.routines.values() if r.display.upper() == "MATCH")
    gpu = getattr(routine, "gpu", routine)         # auto: the PlacedRoutine's GPU tier
    if sides == {"cupy"}:                          # on a GPU: the GPU tier's kernel ran every call
        assert type(gpu).__name__ == "GpuRoutine" and gpu.compiled_calls == 4, compiled.jit.report()
        line = next(x for x in compiled.jit.report() if x.strip().upper().startswith("MATCH:"))
        assert ("compiled" in line or "on the GPU tier" in line) and "interpreted" not in line, line
    elif sides == {"numpy"}:
        assert routine.compiled_calls == 4, compiled.jit.report()


@pytest.mark.parametrize("name", ["HIT", "SETMIN"])
@pytest.mark.parametrize("n,k", [(1, 1), (63, 5), (64, 8), (65, 3), (1000, 32), (700, 64)])
def test_fused_row_comparison_equals_star_body(backend, name, n, k):
    if native_for(name.lower(), backend, enabled=True) is None:
        pytest.skip(f"no fused {name} on {backend}")   # the NumPy backend has none: nothing to compare
    rng = np.random.default_rng(n * 10 + k)
    fast = starvm.Machine(backend=on_device(backend), native=True)
    body = starvm.Machine(backend=on_device(backend), native=False)
    kernels = 0
    for trial in range(4):
        T = rng.random((n, k)) < 0.5
        F = T.copy() if trial == 0 else rng.random((n, k)) < 0.5
        if trial == 2:                                       # equal rows, and rows differing in the last bit only
            F[::3] = T[::3]
            F[1::3] = T[1::3]
            F[1::3, -1] = ~T[1::3, -1]
        X = [np.ones(n, bool), rng.random(n) < 0.5, np.zeros(n, bool), rng.random(n) < 0.9][trial]
        results, stats = [], []
        for m in (fast, body):
            Z = m.slice(np.ones(n, bool))                       # poisoned: every bit must be written
            args = (m.table(T), m.table(F), m.slice(X), Z)
            m.call(name, *args)
            results.append(Z.to_numpy())
            stats.append(m.last_call_stats)
            if m is fast:
                kernels += native_for(name.lower(), args[0].backend, enabled=True) is not None
        np.testing.assert_array_equal(results[0], results[1])
        assert stats[0] == stats[1], "the kernel reports the Star body's steps"
        t, f = row_values(T), row_values(F)
        want = X & np.array([(a == b) if name == "HIT" else (a < b) for a, b in zip(t, f)], dtype=bool)
        np.testing.assert_array_equal(results[0], want)
    assert body.native_timing[0] == 0
    assert fast.native_timing[0] == kernels == 4
