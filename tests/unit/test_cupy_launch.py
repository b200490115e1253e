"""The CuPy backend's Python side without CuPy or a GPU (issue 18): against a stand-in for
CuPy (tests/gpu_sources/fake_cupy.py) whose RawModule compiles with NVRTC and whose kernel
launches check their arguments against the kernel's parameters in the PTX, the backend
compiles its kernels and launches every one of them with arguments of the right count and
widths, and a fused `parallel for` launches its generated kernel with one block per
iteration and the arguments its parameter list declares; run on the CPU (emulate.run_launch),
the generated kernels give the NumPy backend's tables and steps."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest

import starvm
from gpu_sources import fake_cupy
from gpu_sources.fake_cupy import LAUNCHES, LaunchError, fake_cupy_installed


SIZES = [1, 63, 64, 65, 200, 64 * 1024 + 3]


@pytest.fixture
def fake(monkeypatch):
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend", "starvm.backends.cupy_forall") as mods:
        yield mods


def test_the_backend_compiles_and_takes_every_kernel_it_names(fake):
    cp, cb, _ = fake
    B = cb.CupyBackend()
    from starvm.backends.cuda_backend_kernels import NAMES
    assert len(fake_cupy.MODULES) == 1
    for name in NAMES:
        assert getattr(B, f"_{name}").params            # found in the PTX, with its parameters


@pytest.mark.parametrize("n", SIZES)
def test_every_vector_primitive_launches_with_matching_arguments(fake, n):
    cp, cb, _ = fake
    B = cb.CupyBackend()
    v = B.from_bools(np.arange(n) % 3 == 0)
    LAUNCHES.clear()
    B.fnd(v)
    B.step(v)
    B.frst(v)
    B.set_bit(v, n - 1, 1)
    assert [lc.kernel for lc in LAUNCHES] == ["first_one", "first_one", "clear_bit", "first_one", "only_bit",
                                              "copy_set_bit"]
    for lc in LAUNCHES:                      # one thread per word, every word covered
        assert lc.grid[0] * lc.block[0] >= v.size


@pytest.mark.parametrize("n, k", [(1, 1), (70, 3), (64, 65), (5, 200)])
def test_row_access_launches_cover_every_column(fake, n, k):
    cp, cb, _ = fake
    B = cb.CupyBackend()
    T = B.table(n, k)
    LAUNCHES.clear()
    w = B.row_get(T, n - 1)
    B.row_set(T, 0, w)
    gather, scatter = LAUNCHES
    assert gather.kernel == "row_gather" and gather.grid[0] * gather.block[0] >= (k + 63) // 64
    assert scatter.kernel == "row_scatter" and scatter.grid[0] * scatter.block[0] >= k
    assert gather.args[0] is T.data and int(gather.args[3]) == n - 1


def test_a_wrong_argument_list_is_caught():
    from gpu_sources.nvrtc import compile_ptx, require
    require()
    from starvm.backends.cuda_backend_kernels import SOURCE
    k = fake_cupy.Kernel("copy_set_bit", compile_ptx(SOURCE, "b.cu").entry("copy_set_bit"))
    v = fake_cupy._dev(np.zeros(2, dtype=np.uint64))
    with pytest.raises(LaunchError, match="widths"):
        k((1,), (256,), (v, np.int64(2), np.int64(5), np.int64(1), v))     # b is an int, not a long long
    with pytest.raises(LaunchError, match="widths"):
        k((1,), (256,), (v, np.int64(2), np.int64(5), v))
    with pytest.raises(LaunchError, match="block"):
        k((1,), (2048,), (v, np.int64(2), np.int64(5), np.int32(1), v))


# ---------------------------------------------------------------- fused `parallel for`
LOOPS = """
proc WARSH(n: integer; var P: table);
var V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin W := COL(k, P); V := COL(i, P); if V(k) = 1 then V := V or W; COL(i, P) := V end;
end;
proc MARK(n: integer; var P: table; var Z: slice; M: slice; flag: boolean);
var i: integer;
begin
  parallel for i := n downto 1 do
    if flag and SOME(COL(i, P) and M) then Z(i) := 1;
