"""Compile time of the CPU tier against a routine's size (issue 36 item 5: linear in size).

A generated procedure of N straight-line statements (integer arithmetic, slice logic, COL and
ROW reads, NUMB; or N/4 small `for` loops of 3 statements each) is compiled with `--jit on`
(the NumPy backend) in a fresh process whose compiled-code cache (STARVM_JIT_CACHE) is empty;
Numba's cache of starvm's kernels is warmed first and shared, as after any first run. The
figure is the first call's time (compiling it; running it takes milliseconds). ``--whole``
cases compile the routine as one function (outlining off: what the tier did before
targets/numba/outline.py), ``outlined`` ones as an entry and helpers of at most
outline.CHUNK_LINES lines; a mode ending in ``-copied`` compiles the calls between them as
Numba links them (each caller's machine code holding a copy of its callees: before
jit/linking.py), the others through linked calls (each function compiled once); a mode with
``-unnamed`` renders integer constants as ``np.int64(k)`` calls in the functions (before
lower.named_constants), for comparing the two at the same load.

``--programs`` measures shipped programs whole instead (``star run --jit on --profile``): per
program, a run first that puts the kernels it uses in Numba's cache (not timed), then per way
of calling (linked, copied), a cold run in a fresh compiled-code cache (the
process's CPU time, the profile's "compiling or loading" figure), then warm runs in that cache
on the bundled graph and on ``--generate rmat:scale=12`` (the profile's "ran compiled in" and
loading figures), the ways interleaved run by run (``--ways``; ``unnamed``: linked, integer
constants as ``np.int64(k)`` calls, before lower.named_constants).

    python bench/bench_compile_size.py [--cases outlined:straight:250,...] [--out NAME] [--timeout S]
    python bench/bench_compile_size.py --programs mst_boruvka,bfs,dijkstra [--out NAME]
    python bench/bench_compile_size.py --phases mst_boruvka,bfs [--rounds 2] [--out NAME]

``--phases`` measures where a cold compile's CPU time goes (typing, lowering to LLVM IR, Numba's
other passes, LLVM's function and module passes, machine code, cache), per generated function,
for ``star run --jit on`` of shipped programs: with Numba's compile as it is (``numba``), with
jit/compile_cost.py's (``cheaper``), that with every routine function keeping Numba's CPython
wrapper (``wrapped``: before targets/numba/lower.py's host entries) and with the callees
compiled by helper processes as well (``parallel``, jit/compile_parallel.py), the ways
interleaved run by run.

Writes bench/results/NAME.json and NAME.md (default compile_size_cpu<cores>), case by case.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

from starvm.benchmarking import document, load_average, run_process, write_results

ROOT = Path(__file__).resolve().parents[1]
CASES = ["outlined:straight:250", "outlined:straight:500", "outlined:straight:1000", "outlined:straight:2000",
         "outlined:loops:500", "outlined:loops:1000", "outlined:loops:2000",
         "outlined-copied:straight:1000", "outlined-copied:straight:2000",
         "whole:straight:250", "whole:straight:500", "whole:straight:1000"]
STATEMENTS = ["a := a + b;", "b := (a * 3) mod 17;", "V := V or W;", "W := COL((a mod n) + 1, P);",
              "X := ROW((b mod n) + 1, P);", "c := NUMB(V) + c;"]


def program(statements: int, loops: bool) -> str:
    if loops:
        body = [f"for i := 1 to 2 do begin {' '.join(STATEMENTS[(k + j) % 6] for j in range(3))} end;"
                for k in range(statements // 4)]
    else:
        body = [STATEMENTS[k % 6] for k in range(statements)]
    return ("proc BIG(n: integer; var P: table);\nvar a, b, c, i: integer; V, W: slice; X: word;\nbegin\n"
            "  a := 1; b := 2; c := 0; V := COL(1, P); W := COL(2, P);\n  " + "\n  ".join(body)
            + "\n  writeln(a, ' ', b, ' ', c, ' ', NUMB(V));\nend;\n")


PROBE = r"""
import io, json, sys, time
import starvm
from starvm.jit import linking
from starvm.targets.numba import lower
if "-unnamed" in sys.argv[2]:         # integer constants as np.int64(k) calls, as before named_constants
    lower.named_constants = lambda source: source
