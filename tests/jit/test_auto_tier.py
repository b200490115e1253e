"""The compiled tiers on the auto backend (starvm/jit/auto_tier.py): a call runs on the CPU
tier (Numba) when its tables and vectors are on the host, on the GPU tier when they are on
the device, interpreted otherwise; results, output, steps and where the tables end are the
interpreter's (--jit off) on random inputs. The emulated device (no GPU) runs everywhere;
the test with a real GPU skips only without CuPy or a device."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm.backends import get_backend
from starvm.backends.auto_backend import AutoBackend
from starvm.backends.emulated_device import EmulatedDevice
from starvm.execution.values import Bits
from conftest import cupy_or_skip
from reference.jit_differential import check_program

from reference.jit_differential import jit_cache  # noqa: E402,F401 - the module's fixture: the compiled-code cache (jit_differential.py)


# the listings under users' names (no native kernel), a routine printing, and one over two tables
PROGRAM = """
proc U_WARSHALL(n:integer; var P: table);
var X:slice(P); v,w: word; i,k: integer;
begin for k:=1 to n do
  begin X :=COL(k , P) ; w:=ROW (k,P) ;
    while SOME(X) do begin i := STEP(X) ; v:=ROW(i,P); v=v or w; ROW(i,P):=v; end ;
  end ;
end ;

proc U_WARSHALL_C(n: integer ; var P: table);
var x:word; V, W: Slice; i,k: integer;
begin for k:=1 to n do
  Begin x:=ROW(k,P); W:=COL(k,P); i = STEP (x);
    while i >0 do Begin V :=COL(i,P) ; V=V or W; COL ( i , P ) :=V ; i:=STEP(x); end;
  end;
end;

proc U_WARSHALL_ADAPT(n: integer; var P: table);
var V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin W := COL(k, P); V := COL(i, P); if V(k) = 1 then V := V or W; COL(i, P) := V; end;
end;

proc U_REPORT(var P: table; var S: slice(P));
var X: slice(P); i, c: integer;
begin
  X := COL(1, P); c := 0;
  while SOME(X) do begin i := STEP(X); c := c + 1; if c < 4 then writeln('row ', i, ' ', ROW(i, P)) end;
  S := S or X;
  writeln(c, ' ', NUMB(S));
end;

proc U_COPY(var A: table; B: table);
var j: integer;
begin for j := 1 to NROWS(B) do ROW(j, A) := ROW(j, B) end;
"""

LISTINGS = ["U_WARSHALL", "U_WARSHALL_C", "U_WARSHALL_ADAPT"]


def emulated(gpu_rows=1 << 20, gpu_bits=1 << 20):
    return AutoBackend(get_backend("numpy"), EmulatedDevice(), gpu_rows=gpu_rows, gpu_bits=gpu_bits)


def closure(adj):
    """Paths of one arc or more (plain Python model)."""
    n = adj.shape[0]
    reach = adj.copy()
    for k in range(n):
        reach[reach[:, k]] |= reach[k]
    return reach


def call(backend, jit, name, *make):
    """One call on a fresh machine: (result tables, vector results, output, steps, sides, machine)."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit=jit, native=False, out=out)
    m.load(PROGRAM, "auto.star")
    args = [f(m) for f in make]
    m.call(name, *args)
    tables = [a.to_numpy().tolist() for a in args if isinstance(a, starvm.Table)]
    vectors = [a.to_numpy().tolist() for a in args if isinstance(a, Bits)]
    sides = ["device" if a.backend is backend.dev else "host" for a in args if isinstance(a, starvm.Table)]
    return tables, vectors, out.getvalue(), m.last_call_stats, sides, m


def both(backend_of, name, *make):
    off = call(backend_of(), "off", name, *make)
    on = call(backend_of(), "on", name, *make)
    assert on[:5] == off[:5], name
    return on


def placed(m, name):
    return m.jit.routines["r_" + name.lower()]


@pytest.mark.parametrize("n", [1, 5, 63, 64, 130])
@pytest.mark.parametrize("name", LISTINGS)
def test_host_tables_run_on_the_cpu_tier(name, n):
    adj = np.random.default_rng(n).random((n, n)) < 2.0 / n
    tables, _, _, steps, sides, m = both(emulated, name, lambda m: n, lambda m: m.table(adj.copy()))
    assert np.array_equal(np.array(tables[0], bool), closure(adj))
    assert sides == ["host"]
    r = placed(m, name)
    assert r.host.compiled_calls == 1 and r.compiled_calls == 1, m.jit.report()
    assert any("on the CPU tier (Numba)" in line for line in m.jit.report())


def test_output_vectors_and_steps_on_the_cpu_tier():
    rng = np.random.default_rng(7)
    for rows, cols in ((3, 2), (70, 9), (200, 65)):
        bits = rng.random((rows, cols)) < 0.4
        mark = rng.random(rows) < 0.5
        _, vectors, out, _, _, m = both(emulated, "U_REPORT", lambda m: m.table(bits.copy()),
                                        lambda m: m.slice(mark.copy()))
        assert vectors == [mark.tolist()]            # X is empty after the STEPs: S := S or X keeps S
        assert out.splitlines()[-1] == f"{int(bits[:, 0].sum())} {int(mark.sum())}"
        assert placed(m, "U_REPORT").host.compiled_calls == 1


