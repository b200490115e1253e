"""Numba's compile of starvm's generated code made cheaper, what it compiles unchanged.

``cheaper()`` is held around every compile the tier asks of Numba (cache.compile_overload:
routines, their linked callees, starvm's kernels, in the foreground and in compile_worker):

* **Recursion typed once.** Numba types a call of a function it is still typing (a routine
  calling itself; a cycle of routines, which lower.cycle_function makes one function) by
  typing the whole function again without its recursive calls
  (``TypeInferer.return_types_from_partial``), at every recursive call site and in every
  round of its propagation: BORUVKA_LIVE's cycle function was typed seven times, 2.7 of the
  8 s of CPU it took to compile (bench/results/compile_phases_cpu2.md). The return type that
  partial typing finds first is kept for the function being typed, and checked once its full
  typing ends: where the full typing's return type differs (a return type that only later
  rounds refine, which generated code, its results typed by its parameters, does not make),
  the compile fails and runs again without this (``again_without``), as Numba would type it.
* **The garbage collector waits.** A compile makes hundreds of thousands of Python objects
  that live until it ends (Numba's IR, types, constraints); the collector's full passes
  walk them all again and again. It is paused for the compile and run once after it.

``enabled = False`` compiles as Numba does (for measuring: bench/bench_compile_size.py).
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

enabled = True

_STATE = threading.local()          # depth: cheaper() held by this thread (compiles nest)
_MEMO = "_starvm_partial_return"    # the TypeInferer attribute keeping the first partial result
_patched = False
_patch_lock = threading.Lock()


class PartialTypeChanged(Exception):
    """The full typing of a recursive function gave another return type than its first
    partial typing: compile it again as Numba does."""


def _active() -> bool:
    return getattr(_STATE, "depth", 0) > 0 and not getattr(_STATE, "plain", False)


def _patch() -> None:
    """Numba's TypeInferer, its partial typing kept while cheaper() is held (once a process)."""
    global _patched
    with _patch_lock:
        if _patched:
            return
        from numba.core import types
        from numba.core.typeinfer import TypeInferer

        numba_partial = TypeInferer.return_types_from_partial
        numba_unify = TypeInferer.unify

        def return_types_from_partial(self):
            if not _active():
                return numba_partial(self)
            found = self.__dict__.get(_MEMO)
            if found is None:
                found = numba_partial(self)
                if found is not None:
                    setattr(self, _MEMO, found)
            return found

        def unify(self, *args, **kwargs):
            result = numba_unify(self, *args, **kwargs)
            kept = self.__dict__.get(_MEMO)
            if kept is not None and types.unliteral(result[1]) != kept:
                _STATE.changed = True
                raise PartialTypeChanged(f"recursive calls typed {kept}, the function returns {result[1]}")
            return result

        TypeInferer.return_types_from_partial = return_types_from_partial
        TypeInferer.unify = unify
        _patched = True


@contextmanager
def cheaper():
    """Held around one compile (nested compiles share the outermost)."""
    if not enabled:
        yield
        return
    _patch()
    depth = getattr(_STATE, "depth", 0)
    _STATE.depth = depth + 1
    paused = depth == 0 and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        _STATE.depth = depth
        if paused:
            gc.enable()
            gc.collect(1)      # the young objects the compile left; the old ones at the next full pass


def again_without(compile_once):
    """``compile_once()``, and where a recursive function's partial typing changed under
    cheaper(), once more typed as Numba types it."""
    _STATE.changed = False
    try:
        return compile_once()
    except Exception:
        if not getattr(_STATE, "changed", False) or getattr(_STATE, "depth", 0) > 0:
            raise
    _STATE.changed = False
    _STATE.plain = True
    try:
        return compile_once()
    finally:
        _STATE.plain = False
