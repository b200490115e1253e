"""Star in Jupyter / IPython: ``%load_ext starvm.ui.ipython``, then

    %%star
    var P: table(4, 4); X: slice(P);
    begin ROW(1, P) := BITS('0110'); X := COL(2, P); writeln(NUMB(X)) end.

A ``%%star`` cell runs on a :class:`~starvm.Machine` kept in the notebook's namespace
(``_star_machine``, or the name given with ``%%star --machine NAME``; ``--backend NAME`` picks
the backend of a machine made fresh), so declarations and variables persist from cell to cell.
The cell is read like input at the ``star`` prompt (starvm/ui/repl.py): declarations,
statements, expressions (their value is printed), ``:commands``. The cell stops at its first
error and fails (``StarCellError``: "Run All" stops there), shown as the Star error message
(``StarError.render()``), never as a Python traceback. A cell that is just the name of a
global table shows the table as a picture (``Table._repr_png_``, when matplotlib is
installed). ``--backend NAME`` for a machine that exists already on another backend is an
error that says how to get one on NAME (its variables would be lost by switching silently).

``%%star --trace``: the cell is a whole program (with its main block); it runs on a fresh
machine with statement events on and the replay page of ``star trace`` (starvm/debug) is
shown inline, in an iframe (``--max-events N``, ``--max-rows N`` as on the command line).
"""
from __future__ import annotations

import shlex
import sys

DEFAULT_NAME = "_star_machine"


class StarCellError(Exception):
    """A ``%%star`` cell stopped at an error. IPython shows ``_render_traceback_()``'s lines,
    the Star error as the prompt prints it, instead of a Python traceback; the cell fails."""

    def __init__(self, message: str, page=None):
        super().__init__(message)
        self.message = message
        self.page = page            # --trace: the replay page up to the error

    def _render_traceback_(self) -> list[str]:
        return self.message.splitlines()


class _Stdout:
    """Writes to whatever sys.stdout is now (IPython swaps it while capturing)."""

    def write(self, text):
        sys.stdout.write(text)

    def flush(self):
        sys.stdout.flush()


def _options(line: str) -> dict:
    opts = {"machine": DEFAULT_NAME, "backend": None, "trace": False, "max_events": None, "max_rows": None}
    words = shlex.split(line or "")
    i = 0
    while i < len(words):
        w = words[i]
        key, eq, value = w.partition("=")
        if key == "--trace":
            opts["trace"] = True
        elif key in ("--max-events", "--max-rows"):
            if not eq:
                if i + 1 >= len(words):
                    raise ValueError(f"%%star: {key} needs a value")
                i += 1
                value = words[i]
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"%%star: {key} takes a number >= 1, not {value!r}")
            opts[key[2:].replace("-", "_")] = int(value)
        elif key in ("--machine", "-m", "--backend"):
            if not eq:
                if i + 1 >= len(words):
                    raise ValueError(f"%%star: {key} needs a value")
                i += 1
                value = words[i]
            opts["machine" if key in ("--machine", "-m") else "backend"] = value
        else:
            raise ValueError(f"%%star: unknown option {w!r} (usage: %%star [--machine NAME] [--backend NAME] "
                             "[--trace [--max-events N] [--max-rows N]])")
        i += 1
    if not opts["machine"].isidentifier():
        raise ValueError(f"%%star: --machine takes a Python name, not {opts['machine']!r}")
    return opts


