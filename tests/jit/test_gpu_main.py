"""Main blocks on the GPU tier (issue 31): the runs of statements between graph input
(ir/main_parts.py) become functions of the interpreter's code that the GPU tier compiles into
one kernel each, the graph's scalars read by the host before the launch.

Without a GPU: the parts of a main block, the interpreter's code for them, and whole runs on
the emulated device (tests/gpu_sources/emulate.py: the kernels on CPU threads) against the
interpreter on NumPy: output, steps by kind, errors with their Star call stack, step limits,
the output buffer grown and launched again, a graph read first by a part.
"""
from __future__ import annotations

import io

import pytest

import starvm
from starvm.ir.main_parts import main_parts

PROGRAM = """
var mode: integer;
var L, R: table(GRAPH_M, GRAPH_VBITS);
    W: table(GRAPH_M, GRAPH_WBITS);
    X, Y: slice(L);
    i, s, t: integer;

procedure CHECK(v: integer);
begin
  if v > GRAPH_M then ERROR('past the arcs');
end;

begin
  GRAPH_DEFAULT('karate');
  if mode = 3 then writeln('before the graph: ', GRAPH_N, ' vertices');
  GRAPH_EDGES(L, R, W);
  SET(X);
  s := 0; t := 0;
  while SOME(X) do
  begin
    i := STEP(X);
    s := s + i;
    if mode = 1 then CHECK(i * 3);
    if mode = 2 then write(' ', i);
  end;
  writeln;
  writeln('n=', GRAPH_N, ' m=', GRAPH_M, ' s=', s, ' undirected=', GRAPH_UNDIRECTED, ' wbits=', GRAPH_WBITS);
  GRAPH_EDGES(L, R, W);
  Y := COL(1, L);
  for i := 1 to GRAPH_VBITS do t := t + NUMB(COL(i, R));
  writeln('t=', t, ' y=', NUMB(Y));
end.
"""


def _run(backend: str, jit: str, mode: int, **machine):
    """(machine, output, steps, error) of PROGRAM in ``mode`` (a global, not a constant: every
    mode runs the same kernels, built once on the emulated device)."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit=jit, out=out, **machine)
    m.profile = True
    err = None
    m.load(PROGRAM, "parts.star")
    m.globals["mode"] = mode
    try:
        m.run_main()
    except starvm.StarError as e:
        err = e.render()
    return m, out.getvalue(), list(m.counts), err


# ------------------------------------------------------------------ the parts (no GPU)
def test_the_parts_are_the_runs_of_statements_between_graph_tables():
    m = starvm.Machine(jit="off", out=io.StringIO())
    unit = m.compile(PROGRAM, "parts.star")
    main = m.lowered[unit.filename].main
    # [GRAPH_DEFAULT: nothing] [if mode = 3 ...] GRAPH_EDGES [SET ... writeln] GRAPH_EDGES [Y := ... writeln]
    assert main_parts(main) == [(0, 2), (3, 9), (10, 13)]
    assert list(unit.main_parts) == [f"main{unit.filename.split('-')[1].split(':')[0]}_{k}_" for k in range(3)]
    source = unit.source.split("def main_():")[1]
    assert source.count("_graph('edges'") == 2 and all(f"{p}()" in source for p in unit.main_parts)


def test_a_main_block_without_graph_input_is_one_part_and_with_nothing_but_graph_input_none():
    m = starvm.Machine(jit="off", out=io.StringIO())
    one = m.compile("var i: integer;\nbegin for i := 1 to 3 do writeln(i); end.", "one.star")
    assert len(one.main_parts) == 1
    m2 = starvm.Machine(jit="off", out=io.StringIO())
    none = m2.compile("var A: table(GRAPH_N, GRAPH_N);\nbegin GRAPH_DEFAULT('karate'); GRAPH_ADJ(A); end.", "g.star")
    assert none.main_parts == {}


@pytest.mark.parametrize("mode", [0, 1, 3])
def test_the_interpreter_runs_the_parts_as_it_ran_the_main_block(mode):
    """Errors inside a part keep the main block's one frame (the part's function continues it)."""
    _m, out, counts, err = _run("numpy", "off", mode)
    if mode == 1:
        assert err is not None and "past the arcs" in err
        assert "main block at parts.star:" in err and err.count("main block") == 1
        assert "CHECK at parts.star:10:" in err
    else:
        assert err is None and "n=34 m=156 s=12246" in out and "t=337" in out


def test_every_shipped_program_main_block_renders_for_the_gpu_tier():
    """The census of main blocks (docs/architecture.md): every part of every shipped program is
    one kernel; those after graph input read the graph's scalars from the host."""
    from gpu_sources.corpus import compiled_routines
    from starvm.targets.cuda.routine import KernelPlan
    parts = {where: plan for where, plan in compiled_routines() if "main block" in where}
    assert len({where.split(":")[0] for where in parts}) == 13
    refused = {where: plan for where, plan in parts.items() if not isinstance(plan, KernelPlan)}
    assert not refused
    # mst_boruvka: GRAPH_EDGES, then BORUVKA's call (as its routine's tier decides), then the part
    # summing the tree's weights, NUMOF inside its kernel
    boruvka = [plan for where, plan in parts.items() if where.startswith("programs/mst_boruvka.star")]
    assert len(boruvka) == 1 and boruvka[0].part and set(boruvka[0].graph_reads) == {"n", "m", "undirected"}
    assert "f_r_numof(" in boruvka[0].source and "f_r_boruvka(" not in boruvka[0].source


