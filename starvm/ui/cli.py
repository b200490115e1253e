"""The `star` command: run and check Star programs.

Exit codes: 0 ok, 1 Star error (syntax, type, runtime), 2 usage or I/O error, 130 interrupted.
"""
from __future__ import annotations

import sys

EXIT_OK, EXIT_STAR, EXIT_USAGE, EXIT_INTERRUPT = 0, 1, 2, 130
_STARTING: list = []     # SIGINTs while the imports below run


def _interrupted_while_starting(signum, frame):
    _STARTING.append(signum)
    raise KeyboardInterrupt


# A Ctrl-C landing inside NumPy's import comes out as an ImportError ("PyCapsule_Import could
# not import module datetime"), not KeyboardInterrupt, or is dropped with it where the import
# was optional (the run then went on: test_cli_interrupt timed out): the handler notes it came.
# Everything, `import signal` too, inside the try: a Ctrl-C 50 ms after the start lands there
_default = False
try:    # a Ctrl-C while `star` starts (these imports take NumPy's): exit 130, no traceback
    import signal
    _default = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if _default:
        signal.signal(signal.SIGINT, _interrupted_while_starting)
    import argparse
    import os
    import traceback
    from pathlib import Path

    from .. import __version__, config
    from ..backends import NAMES, BackendUnavailable
    from ..errors import StarError, StarInterrupt
    from ..execution import limits
    from ..runtime.params import ParamError, add_param_argument, params_from_args
except BaseException as e:      # noqa: BLE001 - an interrupt, or what an import made of one
    if not (_STARTING or isinstance(e, KeyboardInterrupt)):
        raise
    _STARTING.append(None)
finally:
    if _default:
        signal.signal(signal.SIGINT, signal.default_int_handler)
if _STARTING:    # also one an import caught and dropped (as an ImportError of an optional module)
    print("star: interrupted", file=sys.stderr)
    raise SystemExit(EXIT_INTERRUPT)

FILE_HELP = "a .star file, or - to read the program from standard input (named <stdin> in messages)"
EXIT_CODES = """exit codes:
  0    success
  1    an error in the Star program (syntax, type or runtime): FILE:LINE:COL: error: ...
  2    a usage or I/O error (bad arguments, unreadable file, backend not available)
  3    an internal error of starvm (STARVM_DEBUG=1 shows the Python traceback)
  130  interrupted (Ctrl-C)"""
