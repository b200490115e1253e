"""The routines around the row-compaction kernels (COMPACT and EXPAND of stdlib/rows.star):
which arguments a backend's kernel takes, the Star body for the rest, and the steps the Star
body takes (reported to the machine's meter as for the other row moves, rows_routines.py).

A backend gives ``compact(T, X_v, R, marked)`` and ``expand(T, X_v, R, marked)`` (rows_numpy.py,
rows_cupy.py, emulated.py; ``marked``: the rows X marks, read once by the routine), ``numb`` and
its two storage tests, and gets back the two registry factories. The steps, --max-steps ticks
included, are charged before the kernel runs: a call past the limit writes nothing.
"""
from __future__ import annotations

from . import timed_call
from .steps import CALL, _s


def compaction_steps(marked: int):
    """COMPACT and EXPAND (the same steps), ``marked`` rows of X:
    Y := X; j := 0; while SOME(Y) do begin i := STEP(Y); j := j + 1;
      ROW(j, R) := ROW(i, T);      (EXPAND: ROW(i, R) := ROW(j, T))
    end;"""
    per_row = _s(ticks=1, SOME=1, STEP=1, ROW_GET=1, ROW_SET=1)
    return CALL + _s(SOME=1) + per_row.times(marked)


def compact_factories(compact, expand, numb, *, is_table, vec_ok, nonempty: bool):
    """make_compact, make_expand for one backend's kernels. ``nonempty``: the kernels need
    tables with rows and columns."""

    def sized(t) -> bool:
        return not nonempty or (t.n > 0 and t.k > 0)

    def usable(T, X, R, marked_rows_of) -> bool:
        if not (is_table(T) and is_table(R) and sized(T) and sized(R) and R.k == T.k):
            return False
        return vec_ok(X, marked_rows_of.n)

    def make_compact(star_body, backend, meter):
        def routine(T, X, R):
            # R may be T (in place); a table sharing T's storage otherwise is left to the body
            if not usable(T, X, R, T) or (R is not T and R.data is T.data):
                return star_body(T, X, R)
            marked = numb(X.v)                # the one device-to-host read of the call
            if marked > R.n or not meter.affords(compaction_steps(marked).ticks):
                return star_body(T, X, R)     # the body's own error, after the rows that fit
            meter.charge(compaction_steps(marked))
            timed_call(compact, backend, meter, T, X.v, R, marked)
        routine.star_body = star_body
        return routine

    def make_expand(star_body, backend, meter):
        def routine(T, X, R):
            # in place the body's top-down order matters (a row may be written before it is read)
            if not usable(T, X, R, R) or R is T or R.data is T.data:
                return star_body(T, X, R)
            marked = numb(X.v)
            if marked > T.n or not meter.affords(compaction_steps(marked).ticks):
                return star_body(T, X, R)
            meter.charge(compaction_steps(marked))
            timed_call(expand, backend, meter, T, X.v, R, marked)
        routine.star_body = star_body
        return routine

    return make_compact, make_expand
