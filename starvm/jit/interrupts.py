"""Ctrl-C for a compiled call on a thread of its own (call.on_large_stack).

On the caller's thread compiled code sees a SIGINT through Python's own record of it
(kernels.tick: PyOS_InterruptOccurred). A call on another thread cannot: Python looks at
signals on the main thread only, and that thread, woken by the signal, then waits for the
GIL the call holds. So while such a call runs, SIGINT goes first to a small C-level handler
(compiled once with llvmlite, a few milliseconds) that sets the call's st[S_INTR], which its
polls read, then to the handler that was there (Python's, which raises KeyboardInterrupt
once the call has given the GIL back).
"""
from __future__ import annotations

import ctypes
import signal
from contextlib import contextmanager
from functools import lru_cache

from ..targets.layout import S_INTR


class _Sigaction(ctypes.Structure):
    """glibc's struct sigaction on Linux (x86-64, aarch64)."""
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


_SA_SIGINFO, _SA_ONSTACK, _SA_RESTART = 4, 0x08000000, 0x10000000


@lru_cache(maxsize=None)
def _handler():
    """(handler address, address of its flag pointer, address of its chained handler, engine)."""
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
    return (engine.get_function_address("starvm_on_sigint"), engine.get_global_value_address("starvm_interrupt_flag"),
            engine.get_global_value_address("starvm_interrupt_chained"), engine)


def _libc():
    return ctypes.CDLL(None, use_errno=True)


@contextmanager
def flagged(st):
    """While the block runs, a SIGINT also sets st[S_INTR] (then goes where it went before).
    Nothing is changed where SIGINT is ignored or has no handler of Python's (the default
    action), or off the main thread (signals are Python's main thread's)."""
    import threading
    if threading.current_thread() is not threading.main_thread() or not callable(signal.getsignal(signal.SIGINT)):
        yield
        return
    address, flag, chained, _engine = _handler()
    libc = _libc()
    old = _Sigaction()
    if libc.sigaction(signal.SIGINT, None, ctypes.byref(old)) != 0 or old.handler in (None, 0, 1):
        yield
        return
    ctypes.c_void_p.from_address(chained).value = old.handler
    ctypes.c_void_p.from_address(flag).value = st.ctypes.data + 8 * S_INTR
    new = _Sigaction()
    new.handler, new.mask, new.flags = address, old.mask, _SA_SIGINFO | _SA_ONSTACK | (old.flags & _SA_RESTART)
    installed = libc.sigaction(signal.SIGINT, ctypes.byref(new), None) == 0
    try:
        yield
    finally:
        if installed:
            libc.sigaction(signal.SIGINT, ctypes.byref(old), None)
        ctypes.c_void_p.from_address(flag).value = None
