"""The GPU tier's kernels run on the CPU (tests/gpu_sources/emulate.py: the generated CUDA C
compiled as C++ with every GPU thread an OS thread) on grids of several blocks, against the
interpreter: tables, vector results and steps by kind; the pivot loop's one barrier a pivot
(barriers counted) and its failures, also under step limits that stop the kernel before the
failure is checked. No GPU needed; tests/jit/test_gpu_tier.py runs the same kernels on one."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

import starvm
from gpu_sources import emulate
from gpu_sources.corpus import renamed, routine_bodies
from starvm.targets.cuda.routine import render
from starvm.targets.cuda.prelude import E_RERUN
from starvm.targets.layout import E

ROOT = Path(__file__).resolve().parents[2]
PIVOTS = (ROOT / "tests" / "gpu_sources" / "routines" / "pivots.star").read_text()
WHOLE = (ROOT / "tests" / "gpu_sources" / "routines" / "whole.star").read_text()
LIBRARY = renamed((ROOT / "stdlib" / "warshall.star").read_text() + (ROOT / "stdlib" / "search.star").read_text())


def _interpreted(text, name, args, limit=None):
    m = starvm.Machine(backend="numpy", jit="off", native=False, out=io.StringIO(), max_steps=limit)
    m.load(text.replace("begin end.", ""), "emu.star")
    values = []
    for a in args:
        if isinstance(a, tuple):              # ("slice" | "word", bits)
            values.append(m.slice(a[1]) if a[0] == "slice" else m.word(a[1]))
        elif isinstance(a, np.ndarray):
            values.append(m.table(a.copy()))
        else:
            values.append(a)
    err = None
    try:
        m.call(name, *values)
    except starvm.StarError as e:
        err = e.render()
    return [v.to_numpy() if hasattr(v, "to_numpy") else v for v in values], list(m.counts), err


def _plan(text, pyname):
    return render(routine_bodies(text if "begin end." in text else text + "\nbegin end.\n", "emu.star"), pyname)


def _graph(n):
    rng = np.random.default_rng(n)
    return rng.random((n, n)) < (3.0 / n)


@pytest.mark.parametrize("name, extra, n, blocks, threads", [
    ("PIV_DOWN", (), 23, 2, 32), ("PIV_GROW", (), 23, 2, 32), ("PIV_FAIL", (0,), 23, 2, 32),
    ("U_WARSHALL_adapt", (), 70, 3, 32)])
def test_pivot_loops_equal_the_interpreter_with_one_barrier_a_pivot(name, extra, n, blocks, threads):
    emulate.require()
    text = LIBRARY if name.startswith("U_") else PIVOTS
    adj = _graph(n)
    run = emulate.run_kernel(_plan(text, "r_" + name.lower()), [n, *extra, adj], blocks, threads, RP=2)
    (*_, want), counts, err = _interpreted(text, name, [n, *extra, adj])
    assert err is None and run.code == 0 and not run.rerun
    assert np.array_equal(run.tables[0], want)
    assert run.counts == counts
    assert run.barriers == n + 1          # one a pivot and one at the loop's end (or its empty pivots')


@pytest.mark.parametrize("name, n, blocks, threads, RP, switches", [
    ("U_WARSHALL_adapt", 70, 3, 32, 2, ()),                        # 70 iterations on 3 warps, 3 words a lane
    ("U_WARSHALL_adapt", 65, 2, 64, 2, ()),                        # more warps than columns' worth of work
    ("U_WARSHALL_adapt", 1, 2, 32, 1, ()),                         # one row: one iteration, 63 warps idle
    ("PIV_GROW", 23, 2, 32, 1, ()),                                # bounds that change from pivot to pivot
    ("PIV_DOWN", 23, 2, 32, 1, ("STORE_ALL",)),                    # every word stored, as before
    ("U_WARSHALL_adapt", 63, 3, 32, 2, ("GEN_BARRIER", "WARP_LOADS"))])   # the barrier and pivot loads of before
def test_own_columns_and_stores_of_changed_words_equal_the_interpreter(name, n, blocks, threads, RP, switches):
    """Each iteration's own column loaded at its top, COL(i, P) := V storing only the words
    that changed, the pivot column loaded once a block, and the barrier, stores and loads of
    before (kept for measuring)."""
    emulate.require()
    text = LIBRARY if name.startswith("U_") else PIVOTS
    adj = _graph(n)
    run = emulate.run_kernel(_plan(text, "r_" + name.lower()), [n, adj], blocks, threads, RP=RP, switches=switches)
    (*_, want), counts, err = _interpreted(text, name, [n, adj])
    assert err is None and run.code == 0 and not run.rerun
    assert np.array_equal(run.tables[0], want) and run.counts == counts
    assert run.barriers == n + 1


@pytest.mark.parametrize("name, n, blocks, threads, RP, ownc, switches", [
    ("PIV_SWAY", 40, 2, 32, 1, 2, ()),             # starts move and come back: kept columns loaded again
    ("PIV_SWAY", 41, 3, 32, 2, -1, ()),            # all of a warp's iterations kept (8 slots)
    ("PIV_GROW", 23, 2, 32, 1, 1, ()),             # a start that moves every pivot, one slot kept
    ("PIV_DOWN", 23, 2, 32, 1, 3, ()),             # a descending loop, the range shorter than n
    ("U_WARSHALL_adapt", 70, 3, 32, 2, 1, ()),     # 24 iterations a warp: 1 kept, 23 loaded every pivot
    ("U_WARSHALL_adapt", 70, 3, 32, 2, 0, ()),     # none kept
    ("U_WARSHALL_adapt", 70, 3, 32, 2, -1, ("OWN_LOADS",))])
def test_own_columns_kept_across_pivots_equal_the_interpreter(name, n, blocks, threads, RP, ownc, switches):
    """A pivot loop's warps keep their iterations' own columns in registers from pivot to
    pivot (parallel_for.keeps_own_columns), OWNC slots a warp, the rest loaded; a moved start
    (PIV_SWAY, PIV_GROW) loads every slot again."""
    emulate.require()
    text = LIBRARY if name.startswith("U_") else PIVOTS
    adj = _graph(n)
    run = emulate.run_kernel(_plan(text, "r_" + name.lower()), [n, adj], blocks, threads, RP=RP,
                             switches=switches, ownc=ownc)
    (*_, want), counts, err = _interpreted(text, name, [n, adj])
    assert err is None and run.code == 0 and not run.rerun
    assert np.array_equal(run.tables[0], want) and run.counts == counts
    assert run.barriers == n + 1


@pytest.mark.parametrize("name, n, RP, lanes, ownc", [
    ("U_WARSHALL_adapt", 70, 1, 16, -1),           # two iterations a warp at once
    ("U_WARSHALL_adapt", 130, 1, 8, 2),            # four, 3 words a lane, 2 kept
    ("PIV_SWAY", 40, 1, 16, 2),
    ("PIV_GROW", 23, 1, 8, 1),
    ("PIV_DOWN", 90, 2, 16, 0)])
def test_pivot_loops_on_groups_of_lanes_equal_the_interpreter(name, n, RP, lanes, ownc):
    """Iterations on groups of 16 or 8 lanes (LANES), several a warp at once, each group's
    control flow its own."""
    emulate.require()
    text = LIBRARY if name.startswith("U_") else PIVOTS
    adj = _graph(n)
    run = emulate.run_kernel(_plan(text, "r_" + name.lower()), [n, adj], 2, 64, RP=RP, ownc=ownc, lanes=lanes)
    (*_, want), counts, err = _interpreted(text, name, [n, adj])
    assert err is None and run.code == 0 and not run.rerun
    assert np.array_equal(run.tables[0], want) and run.counts == counts
    assert run.barriers == n + 1


GROUPS = """
proc GRP(n, k: integer; var P: table);
var V, W: slice; i, c: integer;
begin
  parallel for i := 1 to n do
  begin
    V := COL(i, P);
    W := COL(k, P);
    c := NUMB(V);
    if c > 40 then V := V or W
    else if SOME(V and W) then V := V and not W;
    if V(i + c) = 1 then V(2 * i) := 0;
    if V = W then V(i) := 1;
    COL(i, P) := V;
  end;
