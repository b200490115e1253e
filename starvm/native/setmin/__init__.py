"""SETMIN(T, F, X, var Z) of stdlib/search.star: Z marks the rows X marks where T's row is less
than F's (its Star body there is the definition).

  steps     ``body_steps(k)``
  guard     HIT's (native/hit/: ``compare_routine``)
  kernels   cuda.py + setmin.cu (one kernel), emulated.py; distributed: distributed/search.py
            (each rank's kernel on its rows)
"""
from __future__ import annotations

from ..hit import compare_routine
from ..steps import CALL, Steps, of

HOME = "stdlib/search.star"
KERNELS = {"cupy": "starvm.native.setmin.cuda:make", "emulated": "starvm.native.setmin.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.search:make_setmin" for local in ("cupy", "emulated")}}


def body_steps(k: int) -> Steps:
    # E := X; CLR(Z); for j ... begin A := COL(j, T); B := COL(j, F);
    #   Z := Z or (E and (B and not A)); E := E and not (A xor B); end;
    return CALL + of(ticks=k, CLR=1, COL_GET=2 * k, NOT=2 * k, AND=3 * k, OR=k, XOR=k)


def routine(compare):
    """SETMIN's factory (its formula looked up per call: a test may replace it)."""
    return compare_routine(compare, lambda k: body_steps(k))
