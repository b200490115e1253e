"""The GPU tier (starvm/jit/cuda_*.py): a routine as one CUDA kernel on the CuPy backend.

Without a GPU: what the renderer takes and refuses (every kernel it writes is compiled by
NVRTC in tests/unit/test_cuda_sources.py, collector gpu_tier_sources). With one: results,
`var` results, output, step counts by kind and errors equal the interpreter's, on the library
bodies under user names (no native kernel applies) with random arguments of several sizes
(lengths not a multiple of 64, and slices long enough for a grid of many blocks)."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

import starvm
from starvm.frontend.parser import fold
from conftest import cupy_or_skip
from gpu_sources.corpus import compiled_routines, renamed, routine_bodies

ROOT = Path(__file__).resolve().parents[2]

from reference.jit_differential import jit_cache  # noqa: E402,F401 - the module's fixture: compiled code in a temporary cache


# ------------------------------------------------------------------ the renderer (no GPU)
def test_library_bodies_and_listings_render():
    got = {where: plan for where, plan in compiled_routines()}
    for where in ("stdlib/search.star:U_MATCH", "stdlib/search.star:U_MIN", "stdlib/search.star:U_SETMIN",
                  "stdlib/warshall.star:U_WARSHALL", "stdlib/warshall.star:U_WARSHALL_C",
                  "stdlib/warshall.star:U_WARSHALL_adapt", "stdlib/rows.star:U_GATHER",
                  "programs/warshall_c.star:WARSHALL-C", "programs/warshall_adapt.star:WARSHALL-adapt"):
        assert not isinstance(got[where], str), (where, got[where])
    adapt = got["stdlib/warshall.star:U_WARSHALL_adapt"]
    assert adapt.has_pfor and adapt.writes_tables
    # MIN: one grid reduction (SOME, of the OR made as Y was) per column, no other barrier
    body = got["stdlib/search.star:U_MIN"].source.split("void f_r_u_min(")[1].split("\n}\n")[0]
    assert body.count("grid_red(") == 1 and "d_some<" not in body and "gsync" not in body


REFUSED = """
proc LOCAL(n: integer);
var T: table(n, 4);
begin COL(1, T) := COL(2, T); end;

function FACT(n: integer): integer;
begin if n <= 1 then FACT := 1 else FACT := n * FACT(n - 1); end;

function SETS(var A: slice): integer;
begin SETS := 1; SET(A); end;

