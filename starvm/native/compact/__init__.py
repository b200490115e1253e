"""COMPACT(T, X, var R) of stdlib/rows.star: the rows X marks, in order, into rows 1, 2, ... of R
(R may be T). EXPAND (native/expand/) is its inverse and shares its steps. Its Star body
there is the definition.

  steps     ``body_steps(marked)``, charged before the kernel runs (a call past --max-steps
            writes nothing: the Star body runs and stops part way)
  guard     ``routine``: tables of the backend's storage, as wide as each other, X of T's rows,
            R not sharing T's storage unless it is T, the marked rows fit R
  kernels   cuda.py + compact.cu, emulated.py (numpy.py's kernel: the NumPy backend runs the
            compiled Star body instead, within 2x of it: bench/results/compiled_cpu2.md; on a
            GPU the compiled body takes grid barriers per marked row, so the CUDA kernel stays);
            distributed: distributed/rows.py (one all-to-all)
"""
from __future__ import annotations

from ..meter import timed_call
from ..steps import CALL, Steps, of

HOME = "stdlib/rows.star"
KERNELS = {"cupy": "starvm.native.compact.cuda:make", "emulated": "starvm.native.compact.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.rows:make_compact" for local in ("numpy", "cupy", "emulated")}}


def body_steps(marked: int) -> Steps:
    """COMPACT and EXPAND (the same steps), ``marked`` rows of X:
    Y := X; j := 0; while SOME(Y) do begin i := STEP(Y); j := j + 1;
      ROW(j, R) := ROW(i, T);      (EXPAND: ROW(i, R) := ROW(j, T))
    end;"""
    per_row = of(ticks=1, SOME=1, STEP=1, ROW_GET=1, ROW_SET=1)
    return CALL + of(SOME=1) + per_row.times(marked)


def usable(storage, T, X, R, marked_rows_of) -> bool:
    """COMPACT's and EXPAND's common guard: X marks rows of ``marked_rows_of``."""
    if not (storage.is_table(T) and storage.is_table(R) and storage.sized(T) and storage.sized(R) and R.k == T.k):
        return False
    return storage.vec_ok(X, marked_rows_of.n)


def routine(compact, numb, storage):
    """COMPACT's factory around ``compact(T, X_v, R, marked)`` (``marked``: the rows X marks,
    read once by ``numb(X_v)``) on tables and vectors of ``storage``."""
    def make(star_body, backend, meter):
        def routine_(T, X, R):
            # R may be T (in place); a table sharing T's storage otherwise is left to the body
            if not usable(storage, T, X, R, T) or (R is not T and R.data is T.data):
                return star_body(T, X, R)
            marked = numb(X.v)                # the one device-to-host read of the call
            if marked > R.n or not meter.affords(body_steps(marked).ticks):
                return star_body(T, X, R)     # the body's own error, after the rows that fit
            meter.charge(body_steps(marked))
            timed_call(compact, backend, meter, T, X.v, R, marked)
        routine_.star_body = star_body
        return routine_
    return make
