"""The CuPy side of issue 13 without CuPy or a GPU, against the stand-in for CuPy
(tests/gpu_sources/fake_cupy.py: NumPy arrays, kernels compiled with NVRTC, launches checked
against the PTX): the CuPy backend's table_set_ints / table_get_ints (array operations only,
so their results are computed and compared with the NumPy backend's), and R-MAT generated
through the device code path."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_sources.fake_cupy import LAUNCHES, fake_cupy_installed
from starvm.backends import get_backend


@pytest.fixture
def fake(monkeypatch):
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend", "starvm.native.shared.cuda_rows") as mods:
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


# COMPACT and EXPAND's launches, with a NumPy model of each kernel:
# tests/unit/test_native_rows_launch.py.


def test_rmat_through_the_device_path(monkeypatch):
    with fake_cupy_installed(monkeypatch) as (cp,):
        import starvm.graphs as sg
        g = sg.rmat(8, 8, seed=3, wmax=20, xp=cp)
    pairs = set(zip(g.src.tolist(), g.dst.tolist()))
    assert g.n == 256 and g.m > 0 and len(pairs) == g.m and pairs == {(v, u) for u, v in pairs}
    assert all(u != v for u, v in pairs) and 1 <= g.weight.min() and g.weight.max() <= 20