proc VAR_IN_EXPR(var A: slice);
var x: integer;
begin x := SETS(A) + 1; end;
begin end.
"""


def test_what_the_renderer_refuses_says_why():
    """Local tables (the pool) and recursion (device functions of their own) render since
    issue 31; a call with var parameters inside an expression is still refused, with the reason."""
    from starvm.targets.cuda.routine import Unsupported, render
    bodies = routine_bodies(REFUSED, "r.star")
    assert render(bodies, "r_local").pool
    fact = render(bodies, "r_fact")
    assert fact.recursive and "__noinline__ void f_r_fact(" in fact.source
    with pytest.raises(Unsupported, match="var parameters"):
        render(bodies, "r_var_in_expr")


ON_DEVICE = """
var T: table(100, 8);
proc LOOPY(var T: table; n: integer);
var i: integer;
begin for i := 1 to n do COL(1, T) := not COL(2, T); end;
begin LOOPY(T, 3); writeln(NUMB(COL(1, T))); end.
"""


def test_refusals_are_in_the_profile_without_a_gpu():
    """No CuPy here: a routine whose table auto keeps on the (emulated) device runs interpreted
    and --profile says why the GPU tier did not take it (host-resident calls go to Numba)."""
    from starvm.backends.auto_backend import AutoBackend
    from starvm.backends import get_backend
    from starvm.backends.emulated_device import EmulatedDevice
    backend = AutoBackend(get_backend("numpy"), EmulatedDevice(), gpu_rows=64, gpu_bits=4096)
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit="on", out=out)
    m.profile = True
    m.run(ON_DEVICE, "r.star")
    assert out.getvalue().split() == ["100"]
    line = next(x for x in m.profile_report().splitlines() if x.strip().startswith("LOOPY:"))
    assert "1 interpreted" in line and "GPU tier" in line, line


# ------------------------------------------------------------------ on the GPU
def _random_args(m, info, rng, n, k):
    from starvm.types import T
    args = []
    for p in info.params:
        if p.type is T.TABLE:
            args.append(m.table(rng.random((n, k)) < 0.5))
        elif p.type is T.SLICE:
            args.append(m.slice(rng.random(n) < 0.5))
        elif p.type is T.WORD:
            args.append(m.word(rng.random(k) < 0.5))
        elif p.type is T.BOOL:
            args.append(bool(rng.integers(2)))
        else:
            args.append(int(rng.integers(-1, k + 2)))
    return args


def _calls(text, filename, names, jit, seed, sizes):
    rng = np.random.default_rng(seed)
    out = io.StringIO()
    m = starvm.Machine(backend="cupy", jit=jit, native=False, out=out)
    m.load(text, filename)
    got = []
    for name in names:
        info = m.env.routines[fold(name)]
        for n, k in sizes:
            args = _random_args(m, info, rng, n, k)
            try:
                r = m.call(name, *args)
                err = None
            except starvm.StarError as e:
                r, err = None, e.render()
            state = [a.to_numpy().tolist() if hasattr(a, "to_numpy") else a for a in args]
            got.append((name, n, k, r.to_numpy().tolist() if hasattr(r, "to_numpy") else repr(r), state, err,
                        m.last_call_stats))
    return got, out.getvalue(), m


SIZES = ((1, 1), (63, 8), (64, 16), (130, 33), (70_001, 5))


@pytest.mark.parametrize("library, names", [
    ("search.star", ["MATCH", "NOTEQ", "LESS", "GREATEQ", "MIN", "MAX", "HIT", "SETMIN"]),
    ("arith.star", None),
    ("rows.star", ["IOTA", "GATHER", "SCATTER", "COMPACT", "EXPAND"]),
])
def test_library_bodies_on_the_gpu_equal_the_interpreter(library, names):
    cupy_or_skip()
    text = renamed((ROOT / "stdlib" / library).read_text())
    declared = re.findall(r"(?im)^\s*(?:proc|procedure|function)\s+(U_[\w]+)", text)
    chosen = [d for d in declared if names is None or d[2:].upper() in names]
    off, out_off, _ = _calls(text, f"user_{library}", chosen, "off", 11, SIZES)
    on, out_on, m = _calls(text, f"user_{library}", chosen, "on", 11, SIZES)
    assert out_on == out_off
    for a, b in zip(off, on):
        assert a == b, f"{a[0]} n={a[1]} k={a[2]}"
    compiled = [r.display for r in m.jit.routines.values() if r.compiled_calls]
    assert compiled, m.profile_report()


@pytest.mark.parametrize("n", [1, 5, 64, 100, 300])
@pytest.mark.parametrize("listing", ["WARSHALL", "WARSHALL-C", "WARSHALL-adapt"])
def test_warshall_listings_under_user_names_equal_networkx(listing, n):
    import networkx as nx
    cupy_or_skip()
    text = renamed((ROOT / "stdlib" / "warshall.star").read_text())
    name = "U_" + listing.replace("-", "_")
    rng = np.random.default_rng(n)
    adj = rng.random((n, n)) < (2.0 / n)
    results = {}
    for jit in ("off", "on"):
        m = starvm.Machine(backend="cupy", jit=jit, native=False, out=io.StringIO())
        m.load(text, "w.star")
        P = m.table(adj.copy())
        m.call(name, n, P)
        results[jit] = (P.to_numpy().tolist(), m.last_call_stats)
        if jit == "on":
            assert any(r.compiled_calls for r in m.jit.routines.values()), m.profile_report()
    assert results["on"] == results["off"]
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(*np.nonzero(adj)))
    closure = np.zeros((n, n), bool)        # paths of one arc or more: (i, i) only on a cycle
    for i in range(n):
        for s in g.successors(i):
            closure[i, s] = True
            closure[i, list(nx.descendants(g, s))] = True
    assert np.array_equal(np.array(results["on"][0], bool), closure)


PROGRAM = """
var T: table(130, 9); S: slice(T); w: word(T); count: integer;