if sys.argv[2].startswith("whole"):
    lower.outline = lambda text, prefix: text
elif "@" in sys.argv[2]:              # outlined@L: helpers of at most L lines, outlined past 2L
    from starvm.targets.numba.outline import outline
    chunk = int(sys.argv[2].split("@")[1].split("-")[0])
    lower.outline = lambda text, prefix: outline(text, prefix, chunk_lines=chunk, over=2 * chunk)
if "-copied" in sys.argv[2]:
    linking.enabled = False
m = starvm.Machine(backend="numpy", jit="on", out=io.StringIO())
m.load(sys.argv[1], "size.star")
t, cpu = time.perf_counter(), time.process_time()
m.call("BIG", 7, m.table(rows=7, cols=7))
seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
module = next(v for k, v in sys.modules.items() if k.startswith("starvm_jit_") and hasattr(v, "f_r_big"))
helpers = sum(1 for k in vars(module) if k.startswith("o") and k.endswith("_f_r_big"))
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "state": {r.display: r.state for r in m.jit.routines.values()}["BIG"], "helpers": helpers}))
"""


def measure(mode: str, kind: str, statements: int, kernels: Path, timeout: float) -> dict:
    row = {"mode": mode, "kind": kind, "statements": statements, "load_before": load_average()}
    with tempfile.TemporaryDirectory(prefix="starvm-compile-size-") as folder:
        env = {**os.environ, "STARVM_JIT_CACHE": folder, "NUMBA_CACHE_DIR": str(kernels), "PYTHONPATH": str(ROOT)}
        done = run_process([sys.executable, "-c", PROBE, program(statements, kind == "loops"), mode], env=env,
                           timeout=timeout)
    row["load_after"] = load_average()
    if not done.ok:
        row["error"] = (done.stderr or "timed out")[-300:]
        return row
    row.update(json.loads(done.stdout.strip().splitlines()[-1]))
    row["seconds"] = round(row["seconds"], 2)
    row["cpu_seconds"] = round(row["cpu_seconds"], 2)
    row["ms_per_statement"] = round(1000 * row["seconds"] / statements, 1)
    return row


RUN = r"""
import json, resource, sys
from starvm.jit import linking
linking.enabled = sys.argv[1] != "copied"
if sys.argv[1] == "unnamed":          # linked, integer constants as np.int64(k) calls (before named_constants)
    from starvm.targets.numba import lower
    lower.named_constants = lambda source: source
from starvm.ui.cli import main
try:
    code = main(sys.argv[2:])
except SystemExit as e:
    code = e.code
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "cpu_seconds": use.ru_utime + use.ru_stime}))
"""
_FIGURE = re.compile(r"ran compiled in ([0-9.]+) s \(compiling or loading it from the cache: ([0-9.]+) s")


def run_program(name: str, way: str, graph: list[str], folder: str, kernels: Path, timeout: float) -> dict:
    row = {"program": name, "way": way, "graph": " ".join(graph) or "bundled", "load_before": load_average()}
    env = {**os.environ, "STARVM_JIT_CACHE": folder, "NUMBA_CACHE_DIR": str(kernels), "PYTHONPATH": str(ROOT)}
    done = run_process([sys.executable, "-c", RUN, way, "run", str(ROOT / "programs" / f"{name}.star"), *graph,
                        "--jit", "on", "--profile"], env=env, timeout=timeout)
    row["load_after"] = load_average()
    found = _FIGURE.search(done.stderr or "")
    if not done.ok or found is None:
        row["error"] = (done.stderr or "timed out")[-300:]
        return row
    row.update(json.loads(done.stdout.strip().splitlines()[-1]))
    row["cpu_seconds"] = round(row["cpu_seconds"], 2)
    row["ran_compiled_s"], row["compile_or_load_s"] = float(found.group(1)), float(found.group(2))
    return row


def programs(names: list[str], kernels: Path, timeout: float, doc: dict, out: Path,
             ways: tuple[str, ...] = ("copied", "linked")) -> None:
    folders = {way: tempfile.mkdtemp(prefix=f"starvm-compile-size-{way}-") for way in ways}
    rmat = ["--generate", "rmat:scale=12"]
    for name in names:
        # the kernels it uses into Numba's cache first (not timed): else the first way's cold run pays them
        with tempfile.TemporaryDirectory(prefix="starvm-compile-size-warmup-") as warmup:
            run_program(name, ways[-1], [], warmup, kernels, timeout)
        for run, graph in [("cold", []), ("warm", []), ("warm", rmat), ("warm", rmat)]:
            for way in ways:
                row = {"run": run, **run_program(name, way, graph, folders[way], kernels, timeout)}
                doc["programs"].append(row)
                print(row, flush=True)
                write_results(doc, out.with_suffix(".json"), markdown(doc))


# --phases: where a cold compile's CPU time goes, per generated function (exclusive time of
# Numba's stages, measured by wrapping them in the process that compiles)
PHASES = r"""
import collections, functools, json, resource, sys, time
import numba.core.caching as ca, numba.core.codegen as cg, numba.core.dispatcher as di, numba.core.typed_passes as tp
from starvm.jit import compile_cost, compile_parallel
way = sys.argv[1]
if way == "wrapped":                  # every routine function with Numba's CPython wrapper (before lower.host_entries)
    from starvm.targets.numba import lower
    lower.ModuleGen.host_entries = lambda self, source: source