STDIN = "<stdin>"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="star",
        description="STAR-machine emulator and interpreter of the Star language.",
        epilog="Environment: STARVM_BACKEND=numpy|cupy|auto chooses the backend; "
               "STARVM_DEBUG=1 shows Python tracebacks of internal errors.")
    p.add_argument("--version", action="version", version=f"starvm {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run the main block of a Star program",
                         description="Load a Star program and run its main block (begin ... end.); writeln "
                                     "goes to standard output, errors and --profile to standard error.",
                         epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("file", help=FILE_HELP)
    run.add_argument("--backend", choices=NAMES,
                     help="where tables live (default: $STARVM_BACKEND or numpy)")
    run.add_argument("--profile", action="store_true",
                     help="print the steps by operation kind and the time per kind (the paper's Table 1)")
    run.add_argument("--max-steps", type=limits.steps_argument, metavar="N",
                     help="stop the program with an error after N loop iterations and routine calls")
    run.add_argument("--jit", choices=["auto", "on", "off"],
                     help="the compiled tier (Numba): auto compiles routines with enough work, on every routine "
                          "it can, off interprets (default: $STARVM_JIT or auto)")
    run.add_argument("--distributed", action="store_true",
                     help="under mpiexec: one machine over all ranks, each holding a block of rows of every "
                          "table (needs mpi4py: pip install 'starvm[mpi]')")
    from ..graphs.cli import add_arguments as add_graph_arguments
    add_graph_arguments(run)   # --graph FILE, --graph-format FMT, --generate SPEC
    add_param_argument(run)
    run.add_argument("--plot", metavar="OUT.png",
                     help="after the run, draw the steps per operation as a bar chart (with --profile also the "
                          "time per kind; needs matplotlib)")
    run.add_argument("--progress", action="store_true",
                     help="a progress bar for the outer for loops, when stderr is a terminal (needs tqdm)")
    from .cost_cli import add_run_argument as add_cost_argument
    add_cost_argument(run)   # --cost MODEL[,MODEL...] (starvm/ui/cost_cli.py)

    show = sub.add_parser("show", help="run a Star program, then draw one of its global tables as a PNG picture",
                          description="Run a Star program, then draw its global table NAME as a PNG picture "
                                      "(one square block per bit, set bits dark, row 1 at the top).",
                          epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("file", help=FILE_HELP)
    show.add_argument("--table", required=True, metavar="NAME", help="the global table to draw")
    show.add_argument("--png", required=True, metavar="OUT.png", help="the picture to write")
    show.add_argument("--backend", choices=NAMES,
                      help="where tables live (default: $STARVM_BACKEND or numpy)")
    add_graph_arguments(show)   # the graph options of star run
    add_param_argument(show)

    check = sub.add_parser("check", help="parse and type-check a Star program without running it",
                           description="Parse and type-check a Star program without running it; prints "
                                       "'FILE: no errors' when it finds none.",
                           epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("file", help=FILE_HELP)

    from ..benchmarking.cli import add_parser as add_bench_parser
    add_bench_parser(sub)      # star bench (starvm/benchmarking/cli.py)

    from ..debug.cli import add_subcommands as add_debug_subcommands
    add_debug_subcommands(sub)   # star debug, star trace (starvm/debug/)

    from .cost_cli import add_parser as add_cost_parser
    add_cost_parser(sub)         # star cost (starvm/ui/cost_cli.py)

    from .precompile import add_parser as add_compile_parser
    add_compile_parser(sub)      # star compile (starvm/ui/precompile.py)

    repl = sub.add_parser("repl", help="the interactive Star prompt (also: star with no arguments)")
    repl.add_argument("--backend", choices=NAMES,
                      help="where tables live (default: $STARVM_BACKEND or numpy)")
    return p


def _read(path: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        import io
        from ..input_files import read_input     # a device or an endless pipe is not read to the end
        return io.TextIOWrapper(io.BytesIO(read_input(path, expansion=16))).read()   # as Path.read_text
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise _UsageError(f"cannot read {path}: {reason}") from None


class _UsageError(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    try:
        if "--distributed" in (sys.argv[1:] if argv is None else argv):   # starvm/distributed/launch.py
            from ..distributed.launch import run_ranks
            code = run_ranks(_main, argv)
        else:
            code = _main(argv)
    except KeyboardInterrupt:
        print("star: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPT
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_USAGE
    if code == EXIT_INTERRUPT and argv is None:
        _ignore_further_interrupts()
    return code


def _ignore_further_interrupts() -> None:
    """The command has been stopped and said so: a SIGINT still pending (taken by a C-level
    handler of compiled code and also tripped for Python) or a second Ctrl-C must not turn the
    exit into Python's death by SIGINT (rc -2) on the way out (seen on Python 3.12)."""
    import signal
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:      # not the main thread
        pass


def _silence_stdout() -> None:
    """Output whose reader has gone is an I/O error (exit 2) with nothing more to say; point
    stdout at /dev/null so that Python's final flush does not report it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _main(argv) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command in (None, "repl"):   # the interactive prompt (starvm/ui/repl.py)
        from .repl import main as repl_main
        try:
            return repl_main(backend=config.backend_name(getattr(args, "backend", None)))
        except BackendUnavailable as e:
            print(f"star: error: {e}", file=sys.stderr)
            return EXIT_USAGE
    try:
        if args.file == "-" and args.command == "debug":
            raise _UsageError("star debug reads its commands from standard input: give the program as a file")
        if args.command == "cost":   # starvm/ui/cost_cli.py: --list and --validate read no file
            from .cost_cli import main_cost
            return main_cost(args, _read, _UsageError)
        if args.command == "compile":   # starvm/ui/precompile.py: several files, or --stdlib
            from .precompile import main_compile
            return main_compile(args, _read, _UsageError)
        text = _read(args.file)
        if args.file == "-":
            args.file = STDIN
        if args.command == "bench":   # starvm/benchmarking/cli.py
            from ..benchmarking.cli import bench
            return bench(args, text, _UsageError)
        if args.command == "check":   # parse, check and lower; run nothing, allocate no table
            from .. import stdlib
            from ..check import Checker, Environment
            from ..frontend.parser import parse
            from ..ir.lower import lower_unit
            lower_unit(Checker(Environment(library=stdlib.lookup)).check_program(parse(text, args.file)))
            print(f"{args.file}: no errors")
            return EXIT_OK
        if args.command in ("debug", "trace"):   # starvm/debug/cli.py
            from ..debug import cli as debug_cli
            return (debug_cli.main_debug if args.command == "debug" else debug_cli.main_trace)(args, text, _UsageError)
        from ..runtime.machine import Machine
        if args.command == "show":   # starvm/ui/pictures.py
            from .cli_pictures import show
            return show(args, text, Machine, _UsageError)
        from ..graphs.cli import graph_from_args
        from ..graphs.cli import reading_from_args
        comm = graph = None
        if getattr(args, "distributed", False):
            from ..distributed.launch import MpiMissing, world_comm
            try:
                comm = world_comm()
            except MpiMissing as e:
                raise _UsageError(str(e)) from None
            from ..distributed.graph_input import rank_graph   # each rank makes its share of the graph
            graph = rank_graph(comm, getattr(args, "generate", None), getattr(args, "graph", None),
                               getattr(args, "graph_format", None), getattr(args, "weights", None))
        if graph is None:
            graph = graph_from_args(args, _UsageError)
        machine = Machine(backend=config.backend_name(args.backend), max_steps=args.max_steps, graph=graph,
                          directed=reading_from_args(args), comm=comm, jit=args.jit,
                          params=params_from_args(args, _UsageError))
        machine.profile = args.profile
        if args.plot or args.progress:
            from .cli_pictures import prepare_run
            prepare_run(args, machine, _UsageError)
        cost = None
        if args.cost is not None:   # starvm/ui/cost_cli.py: the models are checked before the run (exit 2)
            from .cost_cli import CostRun
            cost = CostRun(args, machine, _UsageError)
        try:
            machine.run(text, args.file)
        finally:
            sys.stdout.flush()
            if args.profile and machine.has_main:   # a program that failed to load ran nothing: no profile
                print(machine.profile_report(), file=sys.stderr)
        if cost is not None:   # the estimates to stderr; with --plot their picture
            cost.report()
        elif args.plot:
            from .cli_pictures import plot_profile
            plot_profile(args, machine, _UsageError)
        return EXIT_OK
    except StarInterrupt as e:
        print(f"star: interrupted at {e.loc}" if e.loc else "star: interrupted", file=sys.stderr)
        return EXIT_INTERRUPT
    except StarError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_STAR
    except ParamError as e:              # --param names no constant, or a value of the wrong type
        print(f"star: error: --param {e}", file=sys.stderr)
        return EXIT_USAGE
    except (_UsageError, BackendUnavailable, config.ConfigError) as e:
        print(f"star: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:              # the reader went away (`star run P.star | head`)
        _silence_stdout()
        return EXIT_USAGE
    except Exception as e:  # a bug in starvm, not in the user's program
        if config.debug():
            traceback.print_exc()
        else:
            print(f"star: internal error: {type(e).__name__}: {e}\n"
                  "(this is a bug in starvm; set STARVM_DEBUG=1 to see the Python traceback)", file=sys.stderr)
        return 3
