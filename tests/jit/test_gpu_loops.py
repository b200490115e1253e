"""The GPU tier's loops without a grid barrier an iteration, against the interpreter on the
emulated device (tests/gpu_sources/emulate.py: the kernels' CUDA C run on CPU threads), on a
grid of several blocks:

* ``while SOME(X) do begin i := STEP(X); ...`` (or ``write(' ', STEP(X))``) whose body leaves X alone walks X's words,
  staged once, in every thread (statements.py: scannable, prelude.cu: scan_next) instead of
  one grid reduction an iteration; a body that changes X, or calls what may change it, keeps
  the reduction;
* a ROW read waits at a grid barrier only where a table was written since the last one,
  and a table write only where a row was read (c_.dirty: the relaxing loop below reads row j
  of U and then writes it, its branch taken on what it read);
* a grid reduction makes one atomic a block (grid_red).

Output, steps by kind and errors (with their position) equal the interpreter's."""
from __future__ import annotations

import io

import pytest

import starvm

PROGRAM = """
var mode: integer;
var T, U: table(2100, 8);
    V: table(2100, 19);
    X, Y: slice(T);
    i, j, s, n: integer;
    w: word(T);

procedure BUMP(v: integer);
begin
  s := s + v;
end;

procedure SEARCHES(var V: table; var n: integer);
var Y, Z: slice(V); i, j: integer; pat: word(V);
begin
  for i := 1 to NROWS(V) do
  begin
    SETNUM((i * 7919) mod 524288, pat);
    ROW(i, V) := pat;
  end;
  SET(Y);
  SETNUM(7919 * 5, pat);
  MATCH(V, Y, pat, Z);
  n := NUMB(Z);
  LESS(V, Y, pat, Z);
  n := n * 10000 + NUMB(Z);
  SET(Z);
  for j := NCOLS(V) downto 1 do
    if j mod 3 = 0 then Z := Z and not COL(j, V) else Z := Z or (Y and COL(j, V));
  n := n * 10000 + NUMB(Z);
  if mode = 3 then
    for j := 1 to 23 do Y := Y and COL(j, V);
  for j := 1 to 8 do
  begin
    COL(j, V) := COL(j, V) and not COL(j + 1, V);
    Z := Z and COL(j + 2, V);
  end;
  n := n * 10000 + NUMB(Z);
end;

begin
  for i := 1 to 2100 do
  begin
    SETNUM((i * 37) mod 256, w);
    ROW(i, T) := w;
  end;
  CLR(X);
  for i := 1 to 2100 do
    if (i mod 29 = 0) or (i mod 31 = 0) then X(i) := 1;
  s := 0; n := 0;
  while SOME(X) do
  begin
    i := STEP(X);
    n := n + NUMB(X);
    ROW(i, U) := ROW(i, T);
    s := s + NUMOF(ROW(i, U));
    if mode = 1 then
      if i > 1500 then s := s + NUMOF(ROW(i + 600, T));
    if mode = 2 then write(' ', i);
  end;
  writeln('s=', s, ' n=', n);
  CLR(X);
  for i := 1 to 2100 do
    if i mod 301 = 0 then X(i) := 1;
  while SOME(X) do write(' ', STEP(X));
  writeln;
  CLR(X);
  for i := 1 to 2100 do
    if i mod 401 = 0 then X(i) := 1;
  while SOME(X) do write(' ', NUMB(X), ':', STEP(X));
  writeln;
  CLR(X);
  for i := 1 to 2100 do
    if i mod 97 = 0 then X(i) := 1;
  while SOME(X) do
  begin
    i := STEP(X);
    if i + 13 <= 2100 then
      if i mod 2 = 1 then X(i + 13) := 1;
    s := s + i;
  end;
  writeln('s=', s);
  CLR(X); X(3) := 1; X(700) := 1; X(1301) := 1; X(2100) := 1;
  while SOME(X) do
  begin
    i := STEP(X);
    Y := COL(1, T) and COL(8, T);
    while SOME(Y) do
    begin
      j := STEP(Y);
      s := s + (i mod 7) * j;
    end;
  end;
  writeln('s=', s);
  CLR(X);
  for i := 1 to 2100 do
    if i mod 211 = 0 then X(i) := 1;
  while SOME(X) do
  begin
    i := STEP(X);
    BUMP(i);
  end;
  writeln('s=', s);
  CLR(X);
  for i := 1 to 2100 do
    if i mod 13 = 0 then X(i) := 1;
  while SOME(X) do
  begin
    i := STEP(X);
    j := (i * 7) mod 2100 + 1;
    if LESS(ROW(i, T), ROW(j, U)) then ROW(j, U) := ROW(i, T)
    else ROW(i, U) := ROW(j, U);
  end;
  s := 0;
  for i := 1 to 2100 do s := s + i * NUMOF(ROW(i, U));
  writeln('u=', s);
  if mode <> 9 then SEARCHES(V, n);
  writeln('n=', n);
end.
"""


