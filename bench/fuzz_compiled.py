"""Differential fuzzing of the compiled tier (starvm/jit) against the interpreter and the model.

    python bench/fuzz_compiled.py --programs N --jobs J --seed S --backend numpy|cupy --out DIR

Each program of tests/reference/gen.py (seed S, S+1, ...; local tables, functions whose
results are used in expressions, `var` parameters, bounded recursion (direct, and mutual
through RP and RQ), `parallel for`,
standard-library bodies, and in some programs one statement that stops it with a runtime
error) runs on the reference model, on the interpreter (--jit off) and on the compiled tier
(--jit on), natives off on both so that the library bodies compile too; outputs, step counts
by kind and runtime errors (message, position, Star call stack) must agree, and again under
a random step limit (tests/reference/jit_differential.py ``check_program``). The results count, per
feature, the programs in which it ran and those in which it ran compiled, with the reasons
of the fallbacks (recursion is interpreted, and so is a routine that calls it).

With --cases deep,output,interrupt it runs instead the cases of tests/reference/jit_edges.py
(issue 36, item 8), one kind after another from seed S: recursion near and past a recursion
limit drawn in 200-2000, loops in compiled routines writing 10^4-10^5 lines (some stopped by a
failing statement), and ``star run`` subprocesses of both tiers sent SIGINT at a random point
(exit 130, the position a statement's, the output a prefix of the uninterrupted run's); results
in DIR/fuzz_compiled_cases_<device>.json and .md:

    nice python bench/fuzz_compiled.py --cases deep,output,interrupt --programs 300 --jobs 2 --budget 600
    python bench/fuzz_compiled.py --cases deep,output,interrupt --backend cupy --programs 600 --jobs 8 --budget 540 --out OUT

Results: DIR/fuzz_compiled_<device>.json and .md (the common bench header); each mismatching
program is saved as DIR/fuzz_compiled_mismatches/seed<S>.star with its problems beside it.
Compiled modules go to a temporary cache shared by the workers (the library's modules are
reused by every program; a program's own are deleted after it), and each worker process is
replaced after --per-worker programs (the compiled code of finished programs stays in a
process's memory). Exit status 1 if any program mismatched.

Numba compiling each program's routines is ~95% of the cost (8.5 s of CPU a program on the
shared 2-core host, fuzz_compiled_cpu2.md), so the large campaigns run in parts of one
--budget each (a device command lasts at most 10 minutes), added up with --combine:

    python bench/fuzz_compiled.py --programs 1700 --seed 0 --jobs 16 --budget 540 --out OUT/p0
    python bench/fuzz_compiled.py --programs 1700 --seed 1700 --jobs 16 --budget 540 --out OUT/p1   # ... p5
    python bench/fuzz_compiled.py --combine OUT/p*/fuzz_compiled_cpu16.json --out bench/results
    python bench/fuzz_compiled.py --programs 500 --seed 0 --jobs 8 --backend cupy --budget 540 --out OUT/g0  # g1: --seed 500
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from starvm.benchmarking import device_info, document, machine_info, write_results  # noqa: E402
# the watchdog module's names from it: the package loads its parts lazily, and once its submodule
# watchdog is imported the package's attribute of that name is the module, not the function
from starvm.benchmarking.watchdog import RunTimeout, watchdog  # noqa: E402

# The generator's options for this campaign (tests/reference/gen.py Gen): recursion and
# printing functions in a fifth of the programs (either makes the main block run
# interpreted), a runtime error in about one program in seven.
DEFAULTS = dict(max_stmts=8, recursion_pct=20, fn_output_pct=20, error_pct=15, mutual_pct=50, edge_pct=20)


def _worker_init(cache_dir: str) -> None:
    os.environ["STARVM_JIT_CACHE"] = cache_dir
    os.environ.pop("STARVM_JIT", None)


def one(job):
    """Generate and check one program (in a worker process)."""
    from tests.reference.jit_differential import check_program
    from tests.reference.gen import Gen, RandomSource, render
    seed, opts = job
    gen = Gen(RandomSource(seed), opts["max_stmts"], recursion_pct=opts["recursion_pct"],
              fn_output_pct=opts["fn_output_pct"], error_pct=opts["error_pct"], mutual_pct=opts["mutual_pct"],
              edge_pct=opts["edge_pct"])
    prog = gen.program()
    cpu0 = time.process_time()
    try:
        with watchdog(opts["time_limit"]):
            rec = check_program(prog, opts["backend"], error_at=gen.error_at,
                                limit_seed=seed if opts["step_limit"] else None)
    except RunTimeout:
        rec = dict(problems=[], timeout=True, features={}, fallbacks={}, cache_keys=[], compile_s=0.0,
                   seconds=opts["time_limit"], error=None)
    except Exception as e:  # noqa: BLE001 - a valid program must not crash either tier or the harness
        rec = dict(problems=[f"crash: {type(e).__name__}: {e}"], features={}, fallbacks={}, cache_keys=[],
                   compile_s=0.0, seconds=0.0, error=None)
    _forget(rec.pop("cache_keys"), opts["cache_dir"])
    rec["seed"] = seed
    rec["cpu_s"] = round(time.process_time() - cpu0, 3)
    if rec["problems"]:
        rec["source"] = render(prog)
    return rec


def _forget(keys, cache_dir: str) -> None:
    """Delete a finished program's compiled modules from the cache (never used again)."""
    folder = Path(cache_dir)
    for k in keys:
        for p in [folder / f"star_{k}.py", *(folder / "__pycache__").glob(f"star_{k}.*")]:
            p.unlink(missing_ok=True)
        sys.modules.pop(f"starvm_jit_{k}", None)