proc SCAN(var T: table; k: integer; var S: slice(T); var c: integer);
var X: slice(T); i: integer;
begin
  X := COL(k, T);
  c := 0;
  while SOME(X) do
  begin
    i := STEP(X);
    c := c + 1;
    if c < 4 then writeln('row ', i, ' of ', NUMB(X) + c, ' ', ROW(i, T));
    S := S or COL(k, T);
  end;
  ROW(1, T) := ROW(2, T);
  writeln(S);
end;

begin
  SET(S);
  S(3) := 0;
  w := ROW(1, T);
  COL(2, T) := S;
  SCAN(T, 2, S, count);
  writeln(count, ' ', FND(S), ' ', w);
  SCAN(T, K_BAD, S, count);
end.
"""


@pytest.mark.parametrize("bad", ["2", "10"])
def test_output_steps_and_errors_equal_the_interpreter(bad):
    cupy_or_skip()
    src = PROGRAM.replace("K_BAD", bad)
    runs = {}
    for jit in ("off", "on"):
        out = io.StringIO()
        m = starvm.Machine(backend="cupy", jit=jit, out=out)
        err = None
        try:
            m.run(src, "scan.star")
        except starvm.StarError as e:
            err = e.render()
        runs[jit] = (out.getvalue(), list(m.counts), err)
        if jit == "on":
            assert m.jit.routines["r_scan"].compiled_calls >= 1, m.profile_report()
    assert runs["on"] == runs["off"]
    if bad == "10":
        assert "column index 10 out of range 1..9" in runs["on"][2]


def test_step_limit_and_parallel_for_errors_equal_the_interpreter():
    """The step limit inside a compiled loop; a COL index out of range inside parallel for
    (its iterations run at once: the call is rerun interpreted, which reports it)."""
    cupy_or_skip()
    text = renamed((ROOT / "stdlib" / "warshall.star").read_text())
    for call, limit in (("U_WARSHALL_C(40, P)", 50), ("U_WARSHALL_adapt(41, P)", None)):
        src = text + f"\nvar P: table(40, 40);\nbegin COL(3, P) := not COL(2, P); {call}; end.\n"
        runs = {}
        for jit in ("off", "on"):
            m = starvm.Machine(backend="cupy", jit=jit, out=io.StringIO(), max_steps=limit)
            err = None
            try:
                m.run(src, "w.star")
            except starvm.StarError as e:
                err = e.render()
            runs[jit] = (list(m.counts), err)
        assert runs["on"] == runs["off"], call
        assert runs["on"][1] is not None


# tests/star programs with their main block moved into a procedure (the GPU tier compiles
# routines): every base operation, parameters, globals, parallel for, and errors of each kind
STAR_FILES = ["base_ops", "params", "globals", "parallel_forall", "divmod", "err_length_mismatch",
              "err_unassigned", "err_rep_length", "err_trim_range", "err_bit_value", "err_mod_zero",
              "err_row_index", "err_col_write"]


def as_procedure(text: str) -> str:
    start = [m.start() for m in re.finditer(r"(?im)^begin\b", text)][-1]
    body = text[start:].rstrip()
    assert body.endswith("end."), body[-20:]
    return text[:start] + "proc RUN_ALL_;\n" + body[:-1] + ";\nbegin RUN_ALL_; end.\n"


@pytest.mark.parametrize("name", STAR_FILES)
def test_star_programs_in_a_routine_equal_the_interpreter(name):
    cupy_or_skip()
    src = as_procedure((ROOT / "tests" / "star" / f"{name}.star").read_text())
    runs = {}
    for jit in ("off", "on"):
        out = io.StringIO()
        m = starvm.Machine(backend="cupy", jit=jit, out=out)
        err = None
        try:
            m.run(src, f"{name}.star")
        except starvm.StarError as e:
            err = e.render()
        runs[jit] = (out.getvalue(), list(m.counts), err)
    assert runs["on"] == runs["off"]
    if name in NOT_COMPILED:       # a var-parameter function in an expression; a row-wise parallel for
        assert any(line.strip().startswith("RUN_ALL_: interpreted") for line in m.jit.report()), m.jit.report()
    else:
        assert m.jit.routines["r_run_all_"].compiled_calls == 1, m.jit.report()


NOT_COMPILED = ("params", "parallel_forall")


# ------------------------------------------------------------------ pivot loops: one barrier a pivot
# A FOR whose body is one parallel for renders with one grid barrier a pivot (targets/cuda: statements.py
# _s_FOR, parallel_for.py _s_PFOR): the next pivot's column is copied by the iteration that owns it (or by
# warp 0 when no iteration does), into the other of two buffers; a failing iteration is
# checked at the next barrier. These bodies reach each path: a descending loop whose next
# column no iteration owns, empty iteration ranges, writes under a condition, a failure in
# a middle pivot (checked one pivot later) and step limits that stop the loop after it.
PIVOTS = (ROOT / "tests" / "gpu_sources" / "routines" / "pivots.star").read_text()


def test_pivot_loops_render_with_one_barrier_a_pivot():
    from starvm.targets.cuda.routine import render
    bodies = routine_bodies(PIVOTS, "piv.star")
    for name in ("r_piv_down", "r_piv_grow", "r_piv_sway", "r_piv_fail"):
        src = render(bodies, name).source
        body = src.split(f"void f_{name}(")[1].split("\n}\n")[0]
        assert "a pivot loop" in body and "grid_red" not in body, name
        assert body.count("gsync_or(") == 3, name       # the pivot's barrier, an empty pivot's, the loop's end


# PIV_FAIL(n, 3, P) fails in pivot 3 (steps 6 and 7 are pivot 3's loop and parallel for):
# under a limit of 6 the limit stops it first; under 7 and 8 the kernel reaches the limit in
# pivot 4 with the failure not yet checked, and the host still reruns the call
def test_kernels_without_a_grid_barrier_are_found():
    """MATCH's body has no grid barrier (its bit tests read a word every thread holds): it is
    launched as an ordinary grid; MIN's SOME and the pivot loops' barriers keep theirs."""
    got = {where.split(":")[1]: plan for where, plan in compiled_routines() if not isinstance(plan, str)}
    assert got["U_MATCH"].barrier_free and not got["U_MIN"].barrier_free
    assert not got["U_WARSHALL_adapt"].barrier_free and not got["U_WARSHALL_C"].barrier_free
    assert not got["PIV_DOWN"].barrier_free


@pytest.mark.parametrize("call, limit", [
    ("PIV_DOWN(n, P)", None), ("PIV_GROW(n, P)", None), ("PIV_SWAY(n, P)", None), ("PIV_FAIL(n, 0, P)", None),
    ("PIV_FAIL(n, 3, P)", None), ("PIV_FAIL(n, 3, P)", 6), ("PIV_FAIL(n, 3, P)", 7),
    ("PIV_FAIL(n, 3, P)", 8), ("PIV_DOWN(n, P)", 9)])
@pytest.mark.parametrize("n", [5, 37, 130])
def test_pivot_loops_equal_the_interpreter(call, limit, n):
    cupy_or_skip()
    rng = np.random.default_rng(n)
    adj = rng.random((n, n)) < (3.0 / n)
    name, rest = call.split("(")
    runs = {}
    for jit in ("off", "on"):
        m = starvm.Machine(backend="cupy", jit=jit, native=False, out=io.StringIO(), max_steps=limit)
        m.load(PIVOTS.replace("begin end.", ""), "piv.star")
        P = m.table(adj.copy())
        args = [n if a.strip() == "n" else P if a.strip() == "P" else int(a) for a in rest[:-1].split(",")]
        err = None
        try:
            m.call(name, *args)
        except starvm.StarError as e:
            err = e.render()
        runs[jit] = (P.to_numpy().tolist(), list(m.counts), err)
        if jit == "on":
            r = m.jit.routines[f"r_{name.lower()}"]
            failed = "3, P" in call and limit != 6
            assert r.reruns == int(failed) and r.compiled_calls + r.reruns == 1, m.profile_report()
    assert runs["on"] == runs["off"], call
    if "3, P" in call:
        assert ("bit index" if limit != 6 else "step limit") in runs["on"][2], runs["on"][2]
    elif "DOWN" in call and limit == 9:
        assert "step limit" in runs["on"][2], runs["on"][2]


def test_kernels_without_a_grid_barrier_run_more_blocks_than_can_be_resident(monkeypatch):
    """An ordinary launch of MATCH's body over 2^25 + 37 rows at one word a thread (2049
    blocks, more than an H100 or H200 holds at once): every word is done. Launched as a
    cooperative kernel, CuPy clamped the grid to the resident blocks and rows went unmarked."""
    cupy_or_skip()
    monkeypatch.setenv("STARVM_GPU_FREE_R", "1")
    text = renamed((ROOT / "stdlib" / "search.star").read_text())
    n = (1 << 25) + 37
    rng = np.random.default_rng(25)
    bits = rng.random((n, 3)) < 0.5
    x = rng.random(n) < 0.9
    want = x & bits[:, 0] & ~bits[:, 1] & bits[:, 2]
    stats = {}
    for jit in ("off", "on"):
        m = starvm.Machine(backend="cupy", jit=jit, native=False, out=io.StringIO())
        m.load(text, "user_search.star")
        z = m.slice(np.zeros(n, bool))
        m.call("U_MATCH", m.table(bits), m.slice(x), m.word(np.array([True, False, True])), z)
        assert np.array_equal(z.to_numpy(), want), jit
        stats[jit] = m.last_call_stats
    assert stats["on"] == stats["off"]
    assert [r.display for r in m.jit.routines.values() if r.compiled_calls] == ["U_MATCH"]


def test_results_are_each_calls_own_and_arguments_are_left_as_they_were():
    """Vector results come back in a buffer of their own call (taken without a copy) and
    vector arguments go in without a copy: a later call changes neither an earlier result
    nor its arguments."""
    cupy_or_skip()
    text = renamed((ROOT / "stdlib" / "search.star").read_text())
    rng = np.random.default_rng(7)
    n = 4099
    bits = rng.random((n, 4)) < 0.5
    x = rng.random(n) < 0.8
    m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
    m.load(text, "user_search.star")
    T, X = m.table(bits), m.slice(x)
    results = []
    for pattern in ([True, False, True, True], [False, False, True, False], [True, True, True, True]):
        z = m.slice(np.zeros(n, bool))
        m.call("U_MATCH", T, X, m.word(np.array(pattern)), z)
        results.append((z, x & np.all(bits == np.array(pattern), axis=1)))
    for z, want in results:
        assert np.array_equal(z.to_numpy(), want)
    assert np.array_equal(X.to_numpy(), x) and np.array_equal(T.to_numpy(), bits)
    assert m.jit.routines["r_u_match"].compiled_calls == 3


def test_a_longer_table_after_a_shorter_one_is_done_whole():
    """One compiled kernel launched for tables longer than its first call's: each launch's
    blocks are its call's (they were kept with the kernel, and the words past the first call's
    blocks went undone). MATCH (no grid barrier, 4 words a thread) and MIN (a resident grid)."""
    cupy_or_skip()
    text = renamed((ROOT / "stdlib" / "search.star").read_text())
    m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
    m.load(text, "user_search.star")
    rng = np.random.default_rng(17)
    pattern = np.array([True, False, False, True])
    for n in ((1 << 17) + 5, (1 << 20) + 3, (1 << 18) + 1):
        bits = rng.random((n, 4)) < 0.5
        x = rng.random(n) < 0.8
        vals = bits @ np.array([8, 4, 2, 1])
        T, X = m.table(bits), m.slice(x)
        z = m.slice(np.zeros(n, bool))
        m.call("U_MATCH", T, X, m.word(pattern), z)
        assert np.array_equal(z.to_numpy(), x & np.all(bits == pattern, axis=1)), n
        z = m.slice(np.zeros(n, bool))
        m.call("U_MIN", T, X, z)
        assert np.array_equal(z.to_numpy(), x & (vals == vals[x].min())), n
    assert [m.jit.routines[r].compiled_calls for r in ("r_u_match", "r_u_min")] == [3, 3]


# ------------------------------------------------------------------ Ctrl-C (issue 36, item 2; needs a GPU)
GPU_SPIN = """var n: integer; T: table(64, 1); X: slice(T); M: table({mode}, 1);
proc spin(var i: integer);
begin
  while true do i := i + 1
