"""The auto backend: placement by size, moves between CPU and device, mixed operations.

Every test runs with the device emulated by NumPy (anywhere) and with the real GPU (CuPy,
skipped without one). Results are compared with the NumPy backend, the reference.
"""
from __future__ import annotations

import io
import random

import numpy as np
import pytest

import starvm
from listings import LISTING_4
from starvm.backends import BackendUnavailable, get_backend
from starvm.backends.auto_backend import AutoBackend
from starvm.backends.emulated_device import EmulatedDevice
from starvm.execution.values import Bits
from test_native import closure

ROWS, BITS = 100, 10_000          # small thresholds: tables of >= 100 rows start on the device
LENGTHS = [1, 63, 64, 65, 99, 100, 200]


@pytest.fixture(params=["emulated", "cupy"])
def auto(request) -> AutoBackend:
    if request.param == "emulated":
        device = EmulatedDevice()
    else:
        from conftest import cupy_or_skip
        device = cupy_or_skip()
    return AutoBackend(get_backend("numpy"), device, gpu_rows=ROWS, gpu_bits=BITS)


REF = get_backend("numpy")


def on_host(v) -> bool:
    return type(v) is int


def bools(rng, n, density=0.5):
    return np.array([rng.random() < density for _ in range(n)], dtype=bool)