def device_name(backend: str, device: dict) -> str:
    """The results file's suffix: cpu<cores> for the NumPy backend, the GPU's model (h100)."""
    if backend == "numpy":
        return f"cpu{os.cpu_count()}"
    gpu = (device.get("gpu") or {}).get("name", "")
    found = re.search(r"\b([A-Z]\d{2,4})\b", gpu)
    return found.group(1).lower() if found else "gpu"


class Tally:
    """The campaign's figures so far."""

    def __init__(self):
        self.programs = 0
        self.mismatches: list[dict] = []
        self.timeouts: list[int] = []
        self.features = {}
        self.fallbacks = collections.Counter()
        self.main_fallbacks = collections.Counter()
        self.errors = collections.Counter()
        self.limits = 0
        self.beyond_64_bits: list[int] = []
        self.seconds: list[float] = []
        self.compile_s: list[float] = []
        self.cpu_s: list[float] = []
        self.main_compiled = 0

    def add(self, rec: dict, bad_dir: Path) -> None:
        self.programs += 1
        self.seconds.append(rec["seconds"])
        self.compile_s.append(rec["compile_s"])
        self.cpu_s.append(rec["cpu_s"])
        if rec.get("timeout"):
            self.timeouts.append(rec["seed"])
            return
        for name, (ran, compiled) in rec["features"].items():
            f = self.features.setdefault(name, [0, 0])
            f[0] += ran
            f[1] += compiled
        for routine, why in rec["fallbacks"].items():
            self.fallbacks[f"{_kind(routine)}: {why}"] += 1
            if routine == "main block":
                self.main_fallbacks[why] += 1
        self.errors[rec["error"] or "none"] += 1
        self.limits += rec.get("limit") is not None
        if rec.get("beyond_64_bits"):
            self.beyond_64_bits.append(rec["seed"])
        if rec["problems"]:
            bad_dir.mkdir(parents=True, exist_ok=True)
            (bad_dir / f"seed{rec['seed']}.star").write_text(rec["source"])
            (bad_dir / f"seed{rec['seed']}.txt").write_text("\n\n".join(rec["problems"]) + "\n")
            self.mismatches.append({"seed": rec["seed"], "problems": [p[:2000] for p in rec["problems"]]})
            print(f"seed {rec['seed']}: {rec['problems'][0][:300]}", flush=True)


