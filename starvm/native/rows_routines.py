"""The routines around the row-move kernels of rows_numpy.py and rows_cupy.py: which
arguments a kernel takes, and the Star body (stdlib/rows.star, the definition) for the rest.

A backend's module gives its kernels and two tests of its own storage (``is_table``: a
table stored as that backend stores them; ``vec_ok``: a vector of n bits of that backend),
and gets back the four factories of the native registry (starvm/native/__init__.py).
Each routine reports the steps its Star body would take (steps.py) to the machine's meter:
IOTA's before its kernel runs; GATHER's, SCATTER's and GROUPMIN's after (they depend on what
the kernel finds: a row number out of range sends the call to the Star body, which counts
its own steps, and GROUPMIN's count depends on the groups it found).
"""
from __future__ import annotations

from . import steps, timed_call


class Unusual(Exception):
    """Raised by a kernel before it changes anything: the Star body must run instead
    (a row number out of range: the body's own error)."""


def factories(iota, gather, scatter, groupmin, *, is_table, vec_ok, nonempty: bool, group_bits_max: int):
    """make_iota, make_gather, make_scatter, make_groupmin for one backend's kernels.
    ``nonempty``: the kernels need tables with rows and columns; ``group_bits_max``: the
    widest G whose values GROUPMIN's kernel can index."""

    def sized(t) -> bool:
        return not nonempty or (t.n > 0 and t.k > 0)

    def make_iota(star_body, backend, meter):
        def routine(T):
            if not (is_table(T) and sized(T)):
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

    def make_move(kernel, gather_: bool):
        def make(star_body, backend, meter):
            def routine(T, IX, X, R):
                if not usable_move(T, IX, X, R, gather_):
                    return star_body(T, IX, X, R)
                try:
                    timed_call(kernel, backend, meter, T, IX, X.v, R)
                except Unusual:
                    return star_body(T, IX, X, R)
                meter.charge(steps.move_rows(backend.numb(X.v), IX.k))
            routine.star_body = star_body
            return routine
        return make

    def make_groupmin(star_body, backend, meter):
        def routine(G, K, X, Z):
            if not (is_table(G) and is_table(K) and sized(G) and 1 <= G.k <= group_bits_max
                    and 1 <= K.k <= 64 and K.n == G.n and vec_ok(X, G.n) and vec_ok(Z, G.n)):
                return star_body(G, K, X, Z)
            Z.v = timed_call(groupmin, backend, meter, G, K, X.v)
            # Z marks one row per group: the groups, and the 1 bits of their G values
            ones = sum(backend.numb(backend.and_(backend.col_get(G, j), Z.v)) for j in range(G.k))
            meter.charge(steps.groupmin(backend.numb(Z.v), G.k, ones, K.k))
            return (Z,)
        routine.star_body = star_body
        return routine

    return make_iota, make_move(gather, True), make_move(scatter, False), make_groupmin
