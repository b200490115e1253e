"""`star compile FILE.star ...` and `star compile --stdlib`: the routines a run on --jit auto
would compile, compiled ahead into the disk cache, so that a run (a lab's, a cluster job's)
finds them there and runs them compiled from their first call (jit/background.py).

The routines are those the CPU tier takes on auto (a loop inside, nothing it does not
compile) that the program uses: its own and the library routines it calls; with --stdlib
every such library routine. Each is compiled for the argument types a run hands it (tables
and vectors as words and a length, integers, booleans: ``static_spec``) by compile workers
(jit/compile_worker.py), an entry's routines dealt out over up to --jobs processes (default:
the CPU cores); processes compiling one routine take turns, so concurrent `star compile`s and
runs share one cache.

Exit status: 0 every routine compiled or found in the cache (those Numba cannot compile are
listed: they run interpreted), 1 an error in a Star program, 2 usage or I/O, 3 a worker
that failed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

_TABLE = ("t", ("a", "<u8", 2, "C", False), ("i",))      # (words, rows): JitRoutine.to_native
_VECTOR = ("t", ("a", "<u8", 1, "C", False), ("i",))


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compile", help="compile a program's routines into the disk cache ahead of its runs",
        description="Compile the routines a run on --jit auto would compile (the program's own and the "
                    "library routines it calls; with --stdlib every library routine) into the compiled-code "
                    "cache (STARVM_JIT_CACHE), so that later runs run them compiled from their first call.",
        epilog="exit codes: 0 compiled (or already in the cache), 1 an error in a Star program, 2 usage or I/O "
               "error, 3 a compile worker failed")
    p.add_argument("file", nargs="*", help="Star programs (.star)")
    p.add_argument("--stdlib", action="store_true", help="every library routine the compiled tier takes")
    p.add_argument("--jobs", "-j", type=int, metavar="N",
                   help="compile processes at once (default: the number of CPU cores)")


def static_spec(routine) -> tuple | None:
    """The argument types a run hands the routine's compiled function (background.signature_spec
    of its converted arguments), from its parameters' and globals' Star types."""
    from ..types import T
    info = routine.compiled.info
    syms = (list(info.params) if info is not None else []) + list(routine.compiled.globals)
    out = []
    for s in syms:
        if s.type is T.TABLE:
            out.append(_TABLE)
        elif s.type.is_vector:
            out.append(_VECTOR)
        elif s.type is T.BOOL:
            out.append(("b",))
        elif s.type is T.INT:
            out.append(("i",))
        else:
            return None
    return tuple(out)


def jobs_of(machine, main_body, stdlib: bool) -> list:
    """(routine, spec) for each routine of the machine's CPU tier to compile: those the main
    block and the program's routines reach, or all (``stdlib``)."""
    from ..ir.walk import callees
    tier = machine.jit
    if tier is None:
        return []
    routines = {p: r for p, r in tier.routines.items() if p != "main_"}
    if stdlib:
        chosen = set(routines)
    else:
        bodies = tier.bodies
        roots = [p for p, (info, _b) in bodies.items() if not _library(info)]
        todo = roots + [c.pyname for c in callees(main_body)] if main_body is not None else roots
        chosen = set()
        while todo:
            p = todo.pop()
            if p in chosen or p not in bodies:
                continue
            chosen.add(p)
            todo.extend(c.pyname for c in callees(bodies[p][1]))
        if "main_" in tier.routines:
            routines["main_"] = tier.routines["main_"]
            chosen.add("main_")
    return [(r, static_spec(r)) for p, r in routines.items() if p in chosen]


def loaded(names: list, read):
    """(machine, main block, every routine?) to compile for each name: a program loaded on a
    machine; for --stdlib each library file on a machine of its own, loaded as a Python call
    of one of its routines loads it (Machine._library_routine: the file is its own unit), so
    the compiled code is the one such a call looks up. (A program compiles the library
    routines it calls into its own unit: `star compile PROGRAM.star` warms those.)"""
    from .. import stdlib
    from ..runtime.machine import Machine
    for name in names:
        if name == "--stdlib":
            for path in sorted(set(stdlib.index().values())):
                machine = Machine(backend="numpy", jit="auto")
                machine.load(path.read_text(), f"stdlib/{path.name}")
                yield machine, None, True
            continue
        machine = Machine(backend="numpy", jit="auto")
        text = read(name)
        machine.load(text, name)
        yield machine, _main_body(text, name), False


def _library(info) -> bool:
    loc = info.node.loc if info is not None else None
    return loc is not None and loc.filename.startswith("stdlib/")


