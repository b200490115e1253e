"""IOTA(var T) of stdlib/rows.star: row i of T := i (its Star body there is the definition).

  steps     ``body_steps(n, k)``, charged before the kernel runs
  guard     ``routine``: a table of the backend's storage; otherwise (or past --max-steps) the
            Star body runs
  kernels   numpy.py, cuda.py + iota.cu, emulated.py; distributed: distributed/rows.py
            (each rank writes its own rows' numbers)
"""
from __future__ import annotations

from ..meter import timed_call
from ..steps import CALL, Steps, of, setnum

HOME = "stdlib/rows.star"
KERNELS = {"numpy": "starvm.native.iota.numpy:make", "cupy": "starvm.native.iota.cuda:make",
           "emulated": "starvm.native.iota.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.rows:make_iota" for local in ("numpy", "cupy", "emulated")}}


def body_steps(n: int, k: int) -> Steps:
    # for i := 1 to NROWS(T) do begin SETNUM(i, w); ROW(i, T) := w; end;
    return CALL + (of(ticks=1, ROW_SET=1) + setnum(k)).times(n)


def routine(iota, storage):
    """IOTA's factory around ``iota(T)`` on tables of ``storage`` (guard.Storage)."""
    def make(star_body, backend, meter):
        def routine_(T):
            if not (storage.is_table(T) and storage.sized(T)) or not meter.affords(body_steps(T.n, T.k).ticks):
                return star_body(T)
            meter.charge(body_steps(T.n, T.k))
            timed_call(iota, backend, meter, T)
        routine_.star_body = star_body
        return routine_
    return make
