"""EXPAND(T, X, var R) of stdlib/rows.star: rows 1, 2, ... of T back to the rows X marks in R, in
order (COMPACT's inverse: native/compact/). Its Star body there is the definition.

  steps     COMPACT's (``compact.body_steps``)
  guard     ``routine``: COMPACT's common guard, X of R's rows, R apart from T (in place the
            body's top-down order matters), the marked rows within T
  kernels   cuda.py + expand.cu, emulated.py (numpy.py's kernel, as COMPACT's);
            distributed: distributed/rows.py (two all-to-alls, as GATHER)
"""
from __future__ import annotations

from .. import compact
from ..meter import timed_call

HOME = "stdlib/rows.star"
KERNELS = {"cupy": "starvm.native.expand.cuda:make", "emulated": "starvm.native.expand.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.rows:make_expand" for local in ("numpy", "cupy", "emulated")}}

body_steps = compact.body_steps


def routine(expand, numb, storage):
    """EXPAND's factory around ``expand(T, X_v, R, marked)``, as COMPACT's."""
    def make(star_body, backend, meter):
        def routine_(T, X, R):
            # in place the body's top-down order matters (a row may be written before it is read)
            if not compact.usable(storage, T, X, R, R) or R is T or R.data is T.data:
                return star_body(T, X, R)
            marked = numb(X.v)
            if marked > T.n or not meter.affords(body_steps(marked).ticks):
                return star_body(T, X, R)
            meter.charge(body_steps(marked))
            timed_call(expand, backend, meter, T, X.v, R, marked)
        routine_.star_body = star_body
        return routine_
    return make
