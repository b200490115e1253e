"""SETMIN on the GPU in one kernel (setmin.cu): a thread takes one 64-row word and walks the k
columns of both tables in registers, column 1 first: lt |= eq & F_j & ~T_j; eq &= ~(T_j xor F_j);
Z = X & lt: the Star body's own column recurrence, so the result is its bit for bit
(tests/unit/test_native_search.py)."""
from __future__ import annotations

from ..hit.cuda import column_walk
from . import routine

less_rows = column_walk("setmin", "less_rows")
make = routine(less_rows)
