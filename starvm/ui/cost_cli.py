"""The cost parts of the ``star`` command (kept out of cli.py):

    star run FILE --cost MODEL[,MODEL...]      after the run, its estimated time and energy on
                                               each model (stderr); with --profile per routine
                                               too; with --plot OUT.png the picture of them
    star cost --list [-v]                      the shipped models and their sources
    star cost --validate                       each model against its published figure
    star cost FILE --model M[,M...] --vary NAME=V1,V2,...
                                               the program at several sizes (its constant NAME,
                                               as --param gives it), with --plot OUT.png the
                                               growth of time and energy with the table height

An unknown model is a usage error (exit 2) that lists the available ones.
"""
from __future__ import annotations

import io
import sys
import time

from .. import config
from ..backends import NAMES
from ..costs.model import ModelError, model_names
from ..costs.run import as_models, machine_cost

MODEL_HELP = ("a device model by name (star cost --list names them: "
              + ", ".join(model_names()) + ") or a model file NAME.toml; several joined by commas")


def add_run_argument(run) -> None:
    run.add_argument("--cost", metavar="MODEL[,MODEL...]",
                     help="after the run, its estimated time and energy on device models (" + MODEL_HELP
                          + "); with --profile per routine too, with --plot the picture of them instead of the steps")


def add_parser(sub) -> None:
    cost = sub.add_parser("cost", help="device cost models: list them, validate them, or price a program at several sizes",
                          description="Estimated time and energy of Star programs on published models of associative "
                                      "and processing-in-memory hardware (docs/costs.md).")
    cost.add_argument("file", nargs="?", help="a .star file to run at each size of --vary")
    cost.add_argument("--list", action="store_true", help="name the shipped models with their sources")
    cost.add_argument("-v", "--verbose", action="store_true",
                      help="with --list: also what each model reproduces and what it leaves out")
    cost.add_argument("--validate", action="store_true",
                      help="run each model's validation program against its published figure")
    cost.add_argument("--model", metavar="MODEL[,MODEL...]", default=None, help=MODEL_HELP + " (default: all)")
    cost.add_argument("--vary", metavar="NAME=V1,V2,...",
                      help="run FILE once per value of its constant NAME (const NAME = ...;)")
    cost.add_argument("--rows", type=int, metavar="N", help="price as if the machine had N rows (default: the tallest table)")
    cost.add_argument("--width", type=int, metavar="K", help="price as if rows had K bits (default: the widest table)")
    cost.add_argument("--backend", choices=NAMES,
                      help="where tables live (default: $STARVM_BACKEND or numpy)")
    cost.add_argument("--jit", choices=["auto", "on", "off"],
                      help="the compiled tier, as for star run (the estimates do not depend on it; the host time does)")
    cost.add_argument("--plot", metavar="OUT.png", help="draw time and energy against the table height (needs matplotlib)")


def models_or_usage(spec, usage_error):
    try:
        models = as_models(spec if spec is not None else model_names())
    except ModelError as e:
        raise usage_error(str(e)) from None
    if not models:
        raise usage_error(f"no cost model given (available: {', '.join(model_names())})")
    return models


class CostRun:
    """``star run --cost``: the models checked before the run (an unknown one: exit 2), the
    per-routine steps by kind kept when profiling, the host time measured from here."""

    def __init__(self, args, machine, usage_error):
        self.args, self.machine, self.usage_error = args, machine, usage_error
        self.models = models_or_usage(args.cost, usage_error)
        if args.plot:
            from .cli_pictures import _need_matplotlib
            _need_matplotlib(usage_error)
        machine.routine_profile.by_kind = True
        self.t0 = time.perf_counter()

    def report(self) -> None:
        host = time.perf_counter() - self.t0
        report = machine_cost(self.machine, self.models, host_seconds=host)
        print(report.text(), file=sys.stderr)
        if self.args.plot:
            from .cost_plot import report_png
            _save(lambda: report_png(report, self.args.plot), self.args.plot, self.usage_error)


def _save(draw, path, usage_error) -> None:
    try:
        draw()
    except OSError as e:
        raise usage_error(f"cannot write {path}: {e.strerror or e}") from None
    print(f"wrote {path}", file=sys.stderr)


def parse_vary(text: str, usage_error) -> tuple[str, list[int]]:
    name, eq, values = text.partition("=")
    try:
        sizes = [int(v) for v in values.split(",") if v.strip()]
    except ValueError:
        sizes = []
    if not eq or not name.strip() or not sizes:
        raise usage_error(f"--vary {text}: give NAME=V1,V2,... with integer values (e.g. --vary N=64,256,1024)")
    return name.strip(), sizes


def main_cost(args, read, usage_error) -> int:
    """``star cost``."""
    if args.list:
        sys.stdout.write(_list(args.verbose))
        return 0
    if args.validate:
        from .cost_validation import reproduce_all
        for r in reproduce_all(backend=config.backend_name(args.backend)):
            print(r.line())
        return 0
    if not args.file:
        raise usage_error("star cost needs --list, --validate, or a FILE to run (with --vary NAME=V1,V2,...)")
    for flag, value in (("--rows", args.rows), ("--width", args.width)):
        if value is not None and value < 1:
            raise usage_error(f"{flag} must be at least 1, not {value}")
    models = models_or_usage(args.model, usage_error)
    if args.plot:
        from .cli_pictures import _need_matplotlib
        _need_matplotlib(usage_error)
    text = read(args.file)
    runs = [(None, {})]
    if args.vary:
        name, sizes = parse_vary(args.vary, usage_error)
        runs = [(f"{name}={v}", {"params": {name: v}}) for v in sizes]
    points = []
    for label, extra in runs:
        report = _price(text, args, models, extra, usage_error)
        points.append((label, report))
    _print_points(points)
    if args.plot:
        from .cost_plot import scaling_png
        _save(lambda: scaling_png(points, args.plot), args.plot, usage_error)
    return 0


def _list(verbose: bool) -> str:
    from ..costs.report import list_text
    return list_text(verbose)


def _price(text, args, models, extra, usage_error):
    from ..runtime.machine import Machine
    try:
        machine = Machine(backend=config.backend_name(args.backend), out=io.StringIO(), jit=args.jit, **extra)
    except TypeError:   # a starvm without program parameters (Machine(params=...))
        raise usage_error("--vary needs program parameters (const NAME = ...; with --param)") from None
    machine.profile = True             # per routine (the host time includes profiling)
    machine.routine_profile.by_kind = True
    t0 = time.perf_counter()
    try:
        machine.run(text, args.file)
    except ValueError as e:   # runtime/params.py's ParamError: NAME is none of the program's constants
        if type(e).__name__ != "ParamError":
            raise
        raise usage_error(f"--vary {e}") from None
    return machine_cost(machine, models, rows=args.rows, width=args.width, host_seconds=time.perf_counter() - t0)


def _print_points(points) -> None:
    from ..costs.report import energy_text, time_text
    if len(points) == 1:
        print(points[0][1].text())
        return
    names = [e.model.name for e in points[0][1].estimates]
    head = f"{'size':<14}{'rows':>10}{'cols':>6}{'steps':>12}{'host, s':>10}" + "".join(f"{n[:24]:>26}" for n in names)
    print("estimated time / energy at each size")
    print(head)
    print("-" * len(head))
    for label, r in points:
        row = f"{label:<14}{r.geometry.rows:>10}{r.geometry.width:>6}{r.steps:>12}{r.host_seconds:>10.4f}"
        for e in r.estimates:
            row += f"{time_text(e) + ' / ' + energy_text(e):>26}"
        print(row)
