"""One debugger for the CLI (``star debug``), the REPL (``:debug FILE``) and Python.

    d = Debugger(open("programs/warshall_c.star").read(), "warshall_c.star")
    stop = d.start()                 # stopped before the main block's first statement
    d.break_("WARSHALL-C"); d.cont() # a routine breakpoint
    d.step(); d.next(); d.finish(); d.back()
    d.print_("NUMB(W)"); d.where(); d.show("P", "1-8"); d.watch("x"); d.steps_report()

The program runs in a worker thread; at each statement event (``events.py``) the worker
decides whether to stop and, if so, waits for the next command. Commands run in the
calling thread while the worker waits, so expressions see the frame exactly as it is.

``back`` replays: a fresh machine runs the program from the start to the previous event
(events are numbered deterministically), then stops there. It costs one run of the program
up to that point with events on; the state and the step counter are those the first run had.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field

from ..errors import Loc, StarError
from ..frontend.parser import fold
from ..ir.ops import BASE_OPS, OP_TITLES
from ..execution.values import Bits, Table, Unassigned
from ..types import T
from .evaluate import (Compiled, DebugError, bit_string, compile_expression, draw_table, draw_vector,
                       evaluate, format_value, parse_rows)
from .events import (EventSource, bypass_note, debug_machine, depth, frame_loc, star_stack,
                     statement_lines)

_STACK_BYTES = 512 << 20     # the worker thread's stack: deep Star recursion needs room


class _Abort(BaseException):
    """Unwinds the worker's program when the debugger restarts or closes (not a Star error)."""


@dataclass
class Stop:
    """Where the program stands after a command."""
    reason: str            # start | step | breakpoint | watch | interrupted | finished | error
    event: int             # events passed; stopped *before* the statement of event `event`
    steps: int             # the machine's step counter (all base operations so far)
    loc: Loc | None = None
    routine: str = ""
    message: str = ""
    error: StarError | None = None

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    @property
    def running(self) -> bool:
        return self.reason not in ("finished", "error")


@dataclass
class Breakpoint:
    number: int
    file: str | None = None      # line breakpoints: the Star file and line
    line: int | None = None
    routine: str | None = None   # routine breakpoints: the generated function name
    display: str = ""
    scope: str = "main_"         # the function the condition is checked in
    condition: Compiled | None = None
    hits: int = 0


@dataclass
class Watch:
    name: str
    pyname: str
    scope: str | None            # None: a global; else the generated function whose local it is
    value: object = None
    typ: T | None = None
    known: bool = False


@dataclass
class _Run:
    machine: object
    events: EventSource
    thread: threading.Thread | None = None
    replies: queue.Queue = field(default_factory=queue.Queue)
    commands: queue.Queue = field(default_factory=queue.Queue)


