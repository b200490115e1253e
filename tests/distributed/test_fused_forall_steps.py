"""The distributed backend's fused `parallel for` (distributed/forall.py) counts every step once,
as the NumPy backend's (targets/numpy/forall.py) does: an operation whose operand is a word
(replicated, not this rank's words of a slice) is the base kernel's, and its operand is
evaluated once, not again by the base. One rank, no MPI (``distribute(..., None)``: the
distributed code on one rank; ``Machine(comm=...)`` of one rank is the plain machine);
test_mpi.py runs programs over several ranks."""
from __future__ import annotations

import io

import pytest

import starvm
from starvm.distributed import distribute

# Words A, B (replicated on ranks) under NOT, SOME, NUMB and X(i) inside fused loops, and a
# slice (split) under the same operations, so both forms of each operation run.
_PROGRAM = """var T: table(70, 4); A, B: word; S: slice(T); k, n: integer;
begin
  parallel for k := 1 to 4 do COL(k, T) := not COL(k, T);
  A := ROW(1, T); B := ROW(2, T); S := COL(2, T);
  parallel for k := 1 to 2 do
  begin
    if SOME(not (A and B)) then COL(k, T) := not COL(k, T);
    if NUMB(A xor B) = 0 then COL(k, T) := COL(k, T) and S;
    if (A or B)(k) = 1 then COL(k, T) := COL(k, T) or S;
    if SOME(not (S and COL(k, T))) then COL(k, T) := not COL(k, T)
  end;
  writeln(NUMB(COL(1, T)), ' ', NUMB(COL(2, T)))
end."""


@pytest.mark.parametrize("jit", ["off"])
def test_fused_loop_counts_like_the_numpy_backend(jit):
    runs = []
    for backend in ("numpy", distribute("numpy", None)):
        out = io.StringIO()
        m = starvm.Machine(backend=backend, out=out, jit=jit)
        m.run(_PROGRAM, "fused_steps.star")
        runs.append((out.getvalue(), {k: v for k, v in m.stats.items() if v}, m.fused_timing[0]))
    (out_np, steps_np, fused_np), (out_mpi, steps_mpi, fused_mpi) = runs
    assert fused_np == fused_mpi == 2          # both loops ran fused on both backends
    assert out_mpi == out_np
    assert steps_mpi == steps_np