def test_device_tables_and_mixed_placement_run_interpreted_without_a_gpu():
    small = lambda: emulated(gpu_rows=64, gpu_bits=1 << 20)       # noqa: E731 - 64 rows or more: on the device
    adj = np.random.default_rng(3).random((70, 70)) < 0.03
    tables, _, _, _, sides, m = both(small, "U_WARSHALL_C", lambda m: 70, lambda m: m.table(adj.copy()))
    assert np.array_equal(np.array(tables[0], bool), closure(adj)) and sides == ["device"]
    r = placed(m, "U_WARSHALL_C")
    assert r.compiled_calls == 0 and "its tables are on the device" in r.why, r.why
    a, b = np.zeros((70, 3), bool), np.random.default_rng(4).random((10, 3)) < 0.5
    tables, _, _, _, sides, m = both(small, "U_COPY", lambda m: m.table(a.copy()), lambda m: m.table(b.copy()))
    assert sides == ["device", "host"] and np.array_equal(np.array(tables[0], bool)[:10], b)
    assert "both sides" in placed(m, "U_COPY").why


@pytest.mark.parametrize("n, moved", [(40, False), (50, True)])
def test_a_parallel_for_that_would_move_its_table_runs_interpreted(n, moved):
    """WARSHALL-adapt's fused loop hands the table and its snapshot to AutoBackend.place:
    2 x 40^2 bits stay under gpu_bits = 4096 (host, compiled), 2 x 50^2 reach it (the
    interpreter moves the table to the device, so the call runs interpreted)."""
    backend = lambda: emulated(gpu_rows=1 << 20, gpu_bits=4096)    # noqa: E731
    adj = np.random.default_rng(n).random((n, n)) < 2.0 / n
    tables, _, _, _, sides, m = both(backend, "U_WARSHALL_ADAPT", lambda m: n, lambda m: m.table(adj.copy()))
    assert np.array_equal(np.array(tables[0], bool), closure(adj))
    assert sides == (["device"] if moved else ["host"])
    r = placed(m, "U_WARSHALL_ADAPT")
    assert r.compiled_calls == (0 if moved else 1), m.jit.report()
    if moved:
        assert "may move a table to the device" in r.why


def test_profile_names_the_tier_of_each_call():
    m = starvm.Machine(backend=emulated(gpu_rows=64), jit="on", native=False, out=io.StringIO())
    m.load(PROGRAM, "auto.star")
    m.call("U_WARSHALL_C", 5, m.table(np.eye(5, k=1, dtype=bool)))
    m.call("U_WARSHALL_C", 70, m.table(np.eye(70, k=1, dtype=bool)))
    m.profile = True
    report = m.profile_report()
    line = next(x for x in report.splitlines() if x.strip().startswith("U_WARSHALL_C:"))
    assert "2 call(s): 1 on the CPU tier (Numba)" in line and "1 interpreted" in line, report
    assert "its tables are on the device" in line, report


@pytest.mark.parametrize("seed", [323, 269])
def test_random_programs_on_auto_agree_with_the_model(seed):
    """Generated programs (globals, local tables, functions, recursion, errors, a step
    limit) on auto with the emulated device: model, interpreter and compiled tiers agree."""
    from reference.gen import Gen, RandomSource, render
    gen = Gen(RandomSource(seed), 3, recursion_pct=20, fn_output_pct=20, error_pct=30)
    prog = gen.program()
    rec = check_program(prog, backend=emulated(), error_at=gen.error_at, limit_seed=seed)
    assert rec["problems"] == [], "\n".join(rec["problems"]) + "\n" + render(prog)
    assert rec["ran_compiled"], rec


def test_real_gpu_runs_host_calls_on_numba_and_device_calls_on_the_gpu_tier():
    """With a GPU: tables of 64 rows or more on the device (GPU tier), smaller ones on the
    host (CPU tier); every result and step count equals --jit off's."""
    device = cupy_or_skip()
    backend = lambda: AutoBackend(get_backend("numpy"), device, gpu_rows=64, gpu_bits=1 << 30)   # noqa: E731
    tiers = set()
    for n in (5, 63, 64, 130):
        adj = np.random.default_rng(n).random((n, n)) < 2.0 / n
        for name in ("U_WARSHALL", "U_WARSHALL_C"):
            tables, _, _, _, sides, m = both(backend, name, lambda m: n, lambda m: m.table(adj.copy()))
            assert np.array_equal(np.array(tables[0], bool), closure(adj))
            r = placed(m, name)
            assert r.compiled_calls == 1, m.jit.report()
            tiers.add("gpu" if r.gpu is not None and r.gpu.compiled_calls else "host")
            assert sides == (["device"] if n >= 64 else ["host"])
    assert tiers == {"gpu", "host"}
