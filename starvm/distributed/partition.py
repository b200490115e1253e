"""Row blocks: which rows of an n-row table (or bits of an n-bit slice) a rank holds.

Blocks are whole units of ``align`` rows, 64 by default, so that a rank's part of a column
is a run of whole 64-bit words of the global column and no word is shared between ranks:
with u = ⌈n/align⌉ units and b = ⌈u / P⌉, rank r holds units [r*b, (r+1)*b) clipped to u,
i.e. rows [align*r*b, align*(r+1)*b) clipped to n. Rank 0 holds the largest block; trailing
ranks may hold nothing (a table of fewer than align*(P-1) rows). Tests use align = 1 so that
small tables are split too (every collective path runs on tables of a few rows).
"""
from __future__ import annotations

from functools import lru_cache


class Layout:
    """The block of an n-row table that one rank of ``size`` holds."""
    __slots__ = ("n", "size", "rank", "align", "per", "start", "stop")

    def __init__(self, n: int, size: int, rank: int, align: int = 64):
        units = (n + align - 1) // align
        self.n, self.size, self.rank, self.align = n, size, rank, align
        self.per = align * (-(-units // size)) if units else 0     # rows per rank (the last may hold fewer)
        self.start, self.stop = self.bounds(rank)

    @property
    def local_n(self) -> int:
        return self.stop - self.start

    def owner(self, i: int) -> int:
        """The rank holding row i (0-based)."""
        return i // self.per

    def has(self, i: int) -> bool:
        return self.start <= i < self.stop

    def bounds(self, r: int) -> tuple[int, int]:
        """Rows [start, stop) of rank r."""
        return min(self.n, r * self.per), min(self.n, (r + 1) * self.per)

    def largest(self) -> int:
        """Rows of the largest block (rank 0's)."""
        return min(self.n, self.per)


@lru_cache(maxsize=4096)
def layout(n: int, size: int, rank: int, align: int = 64) -> Layout:
    return Layout(n, size, rank, align)
