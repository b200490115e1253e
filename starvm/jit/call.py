"""The host side of a compiled routine: argument conversion, the call, and everything the
interpreter's machine sees afterwards (steps, output, `var` results, globals, errors).

``JitRoutine`` stands in ``Machine.ns`` where the interpreted routine was, takes the same
arguments and returns what it would: callers (interpreted code, ``Machine.call``) do not
know which tier ran. It keeps the interpreted function for the calls the tier declines.
"""
from __future__ import annotations

import operator
import _thread
import signal
import sys
import threading
from contextlib import contextmanager
from functools import lru_cache
from time import perf_counter

import numpy as np

from ..execution.limits import tick_many
from ..execution.values import Bits, Table, Unassigned
from ..types import T
from . import background, errors
from .interrupts import arm, disarm
from .buffers import output_records, records_text_kernel, request_tables_kernel, room_to_compile
from ..errors import StarError
from ..targets.layout import E_HOST, E_INTERRUPT, E_REQUEST, S_DONE, S_HOST, S_INTR, S_NODE  # interrupts, output, requests
from ..targets.layout import E_STACK, RESTART_CODES, S_CODE, S_A, S_B, S_FREE, S_LEFT, S_OUT, S_PFOR, S_ROOM, S_SP, S_STACK

_UNLIMITED = 1 << 62


class Unit:
    """One generated module: its text, what lowering recorded, and (once loaded) the module."""

    def __init__(self, lowered, backend_name: str):
        self.lowered = lowered
        self.backend_name = backend_name
        self.module = None
        self.load_seconds = 0.0

    def function(self, pyname: str):
        if self.module is None:
            from . import cache
            t0 = perf_counter()
            self.module = cache.load(self.lowered.source, self.backend_name)
            self.load_seconds = perf_counter() - t0
        return getattr(self.module, self.lowered.routines[pyname].func)

    def name_id(self, display: str) -> int:
        names = self.lowered.names
        if display not in names:
            names.append(display)
        return names.index(display)