end;
"""


def _c_params(template: str) -> list[str]:
    start = template.index("star_forall(") + len("star_forall(")     # after the prelude's helpers
    head = template[start:template.index(")", start)]
    return [p.strip().rsplit(" ", 1)[0] for p in head.split(",")]


_C_WIDTH = {"long long": 64, "unsigned long long": 64, "unsigned long long*": 64, "int": 32}


def _kernels_of(m):
    return [v for v in m.ns.values() if type(v).__name__ == "CudaForallKernel"]


@pytest.mark.parametrize("n", [1, 64, 70, 1000])
def test_fused_loops_launch_one_block_per_iteration(fake, n):
    """Star code runs on the backend as usual; its loops' control flow does not depend on
    what the (not executed) kernels compute."""
    cp, cb, cf = fake
    B = cb.CupyBackend()
    m = starvm.Machine(backend=B, out=io.StringIO(), fuse=True)
    m.load(LOOPS, "loops.star")
    warsh, mark = sorted(_kernels_of(m), key=lambda k: k.downto)
    W, threads, R = cf.launch_shape(n)
    for kern, call, launches, start in ((warsh, ("WARSH", n, m.table(rows=n, cols=n)), n, 1),
                                        (mark, ("MARK", n, m.table(rows=n, cols=n), m.slice(np.zeros(n, bool)),
                                                m.slice(np.ones(n, bool)), True), 1, n)):
        LAUNCHES.clear()
        m.call(*call)
        assert [lc.kernel for lc in LAUNCHES] == ["star_forall"] * launches
        assert kern.launches == launches and kern.fallbacks == 0 and list(kern.compiled) == [R]
        launch = LAUNCHES[-1]
        assert launch.grid == (n,) and launch.block == (threads,) and threads * R >= W
        # the arguments follow the kernel's C parameter list, type by type (and the PTX's widths)
        assert [fake_cupy._width(a) for a in launch.args] == [_C_WIDTH[t] for t in _c_params(kern.template)]
        assert int(launch.args[0]) == start and int(launch.args[1]) == n and int(launch.args[3]) == n


def test_launch_shape_covers_every_word():
    from starvm.targets.cuda.forall import MAX_THREADS, launch_shape
    for n in [1, 63, 64, 65, 64 * 32, 64 * 32 + 1, 64 * 1024, 64 * 1024 + 1, 10 ** 7]:
        W, threads, R = launch_shape(n)
        assert W == (n + 63) // 64 and threads % 32 == 0 and 32 <= threads <= MAX_THREADS
        assert threads * R >= W and threads * (R - 1) < W         # no thread is idle in every round


def test_launch_args_without_any_gpu_module():
    """launch_args is plain Python: the argument list for a table, a slice written bit by bit,
    a read-only slice, a boolean and an integer, in the kernel's parameter order."""
    from starvm.targets.cuda.forall import forall_template, launch_args
    m = starvm.Machine(backend="numpy", out=io.StringIO(), fuse=True)
    m.load(LOOPS, "loops.star")
    kern = next(v for v in m.ns.values() if type(v).__name__ == "ForallKernel" and v.downto)
    info = kern.info
    order = [s for s in kern.symbols if s not in info.private]
    template = forall_template(kern.loop, kern.symbols)

    class Vec:
        def __init__(self, words):
            self.v, self.n = words, 70
    tab = type("Tab", (), {"data": np.zeros((70, 2), dtype=np.uint64), "k": 70, "n": 70})()
    values = {"p": tab, "z": Vec(np.zeros(2, dtype=np.uint64)), "m": Vec(np.ones(2, dtype=np.uint64)),
              "flag": True, "n": 70}
    env = {s: values[s.name.lower()] for s in order}
    status = np.zeros(30, dtype=np.uint64)
    args, shared = launch_args(70, 70, 70, 2, status, order, info, env)
    assert [fake_cupy._width(a) for a in args] == [_C_WIDTH[t] for t in _c_params(template)]
    (z, copy), = shared                                  # Z is written bit by bit: a copy is passed
    assert z is values["z"] and copy is not z.v and any(a is copy for a in args)
    assert any(a is values["m"].v for a in args)          # M is only read: passed as it is
    assert re.search(r"int os_v_flag", template) and any(isinstance(a, np.int32) and a == 1 for a in args)