# ------------------------------------------------------------------ whole runs on the emulated device
@pytest.fixture
def device(monkeypatch):
    from gpu_sources.emulate import emulated_device
    with emulated_device(monkeypatch):
        yield


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_main_parts_on_the_device_equal_the_interpreter(device, monkeypatch, mode):
    from starvm.jit import cuda_runtime
    if mode == 2:       # 156 vertices printed: past a buffer of 64 words, written by the host in rounds
        monkeypatch.setattr(cuda_runtime, "PART_OB_WORDS", 64)
    m, out, counts, err = _run("cupy", "on", mode)
    _r, want_out, want_counts, want_err = _run("numpy", "off", mode)
    assert (out, counts, err) == (want_out, want_counts, want_err)
    parts = [r for r in m.jit.routines.values() if getattr(r, "part", False)]
    ran = [r for r in parts if r.compiled_calls]
    assert len(ran) == (2 if mode == 1 else 3)           # mode 1 stops in the second
    assert all(r.state == "compiled" for r in ran)
    if mode == 2:
        assert sum(r.ob_launches for r in parts) == 0 and all(r.ob_words == 64 for r in parts)
        assert sum(r.launches for r in parts) == len(ran)      # one launch a part: no launch again
    report = "\n".join(m.jit.report())
    assert "main block, lines" in report and "main block: interpreted" not in report


@pytest.mark.parametrize("limit", [40, 160])    # the run ticks 163 times (156 + 7 iterations)
def test_step_limits_stop_a_part_where_they_stop_the_interpreter(device, limit):
    _m, out, counts, err = _run("cupy", "on", 0, max_steps=limit)
    _r, want_out, want_counts, want_err = _run("numpy", "off", 0, max_steps=limit)
    assert err is not None and "step limit reached" in err
    assert (out, counts, err) == (want_out, want_counts, want_err)


# ------------------------------------------------------------------ on a GPU
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("jit", ["on", "auto"])
def test_main_parts_on_a_gpu_equal_the_interpreter(mode, jit):
    from conftest import cupy_or_skip
    cupy_or_skip()
    m, out, counts, err = _run("cupy", jit, mode)
    assert (out, counts, err) == _run("numpy", "off", mode)[1:]
    if jit == "on":
        assert any(getattr(r, "part", False) and r.compiled_calls for r in m.jit.routines.values())


@pytest.mark.parametrize("program", ["mst_boruvka", "bfs_adapt", "dijkstra", "components"])
def test_shipped_programs_run_their_main_block_compiled_on_a_gpu(program):
    """Whole programs on their bundled graphs: the main block's parts ran as kernels, and the
    output is the interpreter's."""
    from conftest import cupy_or_skip
    cupy_or_skip()
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "programs" / f"{program}.star").read_text()
    outs = []
    for backend, jit in (("cupy", "on"), ("numpy", "off")):
        out = io.StringIO()
        m = starvm.Machine(backend=backend, jit=jit, out=out)
        m.run(text, f"{program}.star")
        outs.append((out.getvalue(), list(m.counts)))
        if jit == "on":
            assert any(getattr(r, "part", False) and r.compiled_calls for r in m.jit.routines.values())
    assert outs[0] == outs[1]