def _kind(routine: str) -> str:
    """Fallback reasons are counted by role: the program's own routines by name (P1, F1, ...),
    the main block, and library routines together."""
    return routine if routine in ("main block", "P1", "F1", "F2", "RP", "RF") else "library routine"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--seed", type=int, default=0, help="the first program's seed")
    ap.add_argument("--backend", choices=("numpy", "cupy"), default="numpy")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"), help="folder of the results files")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds: start no program after this (a campaign of as many programs as fit)")
    ap.add_argument("--max-stmts", type=int, default=DEFAULTS["max_stmts"], help="top-level statements of a main block")
    ap.add_argument("--recursion-pct", type=int, default=DEFAULTS["recursion_pct"])
    ap.add_argument("--fn-output-pct", type=int, default=DEFAULTS["fn_output_pct"])
    ap.add_argument("--error-pct", type=int, default=DEFAULTS["error_pct"])
    ap.add_argument("--mutual-pct", type=int, default=DEFAULTS["mutual_pct"],
                    help="of the programs that recurse, how many recurse through RP and RQ (mutual recursion)")
    ap.add_argument("--edge-pct", type=int, default=DEFAULTS["edge_pct"],
                    help="programs at the machine's edges: integers past 2^63, deep recursion, a failing parallel for")
    ap.add_argument("--no-step-limit", action="store_true", help="skip the runs under a random step limit")
    ap.add_argument("--time-limit", type=int, default=600, help="seconds one program may take")
    ap.add_argument("--per-worker", type=int, default=40, help="programs before a worker process is replaced")
    ap.add_argument("--cache-dir", default=None, help="the compiled modules' cache (default: a temporary folder)")
    ap.add_argument("--cases", default=None, metavar="KINDS",
                    help="run the edge cases of tests/reference/jit_edges.py instead (comma-separated: "
                         "deep, output, interrupt), --programs of them in turn")
    ap.add_argument("--shapes", type=int, default=None,
                    help="with --cases: draw the program texts from this many shapes a kind (fewer compiles)")
    ap.add_argument("--combine", nargs="+", metavar="PART.json",
                    help="add up the results files of campaigns run in parts (e.g. one --budget slice per command, "
                         "successive --seed) into --out, then exit")
    args = ap.parse_args(argv)
    if args.combine:
        return combine([Path(p) for p in args.combine], Path(args.out))

    import starvm
    from starvm.backends import BackendUnavailable
    try:
        machine = starvm.Machine(backend=args.backend)
    except BackendUnavailable as e:
        print(f"fuzz_compiled: the {args.backend} backend is not available here: {e}", file=sys.stderr)
        return 2
    device = device_info(machine)
    env = machine_info(("numba",))
    out = Path(args.out)
    if args.cases:
        return cases_main(args, argv, device, env, out)
    name = f"fuzz_compiled_{device_name(args.backend, device)}"
    bad_dir = out / "fuzz_compiled_mismatches"
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="starvm-fuzz-jit-")
    opts = dict(max_stmts=args.max_stmts, recursion_pct=args.recursion_pct, fn_output_pct=args.fn_output_pct,
                error_pct=args.error_pct, mutual_pct=args.mutual_pct, edge_pct=args.edge_pct, backend=args.backend,
                step_limit=not args.no_step_limit,
                time_limit=args.time_limit, cache_dir=cache_dir)
    tally = Tally()
    t0 = time.perf_counter()

    def save(complete: bool) -> None:
        wall = time.perf_counter() - t0
        doc = document("fuzz_compiled", "Differential fuzzing of the compiled tier: --jit on against --jit off "
                       "and the reference model", machine=env, device=device,
                       command=" ".join(["python", "bench/fuzz_compiled.py", *(sys.argv[1:] if argv is None else argv)]),
                       backend=args.backend, first_seed=args.seed, programs_asked=args.programs,
                       programs=tally.programs, complete=complete, jobs=args.jobs, generator=opts_public(opts),
                       compared=("output, step counts by kind and runtime errors (message, position, call stack): "
                                 "interpreter and compiled tier each against the model, and against each other; "
                                 "both tiers again under a random step limit; programs at the machine's edges "
                                 "also on --jit auto and, under the step limit, with natives on"),
                       mismatching_programs=len(tally.mismatches), timeouts=tally.timeouts,
                       features={k: {"ran": a, "ran_compiled": b} for k, (a, b) in tally.features.items()},
                       main_block_fallbacks=dict(tally.main_fallbacks.most_common()),
                       fallbacks=dict(tally.fallbacks.most_common()),
                       model_errors=dict(tally.errors), step_limit_runs=tally.limits,
                       beyond_64_bits=tally.beyond_64_bits,
                       wall_s=round(wall, 1), per_program=_per_program(tally, wall, args.jobs),
                       mismatches=tally.mismatches)
        write_results(doc, out / f"{name}.json", markdown(doc))

    def took(result):
        tally.add(result, bad_dir)
        if tally.programs % 50 == 0:
            print(f"{tally.programs} programs, {len(tally.mismatches)} mismatching, "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)
            save(False)

    _run_jobs(args, cache_dir, t0, one, ((args.seed + i, opts) for i in range(args.programs)), took)
    save(tally.programs == args.programs)
    print(f"{tally.programs} programs on {args.backend} ({args.jobs} jobs), {len(tally.mismatches)} mismatching, "
          f"{len(tally.timeouts)} over the time limit, {time.perf_counter() - t0:.0f} s -> {out / name}.json")
    return 1 if tally.mismatches or tally.timeouts else 0


