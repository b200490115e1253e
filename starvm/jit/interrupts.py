"""Ctrl-C for compiled calls: a SIGINT sets the call's st[S_INTR] at C level.

Compiled code polls st[S_INTR] and Python's own record of a SIGINT (kernels.tick:
PyOS_InterruptOccurred). Python's record alone loses signals: where Python's handler runs
inside C code that clears every exception, its KeyboardInterrupt is dropped with the signal
(Numba's dispatcher asks an argument for `_numba_type_` with PyObject_HasAttr, which did
that to a Ctrl-C landing in OutputSink.flush's typing of the output holder: the call then
ran on, `star run` hung under load, bench/fuzz_compiled --cases interrupt seeds 3074,
3083), and a call on a thread of its own (call.on_large_stack) never sees it (Python looks
at signals on the main thread only, and that thread then waits for the GIL the call holds).

So from the first compiled call on, SIGINT goes first to a small C-level handler (compiled
once with llvmlite, a few milliseconds) that sets the word ``armed`` points to, then to the
handler that was there (Python's, which records the signal and raises KeyboardInterrupt as
before). It stays installed between calls: arming a call is a pointer store, and for a call
that may run long a sigaction query too (someone may have put another handler in front
since), so every compiled call is armed. Where SIGINT is
ignored or left at its default action, nothing is installed (a SIGINT kills the process or
is ignored, as before); where someone installs another handler (Python's signal.signal),
the next armed call puts this one in front of it again.
"""
from __future__ import annotations

import _signal      # signal.getsignal's C function: signal's wrapper costs ~6 us (an enum lookup that fails)
import ctypes
import threading
import time
from contextlib import contextmanager
from functools import lru_cache

from ..targets.layout import S_INTR


class _Sigaction(ctypes.Structure):
    """glibc's struct sigaction on Linux (x86-64, aarch64)."""
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


_SA_SIGINFO, _SA_ONSTACK, _SA_RESTART = 4, 0x08000000, 0x10000000
_SIGINT = 2


@lru_cache(maxsize=None)
def _handler():
    """(handler address, its flag pointer's cell, its chained handler's cell, engine)."""
    import llvmlite.binding as llvm
    from llvmlite import ir
    i64, i8p = ir.IntType(64), ir.IntType(8).as_pointer()
    mod = ir.Module(name="starvm_interrupts")
    mod.triple = llvm.get_process_triple()
    flag = ir.GlobalVariable(mod, i64.as_pointer(), name="starvm_interrupt_flag")
    flag.initializer = ir.Constant(i64.as_pointer(), None)
    fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(32), i8p, i8p])
    chained = ir.GlobalVariable(mod, fnty.as_pointer(), name="starvm_interrupt_chained")
    chained.initializer = ir.Constant(fnty.as_pointer(), None)
    fn = ir.Function(mod, fnty, name="starvm_on_sigint")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    p = b.load_atomic(flag, "monotonic", 8)
    with b.if_then(b.icmp_unsigned("!=", p, ir.Constant(i64.as_pointer(), None))):
        b.store_atomic(ir.Constant(i64, 1), p, "monotonic", 8)
    old = b.load_atomic(chained, "monotonic", 8)
    with b.if_then(b.icmp_unsigned("!=", old, ir.Constant(fnty.as_pointer(), None))):
        b.call(old, fn.args)
    b.ret_void()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), machine)
    engine.finalize_object()
    return (engine.get_function_address("starvm_on_sigint"),
            ctypes.c_void_p.from_address(engine.get_global_value_address("starvm_interrupt_flag")),
            ctypes.c_void_p.from_address(engine.get_global_value_address("starvm_interrupt_chained")), engine)


@lru_cache(maxsize=None)
def _sigaction():
    fn = ctypes.CDLL(None, use_errno=True).sigaction
    fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


_CURRENT = _Sigaction()      # sigaction's answer (main thread only: no two arm at once)
_MAIN = threading.main_thread().ident
_RECHECK_S = 0.05            # seconds an answer of _in_front stands while Python's handler is the same
_checked = [None, -1.0, False]   # Python's SIGINT handler, when, and the answer, at the last look


def _in_front(check: bool) -> bool:
    """Is the C handler SIGINT's first handler (installed now where it was not)? Not where
    SIGINT is ignored or has its default action. Asking the kernel (``check``) costs ~10 us
    of a compiled call here (a system call, in a VM): otherwise the last answer stands while
    Python's SIGINT handler is the object it was (signal.signal, which replaces the C handler,
    mostly installs another one) for _RECHECK_S seconds."""
    python_handler, now = _signal.getsignal(_SIGINT), time.monotonic()
    if not check and python_handler is _checked[0] and now - _checked[1] < _RECHECK_S:
        return _checked[2]
    answer = _install()
    _checked[:] = python_handler, now, answer
    return answer


def _install() -> bool:
    address, _flag, chained, _engine = _handler()
    sigaction = _sigaction()
    if sigaction(_SIGINT, None, ctypes.addressof(_CURRENT)) != 0:
        return False
    now = _CURRENT.handler
    if now == address:
        return True
    if now in (None, 0, 1):          # SIG_DFL, SIG_IGN
        return False
    chained.value = now              # the handler it goes on to (not running: ours is not installed)
    new = _Sigaction()
    new.handler, new.mask = address, _CURRENT.mask
    new.flags = _SA_SIGINFO | _SA_ONSTACK | (_CURRENT.flags & _SA_RESTART)
    return sigaction(_SIGINT, ctypes.addressof(new), None) == 0


def arm(address: int, check: bool = True):
    """From now on a SIGINT sets the int64 at ``address`` (to 1), until disarm(the answer).
    The answer: what was armed before (a call within a call), or False where nothing was
    armed (off the main thread, where signals are Python's main thread's; SIGINT ignored or
    at its default action). ``check``: make sure the handler is in front (a system call;
    call.py skips it for calls expected to be short, see _Armed)."""
    if threading.get_ident() != _MAIN or not _in_front(check):
        return False
    cell = _handler()[1]
    previous = cell.value or 0
    cell.value = address
    return previous


def disarm(previous) -> None:
    """Back to what was armed before arm() answered ``previous``."""
    if previous is not False:
        _handler()[1].value = previous or None


@contextmanager
def flagged(st):
    """While the block runs, a SIGINT also sets st[S_INTR] (then goes where it went before)."""
    previous = arm(st.ctypes.data + 8 * S_INTR)
    try:
        yield
    finally:
        disarm(previous)
