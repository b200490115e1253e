"""What `--jit auto` expects an interpreted call to cost (starvm/jit/estimate.py), and the
threshold each tier weighs it against: Numba's (STARVM_JIT_THRESHOLD) on the host, the GPU
tier's (STARVM_JIT_GPU_THRESHOLD), whose base operations are launches."""
from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest

import starvm
from gpu_sources.corpus import renamed
from starvm.jit.estimate import DEVICE_PRICES, HOST_PRICES, estimator

# the library's MATCH (and the rest of stdlib/search.star) under a user's name: no native applies
MY_MATCH = renamed((Path(__file__).resolve().parents[2] / "stdlib" / "search.star").read_text())


def _match_estimates(rows: int, cols: int = 32):
    m = starvm.Machine(backend="numpy", jit="on", out=io.StringIO())
    m.load(MY_MATCH, "m.star")
    info, body = m.jit.bodies["r_u_match"]
    args = (SimpleNamespace(n=rows, k=cols), SimpleNamespace(n=rows), SimpleNamespace(n=cols),
            SimpleNamespace(n=rows))
    return (estimator(info, body, m.jit, HOST_PRICES)(args),
            estimator(info, body, m.jit, DEVICE_PRICES)(args))


@pytest.mark.parametrize("rows, measured_us", [(1 << 20, 1600), (1 << 27, 2200)])
def test_device_prices_come_near_the_measured_interpreted_match(rows, measured_us):
    """MATCH's body interpreted on an H100 took 1.6 ms a call at 2^20 rows x 32 bits and 2.2 ms
    at 2^27 (bench/results/natives_gpu_h100_match_jitauto.md): the device estimate,
    in microseconds, is within 2x of that; the host's prices a base operation at ~1 us."""
    host, device = _match_estimates(rows)
    assert measured_us / 2 <= device <= measured_us * 2, (host, device)
    assert device > 10 * host / (1 + rows / HOST_PRICES.rows_a_unit)


def test_the_estimate_grows_with_the_columns_and_the_rows():
    small, big = _match_estimates(1 << 20, 8), _match_estimates(1 << 20, 32)
    assert big[0] > 3 * small[0] and big[1] > 3 * small[1]
    assert _match_estimates(1 << 27)[1] > _match_estimates(1 << 20)[1]


def test_each_tier_has_its_threshold(monkeypatch):
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "1234")
    monkeypatch.setenv("STARVM_JIT_GPU_THRESHOLD", "567")
    m = starvm.Machine(backend="numpy", jit="auto", out=io.StringIO())
    m.load(MY_MATCH, "m.star")
    routine = m.jit.routines["r_u_match"]
    assert (routine.threshold, routine.threshold_variable) == (1234, "STARVM_JIT_THRESHOLD")
    assert m.jit.gpu_threshold == 567


def test_gpu_routines_weigh_device_prices_against_the_gpu_threshold(monkeypatch):
    """On the CuPy backend (its stand-in here) a routine below STARVM_JIT_GPU_THRESHOLD runs
    interpreted and says which threshold holds it back."""
    from gpu_sources.fake_cupy import fake_cupy_installed
    monkeypatch.setenv("STARVM_JIT_GPU_THRESHOLD", "1000000")
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
        from starvm.jit.cuda_runtime import GpuRoutine
        m = starvm.Machine(backend="cupy", jit="auto", native=False, out=io.StringIO())
        m.load(MY_MATCH, "m.star")
        routine = m.jit.routines["r_u_match"]
        assert isinstance(routine, GpuRoutine)
        assert (routine.threshold, routine.threshold_variable) == (1_000_000, "STARVM_JIT_GPU_THRESHOLD")
        ran = []
        routine.interpreted = lambda *args: ran.append(args)
        args = (SimpleNamespace(n=3, k=3), SimpleNamespace(n=3), SimpleNamespace(n=3), SimpleNamespace(n=3))
        routine(*args)
        assert ran == [args] and routine.compiled_calls == 0
        # 3 columns: about 3 x (2 base operations at 20 units) + Z := X
        assert 100 <= routine.work <= 200, routine.work
        assert "STARVM_JIT_GPU_THRESHOLD" in routine.why
