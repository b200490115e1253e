"""The GPU tier's kernels on CuPy ranks (docs/scale.md, "Compiled code on GPU ranks"): a routine
or main-block part runs as one kernel over each rank's rows, its cross-rank steps (SOME, NUMB,
FND, STEP, FRST, a slice's bit, `=` of slices, ROW(i, T), a slice made whole, the Ctrl-C poll)
posted to the rank's host while it runs (targets/cuda/ranks.py, jit/cuda_ranks.py,
targets/mpi/mailbox.py).

Without a GPU: the rank kernels' text (the single GPU's unchanged), NVRTC compiling one, what is
refused on ranks, and whole runs on the emulated device (the kernels' CUDA C on CPU threads, the
mailbox in shared memory) of two ranks under mpiexec (blocks of 64 rows of a 200-row table: 128
and 72 rows, the grid path): errors, output and steps equal to the interpreter on NumPy, every
routine and part compiled (the rank kernels' CPU builds and PTX are kept on disk, shared by the
ranks: tests/gpu_sources). On a real GPU per rank: ``test_gpu_ranks_on_gpus`` (skipped without
two GPUs).
"""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

import starvm
from starvm.targets.common import Unsupported

BITS = "".join("1" if (i * 13) % 5 < 2 else "0" for i in range(200))
PROGRAM = f"""var mode: integer;
var T, U: table(200, 10);
    X: slice(T);
    i, s, n: integer;
    w: word(T);

procedure WORK(var T, U: table; var X: slice(T); var s, n: integer);
var Y, Z: slice(T); i, j: integer;
begin
  s := 0; n := 0;
  while SOME(X) do
  begin
    i := STEP(X);
    n := n + NUMB(X);
    ROW(i, U) := ROW(i, T);
    s := s + i * NUMOF(ROW(i, U));
    if mode = 1 then if i > 150 then s := s + NUMOF(ROW(i + 60, T));
  end;
  writeln('s=', s, ' n=', n);
  Y := COL(1, T) and not COL(3, U);
  writeln(Y);
  writeln(FND(Y), ' ', NUMB(Y), ' ', Y(130), ' ', Y(5), ' ', SOME(Y));
  Y(130) := 1; Y(131) := 0; Y(2) := 1;
  Z := FRST(Y);
  writeln(FND(Z), ' ', Z = Y, ' ', Z <> Y, ' ', CONVERT(Z));
  SET(X);
  writeln(NUMB(X));
  X := not Y;
  writeln(NUMB(X), ' ', X = Y, ' ', X <> not Y);
  Z := Y xor BITS('{BITS}');
  writeln(NUMB(Z), ' ', FND(Z));
  Z := Y and COL(4, T) and COL(6, T);
  while SOME(Z) do write(' ', STEP(Z));
  writeln;
  parallel for j := 1 to 9 do COL(j, U) := COL(j, U) or COL(j + 1, T);
  Y := COL(2, T);
  for j := 1 to 9 do
    if j mod 2 = 0 then Y := Y and not COL(j, T) else Y := Y or (COL(j + 1, U) and COL(j, T));
  writeln(NUMB(Y), ' ', Y);
  i := 0;
  for j := 1 to 20 do i := i + j * Y(j * 10);
  writeln('i=', i);
end;

begin
  for i := 1 to 200 do
  begin
    SETNUM((i * 37) mod 1024, w);
    ROW(i, T) := w;
    if (i mod 17 = 0) or (i mod 23 = 0) then X(i) := 1;
  end;
  WORK(T, U, X, s, n);
end.
"""


