"""GROUPMIN(G, K, X, var Z) of stdlib/rows.star: Z marks, for every G value among the rows X
marks, the first of its rows whose K is least (its Star body there is the definition).

  steps     ``body_steps(groups, group_bits, group_ones, key_bits)``: the groups (and the 1
            bits of their G values) come from the kernel
  guard     ``routine``: G of 1..group_bits_max columns with rows, K of 1..64 columns and G's
            rows, X and Z of G's rows. The groups (so the ticks) are known only after the
            kernel, which writes nothing but its result: past --max-steps (the fewest groups
            possible first, then those it found) the Star body runs instead
  kernels   numpy.py, cuda.py + groupmin.cu (scratch passes, hash tables, or a sort: its
            doc), emulated.py; distributed: distributed/rows.py (a candidate per G value to
            the rank it hashes to; two all-to-alls)

Each kernel reads from the device what the step report needs in one transfer (the groups and
the 1 bits of their G values), so a call costs one device-to-host round trip.
"""
from __future__ import annotations

from .. import match, min as minimum
from ..guard import limited
from ..meter import timed_call
from ..steps import CALL, Steps, of

HOME = "stdlib/rows.star"
KERNELS = {"numpy": "starvm.native.groupmin.numpy:make", "cupy": "starvm.native.groupmin.cuda:make",
           "emulated": "starvm.native.groupmin.emulated:make",
           **{f"mpi:{local}": "starvm.distributed.rows:make_groupmin" for local in ("numpy", "cupy", "emulated")}}


def body_steps(groups: int, group_bits: int, group_ones: int, key_bits: int) -> Steps:
    """``groups``: the distinct G values among the marked rows; ``group_ones``: the 1 bits of
    those values, together (MATCH's NOT steps are their 0 bits).
    Y := X; CLR(Z); while SOME(Y) do begin i := FND(Y); MATCH(G, Y, ROW(i, G), S);
      Y := Y and not S; MIN(K, S, M); Z(FND(M)) := 1; end;"""
    per_group = of(ticks=1, SOME=1, FND=2, ROW_GET=1, NOT=1, AND=1, BIT_SET=1) + minimum.body_steps(key_bits)
    matches = match.body_steps(group_bits, 0).times(groups) + of(NOT=-group_ones)
    return CALL + of(CLR=1, SOME=1) + per_group.times(groups) + matches


def routine(counted, numb, storage, *, group_bits_max: int):
    """GROUPMIN's factory around ``counted(G, K, X_v) -> (Z_v, groups, ones of the groups' G
    values)`` and ``numb(X_v)`` (the marked rows, for the pre-check under a step limit), on
    tables and vectors of ``storage``; ``group_bits_max``: the widest G the kernel indexes."""
    def make(star_body, backend, meter):
        def routine_(G, K, X, Z):
            if not (storage.is_table(G) and storage.is_table(K) and storage.sized(G) and 1 <= G.k <= group_bits_max
                    and 1 <= K.k <= 64 and K.n == G.n and storage.vec_ok(X, G.n) and storage.vec_ok(Z, G.n)):
                return star_body(G, K, X, Z)
            # the groups (so the ticks) are known after the kernel, which writes nothing but
            # its result: where even one group is past the limit the body runs at once, else
            # the kernel's result is taken only where the limit affords its groups
            if limited(meter) and not meter.affords(body_steps(1 if numb(X.v) else 0, G.k, 0, K.k).ticks):
                return star_body(G, K, X, Z)
            z, groups, ones = timed_call(counted, backend, meter, G, K, X.v)
            st = body_steps(groups, G.k, ones, K.k)
            if not meter.affords(st.ticks):
                return star_body(G, K, X, Z)
            meter.tick(st.ticks)
            meter.count(st.ops)
            Z.v = z
            return (Z,)
        routine_.star_body = star_body
        return routine_
    return make
