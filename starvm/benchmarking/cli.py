"""`star bench PROGRAM.star`: the options, and the command (starvm/ui/cli.py calls ``bench``)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..backends import NAMES
from ..execution import limits

DEFAULT_REPEAT = 5


def add_parser(sub) -> None:
    b = sub.add_parser(
        "bench", help="time a Star program (its main block or one routine) on one or several backends",
        description="Run the main block (or --call NAME ARGS) --repeat times after --warmup runs on each "
                    "backend, the device synchronised around each run; print median / min / max seconds, "
                    "steps per second and the steps of one run by kind. What the program writes is "
                    "suppressed. Exit codes as for `star run`: 0 ok, 1 Star error, 2 usage or I/O error "
                    "(also: no backend could run here).")
    b.add_argument("file", help="a .star file")
    b.add_argument("--backend", metavar="LIST",
                   help="comma-separated backends side by side, e.g. numpy,cupy,auto (default: $STARVM_BACKEND "
                        "or numpy); one that cannot run here is reported as unavailable")
    b.add_argument("--jit", metavar="LIST",
                   help="on, off or on,off: the compiled tier on and/or off (where this starvm has one)")
    b.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, metavar="N",
                   help=f"timed runs per backend (default {DEFAULT_REPEAT})")
    b.add_argument("--warmup", type=int, default=1, metavar="N", help="untimed runs first (default 1)")
    b.add_argument("--call", nargs="+", metavar=("NAME", "ARG"),
                   help="time the routine NAME called with integer / boolean arguments instead of the main block")
    b.add_argument("--max-steps", type=limits.steps_argument, metavar="N",
                   help="stop a run with an error after N loop iterations and routine calls")
    b.add_argument("--json", metavar="FILE",
                   help="also write the figures, the machine, device, versions and git state as JSON")
    from ..graphs.cli import add_arguments as add_graph_arguments
    add_graph_arguments(b)     # --graph FILE, --graph-format FMT, --generate SPEC


def _list(text: str, allowed: dict, what: str, usage_error) -> list:
    items = [t.strip().lower() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise usage_error(f"--{what}: {', '.join(bad) or 'nothing'} is not one of {', '.join(allowed)}")
    return [allowed[t] for t in dict.fromkeys(items)]


def _argument(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        return None


def bench(args, text: str, usage_error) -> int:
    """Run the benchmark the parsed ``args`` describe; returns the exit status. StarErrors
    propagate (exit 1 in starvm/ui/cli.py), usage errors raise ``usage_error`` (exit 2)."""
    from .. import config
    from ..api import compile as compile_star
    from ..graphs.cli import graph_from_args
    from .program import machine_has_jit, run
    from .results import write_json
    backends = _list(args.backend or config.backend_name(None), {n: n for n in NAMES}, "backend", usage_error)
    jits = [None]
    if args.jit is not None:
        jits = _list(args.jit, {"on": True, "off": False}, "jit", usage_error)
        if not machine_has_jit():
            raise usage_error("--jit: this starvm has no compiled tier (its Machine takes no jit=)")
    if args.repeat < 1 or args.warmup < 0:
        raise usage_error("--repeat must be at least 1 and --warmup at least 0")
    call, call_args = None, ()
    if args.call:
        call, raw = args.call[0], args.call[1:]
        call_args = tuple(_argument(a) for a in raw)
        bad = [a for a, v in zip(raw, call_args) if v is None]
        if bad:
            raise usage_error(f"--call: argument '{bad[0]}' is not an integer or true/false "
                              "(tables and vectors cannot be given on the command line)")
    if args.max_steps is not None and args.max_steps < 0:
        raise usage_error("--max-steps must be at least 0")
    graph = graph_from_args(args, usage_error)
    # how to read the graph (--directed / --undirected), where this starvm's `star run` has it
    reading = {"directed": args.directed} if getattr(args, "directed", None) is not None else {}
    program = compile_star(text, args.file)            # a syntax or type error: exit 1 before any run
    report = run(program, call=call, args=call_args, backends=backends, jit=jits, repeat=args.repeat,
                 warmup=args.warmup, max_steps=args.max_steps, graph=graph, **reading)
    print(report.text(), flush=True)
    if args.json:
        try:
            write_json(report.document(), Path(args.json))
        except OSError as e:
            raise usage_error(f"cannot write {args.json}: {e.strerror or e}") from None
        print(f"wrote {args.json}")
    if not report.ran:
        print("star: error: none of the backends asked for can run here", file=sys.stderr)
        return 2
    return 0
