"""The debugger's command language (pdb-like) and its prompt: ``star debug`` and the REPL's
``:debug FILE`` both run a :class:`DebugShell` over one :class:`~starvm.debug.Debugger`.

:meth:`DebugShell.execute` runs one command line and writes what it prints to ``out``; no
terminal needed (tests and the REPL's Session use it directly). :func:`interact` adds the
prompt (prompt_toolkit on a terminal, plain lines otherwise).
"""
from __future__ import annotations

import re
import sys

from ..errors import StarError
from .debugger import Debugger, Stop
from .evaluate import DebugError

PROMPT = "debug> "
COMMANDS = [
    ("break LINE | FILE:LINE | ROUTINE [if EXPR]", "b", "stop there (when EXPR is true)"),
    ("delete [N]", "d", "remove breakpoint N (all without N)"),
    ("breaks", "", "list the breakpoints and watches"),
    ("step", "s", "run one statement, into a routine it calls"),
    ("next", "n", "run one statement, calls included"),
    ("finish", "f", "run until the current routine returns"),
    ("continue", "c", "run to a breakpoint, a watch change or the end (Ctrl-C: stop)"),
    ("back", "bk", "one statement backwards (replays the run from the start)"),
    ("goto EVENT", "", "stop at event EVENT (replays from the start)"),
    ("where", "w", "the Star call stack"),
    ("list [LINE]", "l", "the source around the current line"),
    ("print EXPR", "p", "the value of a Star expression in the current frame"),
    ("show NAME [ROWS]", "", "a table, slice or word drawn as bits (ROWS: A-B or A)"),
    ("watch NAME", "", "stop whenever the variable changes"),
    ("unwatch [NAME]", "", "stop watching NAME (all without NAME)"),
    ("steps", "", "the event and step counters and the steps per operation so far"),
    ("run", "", "start the program again from its first statement"),
    ("help", "h", "this list"),
    ("quit", "q", "leave the debugger (also Ctrl-D)"),
]
HELP = "Commands (an empty line repeats the last step, next, finish, continue or back):\n" + \
    "\n".join(f"  {usage:<44}{'(' + short + ') ' if short else ''}{what}" for usage, short, what in COMMANDS)
_ALIASES = {"b": "break", "d": "delete", "s": "step", "n": "next", "f": "finish", "fin": "finish",
            "c": "continue", "cont": "continue", "bk": "back", "w": "where", "bt": "where",
            "l": "list", "p": "print", "h": "help", "?": "help", "q": "quit", "exit": "quit",
            "info": "breaks", "r": "run", "restart": "run"}
_REPEATABLE = {"step", "next", "finish", "continue", "back"}