@pytest.mark.parametrize("n", [1, 5, 70])
def test_a_kernel_that_flags_an_error_falls_back_with_the_tables_restored(fake, n):
    """Every launch 'writes garbage and raises the error flag' (a stand-in for the kernel):
    CudaForallKernel must restore the tables from the snapshots and rerun the loop through
    ForallKernel, so the closure and the step counts equal the NumPy backend's."""
    cp, cb, cf = fake
    adj = np.random.default_rng(n).random((n, n)) < 2.0 / n
    got = starvm.Machine(backend=cb.CupyBackend(), out=io.StringIO(), fuse=True)
    want = starvm.Machine(backend="numpy", out=io.StringIO(), fuse=True)
    results, written = [], []
    for m in (got, want):
        m.load(LOOPS, "loops.star")
        P = m.table(adj)
        if m is got:
            def broken_kernel(launch, live=P):
                launch.args[6][0] = 1                       # the error flag (status[:1])
                for a in launch.args[7:]:
                    if a is live.data:                      # the live table, half written
                        a[...] = np.uint64(0xDEADBEEF)      # (the snapshots are only read)
                        written.append(launch)
            fake_cupy.ON_LAUNCH.append(broken_kernel)
        m.call("WARSH", n, P)
        results.append((P.to_numpy(), dict(m.stats)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]
    (kern,) = [k for k in _kernels_of(got) if not k.downto]
    assert kern.launches == n and kern.fallbacks == n and len(written) == n


# ---------------------------------------------------------------- the fused kernels run (on the CPU)
ARITH = """
proc SCALE(n: integer; var P: table; big: integer);
var i, q: integer; V: slice;
begin
  parallel for i := 1 to n do
  begin
    q := (big + i * 7) div 3 - (-i) mod 5;
    V := COL(i, P);
    if (q mod 2 = 0) and SOME(V) then COL(i, P) := not V;
    if q < 0 then V(i) := 1;
  end;
end;
"""


@pytest.mark.parametrize("big, fallbacks", [(5, 0), (-1000, 0), ((1 << 63) - 10, 1)])
def test_fused_kernels_run_on_the_cpu_equal_the_numpy_backend(fake, monkeypatch, big, fallbacks):
    """The generated kernel itself, run on the CPU (emulate.run_launch: one OS thread per GPU
    thread, one block per iteration): tables and steps by kind equal the NumPy backend's fused
    loop. Checked + - * in the kernel (the base renderer's): where big + 7 i passes 2^63 the
    kernel raises its flag instead of wrapping, and the loop reruns on ForallKernel."""
    from gpu_sources import emulate
    emulate.require()
    cp, cb, cf = fake

    def run_on_cpu(launch):
        if launch.kernel == "star_forall":
            emulate.run_launch(launch.code, launch.kernel, launch.grid, launch.block, launch.args)
    fake_cupy.ON_LAUNCH.append(run_on_cpu)
    n = 20
    start = np.random.default_rng(n).random((n, n)) < 0.3
    got = []
    for backend in ("numpy", cb.CupyBackend()):
        m = starvm.Machine(backend=backend, out=io.StringIO(), fuse=True)
        m.load(ARITH, "arith.star")
        P = m.table(start.copy())
        m.call("SCALE", n, P, big)
        got.append((np.asarray(P.to_numpy()), list(m.counts)))
    kern, = [k for k in _kernels_of(m)]
    assert kern.launches == 1 and kern.fallbacks == fallbacks
    assert np.array_equal(got[0][0], got[1][0]) and got[0][1] == got[1][1]
