"""The interactive Star prompt: ``star`` with no arguments, or ``star repl``.

Two layers:

* :class:`Session` — the logic, no terminal: ``execute(text)`` runs one input (a declaration,
  statements, an expression whose value is echoed, or a ``:command``) against one
  :class:`~starvm.Machine` and writes what it prints to ``session.out``; ``feed(text)``
  returns that output as a string; ``is_complete(text)`` says whether an input is finished
  (a ``begin`` has its ``end``, every ``(`` is closed, a procedure has its body).
* :class:`Repl` — the terminal: a prompt_toolkit prompt with persistent history, multi-line
  input, Star syntax highlighting (:mod:`starvm.ui.highlight`) and completion.  Without a
  terminal (input piped in) :func:`main` reads the inputs from stdin, one after another.

How an input runs: declarations (``var``, ``proc``, ``function``, a whole ``program``) are
loaded into the machine as they are; anything else is compiled as the main block
``begin <input> end.`` in the same machine, so globals and routines persist between inputs.
A bare expression (``NUMB(X)``, ``x + 1``) is run as ``writeln(<expression>)``.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

from .. import config, stdlib
from ..backends import BackendUnavailable
from ..check.builtins import BUILTINS
from ..errors import Loc, Source, StarError, StarInterrupt, StarSyntaxError, StarTypeError
from ..frontend import ast as A
from ..frontend.parser import fold, parse
from ..runtime.machine import Machine
from ..execution.values import Bits, Table, Unassigned
from ..types import T

KEYWORDS = ("program", "var", "const", "proc", "procedure", "function", "begin", "end", "if", "then", "else",
            "while", "do", "repeat", "until", "for", "to", "downto", "parallel", "integer", "boolean",
            "slice", "word", "table", "and", "or", "not", "xor", "div", "mod", "true", "false")
COMMANDS = {
    ":help": "this list",
    ":load FILE": "declare the routines and globals of a Star file (its main block is not run)",
    ":run FILE": "load a Star file and run its main block",
    ":vars [--all]": "the global variables and routines you declared (--all: the library routines loaded too)",
    ":show NAME": "draw a table, slice or word as bits",
    ":show T as int": "a table's rows as bits and, beside them, as unsigned numbers",
    ":plot NAME [FILE.png]": "save a picture of a table or vector (needs matplotlib)",
    ":profile on|off": "time every base operation; print the steps of each input",
    ":stats [reset]": "the steps (and times) so far, in the shape of the paper's Table 1",
    ":cost [MODEL,...|list]": "estimated time and energy of the steps so far on device models (docs/costs.md)",
    ":backend [NAME]": "the backend; with a NAME, start a fresh machine on it",
    ":reset": "a fresh machine: forget every variable and routine",
    ":debug FILE": "step through a Star file (break, step, next, back, print, show, watch; quit returns here)",
    ":quit": "leave (also Ctrl-D)",
}
HELP = """\
Type Star declarations, statements or expressions; an unfinished input (a begin without its
end, an open parenthesis, a procedure without its body) continues on the next line.

  var n: integer; X: slice; P: table(8, 8);     declare globals (they persist)
  proc P(n: integer); begin ... end;             declare a procedure or function
  X := COL(1, P); for n := 1 to 3 do writeln(n)  run statements
  NUMB(X)                                        an expression: its value is printed

Commands:
""" + "\n".join(f"  {k:<24}{v}" for k, v in COMMANDS.items()) + """

Ctrl-C stops a running program (the variables keep the values they had); Ctrl-D quits.
An empty line ends an unfinished input early."""

_DECL_WORDS = {"var", "const", "proc", "procedure", "function", "program"}
_OPEN = {"begin", "repeat"}
_CLOSE = {"end", "until"}
_CONTINUES = {"then", "do", "else", "to", "downto", "if", "while", "for", "and", "or", "xor", "not",
              "div", "mod", "var", "until"}
_SCAN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>/\*.*?\*/|\(\*.*?\*\)|\{[^}]*\}|//[^\n]*)
  | (?P<open_comment>/\*|\(\*|\{)
  | (?P<string>'(?:[^'\n]|'')*'?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9]+)
  | (?P<op>:[ \t]*=|<>|<=|>=|.)
""", re.S | re.X)


