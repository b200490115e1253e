"""Native kernels replace standard-library Star bodies and must agree with them bit for bit."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from listings import LISTING_4
from starvm.native import native_for


def has_native(table) -> bool:
    """Did a native kernel run on the side that holds ``table`` (on auto: the CPU or the device)?"""
    return native_for("warshall_adapt", table.backend.name, enabled=True) is not None


def kernel_side(backend: str, n: int) -> str:
    """The side whose kernel (or Star body) a call on an n x n table runs: on auto, the device
    from STARVM_AUTO_GPU_BITS table bits on (AutoBackend.place), else the CPU."""
    if backend != "auto":
        return backend
    from starvm.config import auto_gpu_bits
    return "emulated" if n * n >= auto_gpu_bits() else "numpy"


def closure(a):
    p = a.copy()
    for k in range(p.shape[0]):
        p[p[:, k]] |= p[k]
    return p


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 130, 200])
def test_native_warshall_adapt_equals_star_body(backend, n):
    if native_for("warshall_adapt", backend, enabled=True) is None:
        pytest.skip(f"no native kernel on {backend}")
    rng = np.random.default_rng(n)
    for density in (0.0, 1.0 / n, 2.0 / n, 0.3, 1.0):
        a = rng.random((n, n)) < density
        fast = starvm.Machine(backend=backend, native=True)
        body = starvm.Machine(backend=backend, native=False)
        P, Q = fast.table(a), body.table(a)
        fast.call("WARSHALL-adapt", n, P)
        body.call("WARSHALL-adapt", n, Q)
        native_ran = native_for("warshall_adapt", kernel_side(backend, n), enabled=True) is not None
        assert fast.native_timing[0] == native_ran and body.native_timing[0] == 0
        np.testing.assert_array_equal(P.to_numpy(), Q.to_numpy())
        np.testing.assert_array_equal(P.to_numpy(), closure(a))
        assert fast.stats == body.stats, "the kernel reports the Star body's steps"


@pytest.mark.parametrize("n", [2, 7, 64, 65, 130])
def test_native_warshall_adapt_steps_on_a_reversed_path(backend, n):
    """Arcs i+1 -> i: every pivot adds pairs, and row k gains its 1s only at pivot k-1; the OR
    steps (n(n-1)/2, the pairs i < j of the closure) need every pivot's count."""
    if native_for("warshall_adapt", backend, enabled=True) is None:
        pytest.skip(f"no native kernel on {backend}")
    a = np.zeros((n, n), bool)
    a[np.arange(1, n), np.arange(n - 1)] = True
    stats = []
    for native in (True, False):
        m = starvm.Machine(backend=backend, native=native)
        P = m.table(a)
        m.call("WARSHALL-adapt", n, P)
        assert m.native_timing[0] == (native and native_for("warshall_adapt", kernel_side(backend, n), enabled=True) is not None)
        np.testing.assert_array_equal(P.to_numpy(), closure(a))
        stats.append(m.stats)
    assert stats[0] == stats[1]
    assert stats[0]["OR"] == n * (n - 1) // 2 and stats[0]["COL_GET"] == 2 * n * n


def test_native_kernel_runs_from_star_code(backend):
    src = """var P: table(3, 3);
begin
  ROW(1, P) := BITS('010'); ROW(2, P) := BITS('001');
  WARSHALL-adapt(3, P);
  writeln(P);
end."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out)
    m.run(src, "t.star")
    assert out.getvalue() == "011\n001\n000\n"
    assert m.native_timing[0] == (1 if has_native(m.globals["P"]) else 0)


def test_a_programs_own_routine_is_not_replaced(backend):
    src = LISTING_4                          # tests/listings.py
    m = starvm.Machine(backend=backend)
    m.load(src, "own.star")
    a = np.random.default_rng(0).random((20, 20)) < 0.1
    P = m.table(a)
    m.call("WARSHALL-adapt", 20, P)
    assert m.native_timing[0] == 0 and m.stats["COL_GET"] == 2 * 20 * 20
    np.testing.assert_array_equal(P.to_numpy(), closure(a))


def test_unusual_arguments_fall_back_to_the_star_body(backend):
    """n smaller than the table: the Star body (closure through vertices 1..n only) runs."""
    rng = np.random.default_rng(7)
    a = rng.random((10, 10)) < 0.3
    fast, body = starvm.Machine(backend=backend), starvm.Machine(backend=backend, native=False)
    P, Q = fast.table(a), body.table(a)
    fast.call("WARSHALL-adapt", 6, P)
    body.call("WARSHALL-adapt", 6, Q)
    assert fast.native_timing[0] == 0
    np.testing.assert_array_equal(P.to_numpy(), Q.to_numpy())