compile_cost.enabled = way != "numba"
compile_parallel.enabled = way == "parallel"
compile_parallel.helpers = 1          # one helper, whatever the shared host's load average says
stack, spent = [], collections.Counter()
def enter(kind, name):
    now = time.process_time()
    if stack:
        k, n, t = stack[-1]; spent[(n, k)] += now - t
    stack.append((kind, name, now))
def leave():
    now = time.process_time()
    k, n, t = stack.pop(); spent[(n, k)] += now - t
    if stack:
        k2, n2, _ = stack[-1]; stack[-1] = (k2, n2, now)
def wrap(owner, attr, kind, name_of=None):
    f = getattr(owner, attr)
    @functools.wraps(f)
    def w(*a, **k):
        enter(kind, name_of(*a) if name_of else (stack[-1][1] if stack else "-"))
        try:
            return f(*a, **k)
        finally:
            leave()
    setattr(owner, attr, w)
def function(compiler, *a):
    mod = compiler.py_func.__module__
    return ("kernel " if mod.endswith("kernels") else "" if mod.startswith("starvm_jit") else mod + " ") + compiler.py_func.__name__
wrap(di._FunctionCompiler, "_compile_core", "Numba's other passes", function)
wrap(tp.BaseTypeInference, "run_pass", "typing")
wrap(tp.BaseNativeLowering, "run_pass", "lowering to LLVM IR")
wrap(cg.CPUCodeLibrary, "_optimize_functions", "LLVM function passes")
wrap(cg.CPUCodeLibrary, "_optimize_final_module", "LLVM module passes")
wrap(cg.JITCodeLibrary, "_finalize_specific", "LLVM machine code")
wrap(ca.Cache, "save_overload", "cache save")
wrap(ca.Cache, "load_overload", "cache load")
from starvm.ui.cli import main
wall = time.perf_counter()
try:
    code = main(sys.argv[2:])
except SystemExit as e:
    code = e.code
wall = time.perf_counter() - wall
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
per = collections.defaultdict(dict)
for (n, k), v in spent.items():
    per[n][k] = round(v, 3)
