"""The routines around the row-move kernels of rows_numpy.py and rows_cupy.py: which
arguments a kernel takes, and the Star body (stdlib/rows.star, the definition) for the rest.

A backend's module gives its kernels and two tests of its own storage (``is_table``: a
table stored as that backend stores them; ``vec_ok``: a vector of n bits of that backend),
and gets back the four factories of the native registry (starvm/native/__init__.py).

Each routine reports the steps its Star body would take (steps.py) to the machine's meter.
A kernel runs only where the --max-steps limit affords the body's ticks (Meter.affords):
past it the Star body runs instead and stops part way, with the rows it wrote and the steps
it counted up to there, as on every other route:

  IOTA       from the sizes, before its kernel;
  GATHER, SCATTER  in two parts: ``decode`` reads the index table (no writes) and returns the
             marked rows' count with its plan, or raises ``Unusual`` (a row number out of
             range, or ticks past the limit: the Star body runs instead, counting its own
             steps); then the charge; then ``apply`` moves the rows;
  GROUPMIN   its count depends on the groups the kernel finds, and the kernel writes nothing
             but its result: past the limit (the fewest groups possible first, then those it
             found) the body runs instead.

Each kernel reads from the device what the step report needs in one transfer (decode: the
marked count and the range check; GROUPMIN: the groups and the 1 bits of their G values),
so a call costs one device-to-host round trip, not one per column.
"""
from __future__ import annotations

from . import steps, timed_call


class Unusual(Exception):
    """Raised by a kernel before it changes anything: the Star body must run instead
    (a row number out of range: the body's own error)."""


def limited(meter) -> bool:
    """Is a --max-steps limit set? (Only then does a routine read what a pre-check needs.)"""
    return meter.ticks() is not None


def factories(iota, decode, gather_apply, scatter_apply, groupmin_counted, numb, *, is_table, vec_ok,
              nonempty: bool, group_bits_max: int):
    """make_iota, make_gather, make_scatter, make_groupmin for one backend's kernels:

      iota(T)
      decode(IX, X_v, limit) -> (plan, marked)    Unusual when a marked row names one
                                                  outside 1..limit; writes nothing
      gather_apply(T, IX, plan, X_v, R), scatter_apply(T, IX, plan, X_v, R)
      groupmin_counted(G, K, X_v) -> (Z_v, groups, ones of the groups' G values)
      numb(X_v) -> the marked rows (for GROUPMIN's pre-check under a step limit)

    ``nonempty``: the kernels need tables with rows and columns; ``group_bits_max``: the
    widest G whose values GROUPMIN's kernel can index."""

    def sized(t) -> bool:
        return not nonempty or (t.n > 0 and t.k > 0)

    def make_iota(star_body, backend, meter):
        def routine(T):
            if not (is_table(T) and sized(T)) or not meter.affords(steps.iota(T.n, T.k).ticks):
                return star_body(T)
            meter.charge(steps.iota(T.n, T.k))
            timed_call(iota, backend, meter, T)
        routine.star_body = star_body
        return routine

    def usable_move(T, IX, X, R, gather_: bool) -> bool:
        if not all(is_table(t) and sized(t) for t in (T, IX, R)):
            return False
        if R is T or R is IX or R.data is T.data or R.data is IX.data:
            return False                    # the body's row-by-row order would matter
        if not (1 <= IX.k <= 63 and vec_ok(X, IX.n) and R.k == T.k):
            return False
        return R.n == IX.n if gather_ else T.n == IX.n

    def make_move(apply, gather_: bool):
        def make(star_body, backend, meter):
            def run(T, IX, X_v, R):
                plan, marked = decode(IX, X_v, T.n if gather_ else R.n)
                if not meter.affords(steps.move_rows(marked, IX.k).ticks):
                    raise Unusual          # past --max-steps: the body stops part way
                meter.charge(steps.move_rows(marked, IX.k))
                apply(T, IX, plan, X_v, R)

            def routine(T, IX, X, R):
                if not usable_move(T, IX, X, R, gather_):
                    return star_body(T, IX, X, R)
                try:
                    timed_call(run, backend, meter, T, IX, X.v, R)
                except Unusual:
                    return star_body(T, IX, X, R)
            routine.star_body = star_body
            return routine
        return make

    def make_groupmin(star_body, backend, meter):
        def routine(G, K, X, Z):
            if not (is_table(G) and is_table(K) and sized(G) and 1 <= G.k <= group_bits_max
                    and 1 <= K.k <= 64 and K.n == G.n and vec_ok(X, G.n) and vec_ok(Z, G.n)):
                return star_body(G, K, X, Z)
            # the groups (so the ticks) are known after the kernel, which writes nothing but
            # its result: where even one group is past the limit the body runs at once, else
            # the kernel's result is taken only where the limit affords its groups
            if limited(meter) and not meter.affords(steps.groupmin(1 if numb(X.v) else 0, G.k, 0, K.k).ticks):
                return star_body(G, K, X, Z)
            z, groups, ones = timed_call(groupmin_counted, backend, meter, G, K, X.v)
            st = steps.groupmin(groups, G.k, ones, K.k)
            if not meter.affords(st.ticks):
                return star_body(G, K, X, Z)
            meter.tick(st.ticks)
            meter.count(st.ops)
            Z.v = z
            return (Z,)
        routine.star_body = star_body
        return routine

    return make_iota, make_move(gather_apply, True), make_move(scatter_apply, False), make_groupmin