end;
begin end.
"""


@pytest.mark.parametrize("rows, lanes, RP", [(300, 16, 1), (300, 8, 1), (1100, 16, 2), (1100, 8, 3),
                                             (1100, 32, 1), (18, 8, 1)])
def test_reductions_and_branches_on_groups_of_lanes_equal_the_interpreter(rows, lanes, RP):
    """NUMB, SOME, a bit test and `=` of slices (shuffles among a group's lanes alone) under
    branches that differ between the groups of one warp; 18 rows: iterations past 18 fail
    (V(i + c)), so the call runs again interpreted."""
    emulate.require()
    rng = np.random.default_rng(rows + lanes)
    P = rng.random((rows, 20)) < rng.random(20) * 0.3
    run = emulate.run_kernel(_plan(GROUPS, "r_grp"), [20, 3, P], 2, 64, RP=RP, lanes=lanes)
    (*_, want), counts, err = _interpreted(GROUPS, "GRP", [20, 3, P])
    if err is not None:
        assert "bit index" in err and run.code == E_RERUN
        return
    assert run.code == 0 and np.array_equal(run.tables[0], want) and run.counts == counts


def test_own_columns_are_kept_only_where_one_table_is_read_and_written():
    """Kept where the body reads its own column of the one table it writes (WARSHALL-adapt);
    not where it writes a second table, which may be the same one under another name."""
    assert "occ_[j_]" in _plan(LIBRARY, "r_u_warshall_adapt").source
    two = """
proc TWO(n: integer; var P, Q: table);
var V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin
      W := COL(k, P);
      V := COL(i, P);
      V := V or W;
      COL(i, Q) := V;
    end;
end;
begin end.
"""
    src = _plan(two, "r_two").source
    assert "a pivot loop" in src and "occ_[j_]" not in src


def test_stores_skip_only_unchanged_words_of_the_one_table_written():
    """The renderer stores changed words only where the body reads its own column of the one
    table it writes; a body writing two tables (maybe one under two names) stores all."""
    body = _plan(LIBRARY, "r_u_warshall_adapt").source.split("void f_r_u_warshall_adapt(")[1]
    assert "d_col_set_changed(" in body
    two = """
proc TWO(n: integer; var P, Q: table);
var V: slice; i: integer;
begin
  parallel for i := 1 to n do
  begin
    V := COL(i, P);
    COL(i, P) := V;
    COL(i, Q) := V;
  end;
end;
begin end.
"""
    body = _plan(two, "r_two").source.split("void f_r_two(")[1]
    assert "d_col_set_changed(" not in body and "d_col_set(" in body
    from starvm.targets.cuda.routine import instance
    with pytest.raises(ValueError, match="unknown switches"):
        instance(_plan(two, "r_two"), 1, 1, 1, 0, ("STORE_NONE",))


def test_two_names_of_one_table_written_in_parallel_for_equal_the_interpreter():
    emulate.require()
    text = """
proc TWO(n: integer; var P, Q: table);
var V: slice; i: integer;
begin
  parallel for i := 1 to n do
  begin
    V := COL(i, P);
    V := V or COL(1, Q);
    COL(i, P) := V;
    COL(i, Q) := V;
  end;
end;
begin end.
"""
    n = 70
    adj = _graph(n)
    run = emulate.run_kernel(_plan(text, "r_two"), [n, adj, adj.copy()], 2, 32, RP=2)
    (_, want_p, want_q), counts, err = _interpreted(text, "TWO", [n, adj, adj.copy()])
    assert err is None and run.code == 0
    assert np.array_equal(run.tables[0], want_p) and np.array_equal(run.tables[1], want_q)
    assert run.counts == counts


@pytest.mark.parametrize("limit, code, rerun", [(None, E_RERUN, True), (6, E.STEPS, False), (7, E.STEPS, True),
                                                (8, E.STEPS, True)])
def test_a_failing_pivot_is_rerun_even_when_the_step_limit_comes_first(limit, code, rerun):
    """PIV_FAIL(n, 3, P) fails in pivot 3 (steps 6 and 7 are its loop and parallel for): the next
    barrier stops the kernel (E_RERUN), or under a limit of 7 or 8 the step limit does, in pivot
    4, with the rerun flag set; the host then reruns the call interpreted, which reports the
    failure. Under 6 the limit comes before the failure: no rerun."""
    emulate.require()
    n = 40
    adj = _graph(n)
    run = emulate.run_kernel(_plan(PIVOTS, "r_piv_fail"), [n, 3, adj], 2, 32,
                             left=(1 << 62) if limit is None else limit)
    assert (run.code, run.rerun) == (code, rerun)
    _, _, err = _interpreted(PIVOTS, "PIV_FAIL", [n, 3, adj], limit)
    assert ("step limit" if limit == 6 else "bit index") in err


@pytest.mark.parametrize("two_barriers", [False, True])
def test_two_barriers_a_pivot_still_run(monkeypatch, two_barriers):
    """STARVM_GPU_PIVOT_LOOP=0 renders the pivot loop as before (two barriers a pivot)."""
    emulate.require()
    if two_barriers:
        monkeypatch.setenv("STARVM_GPU_PIVOT_LOOP", "0")
    n = 23
    adj = _graph(n)
    plan = _plan(LIBRARY, "r_u_warshall_adapt")
    run = emulate.run_kernel(plan, [n, adj], 2, 32)
    (*_, want), counts, _ = _interpreted(LIBRARY, "U_WARSHALL_adapt", [n, adj])
    assert np.array_equal(run.tables[0], want) and run.counts == counts
    assert run.barriers == (2 * n if two_barriers else n + 1)


@pytest.mark.parametrize("name", ["U_WARSHALL_C"])
def test_row_reads_balloted_by_warps_equal_the_interpreter(name):
    emulate.require()
    n = 100
    adj = _graph(n)
    run = emulate.run_kernel(_plan(LIBRARY, "r_" + name.lower()), [n, adj], 2, 64, KW=2)
    (*_, want), counts, err = _interpreted(LIBRARY, name, [n, adj])
    assert err is None and run.code == 0
    assert np.array_equal(run.tables[0], want) and run.counts == counts


@pytest.mark.parametrize("name", ["U_MIN", "U_MATCH"])
@pytest.mark.parametrize("blocks, threads, R", [(3, 32, 2)])
def test_search_bodies_equal_the_interpreter(name, blocks, threads, R):
    """MIN (a grid reduction a column) and MATCH (no grid barrier: an ordinary launch on the GPU)."""
    emulate.require()
    rows, rng = 300, np.random.default_rng(3)
    vals = rng.integers(0, 256, rows)
    table = np.array([[(v >> (7 - j)) & 1 for j in range(8)] for v in vals], bool)
    X = rng.random(rows) < 0.7
    plan = _plan(LIBRARY, "r_" + name.lower())
    assert plan.barrier_free == (name == "U_MATCH")
    word = table[rows // 2].copy()
    args = [table, X] + ([word] if name == "U_MATCH" else []) + [np.zeros(rows, bool)]
    run = emulate.run_kernel(plan, args, blocks, threads, R=R)
    star = [table, ("slice", X)] + ([("word", word)] if name == "U_MATCH" else []) + [("slice", np.zeros(rows, bool))]
    values, counts, err = _interpreted(LIBRARY, name, star)
    assert err is None and run.code == 0
    assert np.array_equal(run.vectors[0], values[-1]) and run.counts == counts


FUSED = """
proc FUSE(T: table; X: slice(T); i, j: integer; var A, B, C, D: slice(T));
begin
  A := X and not COL(i, T);
  B := COL(i, T) and X;
  C := (COL(i, T) or not X) xor COL(j, T);
  D := COL(i, T) and COL(j, T) and not (X or A);
end;

proc FERR(T, U: table; X: slice(T); i: integer; var A: slice(T));
var Y: slice;
begin
  A := X and not COL(i, T);
  if i = 1 then A := Y and COL(1, T);
  if i = 2 then A := A and COL(1, U);
  if i = 3 then A := COL(1, U) and not COL(2, U);
end;
begin end.
"""


@pytest.mark.parametrize("switches", [(), ("UNFUSED",)])
@pytest.mark.parametrize("rows, blocks, threads, R", [(1, 2, 32, 1), (65, 2, 32, 1), (300, 3, 32, 2),
                                                      (2100, 1, 32, 2)])
def test_fused_slice_logic_equals_the_interpreter(rows, blocks, threads, R, switches):
    """Slice logic with COL reads computed word by word in one loop (expressions.fused_slice; an
    AND reads the words of its loading operand only where the other's word is not 0), on
    sparse and dense slices, lengths that are not multiples of 64, threads past the last word,
    and the operation-by-operation code of before (UNFUSED)."""
    emulate.require()
    rng = np.random.default_rng(rows)
    table = rng.random((rows, 5)) < 0.5
    plan = _plan(FUSED, "r_fuse")
    assert "#if UNFUSED" in plan.source.split("void f_r_fuse(")[1].split("void f_")[0]
    for density in (0.05, 0.9):
        X = rng.random(rows) < density
        zeros = [np.zeros(rows, bool)] * 4
        run = emulate.run_kernel(plan, [table, X, 2, 5, *zeros], blocks, threads, R=R, switches=switches)
        values, counts, err = _interpreted(FUSED, "FUSE", [table, ("slice", X), 2, 5]
                                           + [("slice", z) for z in zeros])
        assert err is None and run.code == 0
        for got, want in zip(run.vectors, values[-4:]):
            assert np.array_equal(got, want)
        assert run.counts == counts


def _random_logic(rng, depth: int, names: list) -> str:
    """A random slice expression: and/or/xor/not over slice variables and COL reads (constant
    and parameter indices)."""
    if depth == 0 or rng.random() < 0.25:
        leaf = rng.integers(3)
        if leaf == 0:
            return str(rng.choice(names))
        return f"COL({rng.integers(1, 6) if leaf == 1 else 'i'}, T)"
    if rng.random() < 0.2:
        return f"not ({_random_logic(rng, depth - 1, names)})"
    op = rng.choice(["and", "and", "or", "xor"])
    return f"({_random_logic(rng, depth - 1, names)}) {op} ({_random_logic(rng, depth - 1, names)})"


def test_random_fused_slice_logic_equals_the_interpreter():
    """Twelve random assignments of slice logic (nested and/or/xor/not, COL reads at constant
    and parameter indices, each reading the ones before), one kernel, on sparse and dense
    slices: every result and the steps by kind as the interpreter's."""
    emulate.require()
    rng = np.random.default_rng(1234)
    outs = ["A", "B", "C", "D"]
    lines = []
    for k in range(12):
        lines.append(f"  {outs[k % 4]} := {_random_logic(rng, 3, ['X', 'Z'] + outs[:max(1, k % 4)])};")
    text = ("proc RND(T: table; X, Z: slice(T); i: integer; var A, B, C, D: slice(T));\nbegin\n"
            + "\n".join(lines) + "\nend;\nbegin end.\n")
    plan = _plan(text, "r_rnd")
    assert plan.source.count("#if UNFUSED") >= 10
    rows = 700
    table = rng.random((rows, 5)) < 0.5
    for density in (0.03, 0.6):
        X, Z = rng.random(rows) < density, rng.random(rows) < 0.5
        zeros = [np.zeros(rows, bool)] * 4
        run = emulate.run_kernel(plan, [table, X, Z, 3, *zeros], 2, 64, R=1)
        values, counts, err = _interpreted(text, "RND", [table, ("slice", X), ("slice", Z), 3]
                                           + [("slice", z) for z in zeros])
        assert err is None and run.code == 0
        for got, want in zip(run.vectors, values[-4:]):
            assert np.array_equal(got, want)
        assert run.counts == counts


@pytest.mark.parametrize("switches", [(), ("UNFUSED",)])
@pytest.mark.parametrize("i", [9, 1, 2, 3])
def test_failures_in_fused_slice_logic_equal_the_interpreters(i, switches):
    """A COL index out of range, an unassigned operand, operands of different lengths and a
    result of the wrong length inside fused slice logic: the interpreter's message, position
    and steps."""
    from starvm.jit import errors
    emulate.require()
    rng = np.random.default_rng(i)
    table, other = rng.random((130, 4)) < 0.5, rng.random((70, 4)) < 0.5
    X = rng.random(130) < 0.5
    plan = _plan(FUSED, "r_ferr")
    run = emulate.run_kernel(plan, [table, other, X, i, np.zeros(130, bool)], 2, 32, R=2, switches=switches)
    m = starvm.Machine(backend="numpy", jit="off", native=False, out=io.StringIO())
    m.load(FUSED.replace("begin end.", ""), "emu.star")
    with pytest.raises(starvm.StarError) as want:
        m.call("FERR", m.table(table), m.table(other), m.slice(X), i, m.slice(np.zeros(130, bool)))
    got = errors.star_error(run.status, plan.lowered, None)
    assert run.code == {9: E.COL_INDEX, 1: E.UNASSIGNED, 2: E.MISMATCH, 3: E.ASG_LEN}[i]
    assert (got.message, str(got.loc)) == (want.value.message, str(want.value.loc))
    assert run.counts == list(m.counts)


def test_fused_slice_logic_reads_a_column_only_under_a_nonzero_word():
    """MIN's `Y := Z and not COL(j, T)`: one loop, the column's word loaded inside `if (z != 0)`,
    no vector per operation (d_col_get, d_not, d_logic only in the UNFUSED branch); with
    STARVM_GPU_FUSE=0 the code of before alone."""
    body = _plan(LIBRARY, "r_u_min").source.split("void f_r_u_min(")[1].split("extern")[0]
    fused = body.split("#else")[1].split("#endif")[0]
    assert "if (fx" in fused and "ldt(fc" in fused
    assert not any(f in fused for f in ("d_col_get", "d_not", "d_logic"))


def test_without_fusion_the_code_of_before(monkeypatch):
    monkeypatch.setenv("STARVM_GPU_FUSE", "0")
    body = _plan(LIBRARY, "r_u_min").source.split("void f_r_u_min(")[1]
    assert "UNFUSED" not in body and "d_col_get(" in body and "d_logic(" in body


@pytest.mark.parametrize("text, pyname", [(LIBRARY, "r_u_match"), (LIBRARY, "r_u_min"),
                                          (LIBRARY, "r_u_warshall_adapt"), (PIVOTS, "r_piv_fail")])
def test_launch_arguments_match_the_kernel_parameters(text, pyname):
    """GpuRoutine.kernel_args (no GPU: NumPy arrays stand for device ones) gives the compiled
    kernel as many arguments as its PTX entry takes, each of the width it takes."""
    from types import SimpleNamespace
    from gpu_sources import nvrtc
    from gpu_sources.fake_cupy import _width
    from starvm.targets.cuda.routine import KERNEL_NAME, instance
    from starvm.jit.cuda_runtime import GpuRoutine
    from starvm.types import T
    nvrtc.require()
    plan = _plan(text, pyname)
    converted = []
    for sym in list(plan.params) + list(plan.globals):
        if sym.type is T.TABLE:
            converted.append(SimpleNamespace(data=np.zeros((3, 2), np.uint64), n=100, k=3))
        elif sym.type.is_vector:
            converted.append((np.zeros(2, np.uint64), 100))
        else:
            converted.append(7)
    routine = GpuRoutine.__new__(GpuRoutine)
    routine.plan = plan
    a = np.zeros(4, np.int64)
    args = routine.kernel_args(converted, a, a, a.view(np.uint64), 2, 1 << 62, a.view(np.uint64))
    params = nvrtc.compile_ptx(instance(plan, 1, 2, 4), "k.cu", ("-std=c++14",)).entry(KERNEL_NAME)
    assert [_width(x) for x in args] == params


def test_changed_words_past_a_lanes_first_are_stored():
    """2100 rows (33 words: lane 0 holds words 0 and 32): COL(i, P) := V stores the words that
    changed in every place a lane holds, the column's tail word too."""
    emulate.require()
    text = """
proc OR9(n: integer; var P: table);
var V: slice; i: integer;
begin
  parallel for i := 1 to n do
  begin
    V := COL(i, P);
    V := V or COL(9, P);
    COL(i, P) := V;
  end;
end;
begin end.
"""
    rows = 2100
    rng = np.random.default_rng(21)
    table = rng.random((rows, 9)) < 0.3
    run = emulate.run_kernel(_plan(text, "r_or9"), [8, table], 2, 64, RP=2)
    (_, want), counts, err = _interpreted(text, "OR9", [8, table])
    assert err is None and run.code == 0
    assert np.array_equal(run.tables[0], want) and run.counts == counts
    assert not np.array_equal(want, table)


# ---------------------------------------------------------------- the host side of a call, without a GPU
MATCH_TEXT = """
proc MY_MATCH(T: table; X: slice(T); v: word(T); var Z: slice(T));
var j: integer;
begin
  Z := X;
  for j := 1 to NCOLS(T) do
    if v(j) = 1 then Z := Z and COL(j, T)
    else Z := Z and not COL(j, T);
end;
"""


@pytest.mark.parametrize("rows", [1, 63, 64, 200])
def test_host_side_of_a_call_resets_the_status_block_and_reads_back_each_call(monkeypatch, rows):
    """GpuRoutine.run on the stand-in for CuPy (tests/gpu_sources/fake_cupy.py: the launch's
    arguments checked against the kernel's parameters in the PTX). A model kernel writes what
    the interpreter computed (MATCH's rows, steps by kind) and dirties the whole status block:
    each call's kernel still finds the block as the template has it (one block kept between
    calls, reset by a device copy before each launch), and the machine gets each call's own
    result and steps."""
    from gpu_sources import fake_cupy
    from gpu_sources.fake_cupy import fake_cupy_installed
    from starvm.ir.ops import BASE_OPS
    from starvm.jit import cuda_runtime
    from starvm.targets.layout import S_LEFT, STATUS_SIZE
    rng = np.random.default_rng(rows)
    table = rng.random((rows, 9)) < 0.5
    calls = []
    for c in range(3):
        key = table[rng.integers(rows)] if c != 1 else rng.random(9) < 0.5
        (_, _, _, want), counts, err = _interpreted(MATCH_TEXT + "begin end.", "MY_MATCH",
                                                    [table, ("slice", np.ones(rows, bool)), ("word", key),
                                                     ("slice", np.zeros(rows, bool))])
        assert err is None
        calls.append((key, want, counts))
    nk = len(BASE_OPS)
    seen = []
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
        emulate.device_copies(monkeypatch)
        monkeypatch.setattr(cuda_runtime, "_SMS", [132])
        m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
        m.load(MATCH_TEXT, "host.star")
        T, X = m.table(table), m.slice(np.ones(rows, bool))

        def model(launch):
            io_, left, vout = launch.args[-7], int(launch.args[-2]), launch.args[-1]
            key, want, counts = calls[len(seen)]
            fresh = np.zeros(io_.size, np.int64)
            fresh[-4:-1] = -1
            seen.append(np.array_equal(np.asarray(io_), fresh))
            io_[:] = 7                              # what a kernel leaves: barrier count, ring, ...
            io_[:STATUS_SIZE] = 0
            io_[S_LEFT] = left - sum(counts)
            io_[STATUS_SIZE:STATUS_SIZE + nk] = counts
            io_[STATUS_SIZE + nk] = rows            # the result's length
            io_[-1] = 0                             # no failure left to check
            words = np.zeros((rows + 63) // 64 * 8, np.uint8)
            packed = np.packbits(want, bitorder="little")
            words[:packed.size] = packed
            vout[:words.size // 8] = words.view(np.uint64)
        fake_cupy.ON_LAUNCH.append(model)
        for key, want, counts in calls:
            Z = m.slice(np.zeros(rows, bool))
            before = list(m.counts)
            m.call("MY_MATCH", T, X, m.word(key), Z)
            assert np.array_equal(Z.to_numpy(), want)
            assert [a - b for a, b in zip(m.counts, before)] == counts
        r = m.jit.routines["r_my_match"]
        assert r.state == "compiled" and r.launches == 3 and r.compiled_calls == 3
    assert seen == [True, True, True]


# ---------------------------------------------------------------- Y := E; if SOME(Y) then ... (Y recomputed)
RECOMPUTE = """
proc RC_TWICE(T: table; X: slice(T); var Z: slice(T));
var j: integer; Y: slice(T);
begin
  Z := X;
  for j := 1 to NCOLS(T) do
  begin
    Y := Z and not (COL(j, T) xor COL(1, T));
    if SOME(Y) then begin Z := Y; Z := Z xor Y; Z := Z or Y end;
  end;
end;

proc RC_KEPT(T: table; X: slice(T); var Z: slice(T));
var j: integer; Y: slice(T);
begin
  Z := X;
  for j := 1 to NCOLS(T) do
  begin
    Y := Z and COL(j, T);
    if SOME(Y) then Z := Y;
    Z := Z or (Y and X);
  end;
end;

proc RC_ELSE(T: table; X: slice(T); var Z: slice(T));
var j: integer; Y: slice(T);
begin
  Z := X;
  for j := 1 to NCOLS(T) do
  begin
    Y := Z and not COL(j, T);
    if SOME(Y) then Z := Y else Z := Z or Y;
  end;
end;

proc RC_SHARED(T: table; X: slice(T); var Z: slice(T));
var j: integer; Y: slice(T);
begin
  Z := X;
  for j := 1 to NCOLS(T) do
  begin
    Y := FRST(Z and COL(j, T));
    if SOME(Y) then Z := Z and not Y;
  end;
end;
begin end.
"""


@pytest.mark.parametrize("name, recomputed, shared, switches", [
    ("U_MIN", True, True, ("RECOMPUTE",)), ("U_MAX", True, True, ("RECOMPUTE",)),
    ("RC_TWICE", True, True, ("RECOMPUTE",)), ("RC_KEPT", False, False, ("RECOMPUTE",)),
    ("RC_ELSE", False, False, ("RECOMPUTE",)), ("RC_TWICE", True, True, ()), ("U_MIN", True, True, ()),
    ("U_MIN", True, True, ("NO_YSH",)), ("RC_SHARED", False, True, ()), ("RC_SHARED", False, True, ("NO_YSH",))])
def test_slice_tested_by_some_is_recomputed_in_its_branch_only_where_read_nowhere_else(name, recomputed, shared,
                                                                                       switches):
    """``Y := E; if SOME(Y) then ...`` with Y read nowhere else: Y is not kept in registers
    across the reduction's barrier. Its words wait in the block's shared memory (the default,
    YSH), or under the switch RECOMPUTE and with E plain logic the branch computes Y again
    from E (its steps not counted twice), or (NO_YSH) Y stays in registers; results and steps
    by kind equal the interpreter's on several blocks each way."""
    emulate.require()
    text = LIBRARY if name.startswith("U_") else RECOMPUTE
    plan = _plan(text, "r_" + name.lower())
    body = plan.source.split(f"void f_r_{name.lower()}(")[1].split("extern")[0]
    assert ("#if RECOMPUTE" in body) == recomputed
    assert ("ysh1_[q_ * TPB + threadIdx.x]" in body) == shared
    rows, rng = 200, np.random.default_rng(len(name))
    vals = rng.integers(0, 64, rows)
    table = np.array([[(v >> (5 - j)) & 1 for j in range(6)] for v in vals], bool)
    X = rng.random(rows) < 0.8
    run = emulate.run_kernel(plan, [table, X, np.zeros(rows, bool)], 3, 32, R=2, switches=switches)
    values, counts, err = _interpreted(text, name, [table, ("slice", X), ("slice", np.zeros(rows, bool))])
    assert err is None and run.code == 0
    assert np.array_equal(run.vectors[0], values[-1]) and run.counts == counts


MIN_TEXT = """
proc MY_MIN(T: table; X: slice(T); var Z: slice(T));
var j: integer; Y: slice(T);
begin
  Z := X;
  for j := 1 to NCOLS(T) do
  begin
    Y := Z and not COL(j, T);
    if SOME(Y) then Z := Y;
  end;
end;
"""


def test_a_grid_that_spills_takes_a_smaller_r_with_registers_capped(monkeypatch):
    """kernel_for on the stand-in for CuPy: where the grid holds MIN's slices only with a kernel
    that spills (R = 2 on 4 SMs of one block each), the smallest R whose kernel, its
    registers capped by launch bounds for the blocks it needs (here 2 an SM), spills less is
    launched (R = 1, 8 blocks); the choice is made once a shape (no module built after); where
    the capped kernel spills as much, the first stays."""
    from gpu_sources import fake_cupy
    from gpu_sources.fake_cupy import fake_cupy_installed
    from starvm.jit import cuda_runtime
    for capped_spill, want_R, want_blocks in ((100, 1, 8), (700, 2, 4)):
        with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
            emulate.device_copies(monkeypatch)
            built = {}
            plain_module = cuda_runtime.GpuRoutine.module

            def module(self, R, kw, rp, bound, cooperative=True, mb=0, lanes=32, _plain=plain_module):
                fn = _plain(self, R, kw, rp, bound, cooperative, mb, lanes)
                built[id(fn)] = mb
                return fn
            monkeypatch.setattr(cuda_runtime.GpuRoutine, "module", module)
            monkeypatch.setattr(cuda_runtime, "_SMS", [4])
            monkeypatch.setattr(cuda_runtime, "_blocks_per_sm", lambda fn, threads: 4 if built[id(fn)] else 1)
            monkeypatch.setattr(cuda_runtime, "_spill_bytes", lambda fn, s=capped_spill: s if built[id(fn)] else 700)
            m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
            m.load(MIN_TEXT, "capped.star")
            rows = 1 << 17
            T, X = m.table(np.zeros((rows, 3), bool)), m.slice(np.ones(rows, bool))
            for call in range(2):
                modules = len(fake_cupy.MODULES)
                fake_cupy.LAUNCHES.clear()
                m.call("MY_MIN", T, X, m.slice(np.zeros(rows, bool)))
                launch, = fake_cupy.LAUNCHES
                assert launch.grid == (want_blocks,) and launch.block == (256,)
                assert (len(fake_cupy.MODULES) - modules) == (0 if call else 3)   # R = 1 and 2, R = 1 capped
            capped = [mod for mod in fake_cupy.MODULES if "__launch_bounds__(256, 2)" in mod.code]
            assert len(capped) == 1 and "#define R 1\n" in capped[0].code
            r = m.jit.routines["r_my_min"]
            assert [R for (_f, _t, _b, R) in r.kernels.values()] == [want_R]      # the one launched


def test_each_launch_covers_its_calls_slices_and_no_kernel_is_built_twice(monkeypatch):
    """kernel_for on the stand-in for CuPy: the blocks of MATCH's launch (no grid barrier) follow
    each call's rows (they were kept with the kernel: a longer table after a shorter one left
    words undone), and MIN's grid kernels are built once a shape, not on every call (on one SM
    holding one block, R = 1, 2, 4, ... are tried until the grid holds the slices)."""
    from gpu_sources import fake_cupy
    from gpu_sources.fake_cupy import fake_cupy_installed
    from starvm.jit import cuda_runtime
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
        emulate.device_copies(monkeypatch)
        monkeypatch.setattr(cuda_runtime, "_SMS", [1])
        monkeypatch.setattr(cuda_runtime, "_blocks_per_sm", lambda fn, threads: 1)
        m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
        m.load(MATCH_TEXT + MIN_TEXT, "shapes.star")
        shapes = []
        for name in ("r_my_match", "r_my_min"):
            r = m.jit.routines[name]
            plain = r.kernel_for
            monkeypatch.setattr(r, "kernel_for",
                                lambda caps, kw, _plain=plain: shapes.append((caps, _plain(caps, kw))) or shapes[-1][1])
        # modules built by each call: MATCH's one kernel (R = 4) at its first; MIN's R = 1..8 for
        # 2^17 rows, then 16 and 32 for 2^19; nothing after
        builds = iter([1, 4, 0, 2] + [0] * 4)
        for rows in (1 << 17, 1 << 19, 1 << 17, 1 << 19):
            T, X = m.table(np.zeros((rows, 3), bool)), m.slice(np.ones(rows, bool))
            for call in (lambda: m.call("MY_MATCH", T, X, m.word(np.ones(3, bool)), m.slice(np.zeros(rows, bool))),
                         lambda: m.call("MY_MIN", T, X, m.slice(np.zeros(rows, bool)))):
                modules = len(fake_cupy.MODULES)
                fake_cupy.LAUNCHES.clear()
                call()
                caps, (_fn, threads, blocks, R) = shapes[-1]
                launch, = fake_cupy.LAUNCHES
                assert caps == rows // 64 and launch.grid == (blocks,) and launch.block == (threads,)
                assert blocks * threads * R >= caps > (blocks - 1) * threads * R
                assert len(fake_cupy.MODULES) - modules == next(builds)
        assert {R for _caps, (_f, _t, _b, R) in shapes} == {4, 8, 32}


def test_lanes_and_words_a_lane_of_parallel_for(monkeypatch):
    """16 lanes an iteration where a lane then holds at most 6 words (n = 5000: 79 words, 5 a
    lane), else 32; a lane's words exact up to 8, then a power of two; kept own columns up
    to 10 words a lane, none above 6 words; STARVM_GPU_LANES overrides."""
    from starvm.jit import cuda_runtime as cr
    from starvm.targets.cuda.routine import instance
    monkeypatch.delenv("STARVM_GPU_LANES", raising=False)
    assert [cr._lanes(c) for c in (1, 79, 96, 97, 256)] == [16, 16, 16, 32, 32]
    assert [cr._lane_words(c) for c in (1, 79, 256, 257, 300)] == [1, 3, 8, 16, 16]
    assert cr._lane_words(79, 16) == 5 and cr._lane_words(79, 8) == 16 and cr._lane_words(1, 8) == 1
    monkeypatch.setenv("STARVM_GPU_LANES", "32")
    assert cr._lanes(79) == 32
    plan = _plan(LIBRARY, "r_u_warshall_adapt")
    owned = {rp: re.search(r"#define OWNC (\d+)", instance(plan, 1, 1, rp)).group(1) for rp in (1, 3, 5, 6, 8)}
    assert owned == {1: "8", 3: "3", 5: "2", 6: "1", 8: "0"}
    assert "#define LANES 16\n" in instance(plan, 1, 1, 5, LANES=16)
    with pytest.raises(ValueError, match="LANES"):
        instance(plan, 1, 1, 1, LANES=4)


CTRL_C = """
proc SPIN(var i: integer);
begin
  while true do i := i + 1
end;

proc SPIN_SOME(X: slice; var i: integer);
var Y: slice;
begin
  repeat
    Y := X and X;
    i := i + 1
  until not SOME(Y)
end;
"""


@pytest.mark.parametrize("name, blocks", [("SPIN", 2), ("SPIN_SOME", 3)])
def test_ctrl_c_stops_a_kernel_that_would_run_for_ever(name, blocks):
    """Issue 36, item 2, on the GPU tier: a host thread sets the Ctrl-C flag 0.3 s into an
    endless loop, polled every 16 steps here (SPIN: no barrier; SPIN_SOME: a grid barrier an iteration, over 3 blocks that
    see the flag at different ticks, so those waiting at a barrier for blocks that stopped
    must leave it): every block stops, as interrupted at the loop, with the steps it made
    counted (at least one poll's), and the host's message is the interpreter's."""
    emulate.require()
    from starvm.jit import errors
    plan = _plan(CTRL_C, "r_" + name.lower())
    rows = blocks * 32 * 64
    args = [0] if name == "SPIN" else [np.ones(rows, bool), 0]
    run = emulate.run_kernel(plan, args, blocks, 32, R=1, interrupt_after=0.3, timeout=60, poll_every=16)
    assert run.code == E.INTERRUPT
    steps = (1 << 62) - run.left
    assert steps >= 16 and steps % 16 == 0      # stopped at a poll, in every block
    err = errors.star_error(run.status, plan.lowered, None)
    assert type(err).__name__ == "StarInterrupt" and "interrupted" in err.render()
    assert err.loc.line == (4 if name == "SPIN" else 10)


def test_a_kernel_that_ends_before_ctrl_c_is_not_stopped():
    emulate.require()
    plan = _plan(CTRL_C, "r_spin_some")
    run = emulate.run_kernel(plan, [np.zeros(2 * 32 * 64, bool), 0], 2, 32, R=1, interrupt_after=0.2, poll_every=16)
    assert run.code == 0 and run.results[-1] == 1


@pytest.mark.parametrize("path, code", [("spin", "INTERRUPT"), ("blocking", "INTERRUPT"), ("blocking", "COL_INDEX")])
def test_host_side_of_ctrl_c_sets_the_kernels_flag_and_reports_interrupted(monkeypatch, path, code):
    """GpuRoutine.run on the stand-in for CuPy: a SIGINT while the host waits for the kernel
    sets the word the kernel polls (its argument before io: page-locked host memory), whether
    it came while the host asked the stream from Python (spin: KeyboardInterrupt, caught) or
    while it waited in C (blocking: the handler interrupts.flagged installs for the wait), and
    the call is reported as interrupted at the kernel's position, also where the kernel stopped
    on another failure first (a block that left a grid barrier for Ctrl-C may fail on a stale
    value before its next poll)."""
    import ctypes
    import signal
    import threading
    from gpu_sources import fake_cupy
    from gpu_sources.fake_cupy import fake_cupy_installed
    from starvm.jit import cuda_runtime
    from starvm.targets.layout import S_CODE, S_LEFT, S_NODE, STATUS_SIZE
    main = threading.main_thread().ident
    seen, state = [], {}
    old = signal.signal(signal.SIGINT, signal.default_int_handler if path == "spin"
                        else (lambda *_: seen.append("python's handler")))
    try:
        with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
            emulate.device_copies(monkeypatch)
            monkeypatch.setattr(cuda_runtime, "_SMS", [4])
            m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
            m.load(CTRL_C, "ctrl_c.star")

            def model(launch):      # the kernel, running: its flag word and its status block
                state.update(flag=ctypes.c_int64.from_address(int(launch.args[-8])), left=int(launch.args[-2]))
                assert state["flag"].value == 0
            fake_cupy.ON_LAUNCH.append(model)

            def done():             # the stream, asked from Python: Ctrl-C comes at the first question
                if path == "spin" and "sent" not in state:
                    state["sent"] = True
                    signal.pthread_kill(main, signal.SIGINT)
                return False
            plain_read = cuda_runtime.GpuRoutine.read_io

            def read_io(self, io_):  # the wait in C: Ctrl-C comes during it; the kernel stops at its poll
                if path == "blocking" and "sent" not in state:
                    state["sent"] = True
                    signal.pthread_kill(main, signal.SIGINT)
                    seen.append(state["flag"].value)
                if state["flag"].value:
                    io_[:STATUS_SIZE] = 0
                    io_[S_CODE], io_[S_NODE], io_[S_LEFT] = getattr(E, code), 1, state["left"] - 5000
                return plain_read(self, io_)
            monkeypatch.setattr(cuda_runtime, "_stream_done", lambda: done)
            monkeypatch.setattr(cuda_runtime, "WAIT_SPIN_S", 0.05 if path == "spin" else 0.0)
            monkeypatch.setattr(cuda_runtime.GpuRoutine, "read_io", read_io)
            with pytest.raises(starvm.StarError) as info:
                m.call("SPIN", 0)
            assert type(info.value).__name__ == "StarInterrupt"
            assert "interrupted" in info.value.render() and info.value.loc.line == 4
            assert m.jit.routines["r_spin"].launches == 1 and state["flag"].value == 1
            if path == "blocking":
                assert 1 in seen         # flagged's handler had set the kernel's word
    finally:
        signal.signal(signal.SIGINT, old)


def test_the_ctrl_c_flag_is_one_per_cupy_module(monkeypatch):
    """A stand-in's flag (ordinary host memory, tests) is never handed to another CuPy's kernels:
    on a GPU host a stand-in test followed by real kernels in one process made them read a
    pageable address (cudaErrorIllegalAddress in every later GPU test of that worker)."""
    import sys
    import types

    from starvm.jit import cuda_runtime

    def stand_in(tag):
        cuda = types.SimpleNamespace(alloc_pinned_memory=lambda size: bytearray(size))
        return types.SimpleNamespace(cuda=cuda, tag=tag)

    monkeypatch.setattr(cuda_runtime, "_FLAG", [])
    first, second = stand_in(1), stand_in(2)
    monkeypatch.setitem(sys.modules, "cupy", first)
    flag1, address1 = cuda_runtime._interrupt_flag()
    assert cuda_runtime._interrupt_flag()[1] == address1          # cached for its module
    monkeypatch.setitem(sys.modules, "cupy", second)
    flag2, address2 = cuda_runtime._interrupt_flag()
    assert address2 != address1 and flag2 is not flag1
    assert address1 == flag1.ctypes.data + 8 * cuda_runtime.S_INTR


# ---------------------------------------------------------------- whole calls: the host side and the kernel on the CPU
# Machine(backend="cupy") on the stand-in for CuPy, every GPU-tier launch run on the CPU
# (emulate.routine_launch): what a user sees of a call (results, output, steps, errors) against
# the interpreter on NumPy, natives on. One kernel a routine: each test's routines are few and
# take the case as data (a mode argument), so the CPU builds are shared across cases.
class _Device:
    """A machine on the emulated GPU, and the interpreter's run of the same calls."""

    def __init__(self, monkeypatch, text: str, **machine):
        from gpu_sources import fake_cupy
        from gpu_sources.fake_cupy import fake_cupy_installed
        from starvm.jit import cuda_runtime
        self.text = text
        self.machine = machine
        self.references = {}
        self._installed = fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend")
        cp, _backend = self._installed.__enter__()
        cp.cuda.alloc_pinned_memory = emulate.Shared.alloc     # what the kernel's CPU run maps too
        emulate.device_copies(monkeypatch)
        monkeypatch.setattr(cuda_runtime, "_SMS", [1])       # a grid kernel: a few CPU threads
        fake_cupy.ON_LAUNCH.append(emulate.routine_launch)
        self.out = io.StringIO()
        self.m = starvm.Machine(backend="cupy", jit="on", out=self.out, **machine)
        self.m.load(text, "dev.star")

    def close(self):
        self._installed.__exit__(None, None, None)

    def _values(self, m, args):
        values = []
        for a in args:
            if isinstance(a, tuple):
                values.append(m.slice(a[1]) if a[0] == "slice" else m.word(a[1]))
            elif isinstance(a, np.ndarray):
                values.append(m.table(a.copy()))
            else:
                values.append(a)
        return values

    def call(self, name, *args):
        """(values afterwards, result, output, steps by kind, error text) on the device."""
        got = self._run(self.m, self.out, name, args)
        failed = {r.display: r.why for r in self.m.jit.routines.values() if r.state == "failed"}
        assert not failed, f"a kernel did not build or run on the CPU: {failed}"
        return got

    def interpreted(self, name, *args, native=True):
        """The same on the interpreter (NumPy backend; one machine per ``native``, kept)."""
        if native not in self.references:
            out = io.StringIO()
            m = starvm.Machine(backend="numpy", jit="off", native=native, out=out, **self.machine)
            m.load(self.text, "dev.star")
            self.references[native] = (m, out)
        return self._run(*self.references[native], name, args)

    @staticmethod
    def _run(m, out, name, args):
        values = _Device._values(None, m, args)
        before = list(m.counts)
        out.seek(0)
        out.truncate()
        err = None
        try:
            got = m.call(name, *values)
        except starvm.StarError as e:
            err, got = e.render(), None
        values = [v.to_numpy() if hasattr(v, "to_numpy") else v for v in values]
        if got is not None:
            got = tuple(g.to_numpy() if hasattr(g, "to_numpy") else g for g in got) if isinstance(got, tuple) \
                else got.to_numpy() if hasattr(got, "to_numpy") else got
        return (values, got, out.getvalue(), [a - b for a, b in zip(m.counts, before)], err)


def _same(a, b) -> bool:
    """Values equal, arrays element by element."""
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


@pytest.fixture
def device(monkeypatch):
    made = []

    def make(text, **machine):
        made.append(_Device(monkeypatch, text, **machine))
        return made[-1]
    yield make
    for d in made:
        d.close()





def test_compiled_calls_of_natives_and_error_equal_the_interpreter(device):
    """A routine calling GROUPMIN (a native kernel for interpreted callers: compiled, its Star
    body runs in the kernel, charged what the native charges) and the ERROR statement, in the
    routine and one call deeper: the message, the position, the call stack and the output
    written before it are the interpreter's; the steps too."""
    emulate.require()
    d = device(WHOLE)
    rng = np.random.default_rng(5)
    rows = 70
    G, K = rng.random((rows, 3)) < 0.5, rng.random((rows, 4)) < 0.5
    for mode, density in ((0, 0.7), (1, 0.7), (2, 0.7), (2, 0.0), (0, 0.0)):
        X = rng.random(rows) < density
        args = (mode, G, K, ("slice", X), ("slice", np.zeros(rows, bool)))
        got = d.call("DRIVE", *args)
        want = d.interpreted("DRIVE", *args)
        assert got[2:] == want[2:], (mode, density)
        # after an error nothing of the call is seen but its tables and output (Star does
        # not catch errors): its var results only where it returned
        assert want[-1] is not None or np.array_equal(got[0][4], want[0][4])
        assert got[2:] == d.interpreted("DRIVE", *args, native=False)[2:]
    r = d.m.jit.routines["r_drive"]
    assert r.state == "compiled" and r.compiled_calls == 5 and r.reruns == 0





@pytest.mark.parametrize("pool_words", [1 << 16, 2])
def test_local_tables_from_the_device_pool_equal_the_interpreter(device, monkeypatch, pool_words):
    """Local tables taken from the pool, zeroed, given back on return and taken again by the
    next call; a negative size fails as the interpreter's; a pool too small (2 words) is
    grown and the call launched again, its steps, output and tables as on a large pool."""
    from starvm.jit import cuda_runtime
    emulate.require()
    monkeypatch.setattr(cuda_runtime, "POOL_WORDS", pool_words)
    d = device(WHOLE)
    rng = np.random.default_rng(7)
    rows = 70
    for k, neg in ((3, 1), (3, -1), (4, 1)):
        P, Q = rng.random((rows, 2)) < 0.5, rng.random((rows, k)) < 0.5
        got, want = d.call("LT_OUTER", k, neg, P, Q), d.interpreted("LT_OUTER", k, neg, P, Q)
        assert got[2:] == want[2:], (k, neg)
        assert np.array_equal(got[0][3], want[0][3])
        assert (want[-1] is not None) == (neg < 0)
    r = d.m.jit.routines["r_lt_outer"]
    assert r.state == "compiled" and r.compiled_calls == 3 and r.reruns == 0
    assert (r.pool_launches > 0) == (pool_words == 2)


def test_a_local_table_larger_than_the_arguments_relaunches_on_a_shape_that_holds_it(device):
    """The launch's shape comes from the arguments (70 rows: 2 words, 32 threads); a local
    table of 3000 rows and 70 columns (47 words a column, a ROW read of 2 words) stops it
    (E_POOL, d = 1 and 2) and it runs again on a shape that holds the table."""
    emulate.require()
    d = device(WHOLE)
    P = np.random.default_rng(2).random((70, 2)) < 0.5
    for n in (3000, 40):
        got, want = d.call("LT_BIG", n, P, 0), d.interpreted("LT_BIG", n, P, 0)
        assert _same(got[1:], want[1:]) and want[-1] is None
        assert got[1] == (np.count_nonzero(P[:, 0]) + 69 + n,)     # ROW(n, B): 69 ones, COL(70, B): n
    r = d.m.jit.routines["r_lt_big"]
    assert r.state == "compiled" and r.compiled_calls == 2 and r.reruns == 0
    assert r.pool_launches >= 1 and r.min_caps == 47 and r.min_kw == 2





def test_recursion_equals_the_interpreter(device):
    """Mutual recursion (REC_EVEN <-> REC_ODD, device functions of their own) under a routine
    with a local table: results, output and steps; ERROR deep inside (its call stack); the
    recursion limit (Machine.max_depth 40) reached as the interpreter reaches it."""
    emulate.require()
    d = device(WHOLE, max_depth=40)
    rng = np.random.default_rng(11)
    rows = 90
    T = rng.random((rows, 3)) < 0.5
    for depth, stop, fails in ((9, -1, None), (9, 5, "stopped at"), (60, -1, "recursion too deep"), (0, -1, None)):
        args = (depth, stop, T, ("slice", rng.random(rows) < 0.8), 0)
        got, want = d.call("REC", *args), d.interpreted("REC", *args)
        assert got[2:] == want[2:], (depth, stop)
        assert (want[-1] is None) if fails is None else (fails in want[-1])
        if want[-1] is None:
            assert _same(got[:2], want[:2])
    r = d.m.jit.routines["r_rec"]
    assert r.state == "compiled" and r.compiled_calls == 4 and r.reruns == 0 and r.plan.recursive


def test_recursion_past_the_stack_room_grows_it_or_runs_interpreted(device, monkeypatch):
    """Star frames past the room given (STACK_ROOM) stop the launch (E_STACK): it runs again
    with twice the room, the same steps and result; past STACK_MAX the call runs interpreted
    and --profile says why."""
    from starvm.jit import cuda_runtime
    emulate.require()
    monkeypatch.setattr(cuda_runtime, "STACK_ROOM", 64)
    d = device(WHOLE)
    got, want = d.call("DOWN", 30), d.interpreted("DOWN", 30)
    assert got[1:] == want[1:] and got[1] == 60
    r = d.m.jit.routines["r_down"]
    assert r.compiled_calls == 1 and r.stack_launches > 0 and r.deep_calls == 0
    monkeypatch.setattr(cuda_runtime, "STACK_MAX", r.stack_room)
    got, want = d.call("DOWN", 300), d.interpreted("DOWN", 300)
    assert got[1:] == want[1:] and got[1] == 600
    assert r.deep_calls == 1 and r.compiled_calls == 1
    report = "\n".join(d.m.jit.report())
    assert "DOWN: compiled; 1 call(s)" in report and "1 call(s) interpreted: a call recursed deeper" in report