def scan(text: str) -> tuple[list[str], bool]:
    """The significant tokens of a Star text (comments dropped, names lower-cased) and
    whether a comment is left open at its end."""
    toks = []
    for m in _SCAN.finditer(text):
        kind = m.lastgroup
        if kind == "open_comment":
            return toks, True
        if kind in ("ws", "comment"):
            continue
        tok = m.group()
        toks.append(tok.lower() if kind == "name" else ("':='" if kind == "op" and tok[0] == ":" and len(tok) > 1 else tok))
    return toks, False


def is_complete(text: str) -> bool:
    """Whether an input is finished, or the prompt should continue on the next line."""
    stripped = text.strip()
    if not stripped or stripped.startswith(":"):
        return True
    toks, open_comment = scan(text)
    if open_comment:
        return False
    if not toks:
        return True
    depth = parens = 0
    awaiting_body = False      # a proc / function header whose body has not been closed
    for tok in toks:
        if tok == "(":
            parens += 1
        elif tok == ")":
            parens = max(0, parens - 1)
        elif tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth = max(0, depth - 1)
            if depth == 0 and tok == "end":
                awaiting_body = False
        elif tok in ("proc", "procedure", "function"):
            awaiting_body = True
    if depth or parens or awaiting_body:
        return False
    if toks[0] == "program" and toks[-1] != ".":
        return False
    last = toks[-1]
    return not (last in _CONTINUES or last in ("':='", ",", "+", "-", "*", "=", "<", ">", "<>", "<=", ">=", ":"))


def history_path() -> Path:
    return config.history_path()


