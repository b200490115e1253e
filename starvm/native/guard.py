"""What every routine's argument guard (native/<routine>/__init__.py: ``routine``) builds on: the
storage a backend's kernels take, and the exception a kernel raises before it writes anything
when the Star body must run instead."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


class Unusual(Exception):
    """Raised by a kernel before it changes anything: the Star body must run instead
    (a row number out of range: the body's own error; ticks past --max-steps)."""


@dataclass(frozen=True)
class Storage:
    """The tables and vectors one backend's kernels take: ``is_table(t)`` (a table stored as
    that backend stores them), ``vec_ok(x, n)`` (a vector of n bits of that backend);
    ``nonempty``: the kernels need tables with rows and columns."""
    is_table: Callable
    vec_ok: Callable
    nonempty: bool

    def sized(self, t) -> bool:
        return not self.nonempty or (t.n > 0 and t.k > 0)


def limited(meter) -> bool:
    """Is a --max-steps limit set? (Only then does a routine read what a pre-check needs.)"""
    return meter.ticks() is not None
