"""HIT(T, F, X, var Z) of stdlib/search.star: Z marks the rows X marks where T's row equals F's
(its Star body there is the definition).

  steps     ``body_steps(k)``
  guard     ``compare_routine``: T and F of the same shape, with rows; X and Z of their rows;
            otherwise (or past --max-steps) the Star body runs. SETMIN (native/setmin/) has the
            same guard.
  kernels   cuda.py + hit.cu (one kernel), emulated.py; distributed: distributed/search.py
            (each rank's kernel on its rows)
"""
from __future__ import annotations

from ..meter import timed_call
from ..steps import CALL, Steps, of

HOME = "stdlib/search.star"
KERNELS = {"cupy": "starvm.native.hit.cuda:make", "emulated": "starvm.native.hit.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.search:make_hit" for local in ("cupy", "emulated")}}


def body_steps(k: int) -> Steps:
    # Z := X; for j ... Z := Z and not (COL(j, T) xor COL(j, F));
    return CALL + of(ticks=k, COL_GET=2 * k, XOR=k, NOT=k, AND=k)


def usable(T, F, X, Z) -> bool:
    return (T.n, T.k) == (F.n, F.k) and T.n > 0 and X.n == T.n and Z.n == T.n


def compare_routine(compare, count):
    """The factory of a row-by-row comparison of two tables around ``compare(T, F, X_v)`` -> Z's
    words; ``count(k)``: the Star body's steps."""
    def make(star_body, backend, meter):
        def routine_(T, F, X, Z):
            if not usable(T, F, X, Z) or not meter.affords(count(T.k).ticks):
                return star_body(T, F, X, Z)
            meter.charge(count(T.k))
            Z.v = timed_call(compare, backend, meter, T, F, X.v)
            return (Z,)
        routine_.star_body = star_body
        return routine_
    return make


def routine(compare):
    """HIT's factory (its formula looked up per call: a test may replace it)."""
    return compare_routine(compare, lambda k: body_steps(k))
