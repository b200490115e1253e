"""GATHER in NumPy: decode IX into row numbers (np.unpackbits over the byte view of the columns,
then shifts), check them, take T's rows at the marked ones as numbers (64 columns at a time:
one uint64 a row, moved with fancy indexing), split them into columns again (np.packbits,
little bit order) and merge into R's words under the X mask, so the rows X does not mark keep
their value. ``decode`` serves SCATTER too. Results equal the Star body's bit for bit
(tests/unit/test_native_rows.py)."""
from __future__ import annotations

import numpy as np

from ..guard import Unusual
from ..shared.numpy_rows import STORAGE, move_rows, values, vec_bools, vec_words
from . import routine


def decode(IX, X_v, limit: int):
    """((the marked rows of IX, 0-based ascending; the rows they name, 0-based), how many
    rows are marked); Unusual when one names a row outside 1..limit (nothing written)."""
    rows = np.flatnonzero(vec_bools(X_v, IX.n))
    named = values(IX.data, IX.n, rows).astype(np.int64)    # IX.k <= 63: no overflow
    if rows.size and (named.min() < 1 or named.max() > limit):
        raise Unusual
    return (rows, named - 1), int(rows.size)


def gather_apply(T, IX, plan, X_v, R) -> None:
    rows, src = plan
    if rows.size and T.k:
        move_rows(T, src, R, rows, vec_words(X_v, R.n)[None, :])


def gather(T, IX, X_v, R) -> None:
    gather_apply(T, IX, decode(IX, X_v, T.n)[0], X_v, R)


make = routine(decode, gather_apply, STORAGE)