print(json.dumps({"code": code, "wall_s": wall, "cpu_s": me.ru_utime + me.ru_stime,
                  "helpers_cpu_s": kids.ru_utime + kids.ru_stime, "max_rss_mb": me.ru_maxrss // 1024, "phases": per}))
"""
PHASE_WAYS = ("numba", "wrapped", "cheaper", "parallel")
_PHASE_NAMES = ("typing", "lowering to LLVM IR", "Numba's other passes", "LLVM function passes", "LLVM module passes",
                "LLVM machine code", "cache save", "cache load")


def phases(names: list[str], kernels: Path, timeout: float, doc: dict, out: Path, ways: tuple[str, ...], rounds: int) -> None:
    """Per program, ``rounds`` rounds of a cold ``star run --jit on`` each way (interleaved),
    each in a fresh compiled-code cache, the kernels in Numba's cache from an untimed run."""
    for name in names:
        with tempfile.TemporaryDirectory(prefix="starvm-compile-size-warmup-") as warmup:
            run_program(name, "linked", [], warmup, kernels, timeout)
        for _ in range(rounds):
            for way in ways:
                row = {"program": name, "way": way, "load_before": load_average()}
                with tempfile.TemporaryDirectory(prefix=f"starvm-compile-phases-{way}-") as folder:
                    env = {**os.environ, "STARVM_JIT_CACHE": folder, "NUMBA_CACHE_DIR": str(kernels),
                           "PYTHONPATH": str(ROOT)}
                    done = run_process([sys.executable, "-c", PHASES, way, "run", str(ROOT / "programs" / f"{name}.star"),
                                        "--jit", "on"], env=env, timeout=timeout)
                row["load_after"] = load_average()
                if not done.ok:
                    row["error"] = (done.stderr or "timed out")[-300:]
                else:
                    row.update(json.loads(done.stdout.strip().splitlines()[-1]))
                doc["phases"].append(row)
                print({k: v for k, v in row.items() if k != "phases"}, flush=True)
                write_results(doc, out.with_suffix(".json"), markdown(doc))


def _phase_lines(doc: dict) -> list[str]:
    lines = ["", "Cold `star run --jit on` (kernels in Numba's cache): numba: Numba's compile as it is (of cheaper's generated code); cheaper: "
             "jit/compile_cost.py (recursion typed once, the garbage collector paused), the routine functions that only "
             "generated code calls without Numba's CPython wrapper (targets/numba/lower.py's host entries); wrapped: "
             "cheaper with every routine function wrapped (before the host entries); parallel: cheaper, and the "
             "callees compiled by a helper process (jit/compile_parallel.py; one here, whatever the load average: a run starts one only where a core is idle). CPU s: the compiling "
             "process's; helpers: its helper processes'. Then where each way's CPU time went (the mean over its runs), "
             "by stage of Numba's compile.", "",
             "| program | way | wall s | CPU s | helpers CPU s | max RSS MB | load |", "|---|---|---|---|---|---|---|"]
    for r in doc["phases"]:
        load = f"{r['load_before'] or 0:.1f}-{r['load_after'] or 0:.1f}"
        if "error" in r:
            lines.append(f"| {r['program']} | {r['way']} | failed: {_said(r['error'])} | | | | {load} |")
            continue
        lines.append(f"| {r['program']} | {r['way']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['helpers_cpu_s']:.2f} | "
                     f"{r['max_rss_mb']} | {load} |")
    lines += ["", "| program | way | function | " + " | ".join(_PHASE_NAMES) + " | total CPU s |",
              "|---|---|---|" + "---|" * (len(_PHASE_NAMES) + 1)]
    groups: dict = {}
    for r in doc["phases"]:
        if "error" not in r:
            groups.setdefault((r["program"], r["way"]), []).append(r["phases"])
    for (program, way), runs in groups.items():
        funcs: dict = {}
        for run in runs:
            for func, spent in run.items():
                for k, v in spent.items():
                    funcs.setdefault(func, {}).setdefault(k, 0.0)
                    funcs[func][k] += v / len(runs)
        total = {k: sum(f.get(k, 0.0) for f in funcs.values()) for k in _PHASE_NAMES}
        rows = sorted(funcs.items(), key=lambda kv: -sum(kv[1].values()))
        for func, spent in [("all", total)] + [r for r in rows if sum(r[1].values()) >= 0.2]:
            lines.append(f"| {program} | {way} | {func} | " + " | ".join(f"{spent.get(k, 0.0):.2f}" for k in _PHASE_NAMES)
                         + f" | {sum(spent.values()):.2f} |")
    return lines


def _said(error: str) -> str:
    """An error's last line, short, for one table cell."""
    return ((error.strip().splitlines() or [""])[-1])[:60].replace("|", "/")


def markdown(doc: dict) -> list[str]:
    lines = [doc["method"], "", "| routine | statements | compiled as | helpers | compile s | CPU s | ms / statement | load |",
             "|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        what = "straight-line" if r["kind"] == "straight" else "small loops"
        load = f"{r['load_before'] or 0:.1f}-{r['load_after'] or 0:.1f}"
        if "error" in r:
            lines.append(f"| {what} | {r['statements']} | {r['mode']} | | failed: {_said(r['error'])} | | | {load} |")
            continue
        lines.append(f"| {what} | {r['statements']} | {r['mode']} | {r['helpers']} | {r['seconds']:.1f} | "
                     f"{r.get('cpu_seconds', '')} | {r['ms_per_statement']} | {load} |")
    if doc.get("phases"):
        lines += _phase_lines(doc)
    if doc.get("programs"):
        lines += ["", "Shipped programs, `star run --jit on --profile`: cold (an empty compiled-code cache, the kernels the "
                  "program uses in Numba's cache from an untimed run first: the process's "
                  "CPU time and the profile's compile figure), then warm runs in that cache. linked: calls between "
                  "generated functions through jit/linking.py; copied: Numba's linking; unnamed: linked, integer constants "
                  "as np.int64(k) calls (before targets/numba/lower.py's named_constants).", "",
                  "| program | graph | run | calls | CPU s | compiling or loading, s | ran compiled in, s | load |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in doc["programs"]:
            load = f"{r['load_before'] or 0:.1f}-{r['load_after'] or 0:.1f}"
            if "error" in r:
                lines.append(f"| {r['program']} | {r['graph']} | {r['run']} | {r['way']} | failed: {_said(r['error'])} | | | {load} |")
                continue
            lines.append(f"| {r['program']} | {r['graph']} | {r['run']} | {r['way']} | {r['cpu_seconds']} | "
                         f"{r['compile_or_load_s']} | {r['ran_compiled_s']} | {load} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help="MODE:KIND:N,... (MODE outlined|outlined@LINES|whole, then -copied and/or -unnamed; KIND straight|loops)")
    ap.add_argument("--out", default=f"compile_size_cpu{os.cpu_count()}")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--programs", default="", help="PROGRAM,... of programs/: measured whole instead of --cases")
    ap.add_argument("--ways", default="copied,linked",
                    help="with --programs, WAY,... of copied|linked|unnamed (linked, constants as np.int64(k) calls)")
    ap.add_argument("--phases", default="", help="PROGRAM,... of programs/: where a cold compile's time goes, per way "
                    "(--ways of numba|wrapped|cheaper|parallel, default all four)")
    ap.add_argument("--rounds", type=int, default=2, help="with --phases: cold runs per program and way")
    args = ap.parse_args(argv)
    out = ROOT / "bench" / "results" / args.out
    doc = document("compile size", "Compile time of the CPU tier against a routine's size",
                   method="Each case a fresh process, `--jit on` on the NumPy backend, its compiled-code cache empty "
                          "(Numba's cache of starvm's kernels warmed first, shared); the figure is the first call's time, "
                          "compile included (the routine itself runs in milliseconds). whole: one function (outlining off); "
                          "outlined: an entry and helpers of at most targets/numba/outline.py's CHUNK_LINES lines (outlined@L: L lines), their calls "
                          "linked (jit/linking.py: each function compiled once); -copied: Numba's linking "
                          "(each caller's machine code holds its callees' again); -unnamed: integer constants as np.int64(k) calls "
                          "in the functions (before targets/numba/lower.py's named_constants). CPU s: the process's CPU time for it "
                          "(less moved by the load than the wall time). The host "
                          "is shared with other developers' work: the load average is beside each case.",
                   results=[])
    kernels = Path(tempfile.mkdtemp(prefix="starvm-compile-size-numba-"))
    measure("outlined", "straight", 10, kernels, args.timeout)          # Numba's cache of the kernels
    if args.phases:
        doc["phases"] = []
        doc["method"] += (" --phases: cold `star run --jit on` per program, the ways interleaved, each run in a fresh "
                          "compiled-code cache; the stages timed in the compiling process.")
        ways = PHASE_WAYS if args.ways == ap.get_default("ways") else tuple(args.ways.split(","))
        phases(args.phases.split(","), kernels, args.timeout, doc, out, ways, args.rounds)
        return 0
    if args.programs:
        doc["programs"] = []
        programs(args.programs.split(","), kernels, args.timeout, doc, out, tuple(args.ways.split(",")))
        return 0
    for case in args.cases.split(","):
        mode, kind, n = case.split(":")
        row = measure(mode, kind, int(n), kernels, args.timeout)
        doc["results"].append(row)
        print(row, flush=True)
        write_results(doc, out.with_suffix(".json"), markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