def _run_jobs(args, cache_dir, t0: float, work, jobs, took) -> None:
    """``work(job)`` for each of ``jobs`` in worker processes, at most two pending a worker, until
    the jobs or ``args.budget`` run out; ``took(result)`` for each result, in the jobs' order.
    The workers are spawned, not forked: the parent has touched the GPU (device_info), and CUDA
    does not survive a fork. A temporary compiled-code cache is removed at the end."""
    pool = multiprocessing.get_context("spawn").Pool(args.jobs, initializer=_worker_init, initargs=(cache_dir,),
                                                     maxtasksperchild=args.per_worker)
    pending = collections.deque()
    stopped = False
    try:
        while True:
            while not stopped and len(pending) < 2 * args.jobs:
                if args.budget is not None and time.perf_counter() - t0 > args.budget:
                    stopped = True
                    break
                job = next(jobs, None)
                if job is None:
                    stopped = True
                    break
                pending.append(pool.apply_async(work, (job,)))
            if not pending:
                break
            took(pending.popleft().get())
    finally:
        pool.terminate()
        if args.cache_dir is None:
            shutil.rmtree(cache_dir, ignore_errors=True)


# ---------------------------------------------------------------------- the edge cases (--cases)
def one_case(job):
    """Generate and check one case of tests/reference/jit_edges.py (in a worker process)."""
    from tests.reference.jit_edges import EdgeGen, check_case
    seed, kind, opts = job
    case = EdgeGen(seed, opts["shapes"]).case(kind)
    cpu0 = time.process_time()
    try:
        with watchdog(opts["time_limit"]):
            rec = check_case(case, opts["backend"])
    except RunTimeout:
        rec = dict(problems=[], timeout=True, seconds=opts["time_limit"])
    except Exception as e:  # noqa: BLE001 - a valid program must not crash either tier or the harness
        rec = dict(problems=[f"crash: {type(e).__name__}: {e}"], seconds=0.0)
    rec.update(seed=seed, kind=kind, note=case.note, params=case.params, max_depth=case.max_depth,
               delay=round(case.delay, 3), cpu_s=round(time.process_time() - cpu0, 3))
    if rec["problems"]:
        rec["source"] = case.source
    return rec


class CaseTally:
    """The edge-case campaign's figures so far, per kind."""

    def __init__(self, kinds):
        self.kinds = {k: dict(cases=0, mismatching=0, timeouts=0, seconds=0.0, ran_compiled=0, outcomes={})
                      for k in kinds}
        self.mismatches: list[dict] = []
        self.lines = 0

    def add(self, rec: dict, bad_dir: Path) -> None:
        k = self.kinds[rec["kind"]]
        k["cases"] += 1
        k["seconds"] = round(k["seconds"] + rec["seconds"], 1)
        if rec.get("timeout"):
            k["timeouts"] += 1
            return
        k["ran_compiled"] += bool(rec.get("compiled"))
        outcome = _outcome(rec)
        k["outcomes"][outcome] = k["outcomes"].get(outcome, 0) + 1
        lines = rec.get("lines") or 0
        self.lines += sum(lines.values()) if isinstance(lines, dict) else lines
        if rec["problems"]:
            k["mismatching"] += 1
            bad_dir.mkdir(parents=True, exist_ok=True)
            stem = f"{rec['kind']}_seed{rec['seed']}"
            (bad_dir / f"{stem}.star").write_text(rec["source"])
            (bad_dir / f"{stem}.txt").write_text(f"params {rec['params']}, max_depth {rec['max_depth']}, "
                                                 f"delay {rec['delay']} s\n\n" + "\n\n".join(rec["problems"]) + "\n")
            self.mismatches.append({"kind": rec["kind"], "seed": rec["seed"], "note": rec["note"],
                                    "params": rec["params"], "problems": [p[:2000] for p in rec["problems"]]})
            print(f"{rec['kind']} seed {rec['seed']}: {rec['problems'][0][:300]}", flush=True)