def main_compile(args, read, usage_error) -> int:
    if not args.file and not args.stdlib:
        raise usage_error("star compile needs a .star file or --stdlib")
    if args.jobs is not None and args.jobs < 1:
        raise usage_error("--jobs must be at least 1")
    from ..jit import cache
    work: dict = {}                     # entry path -> {(func, spec): display}
    backends: dict = {}
    names = list(args.file) + (["--stdlib"] if args.stdlib else [])
    for machine, main_body, every in loaded(names, read):
        for routine, spec in jobs_of(machine, main_body, every):
            if spec is None:
                continue
            try:
                path = cache.write_entry(routine.unit.lowered.source, routine.unit.backend_name)
            except OSError as e:
                raise usage_error(f"cannot write the compiled-code cache: {e}") from None
            backends[path] = routine.unit.backend_name
            work.setdefault(path, {})[(routine.compiled.func, spec)] = routine.display
    total = sum(len(v) for v in work.values())
    if not total:
        print("nothing to compile: no routine of the compiled tier is used")
        return 0
    jobs = args.jobs or os.cpu_count() or 1
    return _compile_all(_split(work, jobs), backends, total, jobs)


def _split(work: dict, jobs: int) -> list:
    """(entry, {(function, types): display}) per worker: an entry's routines dealt out over
    up to ``jobs`` workers, the longest compiles first (estimate.compile_seconds), so that
    the library's one entry compiles on every core."""
    from ..jit.cache import checked_source
    from ..jit.estimate import compile_seconds
    items = []
    for path, funcs in work.items():
        source = checked_source(path) or ""
        order = sorted(funcs, key=lambda fs: -compile_seconds(source, fs[0]))
        parts = max(1, min(jobs, len(order)))
        for i in range(parts):
            chunk = {fs: funcs[fs] for fs in order[i::parts]}
            items.append((path, chunk))
    return items


def _main_body(text: str, name: str):
    """The program's main block as the tier sees it (its calls choose the library routines)."""
    from .. import stdlib
    from ..check import Checker, Environment
    from ..frontend.parser import parse
    from ..ir.lower import lower_unit
    return lower_unit(Checker(Environment(library=stdlib.lookup)).check_program(parse(text, name))).main


def _compile_all(work: list, backends: dict, total: int, jobs: int) -> int:
    """The workers (``_split``), ``jobs`` at a time; each reports a line per routine as it
    finishes it (read on a thread per worker), which moves the progress bar."""
    import queue
    import tempfile
    import threading
    from ..jit import cache
    t0 = time.monotonic()
    progress = _Progress(total)
    lines: queue.Queue = queue.Queue()
    pending = list(work)
    running = 0
    results, failed_workers = [], []
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]),
                                                    env.get("PYTHONPATH", "")) if p)

    def worker(path, funcs):
        displays = {f: d for (f, _s), d in funcs.items()}
        with tempfile.TemporaryFile("w+") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "starvm.jit.compile_worker", backends[path], str(path),
                 json.dumps([[f, s] for f, s in funcs])],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True,
                env={**env, "STARVM_JIT_CACHE": str(path.parent)})
            for line in proc.stdout:          # one line per routine, as the worker finishes it
                func, _, status = line.strip().partition(": ")
                lines.put(("routine", displays.get(func, func), status))
            proc.wait()
            err.seek(0)
            lines.put(("end", path, (proc.returncode, err.read().strip()[-500:])))

    while pending or running:
        while pending and running < jobs:
            threading.Thread(target=worker, args=pending.pop(0), daemon=True).start()
            running += 1
        kind, what, status = lines.get()
        if kind == "routine":
            results.append((what, status))
            progress.step(what)
        else:
            running -= 1
            code, err = status
            if code != 0:
                failed_workers.append(f"{what.name}: exit {code}: {err}")
    progress.done()
    compiled = sum(1 for _d, s in results if s.startswith("compiled"))
    cached = sum(1 for _d, s in results if s.startswith("cached"))
    refused = [(d, s) for d, s in results if s.startswith("failed")]
    print(f"{compiled} routine(s) compiled, {cached} already in the cache, {len(refused)} not compiled, "
          f"in {time.monotonic() - t0:.1f} s (cache: {cache.folder()})")
    for display, status in refused:
        print(f"  {display}: runs interpreted: {status[len('failed: '):]}")
    for text in failed_workers:
        print(f"star: error: a compile worker failed: {text}", file=sys.stderr)
    return 3 if failed_workers else 0


class _Progress:
    """A bar on stderr where it is a terminal, else one line per routine."""

    def __init__(self, total: int):
        self.total, self.n = total, 0
        self.tty = sys.stderr.isatty()
        self.t0 = time.monotonic()
        self._draw("")

    def step(self, what: str) -> None:
        self.n += 1
        self._draw(what)

    def _draw(self, what: str) -> None:
        width = 30
        filled = width * self.n // max(self.total, 1)
        line = (f"compiling [{'#' * filled}{'.' * (width - filled)}] {self.n}/{self.total} "
                f"{time.monotonic() - self.t0:5.1f} s {what}")
        if self.tty:
            sys.stderr.write("\r" + line[:120].ljust(120))
        elif what:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
