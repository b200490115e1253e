"""Limits that keep a Star program from running away with the machine.

* the step limit (``Machine(max_steps=N)``, ``star run --max-steps N``): loop iterations
  and routine calls. Code generated with ``CodeGen(step_limit=True)`` calls ``_tick()`` at
  the top of every loop body and routine; without a limit no check is generated at all;
* table size: a table larger than the free memory of the host (NumPy) or the device (CuPy)
  is refused before it is allocated, with the number of bytes it needs;
* Star recursion depth (``Machine(max_depth=N)``, ``STARVM_MAX_DEPTH``): every generated
  routine counts the Star calls in progress and the (N+1)-th nested call fails at its call
  site, as in compiled code; Python's recursion limit is raised to make room for them while
  Star code runs, then restored.
"""
from __future__ import annotations

import collections
import itertools
import operator
import os
import sys

from .. import config
from ..errors import StarRuntimeError

DEFAULT_MAX_DEPTH = 4000      # nested Star calls (counted exactly by the generated code)
_FRAMES_PER_CALL = 3          # Python frames a Star call may take (wrappers: profile, natives)
_DEPTH_MARGIN = 150           # frames the machine layer and backends need below a Star frame
_CHECK_FROM_BYTES = 16 << 20  # smaller tables are not worth a look at the free memory


def ticker(max_steps: int):
    """A fresh ``_tick`` function: fine for ``max_steps`` calls, then raises."""
    def run():
        yield from itertools.repeat(None, max_steps)
        raise StarRuntimeError(f"step limit reached: more than {max_steps} loop iterations and routine calls",
                               hint="raise the limit with --max-steps N (Machine(max_steps=N)) if the program "
                                    "is meant to run this long")
    return run().__next__


def max_steps(value) -> int | None:
    """Machine(max_steps=...): None (no limit) or a count of steps >= 0."""
    if value is None:
        return None
    try:
        n = operator.index(value)    # an int, or a NumPy integer
    except TypeError:
        n = -1
    if isinstance(value, bool) or n < 0:
        raise ValueError(f"max_steps must be a whole number >= 0 (or None: no limit), got {value!r}")
    return n


def steps_argument(text: str) -> int:
    """The argparse type of --max-steps: a count >= 0; anything else is a usage error (exit 2)."""
    import argparse
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of steps, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


def tick_many(tick, count: int) -> None:
    """``count`` steps of a ``ticker`` at once (a native kernel reporting its Star body's loop
    iterations and calls): raises as ``count`` calls of ``tick`` would, at C speed."""
    if count > 0:
        collections.deque(itertools.islice(tick.__self__, count), maxlen=0)


def max_depth(explicit: int | None = None) -> int:
    """Machine(max_depth=...) first, then STARVM_MAX_DEPTH, else DEFAULT_MAX_DEPTH."""
    if explicit is not None:
        return int(explicit)
    configured = config.max_depth()
    return DEFAULT_MAX_DEPTH if configured is None else configured


def frame_depth() -> int:
    f, d = sys._getframe(1), 0
    while f is not None:
        f, d = f.f_back, d + 1
    return d


class RecursionLimit:
    """Context manager: Python's recursion limit = current depth + depth + margin, restored after."""
    __slots__ = ("depth", "old")

    def __init__(self, depth: int):
        self.depth = depth

    def __enter__(self):
        self.old = sys.getrecursionlimit()
        sys.setrecursionlimit(frame_depth() + _FRAMES_PER_CALL * self.depth + _DEPTH_MARGIN)
        return self

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.old)
        return False


def table_bytes(n: int, k: int) -> int:
    """Bytes of an n x k table: k columns of ceil(n / 64) 64-bit words."""
    return k * ((n + 63) // 64) * 8


def free_bytes(backend=None) -> int | None:
    """Free memory where the backend keeps its tables (None when it cannot be told)."""
    if backend is not None and backend.is_device and backend.gpu:
        try:
            import cupy
            free, _total = cupy.cuda.runtime.memGetInfo()
            pool = cupy.get_default_memory_pool()
            return int(free) + int(pool.free_bytes())
        except Exception:
            return None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_table(backend, n: int, k: int) -> None:
    """Refuse, before allocating, a table that does not fit in the free memory."""
    need = table_bytes(n, k)
    if need < _CHECK_FROM_BYTES:
        return
    per_rank = getattr(backend, "check_table", None)    # distributed (starvm/distributed): its rows on each rank
    if per_rank is not None:
        return per_rank(n, k, table_bytes, free_bytes)
    backend = backend.placement(n)
    free = free_bytes(backend)
    if free is not None and need > free:
        where = "GPU memory" if backend.is_device and backend.gpu else "memory"
        raise StarRuntimeError(f"table({n}, {k}) needs {need} bytes but only {free} bytes of {where} are free")
