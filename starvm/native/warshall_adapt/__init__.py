"""WARSHALL-adapt(n, var P) of stdlib/warshall.star: P := its transitive closure (its Star body
there is the definition).

  steps     ``body_steps(n, ors)``: ``ors`` from the kernel (the ORs depend on the pivots' rows)
  guard     ``routine``: P is n x n; otherwise (or past --max-steps) the Star body runs
  kernels   numpy.py (bit-packed Warshall: the emulated device's; the NumPy backend runs the
            compiled Star body instead, within 2x of it: bench/results/compiled_cpu2.md),
            cuda.py + warshall_adapt.cu (blocked, 64 pivots at a time); distributed:
            distributed/warshall.py (one broadcast per pivot)
"""
from __future__ import annotations

from ..meter import timed_call
from ..steps import CALL, Steps, of

HOME = "stdlib/warshall.star"
KERNELS = {"cupy": "starvm.native.warshall_adapt.cuda:make", "emulated": "starvm.native.warshall_adapt.numpy:make",
           "mpi:numpy": "starvm.distributed.warshall:make"}


def body_steps(n: int, ors: int) -> Steps:
    """``ors``: for every pivot k, the 1s of row k of P just before pivot k (the columns i
    with V(k) = 1), summed.
    for k := 1 to n do parallel for i := 1 to n do begin W := COL(k, P); V := COL(i, P);
      if V(k) = 1 then V := V or W; COL(i, P) := V; end;"""
    return CALL + of(ticks=2 * n, COL_GET=2 * n * n, BIT_GET=n * n, COL_SET=n * n, OR=ors)


def routine(kernel):
    """A factory for (n: integer; var P: table) closures: the kernel runs when P is n x n.
    ``kernel(P)`` returns the number of OR steps the Star body takes (``body_steps``)."""
    def make(star_body, backend, meter):
        def routine_(n, P):
            if not (isinstance(n, int) and P.n == n and P.k == n):
                return star_body(n, P)       # an unusual call: the Star body is the definition
            if not meter.affords(body_steps(n, 0).ticks):
                return star_body(n, P)       # past --max-steps: the body stops part way
            meter.tick(body_steps(n, 0).ticks)
            ors = timed_call(kernel, backend, meter, P)
            meter.count(body_steps(n, int(ors)).ops)
        routine_.star_body = star_body
        return routine_
    return make