class Debugger:
    """A Star program under a debugger. Every command returns a :class:`Stop` or text;
    a mistake in a command raises :class:`DebugError` (one message; the session goes on);
    the program's own errors end the run with a ``Stop`` of reason ``error``."""

    def __init__(self, text: str, filename: str = "<string>", *, backend=None, graph=None,
                 max_steps: int | None = None, max_depth: int | None = None, out=None,
                 profile: bool = False, **machine_options):
        self.text, self.filename = text, filename
        self.options = {"backend": backend, "graph": graph, "max_steps": max_steps, "max_depth": max_depth,
                        **machine_options}
        self.out = out
        self.profile = profile
        self.breakpoints: list[Breakpoint] = []
        self.watches: list[Watch] = []
        self._numbers = 0
        self._run: _Run | None = None
        self._frame = None           # the stopped Python frame (None once finished)
        self.stop: Stop | None = None
        # set by the command, read by the worker
        self._mode, self._target, self._base_depth = "step", 0, 0
        self._pause = False
        self._replaying = False
        self._prev_loc: Loc | None = None
        self._watch_message = ""
        # back / goto / run replay on the same machine (False: a fresh machine each time)
        self.reuse_machine = True

    # ------------------------------------------------------------------ running
    @property
    def machine(self):
        return self._run.machine if self._run else None

    @property
    def event(self) -> int:
        return self.stop.event if self.stop else 0

    def start(self) -> Stop:
        """Compile the program (a Star error in it is raised) and stop before its first statement."""
        return self._launch(target=1)

    def _new_run(self, machine=None) -> _Run:
        """A run on a fresh machine, or again on ``machine`` (its globals made anew by the
        program's init_, its counters reset: what a fresh compile would give, without
        parsing, checking and generating the code again)."""
        if machine is None:
            m = debug_machine(out=_Output(self), **self.options)
            m.profile = self.profile
        else:
            m = machine
        run = _Run(m, None)
        run.events = EventSource(m, lambda n, f, e: self._on_event(run, n, f, e))
        if machine is None:
            m.compile(self.text, self.filename)
            if m._main is None:
                raise DebugError("the program has no main block (begin ... end.) to run")
        else:
            m.reset_stats()
            m._guard(m.ns["init_"])
        return run

    def _launch(self, target: int) -> Stop:
        """A run from the start, stopped at event ``target`` (replayed silently)."""
        machine = self.machine if self.reuse_machine else None
        self._abort()
        run = self._new_run(machine)
        self._run = run
        self._mode, self._target = "target", target
        self._replaying = target > 1
        self._prev_loc = None
        for w in self.watches:
            w.known = False
        old = threading.stack_size()
        threading.stack_size(_STACK_BYTES)
        try:
            run.thread = threading.Thread(target=self._worker, args=(run,), daemon=True, name="star-debug")
            run.thread.start()
        finally:
            threading.stack_size(old)
        stop = self._wait("start" if target == 1 else "back")
        self._replaying = False
        for w in self.watches:      # what a watch compares with: the value here
            self._refresh_watch(w)
        return stop

    def _worker(self, run: _Run) -> None:
        m = run.machine
        try:
            m._guard(m._main)
        except _Abort:
            run.replies.put(("aborted", None))
            return
        except StarError as e:
            run.replies.put(("error", e))
            return
        except BaseException as e:   # a bug in starvm: report it rather than hang the prompt
            run.replies.put(("crash", e))
            return
        run.replies.put(("finished", None))

    def _on_event(self, run: _Run, n: int, frame, entry: int) -> None:
        if run is not self._run:
            raise _Abort()
        reason = self._should_stop(run, n, frame, entry)
        self._prev_loc = frame_loc(run.machine, frame)
        if reason is None:
            return
        self._frame = frame
        run.replies.put(("stop", reason))
        command = run.commands.get()
        self._frame = None
        if command == "abort":
            raise _Abort()

    def _should_stop(self, run: _Run, n: int, frame, entry: int) -> str | None:
        mode = self._mode
        if mode == "target":
            return "start" if n >= self._target else None
        if self._pause:
            self._pause = False
            return "interrupted"
        if mode == "step":
            return "step"
        m = run.machine
        if mode == "next" and depth(m, frame) <= self._base_depth:
            return "step"
        if mode == "finish" and depth(m, frame) < self._base_depth:
            return "step"
        if self.breakpoints:
            hit = self._breakpoint_hit(m, run, frame, entry)
            if hit is not None:
                return hit
        if self.watches and self._watch_changed(m, frame):
            return "watch"
        return None

    def _breakpoint_hit(self, m, run, frame, entry) -> str | None:
        code = frame.f_code
        loc = None
        for bp in self.breakpoints:
            if bp.routine is not None:
                if not (entry and code.co_name == bp.routine):
                    continue
            else:
                if loc is None:
                    loc = frame_loc(m, frame)
                if loc is None or loc.line != bp.line or loc.filename != bp.file:
                    continue
            if bp.condition is not None:
                try:
                    if not evaluate(m, run.events, bp.condition, frame):
                        continue
                except DebugError as e:
                    self._watch_message = f"breakpoint {bp.number}: its condition failed: {e}"
                    return "breakpoint"
            bp.hits += 1
            self._watch_message = f"breakpoint {bp.number} ({bp.display})"
            return "breakpoint"
        return None

    def _wait(self, reason_if_stop: str) -> Stop:
        """Wait for the worker's next report; Ctrl-C asks it to stop at the next statement."""
        run = self._run
        while True:
            try:
                kind, payload = run.replies.get(timeout=0.1)
                break
            except queue.Empty:
                continue
            except KeyboardInterrupt:
                self._pause = True
                if self._mode == "target":   # a replay cannot be cut short: wait for it
                    continue
        m = run.machine
        steps = sum(m.counts)
        if kind == "stop":
            reason = payload if payload != "start" else reason_if_stop
            stack = star_stack(m, self._frame)
            message = ""
            if reason in ("breakpoint", "watch"):
                message, self._watch_message = self._watch_message, ""
            self.stop = Stop(reason, run.events.count, steps, stack[-1].loc if stack else None,
                             stack[-1].routine if stack else "", message)
        elif kind == "error":
            self.stop = Stop("error", run.events.count, steps, payload.loc, "", payload.render(), payload)
        elif kind == "crash":
            self.stop = Stop("error", run.events.count, steps, None, "",
                             f"internal error: {type(payload).__name__}: {payload} (this is a bug in starvm)")
        else:
            self.stop = Stop("finished", run.events.count, steps, None, "", "the program has finished")
        return self.stop

    def _resume(self, mode: str) -> Stop:
        if self.stop is None:
            return self.start()
        if not self.stop.running:
            raise DebugError(f"{self.stop.message.splitlines()[0]}; 'run' starts it again, 'back' steps back")
        self._mode = mode
        self._base_depth = depth(self.machine, self._frame)
        self._pause = False
        self._run.commands.put("go")
        return self._wait(mode)

    def step(self) -> Stop:
        """Run one statement, stopping inside a routine it calls."""
        return self._resume("step")

    def next(self) -> Stop:
        """Run one statement, calls included."""
        return self._resume("next")

    def finish(self) -> Stop:
        """Run until the current routine returns (stops at its caller's next statement)."""
        return self._resume("finish")

    def cont(self) -> Stop:
        """Run to the next breakpoint or watch change, or to the end."""
        return self._resume("continue")

    def back(self) -> Stop:
        """One statement backwards: replay from the start to the event before this one."""
        if self.stop is None:
            raise DebugError("the program has not started")
        target = self.stop.event - 1 if self.stop.running else self.stop.event
        if target < 1:
            raise DebugError("at the first statement: there is nothing to go back to")
        return self.run_to(target)

    def run_to(self, event: int) -> Stop:
        """Stop at event ``event`` (counted from 1), replaying from the start."""
        if event < 1:
            raise DebugError("events are counted from 1")
        stop = self._launch(event)
        if stop.running and stop.event != event:
            raise DebugError(f"the run has only {stop.event} events")
        if not stop.running and event > stop.event:
            raise DebugError(f"the run ended after {stop.event} events: {stop.message.splitlines()[0]}")
        return stop

    def restart(self) -> Stop:
        return self._launch(1)

    def _abort(self) -> None:
        run, self._run = self._run, None
        if run is None or run.thread is None:
            return
        if run.thread.is_alive():
            run.commands.put("abort")
            run.thread.join(timeout=30)

    def close(self) -> None:
        self._abort()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ------------------------------------------------------------------ breakpoints and watches
    def break_(self, spec: str) -> str:
        """``LINE``, ``FILE:LINE`` or ``ROUTINE``, optionally followed by ``if EXPR``."""
        self._need_machine()
        where, cond = spec, None
        parts = _split_if(spec)
        if parts is not None:
            where, cond = parts
        where = where.strip()
        if not where:
            raise DebugError("usage: break LINE | ROUTINE [if EXPR]")
        m = self.machine
        self._numbers += 1
        note = ""
        if where.isdigit() or (":" in where and where.rsplit(":", 1)[1].isdigit()):
            file, line = self.filename, int(where.rsplit(":", 1)[-1])
            if ":" in where:
                file = self._file_named(where.rsplit(":", 1)[0])
            lines = statement_lines(m).get(file, {})
            after = sorted(n for n in lines if n >= line)
            if not after:
                self._numbers -= 1
                raise DebugError(f"no statement on line {line} or after it in {file}")
            if after[0] != line:
                note = f"no statement on line {line}; the breakpoint moves to line {after[0]}"
            line = after[0]
            bp = Breakpoint(self._numbers, file=file, line=line, display=f"{file}:{line}", scope=lines[line])
        else:
            info = m.env.routines.get(fold(where))
            if info is None:
                self._numbers -= 1
                raise DebugError(f"no routine '{where}' and no line number")
            bp = Breakpoint(self._numbers, routine=info.pyname, display=info.display, scope=info.pyname)
        if cond is not None:
            try:
                compiled = compile_expression(m, cond, bp.scope)
            except DebugError:
                self._numbers -= 1
                raise
            if compiled.type is not T.BOOL:
                self._numbers -= 1
                raise DebugError(f"the condition must be a boolean; '{cond.strip()}' is {compiled.type}")
            bp.condition = compiled
        self.breakpoints.append(bp)
        text = f"breakpoint {bp.number} at {bp.display}" + (f" if {cond.strip()}" if cond else "")
        return f"{note}\n{text}" if note else text

    def delete(self, number: int | None = None) -> str:
        if number is None:
            n = len(self.breakpoints)
            self.breakpoints.clear()
            return f"deleted {n} breakpoint(s)"
        for bp in self.breakpoints:
            if bp.number == number:
                self.breakpoints.remove(bp)
                return f"deleted breakpoint {number}"
        raise DebugError(f"no breakpoint {number}")

    def watch(self, name: str) -> str:
        """Stop whenever the variable ``name`` (in the current frame, or a global) changes."""
        self._need_frame()
        name = name.strip()
        sym, scope = self._symbol(name)
        w = Watch(sym.display, sym.pyname, scope, typ=sym.type)
        self._refresh_watch(w)
        self.watches.append(w)
        where = "global" if scope is None else f"in {self.stop.routine}"
        return f"watching {sym.display} ({where}): {self._describe(w.value, sym.type)}"

    def unwatch(self, name: str | None = None) -> str:
        if name is None:
            n = len(self.watches)
            self.watches.clear()
            return f"removed {n} watch(es)"
        for w in self.watches:
            if fold(w.name) == fold(name):
                self.watches.remove(w)
                return f"no longer watching {w.name}"
        raise DebugError(f"not watching '{name}'")

    def _symbol(self, name: str):
        m = self.machine
        key = fold(name)
        pyname = self._frame.f_code.co_name if self._frame is not None else "main_"
        from .events import routine_of
        info = routine_of(m, pyname)
        if info is not None:
            for s in info.params + info.locals:
                if s.name == key:
                    return s, pyname
        sym = m.env.globals.get(key)
        if sym is None:
            raise DebugError(f"no variable '{name}' here (a local of {self.stop.routine} or a global)")
        return sym, None

    def _watched_value(self, w: Watch, frame):
        """A comparable copy of the watched variable's value, or _UNSEEN outside its routine."""
        m = self.machine
        if w.scope is None:
            value = m.ns.get(w.pyname)
        else:
            if frame is None or frame.f_code.co_name != w.scope:
                return _UNSEEN
            value = frame.f_locals.get(w.pyname)
        return _fingerprint(m, value)

    def _refresh_watch(self, w: Watch) -> None:
        if self._run is None:
            return
        v = self._watched_value(w, self._frame)
        if v is not _UNSEEN:
            w.value, w.known = v, True

    def _watch_changed(self, m, frame) -> bool:
        changed = []
        for w in self.watches:
            v = self._watched_value(w, frame)
            if v is _UNSEEN:
                continue
            if w.known and v != w.value:
                changed.append(f"{w.name} changed: {self._describe(w.value, w.typ)} -> {self._describe(v, w.typ)}")
            w.value, w.known = v, True
        if changed:
            by = f" (by line {self._prev_loc.line})" if self._prev_loc else ""
            self._watch_message = "watch: " + "; ".join(changed) + by
            return True
        return False

    def _describe(self, fp, typ) -> str:
        if fp is None:
            return "not assigned"
        if isinstance(fp, tuple) and fp and fp[0] == "table":
            return f"table {fp[1]} x {fp[2]}, {fp[4]} ones"
        if isinstance(fp, tuple) and fp and fp[0] == "bits":
            s = fp[1]
            return s if len(s) <= 64 else f"{len(s)} bits, {s.count('1')} ones"
        if typ is T.BOOL:
            return "true" if fp else "false"
        return str(fp)

    # ------------------------------------------------------------------ looking around
    def where(self) -> list[tuple[str, Loc | None]]:
        """The Star call stack, outermost first: (routine, position)."""
        if self._frame is None:
            return []
        return [(f.routine, f.loc) for f in star_stack(self.machine, self._frame)]

    def evaluate(self, expr: str):
        """The value of a Star expression in the current frame (Python values: int, bool,
        Bits, Table)."""
        compiled = self._compile(expr)
        return evaluate(self.machine, self._run.events, compiled, self._frame)

    def print_(self, expr: str) -> str:
        compiled = self._compile(expr)
        value = evaluate(self.machine, self._run.events, compiled, self._frame)
        return format_value(self.machine, value, compiled.type, compiled.text)

    def _compile(self, expr: str) -> Compiled:
        self._need_machine()
        pyname = self._frame.f_code.co_name if self._frame is not None else "main_"
        return compile_expression(self.machine, expr, pyname)

    def show(self, name: str, rows: str | None = None) -> str:
        """A table, slice or word drawn as bits (rows A-B: a window of a large one)."""
        compiled = self._compile(name)
        value = evaluate(self.machine, self._run.events, compiled, self._frame)
        label = compiled.text
        if isinstance(value, Table):
            first, last = parse_rows(rows, value.n)
            return draw_table(value.to_numpy(), label, first, last)
        if isinstance(value, Bits) and not isinstance(value, Unassigned):
            first, last = parse_rows(rows, value.n, window=64) if rows else (1, value.n)
            return draw_vector(bit_string(self.machine, value), label, compiled.type, first, last)
        return f"{label} = {format_value(self.machine, value, compiled.type)}"

    def variables(self) -> dict[str, object]:
        """The current frame's variables and the globals: name -> comparable value
        (int, bool, a bit string for slices and words, a tuple of row strings for tables)."""
        self._need_machine()
        m = self.machine
        out = {}
        for sym in m.env.globals.values():
            out[sym.display] = _plain(m, m.ns.get(sym.pyname))
        if self._frame is not None:
            from .events import routine_of
            info = routine_of(m, self._frame.f_code.co_name)
            if info is not None:
                loc = self._frame.f_locals
                for s in info.params + info.locals:
                    out[f"{info.display}.{s.display}"] = _plain(m, loc.get(s.pyname))
        return out

    def steps_report(self) -> str:
        self._need_machine()
        m = self.machine
        ops = ", ".join(f"{OP_TITLES[op]} {c}" for op, c in zip(BASE_OPS, m.counts) if c) or "none yet"
        text = (f"event {self.event}; steps {sum(m.counts)} ({ops})")
        if self.profile:
            text += "\n" + m.profile_report() + "\n" + bypass_note(m)
        return text

    def source_line(self, loc: Loc | None) -> str:
        if loc is None:
            return ""
        return loc.source.line(loc.line)

    def _file_named(self, name: str) -> str:
        m = self.machine
        files = set(statement_lines(m))
        if name in files:
            return name
        for f in files:
            if f.rsplit("/", 1)[-1] == name or f.rsplit("/", 1)[-1] == name + ".star":
                return f
        raise DebugError(f"no Star file '{name}' in this program (files: {', '.join(sorted(files))})")

    def _need_machine(self) -> None:
        if self._run is None:
            raise DebugError("the program has not started")

    def _need_frame(self) -> None:
        self._need_machine()
        if self._frame is None:
            raise DebugError("the program is not stopped at a statement")


