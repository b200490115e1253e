"""The execution context: the narrow interface between a machine and what runs code for it.

A ``Machine`` (runtime/machine.py) owns one and passes it to the compiled tier
(``jit.make_tier``); the tier, its routines and their calls read and change the machine's
state only through it:

  * ``ns``: the namespace generated code runs in (routines by their Python names, globals,
    the interpreter's op functions; ``_tick``, the --max-steps ticker of the run in progress,
    and ``_depth``, [Star calls in progress, the recursion limit], codegen.py);
  * ``backend``: the Backend the machine's tables and vectors belong to;
  * ``counts``: the step counters, indexed by ``ir.ops.STEP_INDEX``;
  * ``max_steps`` / ``max_depth``: the limits (the machine's settings of the same names are
    these attributes: setting one on the machine sets it here);
  * ``fuse`` / ``native``: `parallel for` fused, native kernels on (the machine's switches);
  * output: ``write(text)`` writes what `writeln` prints (on rank 0 only, ``prints``) to
    ``out`` (None: sys.stdout), ``flush()`` flushes it;
  * ``too_deep()``: the recursion limit's error for a call about to begin past it;
  * ``frames_of(tb)``: the Star frames of a traceback of interpreted code, outermost first.
"""
from __future__ import annotations

import sys
from typing import Any, NoReturn

from ..errors import StarRuntimeError


class ExecutionContext:
    """What a machine gives the code that runs Star routines for it (see the module's text)."""

    def __init__(self, backend, ns: dict[str, Any], counts: list[int], *, max_steps: int | None,
                 max_depth: int, fuse: bool, native: bool, out=None, prints: bool = True):
        self.backend = backend
        self.ns = ns
        self.counts = counts
        self.max_steps = max_steps
        self.max_depth = max_depth
        self.fuse = fuse
        self.native = native
        self.out = out              # a stream with write(); None: sys.stdout
        self.prints = prints        # False on the ranks of a distributed machine but rank 0
        self.frames_of = lambda tb: []   # the Star frames of a traceback (the machine sets it)

    # ------------------------------------------------------------------ output
    @property
    def stream(self):
        """The stream `writeln` writes to now."""
        return self.out or sys.stdout

    def write(self, text: str) -> None:
        if self.prints:
            self.stream.write(text)

    def flush(self) -> None:
        stream = self.stream
        if self.prints and hasattr(stream, "flush"):
            stream.flush()

    # ------------------------------------------------------------------ limits
    def ticker(self):
        """The --max-steps ticker of the run in progress (limits.ticker), None without a limit."""
        return self.ns.get("_tick") if self.max_steps is not None else None

    @property
    def depth(self) -> list[int]:
        """[Star calls in progress, the recursion limit] (the generated code's ``_depth``)."""
        return self.ns["_depth"]

    def too_deep(self, began: bool = True) -> NoReturn:
        """Called by a routine about to begin beyond ``max_depth`` nested Star calls: by its
        generated code (``began``: its frame is on the traceback) or by the compiled tier."""
        e = StarRuntimeError(f"recursion too deep (more than about {self.max_depth} nested Star calls)",
                             hint="raise the limit with STARVM_MAX_DEPTH or Machine(max_depth=N)")
        e.at_the_call = 1 if began else 0      # frames of the callee to leave off the stack
        raise e