class Session:
    """One Star machine and everything typed at it; no terminal needed."""

    def __init__(self, machine: Machine | None = None, *, backend: str | None = None, out=None):
        self.out = out if out is not None else sys.stdout
        self.machine = machine if machine is not None else Machine(backend=backend)
        self.machine.out = self._Writer(self)
        self.inputs = 0            # numbers the inputs: <input-1>, <input-2>, ...
        self.errors = 0            # inputs that ended in an error
        self.last_error: str | None = None   # the message of the last input's error, if it had one
        self.print_errors = True
        self.done = False          # :quit was typed
        self.debug_shell = None    # :debug FILE: inputs go to this debugger (starvm/debug) until it quits

    class _Writer:
        """Star's writeln goes to whatever the session's ``out`` is now."""
        def __init__(self, session):
            self.session = session

        def write(self, text):
            self.session.out.write(text)

        def flush(self):
            getattr(self.session.out, "flush", lambda: None)()

    # ------------------------------------------------------------------ entry points
    is_complete = staticmethod(is_complete)

    def feed(self, text: str) -> str:
        """Run one input and return everything it printed."""
        saved, self.out = self.out, io.StringIO()
        try:
            self.execute(text)
            return self.out.getvalue()
        finally:
            self.out = saved

    def execute(self, text: str) -> bool:
        """Run one input, printing to ``self.out``. Returns False once the user asked to quit."""
        stripped = text.strip()
        self.last_error = None
        if self.debug_shell is not None:
            self._debug_input(text)
            return not self.done
        if not stripped:
            return not self.done
        try:
            if stripped.startswith(":"):
                self._command(stripped)
            else:
                self._code(text)
        except StarInterrupt as e:
            where = f" at {e.loc}" if e.loc else ""
            self._error(f"interrupted{where}; the variables keep the values they had")
        except StarError as e:
            self._error(e.render())
        except KeyboardInterrupt:
            self._error("interrupted")
        except BackendUnavailable as e:
            self._error(f"error: {e}")
        except Exception as e:   # a bug in starvm: report it, stay at the prompt
            self._error(f"internal error: {type(e).__name__}: {e} (this is a bug in starvm)")
            if config.debug():
                import traceback
                traceback.print_exc(file=self.out)
        self._flush()
        return not self.done

    # ------------------------------------------------------------------ Star code
    def _code(self, text: str) -> None:
        self.inputs += 1
        name = f"<input-{self.inputs}>"
        toks, _ = scan(text)
        before = list(self.machine.counts)
        if toks and (toks[0] in _DECL_WORDS or toks[-1] == "."):
            if toks[-1] not in (";", "."):   # `var n: integer` at the prompt: the closing ';' is implied
                text += "\n;"
            gen = self.machine.compile(text, name)        # declarations (and maybe a main block)
            if self.machine._main is not None and "def main_" in gen.source:
                self.machine._guard(self.machine._main)
        else:
            self._statements_or_expression(text, name)
        if self.machine.profile:
            self._print_steps(before)

    def _statements_or_expression(self, text: str, name: str) -> None:
        stmt_src = f"begin\n{text}\nend."
        try:
            stmts = [s for s in parse(stmt_src, name).main.body if s is not None]
            stmt_error = None
        except StarSyntaxError as e:
            stmts, stmt_error = None, _relocate(e, stmt_src, text)
        # A lone name or call may be an expression: NUMB(X), X, f(3). Try that first.
        if stmts is None or (len(stmts) == 1 and isinstance(stmts[0], A.CallStmt)):
            expr = re.sub(r"[\s;]+$", "", text)
            expr_src = f"begin writeln(\n{expr}\n) end."
            try:
                self._compile_wrapped(expr_src, name, text)
            except (StarSyntaxError, StarTypeError) as e:
                if stmts is None:
                    raise (stmt_error if isinstance(e, StarSyntaxError) else e) from None
            else:
                self._run_main(expr_src, text)
                return
        self._compile_wrapped(stmt_src, name, text)
        self._run_main(stmt_src, text)
        for s in stmts:
            if isinstance(s, A.Assign) and s.loc.source.line(s.loc.line)[s.loc.column - 1:][:1] == "=":
                # `a = b` as a statement assigns (the paper's `v = v or w;`); a student may have
                # meant to compare, so the prompt says what happened and how to compare
                target = getattr(s.target, "display", None) or getattr(s.target.func, "display", "it")
                self._print(f"note: '=' as a statement assigns, as ':=' does: {target} was assigned; "
                            f"to compare, write writeln({target} = ...)")

    def _compile_wrapped(self, src: str, name: str, text: str) -> None:
        try:
            self.machine.compile(src, name)
        except StarError as e:
            raise _relocate(e, src, text) from None

    def _run_main(self, src: str, text: str) -> None:
        try:
            self.machine._guard(self.machine._main)
        except StarError as e:
            raise _relocate(e, src, text) from None
        finally:
            self.machine._main = None

    def _print_steps(self, before: list[int]) -> None:
        from ..ir.ops import BASE_OPS, OP_TITLES
        delta = [(OP_TITLES[op], a - b) for op, a, b in zip(BASE_OPS, self.machine.counts, before) if a != b]
        total = sum(d for _, d in delta)
        body = ", ".join(f"{n} {d}" for n, d in delta) or "none"
        self._print(f"[steps: {body}; total {total}]")

    # ------------------------------------------------------------------ commands
    def _command(self, line: str) -> None:
        cmd, _, arg = line.partition(" ")
        cmd, arg = cmd.lower(), arg.strip()
        handler = {
            ":help": self._help, ":h": self._help, ":?": self._help,
            ":load": self._load, ":run": self._run, ":vars": self._vars, ":show": self._show,
            ":plot": self._plot, ":profile": self._profile, ":stats": self._stats, ":cost": self._cost,
            ":backend": self._backend, ":reset": self._reset, ":debug": self._debug,
            ":quit": self._quit, ":q": self._quit, ":exit": self._quit,
        }.get(cmd)
        if handler is None:
            self._error(f"unknown command {cmd}; :help lists the commands")
            return
        handler(arg)

    def _help(self, arg: str) -> None:
        self._print(HELP)

    def _read(self, arg: str) -> tuple[str, str] | None:
        if not arg:
            self._usage(":load FILE")
            return None
        path = Path(arg).expanduser()
        try:
            return path.read_text(), str(arg)
        except (OSError, UnicodeDecodeError) as e:
            self._error(f"error: cannot read {arg}: {getattr(e, 'strerror', None) or e}")
            return None

    def _load(self, arg: str) -> None:
        got = self._read(arg)
        if got is None:
            return
        text, name = got
        g0, r0 = set(self.machine.env.globals), set(self.machine.env.routines)
        with _suggest_reset(":load", arg):
            gen = self.machine.compile(text, name)
        self.machine._main = None
        routines = [self.machine.env.routines[r].display for r in self.machine.env.routines if r not in r0]
        globs = [self.machine.env.globals[g].display for g in self.machine.env.globals if g not in g0]
        msg = f"loaded {name}: routines {', '.join(routines) or '-'}; globals {', '.join(globs) or '-'}"
        if "def main_" in gen.source:
            msg += " (its main block was not run; :run FILE runs it)"
        self._print(msg)

    def _run(self, arg: str) -> None:
        got = self._read(arg)
        if got is None:
            return
        text, name = got
        with _suggest_reset(":run", arg):
            self.machine.run(text, name)

    def _vars(self, arg: str) -> None:
        if arg not in ("", "--all"):
            self._usage(":vars [--all]")
            return
        env = self.machine.env
        routines = [info for info in env.routines.values() if arg == "--all" or not _from_library(info)]
        if not env.globals and not routines:
            library = len(env.routines)
            self._print("nothing declared yet" + (f" ({library} library routine{'s' if library != 1 else ''} loaded: "
                                                  ":vars --all lists them)" if library else ""))
            return
        for sym in env.globals.values():
            const = "constant " if sym.constant is not None else ""   # const NAME = ...;
            self._print(f"{sym.display}: {const}{self._describe(self.machine.ns.get(sym.pyname), sym.type)}")
        for info in routines:
            params = "; ".join(("var " if p.by_ref else "") + f"{p.display}: {p.type}" for p in info.params)
            kind = "function" if info.is_function else "proc"
            result = f": {info.result.type}" if info.is_function else ""
            self._print(f"{kind} {info.display}({params}){result}")

    def _bits(self, v: Bits) -> str:
        return "".join("1" if b else "0" for b in self.machine.backend.to_bools(v.v, v.n))

    def _describe(self, value, typ: T) -> str:
        if isinstance(value, Unassigned) or value is None:
            return f"{typ} (not assigned yet)"
        if isinstance(value, Table):
            return f"table {value.n} x {value.k}"
        if isinstance(value, Bits):
            bits = self._bits(value)
            shown = bits if len(bits) <= 64 else bits[:64] + "..."
            return f"{typ} of {value.n} bits = {shown}"
        if typ is T.BOOL:
            return f"boolean = {'true' if value else 'false'}"
        return f"{typ} = {value}"

    def _lookup(self, arg: str, usage: str):
        if not arg:
            self._usage(usage)
            return None
        sym = self.machine.env.globals.get(fold(arg))
        if sym is None:
            self._error(f"error: no global variable '{arg}' (:vars lists them)")
            return None
        return sym, self.machine.ns.get(sym.pyname)

    def _show(self, arg: str) -> None:
        words = arg.split()
        as_int = len(words) == 3 and [w.lower() for w in words[1:]] == ["as", "int"]
        got = self._lookup(words[0] if as_int else arg, ":show NAME [as int]")
        if got is None:
            return
        sym, value = got
        if isinstance(value, Table):
            self._print(draw_table(value, sym.display, as_int=as_int))
        elif isinstance(value, Bits) and not isinstance(value, Unassigned):
            bits = self._bits(value)
            ones = [str(i + 1) for i, b in enumerate(bits) if b == "1"]
            where = ", ".join(ones[:32]) + (", ..." if len(ones) > 32 else "")
            self._print(f"{sym.display}: {sym.type} of {value.n} bits, {len(ones)} ones"
                        + (f" (at {where})" if ones else ""))
            for start in range(0, len(bits), 64):
                self._print(f"{start + 1:>6} | {bits[start:start + 64]}")
        else:
            self._print(f"{sym.display}: {self._describe(value, sym.type)}")

    def _plot(self, arg: str) -> None:
        parts = arg.split()
        got = self._lookup(parts[0] if parts else "", ":plot NAME [FILE.png]")
        if got is None:
            return
        sym, value = got
        if isinstance(value, Unassigned) or not isinstance(value, (Table, Bits)):
            self._error(f"error: :plot draws a table, slice or word; '{sym.display}' is {self._describe(value, sym.type)}")
            return
        from .pictures import MatplotlibMissing, table_png
        target = parts[1] if len(parts) > 1 else f"{sym.display}.png"
        what = f"{sym.display}: table {value.n} x {value.k}" if isinstance(value, Table) else \
            f"{sym.display}: {sym.type} of {value.n} bits"
        try:   # starvm/ui/pictures.py: one block per bit, set bits dark, row 1 at the top
            table_png(value, target, title=what, backend=self.machine.backend,
                      vertical=sym.type is T.SLICE)
        except MatplotlibMissing:
            self._error("error: :plot needs matplotlib, which is not installed "
                        "(pip install matplotlib, or pip install \"starvm[plot]\"); :show NAME draws it as text")
            return
        except OSError as e:
            self._error(f"error: cannot write {target}: {e.strerror or e}")
            return
        self._print(f"wrote {target}")

    def _profile(self, arg: str) -> None:
        if arg.lower() not in ("on", "off"):
            self._print(f"profiling is {'on' if self.machine.profile else 'off'} (:profile on|off)")
            return
        self.machine.profile = arg.lower() == "on"
        self.machine.routine_profile.by_kind = self.machine.profile   # :cost per routine too
        self._print(f"profiling {arg.lower()}" + ("; each input prints its steps, :stats the times" if
                                                    self.machine.profile else ""))

    def _stats(self, arg: str) -> None:
        if arg.lower() == "reset":
            self.machine.reset_stats()
            self._print("step counters reset")
            return
        self._print(self.machine.profile_report())

    def _cost(self, arg: str) -> None:
        """:cost [MODEL,...]: the steps so far priced on device models (all without a name);
        :cost list names them (starvm/costs)."""
        from ..costs.model import ModelError, model_names
        from ..costs.report import list_text
        if arg.lower() == "list":
            self._print(list_text().rstrip())
            return
        try:
            report = self.machine.cost(arg or model_names())
        except ModelError as e:
            self._error(f"error: {e}")
            return
        self._print(report.text())

    def _backend(self, arg: str) -> None:
        if not arg:
            self._print(f"backend: {self.machine.backend.name}")
            return
        self._new_machine(arg)
        self._print(f"backend: {self.machine.backend.name} (a fresh machine: earlier declarations are gone)")

    def _reset(self, arg: str) -> None:
        self._new_machine(self.machine.backend.name)
        self._print("a fresh machine: every variable and routine is gone")

    def _new_machine(self, backend: str) -> None:
        profile = self.machine.profile
        old = self.machine
        machine = Machine(backend=backend, fuse=old.fuse, max_steps=getattr(old, "max_steps", None),
                          max_depth=getattr(old, "max_depth", None))
        machine.out = self._Writer(self)
        machine.profile = profile
        machine.routine_profile.by_kind = profile   # :cost per routine, as before the reset
        self.machine = machine

    def _quit(self, arg: str) -> None:
        self.done = True

    def _debug(self, arg: str) -> None:
        if not arg:
            self._usage(":debug FILE")
            return
        got = self._read(arg)
        if got is None:
            return
        from ..debug.commands import DebugShell
        from ..debug.debugger import Debugger
        text, name = got
        out = self._Writer(self)
        shell = DebugShell(Debugger(text, name, backend=self.machine.backend.name, out=out), out)
        if shell.begin():
            self.debug_shell = shell
            self._print("(debugger commands now; 'quit' returns to the star prompt)")
        else:
            self.errors += 1
            shell.d.close()

    def _debug_input(self, text: str) -> None:
        shell = self.debug_shell
        shell.execute(text)
        if shell.done:
            shell.d.close()
            self.debug_shell = None
            self._print("left the debugger")
        self._flush()

    # ------------------------------------------------------------------ completion
    def completions(self, prefix: str) -> list[str]:
        """Words that complete ``prefix``: keywords, base operations, standard-library
        routines, declared globals and routines (case-insensitive, sorted)."""
        low = fold(prefix)
        seen: dict[str, str] = {}
        for word in self.vocabulary():
            f = fold(word)
            if f.startswith(low) and f not in seen:
                seen[f] = word
        return sorted(seen.values(), key=str.lower)

    def vocabulary(self) -> list[str]:
        env = self.machine.env
        words = [s.display for s in env.globals.values()] + [r.display for r in env.routines.values()]
        words += [b.name for b in BUILTINS.values()] + list(KEYWORDS) + _library_names()
        return words

    # ------------------------------------------------------------------ output
    def _print(self, text: str) -> None:
        self.out.write(text + "\n")

    def _usage(self, usage: str) -> None:
        self._error(f"usage: {usage}")

    def _error(self, text: str) -> None:
        """An input ended in an error: count it, keep it (``last_error``: a notebook cell raises
        it, starvm/ui/ipython.py) and print it unless ``print_errors`` is off."""
        self.errors += 1
        self.last_error = text
        if self.print_errors:
            self._print(text)

    def _flush(self) -> None:
        getattr(self.out, "flush", lambda: None)()