class DebugShell:
    def __init__(self, debugger: Debugger, out=None):
        self.d = debugger
        self.out = out if out is not None else sys.stdout
        self.done = False
        self.last = ""
        self.list_from: int | None = None

    def _print(self, text: str) -> None:
        self.out.write(text + "\n")
        getattr(self.out, "flush", lambda: None)()

    def begin(self) -> bool:
        """Compile and stop at the first statement; False when the program does not compile."""
        try:
            stop = self.d.start()
        except StarError as e:
            self._print(e.render())
            return False
        except DebugError as e:
            self._print(f"error: {e}")
            return False
        self._print(f"debugging {self.d.filename}: stopped before its first statement; 'help' lists the commands")
        self.report(stop)
        return True

    def report(self, stop: Stop) -> None:
        if stop.message and stop.reason in ("breakpoint", "watch"):
            self._print(stop.message)
        if stop.reason == "finished":
            self._print(f"the program has finished (event {stop.event}, steps {stop.steps})")
            return
        if stop.reason == "error":
            self._print(stop.message)
            self._print(f"the program stopped with an error (event {stop.event}, steps {stop.steps}); "
                        "'back' steps back, 'run' starts again")
            return
        if stop.reason == "interrupted":
            self._print("interrupted")
        loc = stop.loc
        where = f"{loc.filename}:{loc.line}" if loc else "?"
        self._print(f"> {where} in {stop.routine}  [event {stop.event}, steps {stop.steps}]")
        if loc:
            self._print(f"{loc.line:>5} | {self.d.source_line(loc).strip()}")
        self.list_from = None

    def execute(self, line: str) -> bool:
        """Run one command line. Returns False once the user asked to quit."""
        line = line.strip()
        if not line:
            if self.last not in _REPEATABLE:
                return not self.done
            line = self.last
        word, _, arg = line.partition(" ")
        cmd = _ALIASES.get(word.lower(), word.lower())
        arg = arg.strip()
        handler = getattr(self, "_c_" + cmd, None)
        if handler is None:
            self._print(f"unknown command '{word}'; 'help' lists the commands")
            return True
        self.last = cmd
        try:
            handler(arg)
        except DebugError as e:
            self._print(str(e) if str(e).startswith(("error", "<")) or "error:" in str(e) else f"error: {e}")
        except StarError as e:
            self._print(e.render())
        except KeyboardInterrupt:
            self._print("interrupted")
        return not self.done

    # ------------------------------------------------------------------ commands
    def _c_break(self, arg):
        if not arg:
            return self._c_breaks("")
        self._print(self.d.break_(arg))

    def _c_delete(self, arg):
        if arg and not arg.isdigit():
            raise DebugError("usage: delete [N]")
        self._print(self.d.delete(int(arg) if arg else None))

    def _c_breaks(self, arg):
        if not self.d.breakpoints and not self.d.watches:
            self._print("no breakpoints, no watches")
        for bp in self.d.breakpoints:
            cond = f" if {bp.condition.text}" if bp.condition else ""
            self._print(f"breakpoint {bp.number} at {bp.display}{cond} (hit {bp.hits} times)")
        for w in self.d.watches:
            self._print(f"watching {w.name}")

    def _c_step(self, arg):
        self.report(self.d.step())

    def _c_next(self, arg):
        self.report(self.d.next())

    def _c_finish(self, arg):
        self.report(self.d.finish())

    def _c_continue(self, arg):
        self.report(self.d.cont())

    def _c_back(self, arg):
        self.report(self.d.back())

    def _c_goto(self, arg):
        if not arg.isdigit():
            raise DebugError("usage: goto EVENT (a number)")
        self.report(self.d.run_to(int(arg)))

    def _c_run(self, arg):
        self.report(self.d.restart())

    def _c_where(self, arg):
        stack = self.d.where()
        if not stack:
            self._print("no Star frames: the program is not stopped at a statement")
        for i, (routine, loc) in enumerate(stack):
            mark = "->" if i == len(stack) - 1 else "  "
            self._print(f"{mark} {routine} at {loc.filename}:{loc.line}" if loc else f"{mark} {routine}")

    def _c_list(self, arg):
        loc = self.d.stop.loc if self.d.stop else None
        if loc is None and not arg:
            raise DebugError("no current line")
        if arg and not arg.isdigit():
            raise DebugError("usage: list [LINE]")
        source = loc.source if loc else None
        if source is None:
            raise DebugError("no current file")
        lines = source.text.split("\n")
        center = int(arg) if arg else (self.list_from or loc.line)
        first = max(1, center - 5) if not self.list_from or arg else self.list_from
        last = min(len(lines), first + 10)
        for n in range(first, last + 1):
            mark = "->" if loc and n == loc.line else "  "
            self._print(f"{n:>5} {mark} {lines[n - 1]}")
        self.list_from = last + 1

    def _c_print(self, arg):
        if not arg:
            raise DebugError("usage: print EXPR")
        self._print(self.d.print_(arg))

    def _c_show(self, arg):
        if not arg:
            raise DebugError("usage: show NAME [ROWS]")
        m = re.fullmatch(r"(.*\S)\s+(\d+(?:\s*[-:]\s*\d+)?)", arg)
        name, rows = (m.group(1), m.group(2)) if m else (arg, None)
        self._print(self.d.show(name, rows))

    def _c_watch(self, arg):
        if not arg:
            raise DebugError("usage: watch NAME")
        self._print(self.d.watch(arg))

    def _c_unwatch(self, arg):
        self._print(self.d.unwatch(arg or None))

    def _c_steps(self, arg):
        self._print(self.d.steps_report())

    def _c_help(self, arg):
        self._print(HELP)

    def _c_quit(self, arg):
        self.done = True


def interact(debugger: Debugger, stdin=None, stdout=None) -> int:
    """The debugger at a prompt until ``quit`` or end of input. Returns the exit status:
    1 when the program does not compile (a Star error in it), else 0."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    shell = DebugShell(debugger, stdout)
    try:
        if not shell.begin():
            return 1
        if stdin.isatty() and stdout.isatty():
            try:
                lines = _prompt_lines()
            except ImportError:
                lines = _input_lines()
        else:
            lines = _echo_lines(stdin, stdout)
        for line in lines:
            if not shell.execute(line):
                break
        return 0
    finally:
        if debugger.profile and debugger.machine is not None:
            from .events import bypass_note
            stdout.write(debugger.machine.profile_report() + "\n" + bypass_note(debugger.machine) + "\n")
        debugger.close()


def _prompt_lines():
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import InMemoryHistory
    session = PromptSession(history=InMemoryHistory())
    while True:
        try:
            yield session.prompt(PROMPT)
        except KeyboardInterrupt:
            continue
        except EOFError:
            return


def _input_lines():
    while True:
        try:
            yield input(PROMPT)
        except KeyboardInterrupt:
            continue
        except EOFError:
            return


def _echo_lines(stdin, stdout):
    """Commands read from a pipe, echoed after the prompt so that a transcript reads like a session."""
    for line in stdin:
        stdout.write(PROMPT + line.rstrip("\n") + "\n")
        yield line
