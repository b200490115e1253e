"""MIN(T, X, var Z) of stdlib/search.star: Z marks the rows X marks that hold the least value of
T (its Star body there is the definition). MAX (native/max/) runs the same kernels with
``want_max``.

  steps     ``body_steps(k)``
  guard     ``routine``: T of 1..64 columns with rows, X and Z of T's rows; otherwise (or past
            --max-steps) the Star body runs
  kernels   cuda.py + extreme.cu (two kernels, no host synchronisation), emulated.py;
            distributed: distributed/search.py (one all-reduction of the ranks' extremes)
"""
from __future__ import annotations

from .. import max as _max
from ..meter import timed_call
from ..steps import CALL, Steps, of

HOME = "stdlib/search.star"
KERNELS = {"cupy": "starvm.native.min.cuda:make", "emulated": "starvm.native.min.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.search:make_min" for local in ("cupy", "emulated")}}


def body_steps(k: int) -> Steps:
    # Z := X; for j ... begin Y := Z and not COL(j, T); if SOME(Y) then Z := Y; end;
    return CALL + of(ticks=k, COL_GET=k, NOT=k, AND=k, SOME=k)


def usable(T, X, Z) -> bool:
    return 0 < T.k <= 64 and T.n > 0 and X.n == T.n and Z.n == T.n


def routine(extreme, want_max: bool):
    """The factory of MIN (MAX where ``want_max``) around ``extreme(T, X_v, want_max)`` -> Z's words."""
    def count(k):                       # looked up per call (a test replaces a formula)
        return (_max.body_steps if want_max else body_steps)(k)

    def make(star_body, backend, meter):
        def routine_(T, X, Z):
            if not usable(T, X, Z) or not meter.affords(count(T.k).ticks):
                return star_body(T, X, Z)
            meter.charge(count(T.k))
            Z.v = timed_call(extreme, backend, meter, T, X.v, want_max)
            return (Z,)
        routine_.star_body = star_body
        return routine_
    return make
