"""The CuPy side of issue 13 without CuPy or a GPU, against the stand-in for CuPy
(tests/gpu_sources/fake_cupy.py: NumPy arrays, kernels compiled with NVRTC, launches checked
against the PTX): the CuPy backend's table_set_ints / table_get_ints (array operations only,
so their results are computed and compared with the NumPy backend's), COMPACT and EXPAND's
launches of rows_gather (arguments checked; a NumPy model of the kernel, run at each launch,
gives the values), and R-MAT generated through the device code path."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_sources import fake_cupy
from gpu_sources.fake_cupy import LAUNCHES, fake_cupy_installed
from starvm.backends import get_backend


@pytest.fixture
def fake(monkeypatch):
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend", "starvm.native.rows_cupy") as mods:
        yield mods


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 300])
@pytest.mark.parametrize("k", [1, 13, 64, 66])
def test_table_ints_on_the_device_side(fake, n, k):
    cp, cb, _ = fake
    B = cb.CupyBackend()
    rng = np.random.default_rng(n + k)
    vals = rng.integers(0, 1 << 62, n, dtype=np.int64) & ((1 << min(k, 63)) - 1)
    t = B.table(n, k)
    t.data[...] = 7                                   # stale words are overwritten
    B.table_set_ints(t, vals)
    ref = get_backend("numpy").table(n, k)
    get_backend("numpy").table_set_ints(ref, vals)
    assert np.array_equal(np.asarray(t.data), ref.data)
    assert np.array_equal(np.asarray(B.table_get_ints(t)), vals.astype(np.uint64))
    assert not LAUNCHES                               # array operations only, no kernel of ours


def gather_model(launch) -> None:
    """What rows_gather computes: the rows of R under the mask take the bits of T at idx."""
    T, WT, k, idx, X, R, W = launch.args
    T, idx, X, R = (np.asarray(a) for a in (T, idx, X, R))
    for w in range(int(W)):
        for t in range(64):
            if (int(X[w]) >> t) & 1:
                src = int(idx[w * 64 + t])
                for c in range(int(k)):
                    bit = (int(T[c, src >> 6]) >> (src & 63)) & 1
                    word = int(R[c, w]) & ~(1 << t) | (bit << t)
                    R[c, w] = np.uint64(word)


class Table:
    def __init__(self, bits: np.ndarray):
        self.n, self.k = bits.shape
        self.data = fake_cupy._dev(get_backend("numpy").table(self.n, self.k, bits).data)


def vec(bits: np.ndarray):
    return fake_cupy._dev(np.frombuffer(get_backend("numpy").from_bools(bits).to_bytes(
        max(1, (bits.size + 63) // 64) * 8, "little"), dtype=np.uint64).copy()[:(bits.size + 63) // 64])


def bools(t: Table) -> np.ndarray:
    b = get_backend("numpy")
    return b.table_to_bools(b._wrap(np.ascontiguousarray(np.asarray(t.data)), t.n, t.k))


@pytest.mark.parametrize("n,k", [(1, 1), (65, 3), (200, 70)])
def test_compact_and_expand_launch_rows_gather(fake, n, k):
    _, _, rc = fake
    fake_cupy.ON_LAUNCH.append(gather_model)
    rng = np.random.default_rng(n)
    T, X = rng.random((n, k)) < 0.5, rng.random(n) < 0.4
    X[0] = True
    c = int(X.sum())
    R0 = rng.random((c + 5, k)) < 0.5
    R = Table(R0)
    LAUNCHES.clear()
    rc.compact(Table(T), vec(X), R)
    assert [lc.kernel for lc in LAUNCHES] == ["rows_gather"]
    want = R0.copy()
    want[:c] = T[X]
    assert np.array_equal(bools(R), want)
    # in place: the rows come from a copy of T
    S = Table(T)
    rc.compact(S, vec(X), S)
    want = T.copy()
    want[:c] = T[X]
    assert np.array_equal(bools(S), want)
    # EXPAND: rows 1..c back to the marked rows, the others kept
    E0 = rng.random((n, k)) < 0.5
    E = Table(E0)
    LAUNCHES.clear()
    rc.expand(Table(want[:c].copy()), vec(X), E)
    assert [lc.kernel for lc in LAUNCHES] == ["rows_gather"]
    want_e = E0.copy()
    want_e[X] = T[X]
    assert np.array_equal(bools(E), want_e)


def test_rmat_through_the_device_path(monkeypatch):
    with fake_cupy_installed(monkeypatch) as (cp,):
        import starvm.graphs as sg
        g = sg.rmat(8, 8, seed=3, wmax=20, xp=cp)
    pairs = set(zip(g.src.tolist(), g.dst.tolist()))
    assert g.n == 256 and g.m > 0 and len(pairs) == g.m and pairs == {(v, u) for u, v in pairs}
    assert all(u != v for u, v in pairs) and 1 <= g.weight.min() and g.weight.max() <= 20
