"""MAX(T, X, var Z) of stdlib/search.star: Z marks the rows X marks that hold the greatest value
of T (its Star body there is the definition). Its kernels and guard are MIN's (native/min/:
``extreme(..., want_max=True)``), which mirror each other.

  steps     ``body_steps(k)``
"""
from __future__ import annotations

from ..steps import CALL, Steps, of

HOME = "stdlib/search.star"
KERNELS = {"cupy": "starvm.native.min.cuda:make_max", "emulated": "starvm.native.min.emulated:make_max",
           **{f"mpi:{local}": "starvm.distributed.search:make_max" for local in ("cupy", "emulated")}}


def body_steps(k: int) -> Steps:
    # Z := X; for j ... begin Y := Z and COL(j, T); if SOME(Y) then Z := Y; end;
    return CALL + of(ticks=k, COL_GET=k, AND=k, SOME=k)