# ------------------------------------------------------------------ natives that move rows (no GPU)
ROWS = """
var T, R: table(100, 8); X: slice(T); Z: slice(T); i: integer;
proc PACK(var R: table);
var j: integer;
begin for j := 1 to 2 do COMPACT(T, X, R); end;
proc LOW(var Z: slice(T));
var j: integer;
begin for j := 1 to 2 do MIN(T, X, Z); end;
begin PACK(R); LOW(Z); end.
"""


def test_natives_that_move_rows_one_at_a_time_are_told_from_column_searches():
    from gpu_sources.corpus import routine_bodies
    from starvm.ir.main_parts import loops_over_rows
    bodies = {info.display: body for info, body in routine_bodies(ROWS, "rows.star").values()}
    assert all(loops_over_rows(bodies[n]) for n in ("COMPACT", "EXPAND", "GATHER", "SCATTER", "GROUPMIN", "IOTA"))
    assert not any(loops_over_rows(bodies[n]) for n in ("MIN", "MAX", "MATCH", "SETMIN", "HIT", "LOW"))


@pytest.mark.parametrize("jit", ["auto", "on"])
def test_on_auto_a_routine_calling_a_row_moving_native_stays_around_the_native_kernel(monkeypatch, jit):
    """COMPACT's native moves every row in a few launches; compiled into PACK's kernel its Star
    body would move them one at a time: on auto PACK runs interpreted around the native (and
    says so), MIN's body compiles inside LOW's kernel; --jit on compiles both."""
    from gpu_sources.fake_cupy import fake_cupy_installed
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
        m = starvm.Machine(backend="cupy", jit=jit, out=io.StringIO())
        m.load(ROWS.replace("begin PACK(R); LOW(Z); end.", "begin end."), "rows.star")
        kinds = {r.display: type(r).__name__ for r in m.jit.routines.values()}
        assert kinds.get("LOW") == "GpuRoutine"
        if jit == "auto":
            assert "PACK" not in kinds and "COMPACT" in m.jit.skipped["PACK"]
        else:
            assert kinds.get("PACK") == "GpuRoutine"


TRANSPOSE = """
proc FLIP(n: integer; P: table; var PT: table);
var j: integer;
begin for j := 1 to n do ROW(j, PT) := CONVERT(COL(j, P)); end;
begin end.
"""


def test_on_auto_slices_made_words_past_16_words_run_interpreted(monkeypatch):
    """Every thread reads a slice made a word whole (bfs.star's BFS: n conversions of n rows,
    43.8 s compiled at n = 16384 on an H200): on auto a call whose slices pass 16 words runs
    interpreted and --profile says why; up to 16 words it compiles, and --jit on always."""
    import numpy as np
    from gpu_sources.fake_cupy import fake_cupy_installed
    from starvm.jit.cuda_runtime import _TooLarge
    monkeypatch.setenv("STARVM_JIT_GPU_THRESHOLD", "0")
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
        m = starvm.Machine(backend="cupy", jit="auto", out=io.StringIO())
        m.load(TRANSPOSE, "flip.star")
        n = 64 * 16 + 1
        p = m.table(np.eye(n, dtype=bool) | np.eye(n, k=1, dtype=bool))
        pt = m.table(np.zeros((n, n), bool))
        m.call("FLIP", n, p, pt)          # (the stand-in's launches compute nothing: no values here)
        flip = m.jit.routines["r_flip"]
        assert flip.state != "compiled" and flip.compiled_calls == 0
        assert "become words" in flip.why and "--jit on compiles it" in flip.why
        flip.check_as_word(16)                     # 1024 rows: compiled
        with pytest.raises(_TooLarge):
            flip.check_as_word(17)
        m.jit.mode = "on"
        flip.check_as_word(17)
