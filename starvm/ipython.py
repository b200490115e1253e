"""Star in Jupyter / IPython: ``%load_ext starvm.ipython``, then

    %%star
    var P: table(4, 4); X: slice(P);
    begin ROW(1, P) := BITS('0110'); X := COL(2, P); writeln(NUMB(X)) end.

A ``%%star`` cell runs on a :class:`~starvm.Machine` kept in the notebook's namespace
(``_star_machine``, or the name given with ``%%star --machine NAME``; ``--backend NAME`` picks
the backend of a machine made fresh), so declarations and variables persist from cell to cell.
The cell is read like input at the ``star`` prompt (starvm/repl.py): declarations,
statements, expressions (their value is printed), ``:commands``. An error is shown as the
Star error message (``StarError.render()``), never as a Python traceback; the cell stops at
its first error. A cell that is just the name of a global table shows the table as a
picture (``Table._repr_png_``, when matplotlib is installed).
"""
from __future__ import annotations

import shlex
import sys

DEFAULT_NAME = "_star_machine"


class _Stdout:
    """Writes to whatever sys.stdout is now (IPython swaps it while capturing)."""

    def write(self, text):
        sys.stdout.write(text)

    def flush(self):
        sys.stdout.flush()


def _options(line: str) -> dict:
    opts = {"machine": DEFAULT_NAME, "backend": None}
    words = shlex.split(line or "")
    i = 0
    while i < len(words):
        w = words[i]
        key, eq, value = w.partition("=")
        if key in ("--machine", "-m", "--backend"):
            if not eq:
                if i + 1 >= len(words):
                    raise ValueError(f"%%star: {key} needs a value")
                i += 1
                value = words[i]
            opts["machine" if key in ("--machine", "-m") else "backend"] = value
        else:
            raise ValueError(f"%%star: unknown option {w!r} (usage: %%star [--machine NAME] [--backend NAME])")
        i += 1
    if not opts["machine"].isidentifier():
        raise ValueError(f"%%star: --machine takes a Python name, not {opts['machine']!r}")
    return opts


def run_cell(ns: dict, line: str, cell: str):
    """What ``%%star`` does, without IPython: run ``cell`` on the machine ``ns[NAME]`` (made if
    missing); returns a table when the cell is just a global table's name, else None."""
    from .frontend.parser import fold
    from .repl import Session, read_inputs
    from .runtime.machine import Machine
    from .runtime.values import Table
    try:
        opts = _options(line)
    except ValueError as e:
        print(e, file=sys.stderr)
        return None
    machine = ns.get(opts["machine"])
    if not isinstance(machine, Machine):
        from .backends import BackendUnavailable
        try:
            machine = Machine(backend=opts["backend"])
        except BackendUnavailable as e:
            print(f"error: {e}", file=sys.stderr)
            return None
        ns[opts["machine"]] = machine
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
    for text in read_inputs(cell.splitlines()):
        errors = session.errors
        session.execute(text)
        if session.errors > errors:      # the Star error is printed; stop the cell there
            break
    return None


def load_ipython_extension(ip) -> None:
    """``%load_ext starvm.ipython``: registers the ``%%star`` cell magic."""

    def star(line, cell):
        return run_cell(ip.user_ns, line, cell)

    star.__doc__ = __doc__
    ip.register_magic_function(star, magic_kind="cell", magic_name="star")


def unload_ipython_extension(ip) -> None:   # pragma: no cover - nothing to undo but the magic
    ip.magics_manager.magics["cell"].pop("star", None)
