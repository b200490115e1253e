"""SCATTER(T, IX, X, var R) of stdlib/rows.star: every row i that X marks is written to row
IX(i) of R; where several name one row, the largest i wins (the body's last write). Its
Star body there is the definition.

  steps     GATHER's (native/gather/: ``body_steps``)
  guard     GATHER's (``gather.routine`` with gather_=False: T as long as IX)
  kernels   numpy.py, cuda.py + scatter.cu (its index check: shared/rows.cu), emulated.py;
            distributed: distributed/rows.py (one all-to-all, or two all-reductions into a small R)
"""
from __future__ import annotations

from .. import gather

HOME = "stdlib/rows.star"
KERNELS = {"numpy": "starvm.native.scatter.numpy:make", "cupy": "starvm.native.scatter.cuda:make",
           "emulated": "starvm.native.scatter.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.rows:make_scatter" for local in ("numpy", "cupy", "emulated")}}

body_steps = gather.body_steps


def routine(decode, apply, storage):
    """SCATTER's factory: GATHER's guard, the rows written the other way."""
    return gather.routine(decode, apply, storage, gather_=False)