def _outcome(rec: dict) -> str:
    """How the interpreter's run ended (deep, output) or where the tiers stopped (interrupt)."""
    if rec["kind"] == "interrupt":
        where = rec.get("where", {})
        return "both stopped at a position" if len(where) == 2 else "a tier stopped without a position"
    err = rec.get("error")
    if err is None:
        return "ran to the end"
    return "recursion too deep" if "recursion too deep" in err else err.split(" (")[0]


def cases_main(args, argv, device, env, out: Path) -> int:
    kinds = [k.strip() for k in args.cases.split(",") if k.strip()]
    from tests.reference.jit_edges import KINDS
    if not kinds or any(k not in KINDS for k in kinds):
        print(f"fuzz_compiled: --cases takes {', '.join(KINDS)}", file=sys.stderr)
        return 2
    name = f"fuzz_compiled_cases_{device_name(args.backend, device)}"
    bad_dir = out / "fuzz_compiled_mismatches"
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="starvm-fuzz-jit-")
    opts = dict(backend=args.backend, shapes=args.shapes, time_limit=args.time_limit)
    tally = CaseTally(kinds)
    t0 = time.perf_counter()

    def save(complete: bool) -> None:
        doc = document("fuzz_compiled_cases", "Differential fuzzing of the compiled tier at its edges: deep "
                       "recursion, big output, interrupts", machine=env, device=device,
                       command=" ".join(["python", "bench/fuzz_compiled.py", *(sys.argv[1:] if argv is None else argv)]),
                       backend=args.backend, first_seed=args.seed, programs_asked=args.programs,
                       programs=sum(k["cases"] for k in tally.kinds.values()), complete=complete, jobs=args.jobs,
                       shapes=args.shapes,
                       compared=("deep and output: --jit off against --jit on in process, output line for line, step "
                                 "counts by kind, runtime error (message, position, Star call stack); interrupt: "
                                 "star run on each tier as a subprocess, SIGINT a random 0-2 s after its first line: "
                                 "exit 130, 'star: interrupted at FILE:LINE:COL' at a statement (or an expression in "
                                 "one), output a prefix of the uninterrupted run's, the tiers' uninterrupted runs "
                                 "agreeing"),
                       mismatching_programs=len(tally.mismatches), kinds=tally.kinds, lines_compared=tally.lines,
                       wall_s=round(time.perf_counter() - t0, 1), mismatches=tally.mismatches)
        write_results(doc, out / f"{name}.json", cases_markdown(doc))

    def took(result):
        tally.add(result, bad_dir)
        done = sum(k["cases"] for k in tally.kinds.values())
        if done % 20 == 0:
            print(f"{done} cases, {len(tally.mismatches)} mismatching, {time.perf_counter() - t0:.0f} s", flush=True)
            save(False)

    jobs = ((args.seed + i, kinds[i % len(kinds)], opts) for i in range(args.programs))
    _run_jobs(args, cache_dir, t0, one_case, jobs, took)
    done = sum(k["cases"] for k in tally.kinds.values())
    save(done == args.programs)
    timeouts = sum(k["timeouts"] for k in tally.kinds.values())
    print(f"{done} cases on {args.backend} ({args.jobs} jobs), {len(tally.mismatches)} mismatching, "
          f"{timeouts} over the time limit, {time.perf_counter() - t0:.0f} s -> {out / name}.json")
    return 1 if tally.mismatches or timeouts else 0


