"""``star debug PROGRAM.star`` and ``star trace PROGRAM.star --html run.html``: their options
(those of ``star run`` that apply) and what they do. ``starvm/ui/cli.py`` calls these."""
from __future__ import annotations

import sys
import time

from ..backends import NAMES
from ..execution import limits

def _run_options(p) -> None:
    p.add_argument("file", help="a .star file")
    p.add_argument("--backend", choices=NAMES, help="where tables live (default: $STARVM_BACKEND or numpy)")
    p.add_argument("--profile", action="store_true",
                   help="also time every base operation; the report says that native kernels and the compiled tier were bypassed")
    p.add_argument("--max-steps", type=limits.steps_argument, metavar="N",
                   help="stop the program with an error after N loop iterations and routine calls")
    p.add_argument("--jit", choices=["auto", "on", "off"],
                   help="accepted as star run takes it; debugging and tracing always bypass the compiled tier")
    p.add_argument("--native", action="store_true",
                   help="let native kernels replace standard-library routines (each call is then one statement; "
                        "default: every routine runs as its Star body and can be stepped through)")
    from ..graphs.cli import add_arguments
    add_arguments(p)
    from ..runtime.params import add_param_argument
    add_param_argument(p)   # -D / --param NAME=VALUE: the program's constants


def add_subcommands(sub) -> None:
    debug = sub.add_parser("debug", help="step through a Star program (break, step, next, back, print, show, watch)")
    _run_options(debug)
    trace = sub.add_parser("trace", help="run a Star program and write a page that replays it statement by statement")
    _run_options(trace)
    trace.add_argument("--html", metavar="OUT.html", help="the replay page to write (self-contained: open it in a browser)")
    trace.add_argument("--json", metavar="OUT.json", help="the same events as JSON, for other tools")
    from .trace import DEFAULT_MAX_EVENTS, DEFAULT_MAX_ROWS
    trace.add_argument("--max-events", type=int, default=DEFAULT_MAX_EVENTS, metavar="N",
                       help=f"record at most N statement events (default {DEFAULT_MAX_EVENTS}); the program stops there")
    trace.add_argument("--max-rows", type=int, default=DEFAULT_MAX_ROWS, metavar="N",
                       help=f"draw at most the first N rows of a table (default {DEFAULT_MAX_ROWS}); the page gives each table's rows and ones")


def _machine_options(args, usage_error) -> dict:
    from .. import config
    if args.jit not in (None, "off"):
        print(f"star {args.command}: --jit {args.jit} has no effect: every routine runs interpreted, "
              "with statement events (the compiled tier is bypassed)", file=sys.stderr)
    from ..graphs.cli import graph_from_args
    opts = {"backend": config.backend_name(args.backend), "max_steps": args.max_steps,
            "graph": graph_from_args(args, usage_error), "native": args.native}
    from ..runtime.params import params_from_args
    opts["params"] = params_from_args(args, usage_error)
    directed = getattr(args, "directed", None)
    if directed is not None:
        opts["directed"] = directed
    return opts


def main_debug(args, text: str, usage_error) -> int:
    from .commands import interact
    from .debugger import Debugger
    d = Debugger(text, args.file, profile=args.profile, **_machine_options(args, usage_error))
    return interact(d)


def main_trace(args, text: str, usage_error) -> int:
    from .trace import record
    from .trace_html import write_html, write_json
    if not args.html and not args.json:
        raise usage_error("star trace needs --html OUT.html and/or --json OUT.json")
    if args.max_events < 1 or args.max_rows < 1:
        raise usage_error("--max-events and --max-rows take a number >= 1")
    trace = record(text, args.file, max_events=args.max_events, max_rows=args.max_rows,
                   profile=args.profile, **_machine_options(args, usage_error))
    t0 = time.perf_counter()
    written = []
    try:
        if args.html:
            written.append(f"{args.html} ({write_html(trace, args.html)} bytes)")
        if args.json:
            written.append(f"{args.json} ({write_json(trace, args.json)} bytes)")
    except OSError as e:
        raise usage_error(f"cannot write {e.filename}: {e.strerror or e}") from None
    for _event, text_ in trace["output"]:
        sys.stdout.write(text_)
    sys.stdout.flush()
    n = len(trace["events"])
    print(f"star trace: {n} events ({trace['seconds']:.2f} s to record, {time.perf_counter() - t0:.2f} s to write); "
          f"wrote {', '.join(written)}", file=sys.stderr)
    if trace["end"] == "limit":
        print(f"star trace: {trace['message']}", file=sys.stderr)
    if args.profile:
        print(trace["profile"], file=sys.stderr)
        print(trace["note"], file=sys.stderr)
    if trace["end"] == "error":
        print(trace["message"], file=sys.stderr)
        return 1
    return 0