def run_cell(ns: dict, line: str, cell: str):
    """What ``%%star`` does, without IPython: run ``cell`` on the machine ``ns[NAME]`` (made if
    missing); returns a table when the cell is just a global table's name, else None."""
    from ..frontend.parser import fold
    from .repl import Session, read_inputs
    from ..runtime.machine import Machine
    from ..execution.values import Table
    try:
        opts = _options(line)
    except ValueError as e:
        raise StarCellError(str(e)) from None
    if opts["trace"]:
        return trace_cell(cell, opts)
    machine = ns.get(opts["machine"])
    if not isinstance(machine, Machine):
        from ..backends import BackendUnavailable
        try:
            machine = Machine(backend=opts["backend"])
        except BackendUnavailable as e:
            raise StarCellError(f"error: {e}") from None
        ns[opts["machine"]] = machine
    elif opts["backend"] is not None and opts["backend"] != machine.backend.name:
        name = opts["machine"]
        raise StarCellError(
            f"%%star: the machine {name} runs on the {machine.backend.name} backend; --backend {opts['backend']} "
            f"chooses the backend of a new machine. A second one: %%star --machine NAME --backend {opts['backend']}; "
            f"or this one afresh on {opts['backend']} (its variables are lost): del {name}, then "
            f"%%star --backend {opts['backend']}")
    session = getattr(machine, "_star_session", None)
    if session is None or session.machine is not machine:
        session = Session(machine, out=_Stdout())
        machine._star_session = session
    else:
        machine.out = Session._Writer(session)
    name = cell.strip().rstrip(";").strip()
    sym = machine.env.globals.get(fold(name)) if name.replace("-", "_").isidentifier() else None
    if sym is not None and isinstance(machine.ns.get(sym.pyname), Table):
        return machine.ns[sym.pyname]
    session.print_errors = False          # an error is raised instead: the cell fails
    try:
        for text in read_inputs(cell.splitlines()):
            errors = session.errors
            session.execute(text)
            if session.errors > errors:      # stop the cell at its first error
                raise StarCellError(session.last_error or "%%star: the cell stopped at an error")
    finally:
        session.print_errors = True
    return None


class TracePage:
    """The replay page of a traced cell; Jupyter shows it inline (``_repr_html_``)."""

    def __init__(self, html: str, events: int):
        self.html = html
        self.events = events

    def _repr_html_(self) -> str:
        import html
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
                'style="width:100%;height:640px;border:1px solid #ddd" sandbox="allow-scripts"></iframe>')

    def __repr__(self) -> str:
        return f"<starvm trace page: {self.events} events>"


def trace_cell(cell: str, opts: dict):
    """``%%star --trace``: record the cell's run and return its page. A program that does not
    load raises StarCellError; one that stops at a run-time error shows its page up to the
    error (in IPython), then raises StarCellError carrying it."""
    from ..backends import BackendUnavailable
    from ..debug.trace import DEFAULT_MAX_EVENTS, DEFAULT_MAX_ROWS, record
    from ..debug.trace_html import render_html
    from ..errors import StarError
    try:
        trace = record(cell, "<cell>", backend=opts["backend"],
                       max_events=opts["max_events"] or DEFAULT_MAX_EVENTS,
                       max_rows=opts["max_rows"] or DEFAULT_MAX_ROWS)
    except StarError as e:
        raise StarCellError(e.render()) from None
    except BackendUnavailable as e:
        raise StarCellError(f"error: {e}") from None
    for _, text in trace["output"]:
        sys.stdout.write(text)
    page = TracePage(render_html(trace), len(trace["events"]))
    if trace["end"] == "error":
        _display(page)
        raise StarCellError(trace["message"], page=page)
    if trace["end"] == "limit":          # the recording stopped, not the program: a note
        print(trace["message"], file=sys.stderr)
    return page


def _display(obj) -> None:
    """Show ``obj`` in the running IPython, if any (the cell then fails with an error)."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is not None:
        display(obj)


def load_ipython_extension(ip) -> None:
    """``%load_ext starvm.ui.ipython``: registers the ``%%star`` cell magic."""

    def star(line, cell):
        return run_cell(ip.user_ns, line, cell)

    star.__doc__ = __doc__
    ip.register_magic_function(star, magic_kind="cell", magic_name="star")


def unload_ipython_extension(ip) -> None:   # pragma: no cover - nothing to undo but the magic
    ip.magics_manager.magics["cell"].pop("star", None)
