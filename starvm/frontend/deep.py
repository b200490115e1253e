"""Room for the recursive passes over a deeply nested program.

The passes of the front end (building the AST, checking, lowering, generating code) recurse
once per nesting level of the Star text: 5000 nested ``if``\\s or 10 000 ``not``\\s are far
beyond Python's default recursion limit of 1000 frames. ``deep(fn, ...)`` runs a pass on a
worker thread with a large stack and a recursion limit raised for the time it runs, so the
passes stay simple recursive code. The parser bounds the nesting first (``MAX_NESTING``,
``nesting_error``): every pass then needs at most a few frames per level, and a text nested
beyond that gets a clear error at the place where it is too deep.
"""
from __future__ import annotations

import sys
import threading

MAX_NESTING = 50_000          # levels of statements and expressions a program may nest
DEEP_PROGRAM = 150            # a program nested deeper is compiled with deep()
_FRAMES_PER_LEVEL = 8         # Python frames a pass may take per nesting level
_STACK_BYTES = 1 << 30        # the worker's stack (reserved address space, touched as used)
_lock = threading.Lock()      # one deep pass at a time: the recursion limit is process-wide
_local = threading.local()


def deep(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, with room for MAX_NESTING levels of recursion; exceptions
    propagate as if ``fn`` had run here. Nested calls run directly on the worker."""
    if getattr(_local, "inside", False):
        return fn(*args, **kwargs)
    outcome: list = [None, None]

    def work():
        _local.inside = True
        try:
            outcome[0] = fn(*args, **kwargs)
        except BaseException as e:    # handed to the calling thread, raised there
            outcome[1] = e

    with _lock:
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        try:
            threading.stack_size(_STACK_BYTES)
            worker = threading.Thread(target=work, name="starvm-deep", daemon=True)
        finally:
            threading.stack_size(old_stack)
        sys.setrecursionlimit(max(old_limit, MAX_NESTING * _FRAMES_PER_LEVEL + 1000))
        try:
            worker.start()
            worker.join()
        finally:
            sys.setrecursionlimit(old_limit)
    if outcome[1] is not None:
        raise outcome[1]
    return outcome[0]