class JitRoutine:
    """A Star routine (or the main block) that may run compiled."""

    def __init__(self, tier, pyname: str, display: str, interpreted, unit: Unit, estimate):
        self.tier = tier
        self.pyname = pyname
        self.display = display
        self.interpreted = interpreted
        self.unit = unit
        self.estimate = estimate          # args -> estimated steps of one interpreted call
        self.compiled = unit.lowered.routines[pyname]
        self.state = "waiting"            # waiting | compiled | failed
        self.why = ""                     # why it is not compiled (yet)
        self.work = 0                     # auto: estimated work run interpreted so far
        self.threshold = tier.threshold   # auto: the work that pays for compiling (GPU tier: its own)
        self.calls = 0
        self.compiled_calls = 0
        self.seconds = 0.0                # in compiled calls
        self.compile_seconds = 0.0
        self.loaded_by = ""               # "direct": from Numba's cache without its start-up; "numba" (cache.py)
        self.dispatcher = None
        self.background = None            # auto: background.Background (the CPU tier), else False
        self.restarts = 0                 # calls run again from their entry (restart)
        self.stack_room = _INLINE_ROOM    # machine stack bytes its calls may take (kernels.enter)

    threshold_variable = "STARVM_JIT_THRESHOLD"
    last_seconds = 0.0     # the last compiled call's
    large_stack = True     # may a call run on a thread of its own (on_large_stack)?

    # ------------------------------------------------------------------ deciding
    def __call__(self, *args):
        self.calls += 1
        if self.state == "compiled":
            return self.run(args)
        if self.state == "failed":
            return self.interpret(args)
        if self.tier.mode == "auto":
            if self.background is None:
                self.background = background.Background(self) if type(self).compile is JitRoutine.compile else False
            if self.background:      # the CPU tier: the disk cache first, compiles in the background
                converted = self.background.call(args)
                return self.interpret(args) if converted is None else self.run(args, converted)
            if not background.compiled_before(self):     # the GPU tier: an earlier run compiled it
                self.work += self.estimate(args)
                if self.work < self.threshold:
                    self.why = (f"too little work to pay for compiling: about {self.work} units estimated "
                                f"(threshold {self.threshold}, {self.threshold_variable})")
                    return self.interpret(args)
        converted = self.convert_args(args)
        if converted is None:
            return self.interpret(args)
        if not self.compile(converted):
            return self.interpret(args)
        background.note_compiled(self)
        return self.run(args, converted)

    def compile(self, converted) -> bool:
        t0 = perf_counter()
        try:
            import numba
            from .cache import argument_type, compile_overload
            with room_to_compile():
                fn = self.unit.function(self.pyname)
                cnt, st, ob = self.tier.buffers()
                sig = tuple(argument_type(a) or numba.typeof(a) for a in (*converted, cnt, st, ob))
                self.loaded_by = compile_overload(fn, sig)
        except Exception as e:  # noqa: BLE001 - any failure to compile means: interpret this routine
            self.state, self.why = "failed", f"Numba could not compile it: {type(e).__name__}: {_first_line(e)}"
            return False
        finally:
            self.compile_seconds += perf_counter() - t0
        self.dispatcher = fn
        self.state, self.why = "compiled", ""
        return True

    # ------------------------------------------------------------------ running
    def convert_args(self, args):
        """The arguments and globals as compiled code takes them; None where it cannot (an
        integer beyond 64 bits, a table of another backend)."""
        memo = {}
        out = []
        info = self.compiled.info
        try:
            if info is not None:
                for a, p in zip(args, info.params):
                    out.append(self.to_native(a, p.type, memo))
            ns = self.tier.context.ns
            for g in self.compiled.globals:
                out.append(self.to_native(ns[g.pyname], g.type, memo))
        except _Decline:
            return None
        return out

    # the backend's forms of tables and vectors (mpi_tier.MpiRoutine: a rank's rows)
    def table_backend(self):
        return self.tier.host_backend

    def words_of(self, value, type_):
        """A slice's or word's uint64 words as compiled code takes them."""
        if type(value.v) is not int:     # a device vector (auto): not the host tier's
            raise _Decline
        return self.tier.host_backend.to_words(value.v, value.n)

    def vector_of(self, words, n: int, type_):
        """The interpreter's vector of a result's words."""
        return self.tier.host_backend.from_words(words, n)

    def to_native(self, value, type_, memo):
        if type_ is T.TABLE:
            if not isinstance(value, Table) or value.backend is not self.table_backend():
                raise _Decline
            return (value.data, value.n)
        if type_.is_vector:
            key = id(value)
            if key not in memo:
                if isinstance(value, Unassigned):
                    memo[key] = (np.empty(0, np.uint64), -1 - self.unit.name_id(value.name))
                else:
                    memo[key] = (self.words_of(value, type_), value.n)
            return memo[key]
        if type_ is T.BOOL:
            return bool(value)
        if not -(1 << 63) <= value < (1 << 63):
            raise _Decline
        return int(value)

    def to_python(self, value, type_, old=None):
        """A vector result as the interpreter holds it; ``old`` (the Bits it replaces) is
        updated in place, as the interpreter's assignment updates its variable."""
        if type_.is_vector:
            words, n = value
            n = int(n)
            if n < 0:
                return old if isinstance(old, Unassigned) else Unassigned(self.unit.lowered.names[-1 - n])
            v = self.vector_of(words, n, type_)
            if isinstance(old, Bits):
                old.v, old.n = v, n
                return old
            return Bits(v, n)
        if type_ is T.BOOL:
            return bool(value)
        return int(value)

    def run(self, args, converted=None):
        if converted is None:
            converted = self.convert_args(args)
            if converted is None:
                return self.interpreted(*args)
        context = self.tier.context
        cnt, st, ob = self.tier.buffers()
        cnt[:] = 0
        st[:] = 0
        tick = context.ticker()
        left = _UNLIMITED if tick is None else steps_left(tick, context.max_steps)
        st[S_LEFT] = left
        st[S_FREE] = self.tier.free_bytes()
        # the recursion limit counts the interpreted Star calls in progress too (codegen.py's
        # _depth): this routine's own call is one more, the main block's none
        base = 0
        if self.pyname != "main_":
            depth = context.depth
            if depth[0] >= depth[1]:
                context.too_deep(began=False)
            base = depth[0] + 1
        st[S_SP] = base
        st[S_ROOM] = self.stack_room
        saved = self.save_tables(converted)
        sink = OutputSink(context, self.unit.lowered, st, ob, base, tick, left)
        sink.tier = self.tier
        t0 = perf_counter()
        late = False                        # a Ctrl-C came as the call on its own thread returned
        try:
            # a SIGINT sets st[S_INTR] from here on (interrupts.py: Python's own record of it
            # may be dropped, and a call on its own thread never sees that record)
            with sink, _Armed(st, self.last_seconds > _SHORT_CALL_S or not self.compiled_calls):
                if self.stack_room > _INLINE_ROOM:
                    try:
                        result = on_large_stack(self.stack_room + _STACK_MARGIN, self.dispatcher,
                                                *converted, cnt, st, ob)
                    except InterruptedAfterReturn as e:
                        result, late = e.value, True
                else:
                    result = self.dispatcher(*converted, cnt, st, ob)
        except NoLargeStack:                # nothing ran: this routine's calls stay on the caller's stack
            self.large_stack, self.stack_room = False, _INLINE_ROOM
            return self.rerun_interpreted(args, everything=True)
        except Exception as e:
            from ..targets.numba.kernels import JitFault
            if not isinstance(e, JitFault):
                raise
            code = int(st[S_CODE])
            if sink.cut:        # a Ctrl-C broke a write: the call stops as interrupted, its later output dropped
                st[S_OUT] = 0
                st[S_CODE] = code = E_INTERRUPT
            if code == E_HOST and sink.error is None:
                # a Ctrl-C at the output callback's first instruction, before its try: ctypes
                # prints and drops it and the callback fails; nothing was flushed, so the
                # call stops as interrupted where it was
                st[S_CODE] = code = E_INTERRUPT
            if code == E_INTERRUPT:
                _take_pending_interrupt()
            if code == E_HOST:              # the output's stream failed (a closed pipe, ...)
                self.finish(cnt, st, ob, sink.left, tick, t0)
                self.keep_changed_vectors(args, converted)
                raise sink.error.with_traceback(None)    # its Star frames are in it (errors.host_error)
            if code != E_INTERRUPT and (int(st[S_PFOR]) > 0 or code in RESTART_CODES):
                if sink.natives:      # the native calls' steps reached the machine: back to the entry's
                    sink.undo_steps()
                with _skipping_output(context, sink.written):   # printed already, streamed
                    return self.restart(args, saved, st, base, t0)
            self.finish(cnt, st, ob, sink.left, tick, t0)
            self.keep_changed_vectors(args, converted)
            raise errors.star_error(st, self.unit.lowered, context.max_steps, base) from None
        if sink.cut:    # returned before its next poll: complete, its output after the broken write dropped
            st[S_OUT] = 0
        self.finish(cnt, st, ob, sink.left, tick, t0)
        value = self.results(args, result)
        if late or sink.cut or st[S_INTR]:
            # a Ctrl-C after the call's last poll: the call is complete (steps, output,
            # results) and the interrupt is the caller's, raised once (Python's record of the
            # signal, where it still has one, taken)
            _take_pending_interrupt()
            raise KeyboardInterrupt
        return value

    # ------------------------------------------------------------------ running again
    # A call stopped by something that is no error of the program (an integer past 64 bits,
    # the machine stack's room) or by a failure inside a `parallel for` (the interpreter's
    # fused loop checks a statement for every iteration before it writes) runs again from its
    # entry: nothing it did is visible yet (steps, ticks and output records reach the machine
    # in finish(); var results and globals in results()) but the tables it wrote in place,
    # which are put back as saved at the entry.
    def save_tables(self, converted):
        """Copies of the tables the call may write (var table parameters, global tables), or
        None where it writes none (ir/walk.writes_tables) or cannot stop to run again
        (lower.ModuleGen.restartable: no integer arithmetic, parallel for or recursion)."""
        if not (self.compiled.writes_tables and self.compiled.restartable):
            return None
        info = self.compiled.info
        syms = (list(info.params) if info is not None else []) + list(self.compiled.globals)
        saved, seen = [], set()
        for sym, value in zip(syms, converted):
            if sym.type is T.TABLE and not sym.readonly and id(value[0]) not in seen:
                seen.add(id(value[0]))
                saved.append((value[0], value[0].copy()))
        return saved

    def restart(self, args, saved, st, base: int, t0):
        """Put the saved tables back and run the call again: compiled on a stack large enough
        for the recursion limit where its room ran out (E_STACK), interpreted otherwise."""
        self.seconds += perf_counter() - t0
        self.restarts += 1
        for data, copy in saved or ():
            np.copyto(data, copy)
        if int(st[S_CODE]) == E_STACK and not int(st[S_PFOR]) and self.large_stack:
            depth, used = int(st[S_A]) - base, int(st[S_B])
            calls = self.tier.context.max_depth - base + 1      # the most the limit lets this call nest
            need = int(used / max(depth, 1) * calls * 1.25) + _STACK_MARGIN
            if self.stack_room < need <= _MAX_ROOM:
                self.stack_room = need
                return self.run(args)
        return self.rerun_interpreted(args, everything=int(st[S_CODE]) == E_STACK)

    def interpret(self, args):
        """The interpreted routine, for a call the tier does not run compiled. From _DEEP_CALLS
        nested Star calls on, the tier's routines not compiled are called directly while it
        runs (with_interpreted): a call through a JitRoutine takes a C frame (Python calls an
        object's __call__ through C), so a recursion the interpreter runs alone (--jit off)
        would overflow the thread's stack under --jit auto."""
        if self.tier.context.ns["_depth"][0] < _DEEP_CALLS:
            return self.interpreted(*args)
        names = [p for p, r in self.tier.routines.items() if r.state != "compiled"]
        return self.with_interpreted(names, args)

    def rerun_interpreted(self, args, everything: bool):
        """The call on the interpreter, this routine's own calls in it interpreted too (each
        would stop again where this one did, and call on through a C frame per level: a deep
        recursion would overflow the thread's stack) and, for a recursion too deep for the
        machine stack (``everything``), every compiled routine's."""
        return self.with_interpreted(list(self.tier.routines) if everything else [self.pyname], args)

    def with_interpreted(self, names, args):
        """The call interpreted, the routines ``names`` interpreted in it too (Machine.ns holds
        their interpreted functions meanwhile)."""
        ns = self.tier.context.ns
        swapped = {p: ns[p] for p in names if hasattr(ns.get(p), "interpreted")}
        for p, routine in swapped.items():
            ns[p] = routine.interpreted
        try:
            return self.interpreted(*args)
        finally:
            ns.update(swapped)

    def finish(self, cnt, st, ob, left, tick, t0) -> None:
        """Steps, step budget and output of one compiled call, also when it failed (``ob``
        holds the record array the call last wrote to, grown or not: kernels.out_room)."""
        self.last_seconds = perf_counter() - t0
        self.seconds += self.last_seconds
        self.compiled_calls += 1
        counts = self.tier.context.counts
        for i in np.flatnonzero(cnt):
            counts[i] += int(cnt[i])
        if tick is not None:
            tick_many(tick, left - max(int(st[S_LEFT]), 0))
        n = int(st[S_OUT])
        if n:
            write_records(self.tier.context.write, output_records(ob)[:n], self.unit.lowered.strings)

    def keep_changed_vectors(self, args, converted) -> None:
        """After a failure: the caller's variables passed as `var` slices or words take what
        the call had written into them, as the interpreter's share one Bits object with the
        callee's parameter (compiled code assigns a variable holding a value in its words)."""
        info = self.compiled.info
        if info is None:
            return
        for a, p, c in zip(args, info.params, converted):
            if p.by_ref and p.type.is_vector and isinstance(a, Bits) and int(c[1]) == a.n:
                self.to_python(c, p.type, a)

    def results(self, args, result):
        info = self.compiled.info
        ns = self.tier.context.ns
        j = 0
        value = None
        if info is not None and info.is_function:
            value = self.to_python(result[0], info.result.type)
            j = 1
        outs = []
        if info is not None:
            by_arg = {id(p): a for a, p in zip(args, info.params)}
            for p in info.out_params:
                outs.append(self.to_python(result[j], p.type, by_arg[id(p)]))
                j += 1
        for g in self.compiled.returned_globals:
            ns[g.pyname] = self.to_python(result[j], g.type, ns.get(g.pyname))
            j += 1
        if info is None:
            return None
        if info.is_function:
            return value if not outs else (value, *outs)
        return tuple(outs) if outs else None