def runs(backend, jit: str, modes=(1, 0)) -> list:
    """PROGRAM run in each mode in turn on one machine (its tables kept from run to run, as on
    the reference machine): [{out, err, steps}] (the steps counted so far)."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit=jit, out=out)
    m.load(PROGRAM, "ranks.star")
    got = []
    for mode in modes:
        m.globals["mode"] = mode
        err = ""
        try:
            m.run_main()
        except starvm.StarError as e:
            err = e.render()
        got.append({"out": out.getvalue(), "err": err, "steps": list(m.counts)})
        out.seek(0)
        out.truncate()
    return m, got


def _bodies(text: str = PROGRAM):
    from gpu_sources.corpus import routine_bodies
    return routine_bodies(text, "ranks.star")


# ---------------------------------------------------------------------- the kernels' text
def test_rank_kernels_post_their_cross_rank_steps_and_the_single_gpu_text_is_unchanged():
    from starvm.targets.cuda import ranks
    from starvm.targets.cuda.prelude import PRELUDE
    from starvm.targets.cuda.routine import instance, render
    bodies = _bodies()
    one, ranked = render(bodies, "r_work"), render(bodies, "r_work", ranks=True)
    assert not one.ranks and ranked.ranks and PRELUDE in one.source
    assert "RANKS" not in one.source and "rk_" not in one.source and "c_.mb" not in one.source
    body = ranked.source.split("__device__ __forceinline__ void f_r_work(")[1]
    # ROW reads broadcast by their owner; the slice printed and CONVERTed all-gathered; the STEP
    # loop takes the ranks' first 1 each iteration (no walk of a staged slice)
    assert body.count("rk_row_get(c_, ") == 3 and body.count("rk_gather(c_, ") == 3
    assert "scan_next(" not in body and "scan_next(" in one.source.split("void f_r_work(")[1]
    assert "rk_nw(" in body and "i64* mb" in ranked.source and "c_.mb = mb;" in ranked.source
    # each rank's instance: its rank, the ranks and the rows of a block unit
    text = instance(ranked, 1, 1, 1, ranks=(1, 3, 64))
    assert text.startswith("#define RK_RANK 1LL\n#define RK_SIZE 3LL\n#define RK_ALIGN 64LL\n")
    with pytest.raises(ValueError):
        instance(ranked, 1, 1, 1)
    with pytest.raises(ValueError):
        instance(one, 1, 1, 1, ranks=(0, 2, 64))
    with pytest.raises(ValueError):
        ranks.instance_defines(0, 2, 1)          # blocks of one row would split words
    # prelude.cu's changes (ranks.cu) all applied: no barrier left alone on Ctrl-C, the grid's
    # reductions posted, positions made global
    pre = ranks.prelude()
    assert "intr_flag(c)) { stop = 2" not in pre and pre.count("rk_post(c, ") == 3
    assert pre.count("u64 grid_red(Ctx& c, u64 v, int kind)") == 2       # declared, defined once
    with pytest.raises(AssertionError):
        ranks.apply(PRELUDE, "//@ replace: template <int N> void no_such(\n")


@pytest.mark.parametrize("body, why", [
    ("parallel for j := 1 to 4 do if SOME(COL(j, T)) then COL(j, T) := not COL(j, T);", "inside parallel for on GPU ranks"),
    ("writeln(T);", "writing a table on GPU ranks"),
])
def test_what_crosses_ranks_where_a_kernel_cannot_post_is_refused(body, why):
    from starvm.targets.cuda.routine import render
    text = f"procedure P(var T: table);\nvar j: integer;\nbegin\n  {body}\nend;\nbegin end.\n"
    bodies = _bodies(text)
    render(bodies, "r_p")                         # one GPU compiles it
    with pytest.raises(Unsupported, match=why):
        render(bodies, "r_p", ranks=True)


def test_recursion_and_local_tables_stay_interpreted_on_ranks():
    from starvm.targets.cuda.routine import render
    text = ("function F(k: integer): integer;\nbegin if k <= 1 then F := 1 else F := k * F(k - 1) end;\n"
            "procedure L(n: integer);\nvar A: table(n, 3);\nbegin COL(1, A) := not COL(2, A) end;\nbegin end.\n")
    bodies = _bodies(text)
    with pytest.raises(Unsupported, match="recursion on GPU ranks"):
        render(bodies, "r_f", ranks=True)
    with pytest.raises(Unsupported, match="local table on GPU ranks"):
        render(bodies, "r_l", ranks=True)


# ---------------------------------------------------------------------- whole runs on the emulated device
def _mpiexec_runs(tmp_path, how: str) -> dict:
    from test_mpi import mpirun
    prog, dest = tmp_path / "ranks.star", tmp_path / "got.json"
    prog.write_text(PROGRAM)
    driver = Path(__file__).with_name("gpu_ranks_driver.py")
    rc, out, err = mpirun(2, [sys.executable, str(driver), str(dest), str(prog), "1", "0", how], timeout=600)
    assert rc == 0, err[-3000:]
    return json.loads(dest.read_text())


def test_two_ranks_run_the_rank_kernels_as_the_interpreter(tmp_path):
    """mpiexec -n 2 on the emulated device, the grid path: each rank's kernels over its 128 or
    72 rows, their posts answered by MPI between the ranks, the output records' room grown alike
    on both; every rank fails, prints and counts as the interpreter does."""
    from gpu_sources.emulate import require
    require()
    got = _mpiexec_runs(tmp_path, "--grid")
    want = runs("numpy", "off")[1]
    assert got["ranks"] == 2
    for rank in got["runs"]:
        assert [{k: run[k] for k in ("out", "err", "steps")} for run in rank["runs"]] == want
        assert rank["compiled"] == ["WORK", "main block"] and rank["kinds"] == ["RankGpuRoutine"]
        assert rank["posts"] > 100 and rank["ob_launches"] >= 1


def test_gpu_ranks_on_gpus(tmp_path):
    """On one GPU per rank (two): the same runs on CuPy (real kernels, NVRTC, the mailbox in
    page-locked memory the kernels read and write through unified addressing)."""
    from conftest import gpu_count
    if gpu_count() < 2:
        pytest.skip("needs two GPUs (one per rank)")
    got = _mpiexec_runs(tmp_path, "--gpu")
    want = runs("numpy", "off")[1]
    for rank in got["runs"]:
        assert [{k: run[k] for k in ("out", "err", "steps")} for run in rank["runs"]] == want
        assert rank["compiled"] == ["WORK", "main block"] and rank["kinds"] == ["RankGpuRoutine"]