def cases_markdown(doc: dict) -> list[str]:
    asked = "" if doc["complete"] else f" of {doc['programs_asked']} asked"
    lines = ["", f"`{doc['command']}`", "",
             f"{doc['programs']} cases (seeds {doc['first_seed']}-{doc['first_seed'] + doc['programs'] - 1}{asked}) "
             f"on the {doc['backend']} backend, {doc['jobs']} worker processes, {doc['wall_s']} s: "
             f"**{doc['mismatching_programs']} mismatching**; {doc['lines_compared']} output lines compared. "
             f"Compared: {doc['compared']}.", "",
             "| kind | cases | mismatching | over the time limit | ran compiled | outcomes | seconds (sum) |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    for name, k in doc["kinds"].items():
        outcomes = ", ".join(f"{o} {n}" for o, n in sorted(k["outcomes"].items()))
        lines.append(f"| {name} | {k['cases']} | {k['mismatching']} | {k['timeouts']} | {k['ran_compiled']} | "
                     f"{outcomes} | {k['seconds']} |")
    if doc["mismatches"]:
        lines += ["", "Mismatches (programs under fuzz_compiled_mismatches/, KIND_seedS.star with the parameters "
                  "and problems beside it):", ""]
        lines += [f"- {m['kind']} seed {m['seed']} ({m['note']}, {m['params']}): "
                  f"{m['problems'][0].splitlines()[0][:200]}" for m in doc["mismatches"][:40]]
    return lines


def combine(parts: list[Path], out: Path) -> int:
    """One results file from several parts of one campaign: counts added up, the parts'
    headers (machine, date, command, seeds) kept under ``parts``."""
    import json
    docs = [json.loads(p.read_text()) for p in parts]
    if any(d.get("benchmark") != "fuzz_compiled" for d in docs):
        print("fuzz_compiled: --combine takes fuzz_compiled_*.json files only", file=sys.stderr)
        return 2
    first = docs[0]
    programs = sum(d["programs"] for d in docs)

    def added(key):
        total = collections.Counter()
        for d in docs:
            total.update(d[key])
        return dict(total.most_common())
    features = {}
    for d in docs:
        for k, v in d["features"].items():
            f = features.setdefault(k, {"ran": 0, "ran_compiled": 0})
            f["ran"] += v["ran"]
            f["ran_compiled"] += v["ran_compiled"]
    weights = [(d["programs"], d["per_program"]) for d in docs if d["per_program"]]

    def mean(key):
        return round(sum(n * pp[key] for n, pp in weights) / max(sum(n for n, _ in weights), 1), 3)
    wall = sum(d["wall_s"] for d in docs)
    per_program = {"mean_s": mean("mean_s"), "median_s": None, "cpu_mean_s": mean("cpu_mean_s"),
                   "max_s": max(pp["max_s"] for _, pp in weights), "compile_mean_s": mean("compile_mean_s"),
                   "compile_share": mean("compile_share"), "programs_per_minute": round(60 * programs / max(wall, 1e-9), 1),
                   "projected_10000_on_16_cores_s": round(mean("cpu_mean_s") * 10_000 / 16)} if weights else {}
    seeds = sorted((d["first_seed"], d["first_seed"] + d["programs"] - 1) for d in docs)
    doc = document("fuzz_compiled", first["title"], machine=first["machine"], device=first["device_info"],
                   command=" + ".join(d["command"] for d in docs), backend=first["backend"],
                   first_seed=seeds[0][0], seed_ranges=seeds, programs_asked=programs, programs=programs,
                   complete=True, jobs=first["jobs"], generator=first["generator"], compared=first["compared"],
                   mismatching_programs=sum(d["mismatching_programs"] for d in docs),
                   timeouts=[s for d in docs for s in d["timeouts"]], features=features,
                   main_block_fallbacks=added("main_block_fallbacks"), fallbacks=added("fallbacks"),
                   model_errors=added("model_errors"), step_limit_runs=sum(d["step_limit_runs"] for d in docs),
                   beyond_64_bits=[s for d in docs for s in d.get("beyond_64_bits", [])],
                   wall_s=round(wall, 1), per_program=per_program,
                   mismatches=[m for d in docs for m in d["mismatches"]],
                   parts=[{k: d[k] for k in ("date", "command", "first_seed", "programs", "wall_s", "machine")}
                          for d in docs])
    name = f"fuzz_compiled_{device_name(first['backend'], first['device_info'])}"
    if first["backend"] == "numpy":
        name = f"fuzz_compiled_cpu{first['machine'].get('cpu_count')}"
    write_results(doc, out / f"{name}.json", markdown(doc))
    print(f"{len(docs)} parts, {programs} programs, {doc['mismatching_programs']} mismatching -> {out / name}.json")
    return 1 if doc["mismatching_programs"] or doc["timeouts"] else 0


def opts_public(opts: dict) -> dict:
    return {k: v for k, v in opts.items() if k != "cache_dir"}


def _per_program(t: Tally, wall: float, jobs: int) -> dict:
    if not t.seconds:
        return {}
    mean, cpu = statistics.fmean(t.seconds), statistics.fmean(t.cpu_s)
    return {"mean_s": round(mean, 3), "median_s": round(statistics.median(t.seconds), 3), "cpu_mean_s": round(cpu, 3),
            "max_s": round(max(t.seconds), 3), "compile_mean_s": round(statistics.fmean(t.compile_s), 3),
            "compile_share": round(sum(t.compile_s) / max(sum(t.seconds), 1e-9), 3),
            "programs_per_minute": round(60 * t.programs / max(wall, 1e-9), 1),
            # CPU time, not wall time: a shared machine's waits are not the program's cost
            "projected_10000_on_16_cores_s": round(cpu * 10_000 / 16)}


def markdown(doc: dict) -> list[str]:
    pp = doc["per_program"]
    asked = "" if doc["complete"] else f" of {doc['programs_asked']} asked"
    lines = ["", f"`{doc['command']}`", "",
             f"{doc['programs']} programs (seeds "
             f"{', '.join(f'{a}-{b}' for a, b in doc.get('seed_ranges') or [(doc['first_seed'], doc['first_seed'] + doc['programs'] - 1)])}"
             f"{asked}) on the {doc['backend']} backend, "
             f"{doc['jobs']} worker processes, {doc['wall_s']} s: **{doc['mismatching_programs']} mismatching**, "
             f"{len(doc['timeouts'])} over the time limit. Compared: {doc['compared']}.", "",
             "| feature | programs where it ran | where it ran compiled |", "| --- | ---: | ---: |"]
    for k, v in doc["features"].items():
        lines.append(f"| {k} | {v['ran']} | {v['ran_compiled']} |")
    stopped = ", ".join(f"{k} {v}" for k, v in doc["model_errors"].items() if k != "none") or "none"
    lines += ["", f"Programs stopped by a runtime error (the model's exception): {stopped}; "
              f"step-limit runs (both tiers): {doc['step_limit_runs']}.", "",
              f"Programs whose integers passed 64 bits (the compiled call that passes them runs again interpreted), "
              f"checked like any other: {len(doc.get('beyond_64_bits', []))}"
              f"{' (seeds ' + ', '.join(map(str, doc['beyond_64_bits'][:20])) + ')' if doc.get('beyond_64_bits') else ''}.", "",
              "Why code ran interpreted (routine or role: reason, programs):", ""]
    lines += [f"- {k}: {v}" for k, v in list(doc["fallbacks"].items())[:15]]
    if pp:
        median = "" if pp["median_s"] is None else f"median {pp['median_s']} s, "
        lines += ["", f"Per program (one worker): wall mean {pp['mean_s']} s, "
                  f"{median}max {pp['max_s']} s, "
                  f"CPU mean {pp['cpu_mean_s']} s; Numba compiling {pp['compile_mean_s']} s of the wall time on average "
                  f"({100 * pp['compile_share']:.0f} %); {pp['programs_per_minute']} programs a minute here. At this CPU "
                  f"cost 10 000 programs on 16 such cores would take about {pp['projected_10000_on_16_cores_s']} s."]
    if doc["mismatches"]:
        lines += ["", "Mismatches (programs under fuzz_compiled_mismatches/):", ""]
        lines += [f"- seed {m['seed']}: {m['problems'][0].splitlines()[0][:200]}" for m in doc["mismatches"][:30]]
    return lines


if __name__ == "__main__":
    sys.exit(main())