end;
proc spin_some(Y: slice; var i: integer);
begin
  while SOME(Y) do i := i + 1
end;
begin
  writeln('before');
  SET(X);
  if NROWS(M) = 1 then spin(n) else spin_some(X, n);
  writeln('never')
end.
"""


@pytest.mark.parametrize("which", ["spin", "spin_some"])
def test_ctrl_c_stops_a_gpu_kernel_that_runs_for_ever(tmp_path, which):
    """`star run --backend cupy --jit on`: SIGINT while the routine's kernel spins (a scalar
    loop; a loop with a grid reduction an iteration) stops the run as interpreted does: exit
    130 and `star: interrupted at FILE:LINE:COL`, at the loop once the kernel runs."""
    import selectors
    import signal
    import subprocess
    import sys
    import time
    from conftest import subprocess_env
    cupy_or_skip()
    path = tmp_path / "spin.star"
    path.write_text(GPU_SPIN.replace("{mode}", "1" if which == "spin" else "2"))
    proc = subprocess.Popen([sys.executable, "-m", "starvm", "run", "--backend", "cupy", "--jit", "on", str(path)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=subprocess_env(), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # the line comes while the kernel runs (its output streamed: jit/cuda_output.py); a
        # run that holds it back would never print it: the test fails, it does not hang
        ready = selectors.DefaultSelector()
        ready.register(proc.stdout, selectors.EVENT_READ)
        assert ready.select(timeout=120), "'before' was not printed while the kernel ran"
        assert proc.stdout.readline() == "before\n"
        time.sleep(8)                  # NVRTC compiles the kernel (CuPy's disk cache: later runs at once)
        assert proc.poll() is None
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        stopped = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    line = 4 if which == "spin" else 8
    assert err.strip() == f"star: interrupted at {path}:{line}:3", err
    assert out == "" and stopped < 10


# ------------------------------------------------------------------ whole programs (issue 31): on the GPU
WHOLE = (ROOT / "tests" / "gpu_sources" / "routines" / "whole.star").read_text()


def _both(text, calls, **machine):
    """Each call on the GPU tier (--jit on) and on the interpreter (CuPy backend, --jit off):
    (values afterwards, result, output, steps by kind, error) of each, and the GPU machine."""
    runs = {}
    for jit in ("off", "on"):
        out = io.StringIO()
        m = starvm.Machine(backend="cupy", jit=jit, out=out, **machine)
        m.load(text, "whole.star")
        got = []
        for name, args in calls:
            values = [m.table(a.copy()) if isinstance(a, np.ndarray) and a.ndim == 2 else
                      m.slice(a) if isinstance(a, np.ndarray) else a for a in args]
            before = list(m.counts)
            out.seek(0)
            out.truncate()
            err = r = None
            try:
                r = m.call(name, *values)
            except starvm.StarError as e:
                err = e.render()
            state = [v.to_numpy().tolist() if hasattr(v, "to_numpy") else v for v in values]
            if isinstance(r, tuple):
                r = [x.to_numpy().tolist() if hasattr(x, "to_numpy") else x for x in r]
            elif hasattr(r, "to_numpy"):
                r = r.to_numpy().tolist()
            got.append((name, state if err is None else None, r, out.getvalue(),
                        [a - b for a, b in zip(m.counts, before)], err))
        runs[jit] = (got, m)
    return runs["off"][0], runs["on"][0], runs["on"][1]


def _compiled(m, display):
    return next(r for r in m.jit.routines.values() if r.display == display)


def test_natives_error_local_tables_and_recursion_on_the_gpu_equal_the_interpreter():
    """tests/gpu_sources/routines/whole.star (the cases of test_gpu_emulated.py's whole calls):
    GROUPMIN's body inside a kernel and ERROR there and one call deeper; local tables from the
    pool, a negative size; mutual recursion, ERROR deep inside, the recursion limit (40)."""
    cupy_or_skip()
    rng = np.random.default_rng(5)
    calls = []
    for rows in (70, 5000):
        G, K = rng.random((rows, 3)) < 0.5, rng.random((rows, 4)) < 0.5
        for mode in (0, 1, 2):
            calls.append(("DRIVE", (mode, G, K, rng.random(rows) < 0.7, np.zeros(rows, bool))))
        for k, neg in ((3, 1), (3, -1), (4, 1)):
            calls.append(("LT_OUTER", (k, neg, G[:, :2], rng.random((rows, k)) < 0.5)))
        for depth, stop in ((9, -1), (9, 5), (60, -1), (0, -1)):
            calls.append(("REC", (depth, stop, G, rng.random(rows) < 0.8, 0)))
    calls += [("DOWN", (30,)), ("DOWN", (39,))]
    calls += [("LT_BIG", (n, rng.random((70, 2)) < 0.5, 0)) for n in (3000, 300_000, 40)]   # shapes past the arguments
    off, on, m = _both(WHOLE, calls, max_depth=40)
    for a, b in zip(off, on):
        assert a == b, a[0]
    assert sum(1 for c in off if c[-1]) >= 8                 # the failing cases fail
    for name in ("DRIVE", "LT_OUTER", "REC", "DOWN", "LT_BIG"):
        r = _compiled(m, name)
        assert r.state == "compiled" and r.compiled_calls == r.calls and r.reruns == 0, (name, r.why)


def test_recursion_deeper_than_the_stack_room_grows_it_on_the_gpu(monkeypatch):
    """A recursion past the first stack room (STACK_ROOM, shrunk here) stops the launch
    (E_STACK) and runs again on a larger CUDA stack; past STACK_MAX the call runs interpreted:
    the same results and steps either way."""
    cupy_or_skip()
    from starvm.jit import cuda_runtime
    monkeypatch.setattr(cuda_runtime, "STACK_ROOM", 256)
    off, on, m = _both(WHOLE, [("DOWN", (200,)), ("DOWN", (3000,))])
    assert off == on
    r = _compiled(m, "DOWN")
    assert r.stack_launches >= 1 and r.compiled_calls >= 1


def _arcs(rng, n, m, maxw):
    u, v = rng.integers(1, n + 1, m), rng.integers(1, n + 1, m)
    return np.stack([u, v, rng.integers(0, maxw + 1, m)], axis=1)


def _bits(values, k):
    v = np.asarray(values, np.int64).reshape(-1)
    return ((v[:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(bool)


GRAPH_ROUTINES = ["DIJKSTRA", "BELLMAN_FORD", "BELLMAN_FORD-adapt", "BFS-adapt", "PRIM", "KRUSKAL", "BORUVKA"]


@pytest.mark.parametrize("proc", GRAPH_ROUTINES)
def test_library_graph_routines_run_compiled_on_the_gpu_and_equal_the_interpreter(proc):
    """The library routines the GPU tier left interpreted before issue 31 (a local table,
    recursion, ERROR, calls of natives' routines) as users call them (natives on): compiled,
    their tables, output and steps those of the interpreter, on random arc lists and a long
    path (a BFS recursion thousands of levels deep: the stack grows or the call runs interpreted)."""
    cupy_or_skip()
    rng = np.random.default_rng(3)
    graphs = [(30, _arcs(rng, 30, 70, 3)), (300, _arcs(rng, 300, 900, 9)), (2, np.array([[1, 2, 5]]))]
    if proc == "BFS-adapt":
        path = np.array([[i, i + 1, 1] for i in range(1, 2000)])
        graphs.append((2000, path))
    calls = []
    for n, a in graphs:
        c = max(1, int(n).bit_length())
        b = max(1, int(n * (int(a[:, 2].max()) + 1)).bit_length()) + 1
        left, right, weight = _bits(a[:, 0], c), _bits(a[:, 1], c), _bits(a[:, 2], b)
        if proc in ("PRIM", "KRUSKAL", "BORUVKA"):
            calls.append((proc, (n, left, right, weight, np.zeros(len(a), bool))))
        elif proc == "BFS-adapt":
            calls.append((proc, (n, 1, left, right, np.zeros((n, c + 1), bool))))
        else:
            calls.append((proc, (n, 1, left, right, weight, np.zeros((n, b), bool))))
    off, on, m = _both("begin end.", calls)
    for a, b in zip(off, on):
        assert a == b, (a[0], len(a[1] or ()))
    r = _compiled(m, proc)
    assert r.state == "compiled" and r.compiled_calls >= 1, (r.why, m.profile_report())
