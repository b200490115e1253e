"""The picture and progress parts of the ``star`` command (kept out of cli.py):

    star show FILE.star --table NAME --png OUT.png   run FILE, draw its global table NAME
                                                      (with star run's --graph / --generate)
    star run FILE.star --profile --plot OUT.png       the profile as a bar chart as well
    star run FILE.star --progress                     a progress bar for the outer loops

Usage problems (an unknown NAME, a NAME that is no table, matplotlib or tqdm missing, an
unwritable picture) raise the CLI's usage error: exit status 2. Errors of the Star program
propagate as StarErrors: exit status 1.
"""
from __future__ import annotations

import sys

from .. import config


def _need_matplotlib(usage_error) -> None:
    from .pictures import MatplotlibMissing, plt
    try:
        plt()
    except MatplotlibMissing as e:
        raise usage_error(str(e)) from None


def _save(draw, path, usage_error) -> None:
    try:
        draw()
    except OSError as e:
        raise usage_error(f"cannot write {path}: {e.strerror or e}") from None


def show(args, text: str, machine_class, usage_error) -> int:
    """``star show``: run the program, then draw the global table ``args.table``."""
    from ..frontend.parser import fold
    from .pictures import table_png
    from ..execution.values import Table
    from ..runtime.params import params_from_args
    from ..graphs.cli import graph_from_args, reading_from_args
    _need_matplotlib(usage_error)
    machine = machine_class(backend=config.backend_name(args.backend), graph=graph_from_args(args, usage_error),
                            directed=reading_from_args(args), params=params_from_args(args, usage_error))
    machine.compile(text, args.file)
    if machine._main is not None:
        machine._guard(machine._main)
    sym = machine.env.globals.get(fold(args.table))
    if sym is None:
        known = [s.display for s in machine.env.globals.values() if isinstance(machine.ns.get(s.pyname), Table)]
        raise usage_error(f"{args.file} has no global variable '{args.table}'"
                          + (f" (its global tables: {', '.join(known)})" if known else " (it declares no global table)"))
    value = machine.ns.get(sym.pyname)
    if not isinstance(value, Table):
        raise usage_error(f"'{sym.display}' is {'an' if str(sym.type)[0] in 'aeiou' else 'a'} {sym.type}, not a table: star show draws a table")
    sys.stdout.flush()
    _save(lambda: table_png(value, args.png, title=f"{sym.display}: table {value.n} x {value.k}"),
          args.png, usage_error)
    print(f"wrote {args.png} ({sym.display}: table {value.n} x {value.k})", file=sys.stderr)
    return 0


def prepare_run(args, machine, usage_error) -> None:
    """Before ``star run``: check that --plot can draw; switch the progress bars on when
    --progress is given and stderr is a terminal (nothing at all otherwise)."""
    if args.plot:
        _need_matplotlib(usage_error)
    if args.progress and sys.stderr.isatty():
        from . import progress
        try:
            progress.enable(machine, True)
        except ImportError as e:
            raise usage_error(str(e)) from None


def plot_profile(args, machine, usage_error) -> None:
    """After ``star run --plot``: the steps (and, with --profile, the times) as a bar chart."""
    from .pictures import profile_png
    _save(lambda: profile_png(machine, args.plot), args.plot, usage_error)
    print(f"wrote {args.plot}", file=sys.stderr)