def _from_library(info) -> bool:
    """A standard-library routine, loaded when a program first called it."""
    loc = info.node.loc
    return loc is not None and loc.source.filename.startswith("stdlib/")


@contextlib.contextmanager
def _suggest_reset(command: str, arg: str):
    """:load / :run of a file whose names are declared already: say how to start afresh."""
    try:
        yield
    except StarTypeError as e:
        if "declared twice" in e.message:
            tip = f":reset forgets every name declared so far (a fresh machine); then {command} {arg} again"
            e.hint = f"{e.hint}; or {tip}" if e.hint else tip
        raise


def _library_names() -> list[str]:
    """Standard-library routine names as their files spell them (WARSHALL-C)."""
    names = []
    for key, path in stdlib.index().items():
        spelled = key
        for m in stdlib._DECL.finditer(path.read_text()):
            if fold(re.sub(r"\s+", "", m.group(1))) == key:
                spelled = re.sub(r"\s+", "", m.group(1))
                break
        names.append(spelled)
    return names


def draw_table(t: Table, name: str, max_rows: int = 64, max_cols: int = 128, as_int: bool = False) -> str:
    """A table as rows of 1 and '.', with row numbers and a column ruler; ``as_int``: each
    row also as an unsigned number (column 1 the most significant bit, as NUMOF reads it)."""
    bits = t.to_numpy()
    n, k = bits.shape
    kc, nr = min(k, max_cols), min(n, max_rows)
    out = [f"{name}: table {n} x {k}"]
    if k >= 10:
        out.append("       " + "".join(str((c + 1) // 10 % 10) if (c + 1) % 10 == 0 else " " for c in range(kc)))
    out.append("       " + "".join(str((c + 1) % 10) for c in range(kc)))
    for r in range(nr):
        row = "".join("1" if b else "." for b in bits[r, :kc])
        number = f"  = {int(''.join('1' if b else '0' for b in bits[r]), 2) if k else 0}" if as_int else ""
        out.append(f"{r + 1:>5} |{row}" + (" ..." if k > kc else "") + number)
    if n > nr:
        out.append(f"      ... {n - nr} more rows")
    return "\n".join(out)


def _relocate(err: StarError, wrapped: str, text: str) -> StarError:
    """Report positions in the wrapper ``begin\\n<input>\\nend.`` against the input itself."""
    lines = text.split("\n")

    def fix(loc: Loc | None) -> Loc | None:
        if loc is None or loc.source.text != wrapped:
            return loc
        src = Source(loc.source.filename, text)
        line = loc.line - 1
        if 1 <= line <= len(lines):
            return Loc(src, line, loc.column, loc.end_column)
        last = len(lines)
        while last > 1 and not lines[last - 1].strip():
            last -= 1
        return Loc(src, last, len(lines[last - 1].rstrip()) + 1)

    if (isinstance(err, StarSyntaxError) and err.loc is not None and err.loc.source.text == wrapped
            and not 2 <= err.loc.line <= len(lines) + 1):   # the error is in the wrapper: input ended early
        err.message = re.sub(r"^unexpected [^;]*", "unexpected end of input", err.message)
        err.args = (err.message,)
    if isinstance(err, StarSyntaxError) and err.loc is not None and err.loc.source.text == wrapped:
        # a diagnosis naming lines ("'begin' at line 2 is never closed"): lines of the input
        if err.loc.line == 1:                  # the wrapper's own 'begin': an 'end' too few
            err.message = "unexpected end of input: a 'begin' is not closed by 'end'"
        elif f"'.' at line {len(lines) + 2}" in err.message:    # it reached the wrapper's 'end.'
            err.message = "unexpected end of input: " + err.message.split(" (the parser")[0]
        err.message = re.sub(r"at line (\d+)", lambda m: f"at line {int(m.group(1)) - 1}", err.message)
        err.args = (err.message,)
    err.loc = fix(err.loc)
    err.stack = [type(f)(f.routine, fix(f.loc)) for f in err.stack]
    return err


# ---------------------------------------------------------------------- the terminal
PROMPT, CONTINUATION = "star> ", "  ... "
DEBUG_PROMPT = "debug> "
BANNER = "starvm {version} on the {backend} backend: Star at the prompt; :help for help, Ctrl-D to quit"


class Repl:
    """The prompt_toolkit front end of a :class:`Session`.

    ``input`` / ``output`` are prompt_toolkit Input / Output objects (tests pass a pipe input
    and a DummyOutput); ``history`` a file path, or None for ``config.history_path()``."""

    def __init__(self, session: Session | None = None, *, input=None, output=None, history=None):
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        self.session = session if session is not None else Session()
        path = Path(history) if history is not None else history_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(exist_ok=True)
            hist = FileHistory(str(path))
        except OSError:                      # a read-only home: keep the history in memory
            hist = InMemoryHistory()
        self.history_file = path
        kw = {}
        try:
            from prompt_toolkit.lexers import PygmentsLexer
            from .highlight import StarLexer
            kw["lexer"] = PygmentsLexer(StarLexer)
        except ImportError:                  # Pygments missing: no colours
            pass
        self.prompt = PromptSession(
            history=hist, multiline=True, key_bindings=self._key_bindings(),
            completer=StarCompleter(self.session), complete_while_typing=False,
            prompt_continuation=lambda width, line_number, is_soft_wrap: CONTINUATION,
            input=input, output=output, **kw)

    def _key_bindings(self):
        from prompt_toolkit.filters import has_completions
        from prompt_toolkit.key_binding import KeyBindings

        kb = KeyBindings()

        @kb.add("enter", filter=~has_completions)
        def _(event):
            buf = event.current_buffer
            text = buf.document.text
            after = buf.document.text_after_cursor
            last_line_empty = "\n" in text and not text.rsplit("\n", 1)[-1].strip()
            debugging = self.session.debug_shell is not None   # debugger commands are one line
            if not after.strip() and (debugging or is_complete(text) or last_line_empty):
                buf.validate_and_handle()
            else:
                buf.insert_text("\n")

        @kb.add("escape", "enter")          # Alt-Enter: run now, complete or not
        def _(event):
            event.current_buffer.validate_and_handle()

        return kb

    def run(self) -> int:
        """Read and run inputs until :quit or Ctrl-D. Returns the exit status (0)."""
        while not self.session.done:
            try:
                text = self.prompt.prompt(PROMPT if self.session.debug_shell is None else DEBUG_PROMPT)
            except KeyboardInterrupt:        # Ctrl-C at the prompt: drop the line
                continue
            except EOFError:                 # Ctrl-D
                if self.session.debug_shell is not None:   # leaves the debugger, not the prompt
                    self.session.execute("quit")
                    continue
                break
            self.session.execute(text)
        return 0


try:
    from prompt_toolkit.completion import Completer, Completion

    class StarCompleter(Completer):
        """Keywords, base operations, standard-library routines, names in scope; commands
        after a leading ':'."""

        def __init__(self, session: Session):
            self.session = session

        def get_completions(self, document, complete_event):
            before = document.text_before_cursor
            if before.lstrip().startswith(":") and " " not in before.strip():
                word = before.strip()
                for cmd in COMMANDS:
                    name = cmd.split()[0]
                    if name.startswith(word.lower()):
                        yield Completion(name, -len(word), display_meta=COMMANDS[cmd])
                return
            m = re.search(r"[A-Za-z_][A-Za-z0-9_-]*$", before)
            if not m:
                return
            word = m.group()
            for cand in self.session.completions(word):
                yield Completion(cand, -len(word))
except ImportError:                          # prompt_toolkit is missing: plain input only
    StarCompleter = None


def read_inputs(lines):
    """Group lines into complete inputs (for input that is not a terminal)."""
    buf: list[str] = []
    for line in lines:
        buf.append(line.rstrip("\n"))
        text = "\n".join(buf)
        if is_complete(text):
            if text.strip():
                yield text
            buf = []
    if any(s.strip() for s in buf):
        yield "\n".join(buf)


def main(backend: str | None = None, stdin=None, stdout=None) -> int:
    """``star repl``: the prompt on a terminal; otherwise run the inputs read from stdin
    (exit status 1 if any of them failed)."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    session = Session(backend=backend, out=stdout)
    interactive = stdin.isatty() and stdout.isatty()
    if interactive:
        from .. import __version__
        print(BANNER.format(version=__version__, backend=session.machine.backend.name), file=stdout)
        try:
            repl = Repl(session)
        except ImportError:
            print("(prompt_toolkit is not installed: no line editing, history or completion; "
                  "pip install \"starvm[repl]\")", file=stdout)
        else:
            return repl.run()
        return _plain(session, _tty_lines(stdout))
    return _plain(session, stdin)


def _tty_lines(stdout):
    prompt = PROMPT
    while True:
        try:
            line = input(prompt)
        except EOFError:
            return
        except KeyboardInterrupt:
            print(file=stdout)
            continue
        yield line
        prompt = CONTINUATION if not is_complete(line) else PROMPT


def _plain(session: Session, lines) -> int:
    for text in read_inputs(lines):
        if not session.execute(text):
            break
    return 1 if session.errors else 0
