"""GATHER(T, IX, X, var R) of stdlib/rows.star: every row i that X marks takes row IX(i) of T
(its Star body there is the definition). SCATTER (native/scatter/) is its mirror and shares
its steps, its guard and its index check.

  steps     ``body_steps(marked, index_bits)``
  guard     ``routine``: tables of the backend's storage, R apart from T and IX (the body's
            row-by-row order would matter), IX of 1..63 columns, X of IX's rows, R as wide
            as T and as long as IX. Then in two parts: ``decode`` reads the index table
            (no writes) and returns the marked rows' count with its plan, or raises
            guard.Unusual (a row number out of range: the body's own error; or ticks past
            --max-steps): the Star body runs instead, counting its own steps; else the steps
            are charged and ``apply`` moves the rows
  kernels   numpy.py, cuda.py + gather.cu (its check: shared/rows.cu), emulated.py;
            distributed: distributed/rows.py (two all-to-alls, or an all-gather of a small T)

Each kernel reads from the device what the step report needs in one transfer (decode: the
marked count and the range check), so a call costs one device-to-host round trip.
"""
from __future__ import annotations

from ..guard import Unusual
from ..meter import timed_call
from ..steps import CALL, Steps, numof, of

HOME = "stdlib/rows.star"
KERNELS = {"numpy": "starvm.native.gather.numpy:make", "cupy": "starvm.native.gather.cuda:make",
           "emulated": "starvm.native.gather.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.rows:make_gather" for local in ("numpy", "cupy", "emulated")}}


def body_steps(marked: int, index_bits: int) -> Steps:
    """GATHER and SCATTER (the same steps): ``marked`` rows of X, IX of ``index_bits`` columns.
    Y := X; while SOME(Y) do begin i := STEP(Y);
      ROW(i, R) := ROW(NUMOF(ROW(i, IX)), T);        (SCATTER: ROW(NUMOF(ROW(i, IX)), R) := ROW(i, T))
    end;"""
    per_row = of(ticks=1, SOME=1, STEP=1, ROW_GET=2, ROW_SET=1) + numof(index_bits)
    return CALL + of(SOME=1) + per_row.times(marked)


def routine(decode, apply, storage, *, gather_: bool = True):
    """GATHER's factory (SCATTER's with ``gather_`` False) around a backend's kernels:

      decode(IX, X_v, limit) -> (plan, marked)    guard.Unusual when a marked row names one
                                                  outside 1..limit; writes nothing
      apply(T, IX, plan, X_v, R)                  moves the rows
    on tables and vectors of ``storage`` (guard.Storage)."""
    def usable(T, IX, X, R) -> bool:
        if not all(storage.is_table(t) and storage.sized(t) for t in (T, IX, R)):
            return False
        if R is T or R is IX or R.data is T.data or R.data is IX.data:
            return False                    # the body's row-by-row order would matter
        if not (1 <= IX.k <= 63 and storage.vec_ok(X, IX.n) and R.k == T.k):
            return False
        return R.n == IX.n if gather_ else T.n == IX.n

    def make(star_body, backend, meter):
        def run(T, IX, X_v, R):
            plan, marked = decode(IX, X_v, T.n if gather_ else R.n)
            if not meter.affords(body_steps(marked, IX.k).ticks):
                raise Unusual              # past --max-steps: the body stops part way
            meter.charge(body_steps(marked, IX.k))
            apply(T, IX, plan, X_v, R)

        def routine_(T, IX, X, R):
            if not usable(T, IX, X, R):
                return star_body(T, IX, X, R)
            try:
                timed_call(run, backend, meter, T, IX, X.v, R)
            except Unusual:
                return star_body(T, IX, X, R)
        routine_.star_body = star_body
        return routine_
    return make