def both_sides(auto, bits):
    """The same vector on the host and on the device."""
    h = auto.host.from_bools(bits)
    return h, auto.up(h, (len(bits) + 63) // 64)


# ------------------------------------------------------------------------------ placement
def test_tables_and_new_vectors_are_placed_by_length(auto):
    for n in LENGTHS:
        t = auto.table(n, 3)
        assert (t.backend is auto.dev) == (n >= ROWS)
        assert on_host(auto.zeros(n)) == (n < ROWS) and on_host(auto.ones(n)) == (n < ROWS)
        assert on_host(auto.from_bools(np.ones(n, bool))) == (n < ROWS)
        assert auto.placement(n) is t.backend
        # the slices of a table sit where the table is
        assert on_host(auto.col_get(t, 0)) == (t.backend is auto.host)


def test_short_rows_of_a_device_table_come_to_the_host(auto):
    rng = random.Random(1)
    for k in (1, 64, 99, 100, 150):
        a = np.array([bools(rng, k) for _ in range(ROWS)])
        t = auto.table(ROWS, k, a)
        assert t.backend is auto.dev
        w = auto.row_get(t, 7)
        assert on_host(w) == (k < ROWS)
        np.testing.assert_array_equal(auto.to_bools(w, k), a[7])


def test_vectors_cross_over_on_the_way_into_a_table(auto):
    rng = random.Random(2)
    for n, k in ((5, 7), (ROWS, 7), (ROWS + 30, 3)):
        t = auto.table(n, k)
        ref = REF.table(n, k)
        for side in (0, 1):
            col = bools(rng, n)
            v = both_sides(auto, col)[side]
            auto.col_set(t, 1, v)
            REF.col_set(ref, 1, REF.from_bools(col))
            row = bools(rng, k)
            auto.row_set(t, n - 1, both_sides(auto, row)[1 - side])
            REF.row_set(ref, n - 1, REF.from_bools(row))
            np.testing.assert_array_equal(auto.table_to_bools(t), REF.table_to_bools(ref))


@pytest.mark.parametrize("n", LENGTHS)
def test_mixed_operations_equal_the_numpy_backend(auto, n):
    rng = random.Random(n)
    for _ in range(3):
        a, b = bools(rng, n), bools(rng, n, rng.random())
        ra, rb = REF.from_bools(a), REF.from_bools(b)
        for x, y in ((0, 1), (1, 0), (1, 1), (0, 0)):
            va, vb = both_sides(auto, a)[x], both_sides(auto, b)[y]
            for name in ("and_", "or_", "xor"):
                got = getattr(auto, name)(va, vb)
                assert on_host(got) == (x == y == 0)
                np.testing.assert_array_equal(auto.to_bools(got, n), REF.to_bools(getattr(REF, name)(ra, rb), n))
            assert auto.equal(va, vb) == REF.equal(ra, rb)
            assert auto.compare(va, vb) == REF.compare(ra, rb)
            for name in ("add", "subt"):
                got = getattr(auto, name)(va, vb, n)
                np.testing.assert_array_equal(auto.to_bools(got, n), REF.to_bools(getattr(REF, name)(ra, rb, n), n))
            if n >= 3:
                m = n // 3
                got = auto.rep(va, 1, auto.trim(vb, 0, m - 1), m)
                want = REF.rep(ra, 1, REF.trim(rb, 0, m - 1), m)
                np.testing.assert_array_equal(auto.to_bools(got, n), REF.to_bools(want, n))
        for x in (0, 1):
            v = both_sides(auto, a)[x]
            assert auto.fnd(v) == REF.fnd(ra) and auto.numb(v) == REF.numb(ra) and auto.some(v) == REF.some(ra)
            pos, rest = auto.step(v)
            rpos, rrest = REF.step(ra)
            assert pos == rpos
            np.testing.assert_array_equal(auto.to_bools(rest, n), REF.to_bools(rrest, n))
            np.testing.assert_array_equal(auto.to_bools(auto.not_(v, n), n), REF.to_bools(REF.not_(ra, n), n))
            np.testing.assert_array_equal(auto.to_bools(auto.frst(v), n), REF.to_bools(REF.frst(ra), n))
            i = n - 1
            assert auto.get_bit(v, i) == REF.get_bit(ra, i)
            np.testing.assert_array_equal(auto.to_bools(auto.set_bit(v, i, 1 - a[i]), n),
                                          REF.to_bools(REF.set_bit(ra, i, 1 - a[i]), n))


def test_table_copy_between_sides(auto):
    rng = np.random.default_rng(3)
    a = rng.random((ROWS + 1, 5)) < 0.5
    src = auto.dev.table(ROWS + 1, 5, a)
    dst = auto.host.table(ROWS + 1, 5)
    auto.table_copy(dst, src)
    np.testing.assert_array_equal(dst.to_numpy(), a)
    back = auto.dev.table(ROWS + 1, 5)
    auto.table_copy(back, dst)
    np.testing.assert_array_equal(back.to_numpy(), a)


# ------------------------------------------------------------------------------ moves to the device
FORALL = LISTING_4.replace("WARSHALL-adapt", "CLOSE")      # a name the standard library does not have


@pytest.mark.parametrize("n", [40, 99, 100])
def test_a_large_fused_loop_moves_its_table_to_the_device_for_good(auto, n):
    rng = np.random.default_rng(n)
    a = rng.random((n, n)) < 2.0 / n
    m = starvm.Machine(backend=auto, out=io.StringIO())
    m.load(FORALL)
    P = m.table(a)
    starts_on_dev = n >= ROWS
    assert (P.backend is auto.dev) == starts_on_dev
    m.call("CLOSE", n, P)
    np.testing.assert_array_equal(P.to_numpy(), closure(a))
    moves = n * n * 2 >= BITS         # the loop reads P and its snapshot (the forall rule)
    assert (P.backend is auto.dev) == (starts_on_dev or moves)
    # P and, once, the snapshot the forall rule takes of it (the loop reads COL(k, P))
    assert auto.migrations == (2 if moves and not starts_on_dev else 0)
    ref = starvm.Machine(backend="numpy", out=io.StringIO())
    ref.load(FORALL)
    Q = ref.table(a)
    ref.call("CLOSE", n, Q)
    assert m.stats == ref.stats, "the same steps, wherever they ran"


def test_a_native_kernel_moves_a_large_table(auto):
    auto = AutoBackend(auto.host, auto.dev, gpu_rows=ROWS, gpu_bits=5000)
    # 1600 and 6400 bits; WARSHALL-adapt has no host native, so the small table runs the Star
    # body, whose fused loop counts the table and its snapshot: 3200 bits, still on the host
    for size, moves in ((40, False), (80, True)):
        m = starvm.Machine(backend=auto, out=io.StringIO(), native=True)
        rng = np.random.default_rng(size)
        a = rng.random((size, size)) < 2.0 / size
        P = m.table(a)
        assert P.backend is auto.host
        m.call("WARSHALL-adapt", size, P)
        np.testing.assert_array_equal(P.to_numpy(), closure(a))
        assert (P.backend is auto.dev) == moves


def test_from_words_keeps_each_side(auto):
    """Host words make a host vector, device words (a CuPy array, or the emulated device's
    DeviceWords) a device vector: the device branch runs with the emulated device too."""
    rng = random.Random(3)
    for n in LENGTHS:
        bits = bools(rng, n)
        h, d = both_sides(auto, bits)
        words = auto.host.to_words(h, n)
        from_host = auto.from_words(words, n)
        assert on_host(from_host) and from_host == h
        from_dev = auto.from_words(auto.dev.to_words(d, n) if auto.dev.name != "emulated"
                                   else auto.dev.from_words(words, n), n)
        assert not on_host(from_dev)
        np.testing.assert_array_equal(auto.to_bools(from_dev, n), bits)


def test_native_kernels_run_on_the_device_side(auto):
    """A standard-library call placed on the device runs the device's kernel (the emulated
    device has its own: starvm/native/<routine>/emulated.py), with the Star body's steps."""
    rng = np.random.default_rng(4)
    n, k = 150, 9
    T = rng.random((n, k)) < 0.5
    X = rng.random(n) < 0.5
    got = []
    for native in (True, False):
        m = starvm.Machine(backend=auto, out=io.StringIO(), native=native)
        t, x, z = m.table(T), m.slice(X), m.slice(np.zeros(n, bool))
        assert t.backend is auto.dev
        m.call("MIN", t, x, z)
        got.append((z.to_numpy(), m.stats, m.native_timing[0]))
    assert got[0][2] == 1 and got[1][2] == 0
    np.testing.assert_array_equal(got[0][0], got[1][0])
    assert got[0][1] == got[1][1]


def test_programs_give_the_same_output_as_numpy(auto):
    src = """var T: table(150, 6); S: table(10, 4); X, Y: slice(T); w: word(T); v: word(S);
    i, c: integer;
begin
  for i := 1 to 150 do if i mod 7 < 3 then ROW(i, T) := BITS('101101') else ROW(i, T) := BITS('011100');
  for i := 1 to 10 do if i mod 2 = 0 then ROW(i, S) := BITS('1001');
  X := COL(1, T); Y := COL(2, T);
  X := X and not Y; c := 0;
  while SOME(X) do begin i := STEP(X); c := c + i; end;
  w := ROW(3, T); v := ROW(2, S);
  writeln(c, ' ', NUMB(COL(3, T) xor COL(4, T)), ' ', w, ' ', v, ' ', FND(COL(2, T)));
  parallel for i := 1 to 6 do COL(i, T) := COL(i, T) xor COL(1, T);
  writeln(NUMB(COL(2, T)), ' ', ROW(150, T));
end."""
    out_auto, out_ref = io.StringIO(), io.StringIO()
    starvm.Machine(backend=auto, out=out_auto).run(src, "t.star")
    starvm.Machine(backend="numpy", out=out_ref).run(src, "t.star")
    assert out_auto.getvalue() == out_ref.getvalue()


def test_without_a_gpu_auto_is_the_numpy_backend(monkeypatch):
    from starvm import backends
    monkeypatch.delenv("STARVM_AUTO_EMULATE", raising=False)
    try:
        backends.get_backend("cupy")
        pytest.skip("a GPU is usable here")
    except BackendUnavailable:
        pass
    backends.get_backend.cache_clear()
    try:
        assert backends.get_backend("auto").name == "numpy"
    finally:
        backends.get_backend.cache_clear()


def test_thresholds_come_from_the_environment(monkeypatch):
    from starvm import backends
    monkeypatch.setenv("STARVM_AUTO_EMULATE", "1")
    monkeypatch.setenv("STARVM_AUTO_GPU_ROWS", "1234")
    monkeypatch.setenv("STARVM_AUTO_GPU_BITS", "5678")
    backends.get_backend.cache_clear()
    try:
        b = backends.get_backend("auto")
        assert b.name == "auto" and (b.gpu_rows, b.gpu_bits) == (1234, 5678)
    finally:
        backends.get_backend.cache_clear()


def test_bits_objects_are_converted_in_place_by_place(auto):
    x = Bits(auto.host.from_bools(np.ones(70, bool)), 70)
    t = auto.table(120, 100)          # 12 000 bits on the device: the operation runs there
    assert auto.place((t, x, 3)) is True
    assert not on_host(x.v) and auto.numb(x.v) == 70
    small = auto.table(10, 10)
    assert auto.place((small, x)) is False and on_host(x.v)