_UNSEEN = object()


def _fingerprint(m, value):
    if isinstance(value, Unassigned) or value is None:
        return None
    if isinstance(value, Table):
        bits = value.to_numpy()
        return ("table", value.n, value.k, bits.tobytes(), int(bits.sum()))
    if isinstance(value, Bits):
        return ("bits", bit_string(m, value))
    return value


def _plain(m, value):
    if isinstance(value, Unassigned) or value is None:
        return None
    if isinstance(value, Table):
        return tuple("".join("1" if b else "0" for b in row) for row in value.to_numpy())
    if isinstance(value, Bits):
        return bit_string(m, value)
    return value


def _split_if(spec: str):
    """'12 if i = 3' -> ('12', 'i = 3'); None without a condition."""
    low = spec.lower()
    for i in range(len(low) - 2):
        if low[i:i + 2] == "if" and (i == 0 or low[i - 1].isspace()) and (i + 2 == len(low) or low[i + 2].isspace()):
            return spec[:i], spec[i + 2:]
    return None


class _Output:
    """The program's writeln: to the debugger's ``out`` (stdout by default), silent while a
    ``back`` replays what was already printed."""

    def __init__(self, debugger: Debugger):
        self.debugger = debugger

    def write(self, text: str) -> None:
        if self.debugger._replaying:
            return
        import sys
        (self.debugger.out or sys.stdout).write(text)

    def flush(self) -> None:
        import sys
        getattr(self.debugger.out or sys.stdout, "flush", lambda: None)()