class _Decline(Exception):
    pass


# Machine stack for compiled calls (kernels.enter): a call runs on the caller's thread with
# room for _INLINE_ROOM bytes of Star calls (any thread has that much left); one that needs
# more runs again on a thread of its own, its stack sized from the bytes a call took and the
# recursion limit (Machine.max_depth), up to _MAX_ROOM (then interpreted).
_INLINE_ROOM = 1 << 20
_SHORT_CALL_S = 1e-3      # a call this short needs no check that Ctrl-C's handler is in front (_Armed)
_DEEP_CALLS = 1000        # nested Star calls from which interpreted calls bypass JitRoutine (interpret)
_STACK_MARGIN = 1 << 20
_MAX_ROOM = 1 << 34


def on_large_stack(size: int, fn, *args):
    """fn(*args) on a new thread with a stack of ``size`` bytes; its result or its exception.
    A Ctrl-C meanwhile asks the call to stop at its next poll (request_stop) and waits for it;
    one that came as fn returned normally raises InterruptedAfterReturn with the result."""
    box = []
    began, done = threading.Event(), threading.Event()

    def target():
        began.set()
        # Ctrl-C to the caller's thread, which asks the call to stop (request_stop): Python's
        # handler runs there only, and a signal this thread took would leave it waiting
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            box.append((True, fn(*args)))
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            box.append((False, e))
        finally:
            done.set()
    size = -(-size // (1 << 16)) << 16        # whole pages
    # The call is waited for on Events, never by Thread.start()/join(): a KeyboardInterrupt
    # inside join() while the thread runs makes CPython 3.11 take the thread for stopped
    # (bpo-45274's handler releases the running thread's lock), so the second join() returned
    # at once with no result and the interrupt went to the interpreter (compiled_calls 0: the
    # race of issue 36, whenever Ctrl-C was handled while the call did not hold the GIL); one
    # inside start() left the call running with nobody waiting for it.
    interrupted = False
    try:
        with _STACK_SIZE_LOCK:
            old = threading.stack_size()
            threading.stack_size(size)
            try:
                _thread.start_new_thread(target, ())
            except (RuntimeError, MemoryError) as e:    # no room for such a stack: fn did not start
                raise NoLargeStack(str(e)) from None
            finally:
                threading.stack_size(old)
    except KeyboardInterrupt:
        if not began.wait(_START_WAIT):    # Ctrl-C before the thread was started: nothing runs
            raise
        interrupted = True
        request_stop()
    while True:
        try:
            done.wait()
            break
        except KeyboardInterrupt:
            interrupted = True
            request_stop()     # Ctrl-C reached this thread, not the call's: it stops at its next poll
    # the call stopped at its poll (E_INTERRUPT in its status): the caller's run() reports it
    # at the Star position it reached, with its steps and output, as on the caller's thread
    ok, value = box[0]
    if not ok:
        raise value
    if interrupted:
        raise InterruptedAfterReturn(value)
    return value


_START_WAIT = 10.0      # seconds a started thread may take to begin (a loaded machine)
_STACK_SIZE_LOCK = threading.Lock()


class NoLargeStack(RuntimeError):
    """on_large_stack could not start its thread (the stack's memory refused)."""


class InterruptedAfterReturn(Exception):
    """Ctrl-C came as the call on its own thread returned: ``value`` is its result."""

    def __init__(self, value):
        super().__init__("interrupted as the call returned")
        self.value = value


def steps_left(tick, max_steps: int) -> int:
    """How many more calls the interpreter's ``_tick`` (limits.ticker) allows."""
    gen = tick.__self__
    if gen.gi_frame is None:
        return 0
    if gen.gi_yieldfrom is None:      # not started
        return max_steps
    return operator.length_hint(gen.gi_yieldfrom)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else ""


def write_records(write, ob, strings: list[str]) -> int:
    """Write the text of the finished write calls among the output records of kernels.out_*
    in one call of ``write`` (kernels.records_text); returns the characters written."""
    text = records_text(ob, strings)
    if text:
        write(text)
    return len(text)


def records_text(ob, strings: list[str]) -> str:
    """The text of the finished write calls among the output records of kernels.out_*."""
    if not len(ob):
        return ""
    sbytes, soffs = _string_bytes(strings)
    return records_text_kernel()(np.ascontiguousarray(ob), sbytes, soffs).tobytes().decode("utf-8")


_STRINGS: dict[int, tuple] = {}


def _string_bytes(strings: list[str]):
    """A module's writeln strings as kernels.records_text takes them (made once a module)."""
    hit = _STRINGS.get(id(strings))
    if hit is None or hit[0] is not strings or hit[1] != len(strings):
        data = [x.encode("utf-8") for x in strings]
        offs = np.zeros(len(data) + 1, np.int64)
        np.cumsum([len(d) for d in data], out=offs[1:])
        hit = (strings, len(strings), np.frombuffer(bytearray(b"".join(data) or b"\0"), np.uint8), offs)
        _STRINGS[id(strings)] = hit
    return hit[2], hit[3]




class OutputSink:
    """Where a compiled call's finished output lines go while it runs (kernels.flush_output
    calls the one on top through st[S_HOST]): written as the interpreter writes them, then
    the stream flushed, so that a long or killed run shows what it printed and its record
    buffer stays within kernels.OUT_CHUNK words. ``written``: the characters it wrote (a
    call run again from its entry skips them: _skipping_output)."""

    def __init__(self, context, lowered, st, ob, base: int = 0, tick=None, left: int = 0):
        self.context, self.lowered, self.st, self.ob = context, lowered, st, ob
        self.strings = lowered.strings
        self.base = base                # the Star calls below the compiled call's entry
        self.tick, self.left = tick, left   # the --max-steps ticker, the budget st[S_LEFT] counts down from
        self.natives = 0                # native calls run for it (their steps reached the machine)
        self.entry = None               # (the machine's counts, the budget) before the first of them
        self.written = 0
        self.error = None
        self.cut = False                # a Ctrl-C broke a write: nothing more of the call is written

    def __enter__(self):
        _quiet_interrupts_at_the_callbacks_entry()
        self.st[S_HOST] = _host_flush_address()
        self.saved = _SINKS.get(self.st.ctypes.data)
        _SINKS[self.st.ctypes.data] = self
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            del _SINKS[self.st.ctypes.data]
        else:          # a call of the same machine in progress (compiled, interpreted, compiled)
            _SINKS[self.st.ctypes.data] = self.saved
        self.st[S_HOST] = 0 if self.saved is None else _host_flush_address()

    def flush(self) -> None:
        st = self.st
        done, n = int(st[S_DONE]), int(st[S_OUT])
        records = output_records(self.ob)
        text = records_text(records[:done], self.strings)
        records[:n - done] = records[done:n]      # the unfinished write call's records (NumPy copies overlaps)
        # taken before writing: a Ctrl-C raised in the write (Python runs its SIGINT handler
        # here) must not leave these lines in the buffer, to be written again at the end
        st[S_OUT], st[S_DONE] = n - done, 0
        if self.cut:
            return
        self.written += len(text)
        try:
            if text:
                self.context.write(text)
            self.context.flush()
        except KeyboardInterrupt:
            # the compiled code's next poll stops the call, with its position. What the write
            # did not put out is lost (a text stream drops the chunk it was passing on), so the
            # call's later records are not written either: its output stays a prefix of the
            # uninterrupted run's (bench/fuzz_compiled --cases interrupt, seed 3215: two lines
            # missing, the next ones written by finish)
            st[S_INTR] = 1
            self.cut = True


    def request(self) -> None:
        """A host request of compiled code (kernels.host_request): graph input, done as the
        interpreter does it (graphs/star.py) on the tables compiled code handed over; an
        integer result in st[S_A]. A failure is the interpreter's error at the request's site."""
        st = self.st
        site = self.lowered.sites[int(st[S_NODE])]
        what = site.what
        if what.startswith("native "):
            return self.native(what.split(" ")[1], what.split(" ")[2:])
        (tabs, rows) = request_tables_kernel()(self.ob)
        backend = self.context.backend.host
        tables = [backend.wrap_table(data, int(n), data.shape[0]) for data, n in zip(tabs, rows)]
        count = {"adj": 1, "edges": 3}.get(what, 0)
        try:
            value = self.context.ns["_graph"](what, *tables[:count])
        except StarError as e:
            raise errors.host_error(e, st, self.lowered, self.base) from None
        st[S_A] = int(value) if value is not None else 0


    def native(self, pyname: str, kinds: list[str]) -> None:
        """A call of a routine a native kernel runs (kernels.host_native): the machine's routine
        (the kernel, with its guards and its Star body where they decline) on the arguments
        compiled code described (kernels.req_*): its tables and the words of its `var`
        vectors in place, the vectors' new lengths back in their slots."""
        st = self.st
        rq = _int64s(int(st[S_A]), int(st[S_B]))
        backend = self.context.backend.host
        args, tables, backs, i = [], {}, [], 0
        for kind in kinds:
            if kind == "t":
                key = tuple(int(x) for x in rq[i:i + 4])
                if key not in tables:    # one table passed twice is one Table (the kernels' alias checks)
                    addr, k, words, n = key
                    tables[key] = backend.wrap_table(_uint64s(addr, k * words).reshape(k, words), n, k)
                args.append(tables[key])
                i += 4
            elif kind in ("v", "V"):
                addr, words, n = (int(x) for x in rq[i:i + 3])
                value = (Unassigned(self.lowered.names[-1 - n]) if n < 0 else
                         Bits(backend.from_words(_uint64s(addr, words)[:(n + 63) // 64].copy(), n), n))
                args.append(value)
                if kind == "V":
                    backs.append((addr, words, i))
                i += 3
            else:
                args.append(bool(rq[i]) if kind == "b" else int(rq[i]))
                i += 1
        if self.entry is None:          # nothing of the call reached the machine before: its entry's state
            self.entry = (list(self.context.counts), self.left)
        self.steps_to_machine()
        self.natives += 1
        # the routine may run compiled routines (its Star body calling NUMOF): they get buffers
        # of their own, this call's counters and status array are in use
        outer, self.tier._buffers = self.tier._buffers, None
        try:
            outs = self.context.ns[pyname](*args)
        except StarError as e:
            raise errors.host_error(e, st, self.lowered, self.base, inner=self.context.frames_of(e.__traceback__)) from None
        finally:
            self.tier._buffers = outer
            self.steps_from_machine()
        for (addr, words, slot), value in zip(backs, outs or ()):
            if isinstance(value, Unassigned):
                continue
            w = backend.to_words(value.v, value.n)
            if len(w) > words:
                raise AssertionError(f"a native routine's var vector grew past its words ({len(w)} > {words})")
            dst = _uint64s(addr, words)
            dst[:len(w)] = w
            dst[len(w):] = 0
            rq[slot + 2] = value.n

    # the --max-steps budget while the host runs a request: the steps compiled code took so far
    # go to the machine's ticker first (the native's meter checks its own against it), and
    # compiled code goes on with what is left after it
    def steps_to_machine(self) -> None:
        if self.tick is not None:
            tick_many(self.tick, self.left - max(int(self.st[S_LEFT]), 0))
            self.left = max(int(self.st[S_LEFT]), 0)

    def undo_steps(self) -> None:
        """The machine's steps and --max-steps ticker as at the call's entry (it runs again)."""
        counts, left = self.entry
        self.context.counts[:] = counts
        if self.tick is not None:
            from ..execution.limits import ticker
            max_steps = self.context.max_steps
            self.context.ns["_tick"] = tick = ticker(max_steps)
            tick_many(tick, max_steps - left)

    def steps_from_machine(self) -> None:
        if self.tick is not None:
            self.left = steps_left(self.tick, self.context.max_steps)
            self.st[S_LEFT] = self.left


def _int64s(addr: int, n: int):
    import ctypes
    return np.ctypeslib.as_array((ctypes.c_int64 * n).from_address(addr)) if n else np.zeros(0, np.int64)


def _uint64s(addr: int, n: int):
    import ctypes
    return np.ctypeslib.as_array((ctypes.c_uint64 * n).from_address(addr)) if n else np.zeros(0, np.uint64)


_SINKS: dict[int, OutputSink] = {}      # the compiled calls in progress by their status array's address


def _flush_top(st_address: int) -> int:
    """The host's side of kernels.flush_output and kernels.host_request (st[S_CODE] says which)."""
    sink = _SINKS[st_address]
    try:
        sink.flush()
        if int(sink.st[S_CODE]) == E_REQUEST:
            sink.request()
    except KeyboardInterrupt:       # raised before the write (flush takes one in it): stop at the next poll
        sink.st[S_INTR] = 1
    except BaseException as e:  # noqa: BLE001 - handed to the call's host (call.run) through E_HOST
        sink.error = e
        return 1
    return 0


@lru_cache(maxsize=None)
def _host_flush():
    import ctypes
    return ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(_flush_top)


def _quiet_interrupts_at_the_callbacks_entry() -> None:
    """A Ctrl-C landing as ctypes enters _flush_top, before its try (Python looks at signals
    at a function's first instruction), is an exception ctypes cannot raise: it printed
    'Exception ignored on calling ctypes callback function' and a traceback (bench/fuzz_compiled
    --cases interrupt, seed 3038), and the callback's result is then whatever the return slot
    held. sys.unraisablehook takes it instead, silently, and asks the calls in progress to stop
    at their next poll (request_stop), whether compiled code saw the callback fail (call.run:
    E_HOST with no error is an interrupt) or go on; every other unraisable goes to the hook
    that was there. Put in place at each compiled call's start where it is not (whoever set
    another hook meanwhile, as pytest does per test, keeps getting the others)."""
    previous = sys.unraisablehook
    if getattr(previous, "starvm_ctrl_c", False):
        return

    def hook(unraisable):
        if unraisable.object is _flush_top and issubclass(unraisable.exc_type, KeyboardInterrupt):
            request_stop()
            return
        previous(unraisable)
    hook.starvm_ctrl_c = True
    sys.unraisablehook = hook


def _host_flush_address() -> int:
    import ctypes
    return ctypes.cast(_host_flush(), ctypes.c_void_p).value


def _take_pending_interrupt() -> None:
    """A second copy of the Ctrl-C that stopped the call (mpiexec sends it to every rank, which
    may have stopped on another rank's vote first) is taken here: the call's own position is
    the one to report, not wherever Python's handler would raise it next."""
    import ctypes
    ctypes.pythonapi.PyOS_InterruptOccurred()


class _Armed:
    """While a compiled call runs, a SIGINT sets its st[S_INTR] (interrupts.arm). ``check``:
    make sure the C handler is in front (~10 us of a system call: for a routine's first call
    and after one longer than _SHORT_CALL_S; a short call that the check skips and that finds
    another handler in front, installed in the last interrupts._RECHECK_S seconds with the
    same Python handler, has Python's own record of the signal, as before)."""
    __slots__ = ("address", "check", "previous")
    _last = (None, 0)           # (status array, the address of its S_INTR word): the tier's, reused

    def __init__(self, st, check: bool):
        last_st, address = _Armed._last
        if last_st is not st:
            address = st.ctypes.data + 8 * S_INTR
            _Armed._last = (st, address)
        self.address, self.check = address, check

    def __enter__(self):
        self.previous = arm(self.address, self.check)

    def __exit__(self, *exc):
        disarm(self.previous)


def request_stop() -> None:
    """Ctrl-C for the compiled calls in progress: each stops at its next poll (kernels.poll),
    as interrupted. For a call on another thread (on_large_stack), where Python's record of the
    signal is not looked at, and for MPI ranks told by another."""
    for sink in list(_SINKS.values()):
        sink.st[S_INTR] = 1


class _Skip:
    """A stream that drops the first ``chars`` characters written to it."""

    def __init__(self, inner, chars: int):
        self.inner, self.left = inner, chars

    def write(self, text: str):
        if self.left:
            k = min(self.left, len(text))
            text, self.left = text[k:], self.left - k
        if text:
            self.inner.write(text)

    def flush(self):
        if hasattr(self.inner, "flush"):
            self.inner.flush()


@contextmanager
def _skipping_output(context, chars: int):
    """A call run again from its entry after it streamed ``chars`` characters of output
    prints the rest only (the same text: both tiers print alike)."""
    if not chars:
        yield
        return
    saved = context.out
    context.out = _Skip(context.stream, chars)
    try:
        yield
    finally:
        context.out = saved