def _run(backend: str, jit: str, mode: int, **machine):
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit=jit, out=out, **machine)
    m.load(PROGRAM, "loops.star")
    m.globals["mode"] = mode
    err = None
    try:
        m.run_main()
    except starvm.StarError as e:
        err = e.render()
    return m, out.getvalue(), list(m.counts), err


def _part_source() -> str:
    from gpu_sources.corpus import routine_bodies
    from starvm.targets.cuda.routine import render
    bodies = routine_bodies(PROGRAM, "loops.star", parts=True)
    parts = [p for p, (info, _b) in bodies.items() if getattr(info, "part", False)]
    assert len(parts) == 1
    return render(bodies, parts[0]).source


def test_step_loops_that_leave_their_slice_alone_walk_it_without_a_reduction():
    src = _part_source()
    # the first loop, `write(' ', STEP(X))`, both loops of the nested pair and the relaxing
    # loop; not the loop that sets bits of X, nor the one calling BUMP (X is a global, BUMP
    # assigns one), nor the write that prints NUMB(X) before its STEP(X)
    assert src.count("scan_next((c_.scr") == 5
    assert src.count("d_fnd<R, true>") == 5 + 3
    # ROW reads wait only where a table was written since the last barrier
    assert "if ((c_.dirty & 1) || ROW_SYNC_) gsync(c_);" in src and "c_.dirty |= 1;" in src
    # and a write after a ROW read waits for the readers
    assert "if (c_.dirty & 2) gsync(c_);" in src and "c_.dirty |= 2;" in src
    # columns read ahead in MATCH's and LESS's loops and the downto loop, and in the loop
    # that stops at a column past the table; not where the loop writes a table
    assert src.count("cols_ahead<PFD>(") == 4 and "cols_ahead<PFD>(pf" in src


@pytest.fixture
def device(monkeypatch):
    from gpu_sources.emulate import emulated_device
    from starvm.jit import cuda_runtime
    with emulated_device(monkeypatch):
        # a grid of several blocks (33 words of 32 threads a block: 2), not one block
        monkeypatch.setattr(cuda_runtime, "ONE_BLOCK_WORDS", 0)
        monkeypatch.setenv("STARVM_GPU_THREADS", "32")
        yield


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_loops_on_a_grid_of_blocks_equal_the_interpreter(device, mode):
    m, out, counts, err = _run("cupy", "on", mode)
    _r, want_out, want_counts, want_err = _run("numpy", "off", mode)
    assert (out, counts, err) == (want_out, want_counts, want_err)
    if mode == 1:
        assert err is not None and "row index" in err.lower() and "loops.star:" in err
    elif mode == 3:
        assert err is not None and "column" in err.lower() and "SEARCHES" in err
    else:
        assert err is None and want_out.count("s=") == 4 and "n=" in want_out and "u=" in want_out
    parts = [r for r in m.jit.routines.values() if getattr(r, "part", False)]
    assert parts and all(r.state == "compiled" and r.compiled_calls for r in parts)
    assert max(blocks for _fn, _t, blocks, _r in parts[0].kernels.values()) >= 2


def test_one_block_holding_several_words_a_thread_equals_the_interpreter(monkeypatch):
    """Slices past ONE_BLOCK_THREADS words on one block: R words a thread, the barriers the
    block's own (here 33 words on 32 threads: R = 2)."""
    from gpu_sources.emulate import emulated_device
    from starvm.jit import cuda_runtime
    with emulated_device(monkeypatch):
        monkeypatch.setattr(cuda_runtime, "ONE_BLOCK_THREADS", 32)
        for mode in (0, 1):
            m, out, counts, err = _run("cupy", "on", mode)
            assert (out, counts, err) == _run("numpy", "off", mode)[1:]
        parts = [r for r in m.jit.routines.values() if getattr(r, "part", False)]
        assert [(blocks, R) for _fn, _t, blocks, R in parts[0].kernels.values()] == [(1, 2)]


@pytest.mark.parametrize("limit", [150, 23300, 24400])    # 23300 on: inside the first scanned loop
def test_step_limits_stop_a_scanned_loop_where_they_stop_the_interpreter(device, limit):
    _m, out, counts, err = _run("cupy", "on", 0, max_steps=limit)
    _r, want_out, want_counts, want_err = _run("numpy", "off", 0, max_steps=limit)
    assert err is not None and "step limit reached" in err
    first_scan = PROGRAM.splitlines().index("  while SOME(X) do") + 1
    assert limit < 23000 or f"loops.star:{first_scan}:" in err
    assert (out, counts, err) == (want_out, want_counts, want_err)


def test_loops_on_a_gpu_equal_the_interpreter():
    from conftest import cupy_or_skip
    cupy_or_skip()
    for mode in (0, 1, 2, 3):
        assert _run("cupy", "on", mode)[1:] == _run("numpy", "off", mode)[1:]
