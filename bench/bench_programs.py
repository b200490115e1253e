"""The shipped programs end to end (issue 31): each programs/*.star run whole with `star run` on a
generated graph, beside a SciPy/NumPy script doing the same job end to end (generate the same
graph, compute, print the same answer), in the same run; the two outputs must agree.

    PYTHONPATH=. python bench/bench_programs.py [--backend numpy|cupy|auto] [--programs bfs,dijkstra]
        [--scale 12,14] [--dense-scale 9,10] [--seed 7] [--ef 16] [--repeat 3] [--timeout 120] [--out NAME]

Per program and graph: one cold run (every compiled-code cache empty: STARVM_JIT_CACHE,
NUMBA_CACHE_DIR and CUPY_CACHE_DIR in a fresh folder), one warm-up, then --repeat warm runs
(their median counts), each a fresh `python -m starvm run` process timed from its start to its
exit; a background compile a run leaves behind is waited for before the next run. Then the
reference, `python -m bench.programs_reference`, one warm-up and --repeat runs, timed the same
way. Both sides make the graph from the same spec: R-MAT (`rmat:scale=S,ef=E,seed=N`) with the
same generator algorithm and random stream (bench/programs_reference/graphs.py), undirected
(both arcs of every edge, weights 1..100), so every program's reading gets the same arcs.
The sparse programs get --scale; warshall, warshall_c, warshall_adapt and floyd, whose tables
are n x n (floyd's n x n*b), get --dense-scale. On a GPU backend, rows from scale 16 up also
time the NumPy backend warm (the issue's "faster on cupy than on numpy").

The floor (bench/programs_floor, for the programs whose stdlib routine is an associative
algorithm of sequential rounds): the same algorithm hand-written in Numba on the bit-sliced
layout, `python -m bench.programs_floor P --generate SPEC`, timed whole the same way: its first
run with an empty Numba cache (NUMBA_CACHE_DIR in the row's folder: "floor cold"), then --repeat
warm runs (median); its answer must be the reference's too. The CPU target (issue 31): starvm
within 5x of the reference, or within 1.5x of the floor. The floors run by default on the NumPy
backend (--floor / --no-floor); a GPU's floor (CUDA) is not built.

A run past --timeout counts as "> T s". A row whose outputs differ, or whose run fails, is
marked FAILED and the script exits 1. Writes bench/results/NAME.json and NAME.md (default
programs_e2e_<machine>: cpu<cores> on the NumPy backend, the GPU's short name on the others),
row by row, so a run stopped midway keeps what it measured (--append adds to it; --budget
stops starting rows; --merge joins the files of several runs, e.g. one per GPU session).
The run on the 2-core CPU: bench/results/programs_e2e_cpu2.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.programs_floor import PROGRAMS as FLOOR_PROGRAMS
from starvm.benchmarking import document, load_average, run_process, write_results
from starvm.benchmarking.environment import device_info, slug, version_of

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"

PROGRAMS = sorted(p.stem for p in (ROOT / "programs").glob("*.star"))
DENSE = {"warshall", "warshall_c", "warshall_adapt", "floyd"}     # n x n tables: a smaller graph
CPU_RATIO = 5.0                # the 2-core CPU target: within 5x of the SciPy script, at scale 16
FLOOR_RATIO = 1.5              # ... or within 1.5x of the hand-written floor of the same algorithm
GPU_SECONDS = {("mst_boruvka", 18): 3.0, ("mst_boruvka", 22): 15.0, ("bfs_adapt", 18): 3.0,
               ("dijkstra", 14): 2.0, ("mst_prim", 14): 2.0, ("mst_kruskal", 14): 2.0}
WORKER_WAIT_S = 600.0          # the longest wait for a background compile a run left behind


# ------------------------------------------------------------------ one side, one run
def spec_of(scale: int, ef: int, seed: int) -> str:
    return f"rmat:scale={scale},ef={ef},seed={seed}"


def checkout_env() -> dict:
    """This environment with the checkout first on PYTHONPATH (what was there kept: a folder of
    carried dependencies on a GPU host)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def fresh_env(folder: Path) -> dict:
    """The environment of a row's runs: its own compiled-code caches, empty at first."""
    env = {**checkout_env(), "STARVM_JIT_CACHE": str(folder / "jit"), "NUMBA_CACHE_DIR": str(folder / "numba"),
           "CUPY_CACHE_DIR": str(folder / "cupy")}
    for name in ("STARVM_JIT", "STARVM_JIT_THRESHOLD", "STARVM_JIT_BACKGROUND", "STARVM_BACKEND"):
        env.pop(name, None)
    return env


def star_command(program: str, spec: str, backend: str, jit: str) -> list[str]:
    return [sys.executable, "-m", "starvm", "run", str(ROOT / "programs" / f"{program}.star"),
            "--generate", spec, "--backend", backend, "--jit", jit]


def reference_command(program: str, spec: str) -> list[str]:
    return [sys.executable, "-m", "bench.programs_reference", program, "--generate", spec]


def floor_command(program: str, spec: str) -> list[str]:
    return [sys.executable, "-m", "bench.programs_floor", program, "--generate", spec]


def compile_workers(folder: Path) -> list[int]:
    """Background compile workers of this row (their command line names its cache folder)."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:                     # ended meanwhile
            continue
        if "compile_worker" in args and str(folder) in args:
            pids.append(int(proc.name))
    return pids


def settle(folder: Path, limit_s: float = WORKER_WAIT_S) -> float:
    """Wait for the row's background compiles to end (they compete for the cores with the next
    run); past ``limit_s`` stop them (started by this row's runs). The seconds waited."""
    t0 = time.monotonic()
    while compile_workers(folder):
        if time.monotonic() - t0 > limit_s:
            for pid in compile_workers(folder):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            break
        time.sleep(0.5)
    return round(time.monotonic() - t0, 1)


def timed(cmd: list[str], env: dict, timeout: float) -> dict:
    """One fresh process timed whole: {"s": seconds or None past the timeout, "rc", "out", "err"}."""
    done = run_process(cmd, env=env, timeout=timeout)
    return {"s": done.seconds, "rc": done.returncode, "out": done.stdout, "err": done.stderr}


def series(cmd: list[str], env: dict, timeout: float, repeat: int, folder: Path | None) -> tuple[list, list[dict]]:
    """One warm-up run, then ``repeat`` timed ones; a run past the timeout or failing ends the
    series (the next would too). The warm runs' seconds (None: past the timeout) and every run."""
    runs = []
    for i in range(repeat + 1):
        run = timed(cmd, env, timeout)
        runs.append(run)
        if folder is not None:
            settle(folder)
        if run["s"] is None or run["rc"] != 0:
            break
    warm = [r["s"] for r in runs[1:]]
    if runs[-1]["s"] is None and len(runs) == 1:
        warm = [None]             # the warm-up itself ran past the timeout: so would a warm run
    return warm, runs


def median_or_none(seconds: list) -> float | None:
    """The median, or None when there is none or a run ran past the timeout."""
    return statistics.median(seconds) if seconds and None not in seconds else None


# ------------------------------------------------------------------ comparing the answers
def first_difference(star_out: str, ref_out: str) -> str | None:
    """None when the two outputs say the same (line by line, trailing blanks ignored), else
    where they part."""
    a = [ln.rstrip() for ln in star_out.rstrip("\n").split("\n")]
    b = [ln.rstrip() for ln in ref_out.rstrip("\n").split("\n")]
    for i, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {i}: starvm {_clip(x)!r}, reference {_clip(y)!r}"
    if len(a) != len(b):
        return f"starvm printed {len(a)} lines, the reference {len(b)}"
    return None


def _clip(text: str, most: int = 70) -> str:
    return text if len(text) <= most else text[:most] + "..."


def summary(program: str, out: str) -> str:
    """The answer in a few words, for the table: reached count, components, tree edges and weight."""
    picks = [(r"^reached (\d+) of", "reached {}"), (r"^connected components: (\d+)", "{} components"),
             (r"^tree edges: (\d+)", "{} tree edges"), (r"^total weight: (\d+)", "weight {}"),
             (r"^reachable ordered pairs: (\d+)", "{} pairs"),
             (r"\((?:Dijkstra|Bellman-Ford(?:-adapt)?)\): .* (\d+) reached", "reached {}")]
    found = [fmt.format(m.group(1)) for rx, fmt in picks for m in [re.search(rx, out, re.M)] if m]
    if not found and out.startswith("transitive closure"):
        found = [f"{out.count('1')} closure bits"]
    return ", ".join(found)


# ------------------------------------------------------------------ one row
def failure(runs: list[dict], who: str) -> str | None:
    """Why a run of ``runs`` failed (it ended with an exit code other than 0), or None."""
    bad = next((r for r in runs if r["s"] is not None and r["rc"] != 0), None)
    if bad is None:
        return None
    lines = bad["err"].strip().splitlines()
    # the error's own line (file:line:col: error: ...), else the last one (a traceback's)
    said = next((ln for ln in lines if " error: " in ln or ln.startswith("error: ")), lines[-1] if lines else "")
    return f"{who} exit {bad['rc']}: {_clip(said.strip(), 200)}"


def judge(program: str, star_runs: list[dict], ref_runs: list[dict], floor_runs: list[dict] = ()) -> dict:
    """The row's verdict from its runs: status "ok" (the outputs agree), "FAILED" (a run failed,
    starvm's runs disagree among themselves, or starvm's or the floor's answer differs from the
    reference's) or "not checked" (a side only ran past the timeout); ``why`` and starvm's
    ``answer`` in brief."""
    why = failure(star_runs, "star run") or failure(ref_runs, "reference") or failure(floor_runs, "floor")
    if why:
        return {"status": "FAILED", "why": why}
    star_outs = {r["out"] for r in star_runs if r["s"] is not None}
    ref_out = next((r["out"] for r in ref_runs if r["s"] is not None), None)
    if len(star_outs) > 1:
        return {"status": "FAILED", "why": "starvm's runs printed different outputs"}
    if not star_outs or ref_out is None:
        return {"status": "not checked",
                "why": "starvm ran past the timeout" if not star_outs else "the reference ran past the timeout"}
    star_out = star_outs.pop()
    verdict = {"status": "ok", "answer": summary(program, star_out)}
    diff = first_difference(star_out, ref_out)
    if diff is not None:
        verdict.update(status="FAILED", why=f"answers differ: {diff}")
    floor_outs = {r["out"] for r in floor_runs if r["s"] is not None}
    floor_diff = next(filter(None, (first_difference(out, ref_out) for out in floor_outs)), None)
    if floor_diff is not None and verdict["status"] == "ok":
        verdict.update(status="FAILED", why=f"the floor's answer differs: {floor_diff.replace('starvm', 'floor')}")
    return verdict


def measure(program: str, scale: int, args, reference=None, floor=None) -> dict:
    """One program on one graph: starvm cold, warm, the reference, the floor, the comparison.
    ``reference(program, spec)`` and ``floor(program, spec)``, commands, replace the reference's
    and the floor's (the tests give a reference whose answer is wrong, a floor without Numba's compile)."""
    spec = spec_of(scale, args.ef, args.seed)
    row = {"program": program, "graph": spec, "scale": scale, "backend": args.backend, "timeout_s": args.timeout,
           "load_before": load_average()}
    folder = Path(tempfile.mkdtemp(prefix="starvm-bench-programs-"))
    try:
        env = fresh_env(folder)
        cmd = star_command(program, spec, args.backend, args.jit)
        cold = timed(cmd, env, args.timeout)
        row["cold_s"] = cold["s"]
        row["background_wait_s"] = settle(folder)
        star_runs, ref_runs, floor_runs = [cold], [], []
        if cold["s"] is None or cold["rc"] == 0:
            warm, runs = series(cmd, env, args.timeout, args.repeat, folder)
            row["warm_runs_s"], row["warm_s"] = warm, median_or_none(warm)
            star_runs += runs
            if args.backend != "numpy" and scale >= 16 and program not in DENSE and args.numpy_baseline:
                other = folder / "numpy-backend"
                nwarm, _ = series(star_command(program, spec, "numpy", args.jit), fresh_env(other), args.timeout,
                                  args.repeat, other)
                row["numpy_backend_runs_s"], row["numpy_backend_warm_s"] = nwarm, median_or_none(nwarm)
            ref_cmd = reference(program, spec) if reference else reference_command(program, spec)
            rwarm, ref_runs = series(ref_cmd, checkout_env(), args.timeout, args.repeat, None)
            row["reference_runs_s"], row["reference_s"] = rwarm, median_or_none(rwarm)
            phases = next((m for r in reversed(ref_runs) for m in [re.search(r"^\{.*\}$", r["err"], re.M)] if m), None)
            if phases:
                row["reference_phases_s"] = {k: round(v, 4) for k, v in json.loads(phases.group(0)).items()}
            if args.floor and program in FLOOR_PROGRAMS:
                # its own Numba cache, empty at first: the warm-up is the floor's cold run
                floor_env = {**checkout_env(), "NUMBA_CACHE_DIR": str(folder / "floor-numba")}
                floor_env.pop("NUMBA_DISABLE_JIT", None)
                fcmd = floor(program, spec) if floor else floor_command(program, spec)
                fwarm, floor_runs = series(fcmd, floor_env, args.timeout, args.repeat, None)
                row["floor_cold_s"] = floor_runs[0]["s"]
                row["floor_runs_s"], row["floor_s"] = fwarm, median_or_none(fwarm)
                phases = next((m for r in reversed(floor_runs) for m in [re.search(r"^\{.*\}$", r["err"], re.M)] if m),
                              None)
                if phases:
                    row["floor_phases_s"] = {k: round(v, 4) for k, v in json.loads(phases.group(0)).items()}
        row.update(judge(program, star_runs, ref_runs, floor_runs))
        return row
    finally:
        row["load_after"] = load_average()
        if not compile_workers(folder):
            shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------ targets and the report
def target(row: dict) -> tuple[str, bool | None]:
    """The issue's target for this row, in words, and whether it is met (None: no target, or
    nothing to judge it by)."""
    warm, ref = row.get("warm_s"), row.get("reference_s")
    if row["backend"] == "numpy":
        bounds = [(ref, CPU_RATIO, f"≤ {CPU_RATIO:g}× ref")]
        if row.get("floor_runs_s") or "floor_s" in row:
            bounds.append((row.get("floor_s"), FLOOR_RATIO, f"≤ {FLOOR_RATIO:g}× floor"))
        text = " or ".join(t for _, _, t in bounds)
        met = []
        for base, ratio, _ in bounds:
            if base is None:
                met.append(None)
            elif warm is None:  # past the timeout: known to miss only when the timeout is past the bound
                missed = bool(row.get("warm_runs_s")) and row.get("timeout_s", float("inf")) > ratio * base
                met.append(False if missed else None)
            else:
                met.append(warm <= ratio * base)
        if True in met:
            return text, True
        return text, (None if None in met else False)
    parts, met = [], []
    bound = GPU_SECONDS.get((row["program"], row["scale"]))
    if bound is not None:
        parts.append(f"≤ {bound:g} s")
        met.append(warm is not None and warm <= bound)
    if "numpy_backend_warm_s" in row:
        parts.append("< numpy backend")
        nb = row["numpy_backend_warm_s"]
        met.append(None if warm is None and nb is None else (warm is not None and (nb is None or warm < nb)))
    if not parts:
        return "—", None
    return ", ".join(parts), (None if None in met else all(met))


def seconds(x, timeout: float, ran: bool = True) -> str:
    if x is None:
        return f"> {timeout:g} s" if ran else "—"
    return f"{x:.2f}"


def markdown(doc: dict) -> list[str]:
    t = doc["timeout_s"]
    gpu = doc["backend"] != "numpy"
    head = ["program", "graph", "n", "starvm warm s", "starvm cold s", "reference s", "starvm / ref", "floor s",
            "starvm / floor"]
    if gpu:
        head.append("numpy backend warm s")
    head += ["target", "met", "answer", "check", "load"]
    lines = [doc["method"], "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in doc["results"]:
        warm, ref, floor = r.get("warm_s"), r.get("reference_s"), r.get("floor_s")
        text, met = target(r)
        cells = [r["program"], r["graph"].split(":", 1)[1], str(1 << r["scale"]),
                 seconds(warm, t, bool(r.get("warm_runs_s"))), seconds(r.get("cold_s"), t), seconds(ref, t, bool(r.get("reference_runs_s"))),
                 _ratio(warm, ref, t, r), seconds(floor, t, bool(r.get("floor_runs_s"))), _ratio(warm, floor, t, r)]
        if gpu:
            cells.append(seconds(r.get("numpy_backend_warm_s"), t, bool(r.get("numpy_backend_runs_s"))))
        check = r["status"] if r["status"] == "ok" else f"**{r['status']}**: {r.get('why', '')}"
        cells += [text, {True: "✓", False: "✗", None: "—"}[met], r.get("answer", ""), check.replace("|", "\\|"),
                  f"{_load(r['load_before'])}-{_load(r.get('load_after'))}"]
        lines.append("| " + " | ".join(cells) + " |")
    rows = doc["results"]
    failed = [r for r in rows if r["status"] == "FAILED"]
    judged = [r for r in rows if target(r)[1] is not None]
    lines += ["", f"{len(rows) - len(failed)} of {len(rows)} rows without failure; "
              f"{sum(1 for r in judged if target(r)[1])} of {len(judged)} judged rows meet their target."]
    if doc.get("not_run"):
        lines.append(f"Not run (--budget spent): {', '.join(doc['not_run'])}.")
    if doc["backend"] == "numpy":
        lines.append(f"The CPU target (issue 31) is stated at R-MAT scale 16: within {CPU_RATIO:g}× of the SciPy "
                     f"script end to end, or within {FLOOR_RATIO:g}× of the floor (the same associative algorithm "
                     "hand-written in Numba, bench/programs_floor); rows at other sizes are held to it too, to show "
                     "the distance.")
    return lines


def _ratio(warm, base, timeout: float, row: dict) -> str:
    """starvm's warm seconds over a baseline's: "> N×" when starvm ran past the timeout."""
    if warm is not None and base:
        return f"{warm / base:.1f}×"
    return f"> {timeout / base:.0f}×" if base and row.get("warm_runs_s") else "—"


def _load(x) -> str:
    return "?" if x is None else f"{x:.1f}"


def machine_name(backend: str, device: dict) -> str:
    """cpu<cores> on the NumPy backend; on a GPU backend the GPU's short name (h200, h100)."""
    gpu = (device or {}).get("gpu")
    if backend == "numpy" or not gpu:
        return f"cpu{os.cpu_count()}"
    short = re.match(r"[a-z]*\d+", slug(gpu["name"]))
    return short.group(0) if short else slug(gpu["name"])


def out_paths(out: str | None, machine: str) -> Path:
    """NAME -> bench/results/NAME.json; a path with a folder is taken as given (suffix dropped)."""
    name = out or f"programs_e2e_{machine}"
    path = Path(name)
    if path.parent == Path("."):
        path = RESULTS / path
    return path.with_suffix(".json") if path.suffix in (".json", ".md", "") else path.with_name(path.name + ".json")


def merge(files: list[Path], out: str | None) -> int:
    """--merge: one results file of the rows of several (a later file's row replaces an earlier
    one of the same program and graph); the header is the first file's. Exit 1 on a FAILED row."""
    docs = [json.loads(f.read_text()) for f in files]
    if len({d["backend"] for d in docs}) != 1:
        raise SystemExit("--merge: the files hold runs of different backends")
    doc = docs[0]
    rows = {}
    for d in docs:
        rows.update({(r["program"], r["graph"]): r for r in d["results"]})
    doc["results"] = sorted(rows.values(), key=lambda r: (r["program"], r["scale"]))
    doc["not_run"] = [x for d in docs for x in d.get("not_run", [])
                      if tuple(x.split(" ", 1)) not in rows]
    doc["merged_from"] = [{"file": f.name, "date": d["date"]} for f, d in zip(files, docs)]
    path = out_paths(out, machine_name(doc["backend"], doc.get("device_info")))
    write_results(doc, path, markdown(doc))
    print(f"wrote {path} and {path.with_suffix('.md')}")
    return 1 if any(r["status"] == "FAILED" for r in doc["results"]) else 0


def earlier_rows(path: Path, args) -> list[dict]:
    """The rows of an earlier run in ``path`` (--append), if it ran the same backend and options."""
    if not path.exists():
        return []
    doc = json.loads(path.read_text())
    same = all(doc.get(k) == v for k, v in (("backend", args.backend), ("jit", args.jit), ("repeat", args.repeat),
                                            ("timeout_s", args.timeout)))
    if not same:
        raise SystemExit(f"--append: {path} holds a run of other options (backend, --jit, --repeat, --timeout)")
    return doc["results"]


def parse_scales(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"scales are integers separated by commas, not {text!r}") from None


def main(argv=None, reference=None, floor=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["numpy", "cupy", "auto"], default="numpy")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated names of programs/*.star")
    ap.add_argument("--scale", type=parse_scales, default=[12, 14], help="R-MAT scales of the sparse programs")
    ap.add_argument("--dense-scale", type=parse_scales, default=[9, 10],
                    help="R-MAT scales of warshall, warshall_c, warshall_adapt, floyd (n x n tables)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ef", type=int, default=16, help="R-MAT edge factor")
    ap.add_argument("--repeat", type=int, default=3, help="warm runs after the warm-up (their median counts)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one run may take")
    ap.add_argument("--jit", choices=["auto", "on", "off"], default="auto", help="star run --jit")
    ap.add_argument("--no-numpy-baseline", dest="numpy_baseline", action="store_false",
                    help="on a GPU backend, do not time the NumPy backend at scale >= 16")
    ap.add_argument("--floor", action=argparse.BooleanOptionalAction, default=None,
                    help="run the hand-written Numba floors (bench/programs_floor, CPU): by default on the "
                         "NumPy backend only, where the CPU target reads them")
    ap.add_argument("--out", help="NAME (in bench/results/) or a path; default programs_e2e_<machine>")
    ap.add_argument("--append", action="store_true",
                    help="keep the rows already in the file (a row of the same program and graph is replaced)")
    ap.add_argument("--budget", type=float, help="start no row after this many seconds (the rows left are listed)")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="run nothing: combine the rows of these result files (one backend) into --out")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.floor is None:
        args.floor = args.backend == "numpy"
    programs = [p.strip() for p in args.programs.split(",") if p.strip()]
    unknown = [p for p in programs if p not in PROGRAMS]
    if unknown:
        ap.error(f"no program {', '.join(unknown)} in programs/ (there are {', '.join(PROGRAMS)})")
    if args.merge:
        return merge([Path(f) for f in args.merge], args.out)
    device = device_info(gpu=args.backend != "numpy")
    path = out_paths(args.out, machine_name(args.backend, device))
    doc = document("programs e2e", f"The shipped programs end to end, `star run --backend {args.backend}` against SciPy",
                   device=device, extra_versions=("scipy", "numba", "cupy"),
                   method=f"Each row: `star run programs/P.star --generate SPEC --backend {args.backend} --jit {args.jit}` "
                          "as a fresh process timed from start to exit: once cold (every compiled-code cache empty: "
                          "STARVM_JIT_CACHE, NUMBA_CACHE_DIR, CUPY_CACHE_DIR in a fresh folder), then one warm-up and "
                          f"{args.repeat} warm runs (median); background compiles waited for between runs. Reference: "
                          "`python -m bench.programs_reference P --generate SPEC` (SciPy/NumPy: the same R-MAT generator "
                          "algorithm and seed, so the same graph, the job, the same printout), one warm-up and "
                          f"{args.repeat} runs (median), also timed whole. "
                          + ("Floor (bellman_ford, bellman_ford_adapt, bfs, bfs_adapt, components, dijkstra, mst_*): "
                             "`python -m bench.programs_floor P --generate SPEC`, the stdlib routine's associative "
                             "algorithm hand-written in Numba on the bit-sliced layout (the same rounds and "
                             "whole-column steps), its first run with an empty Numba cache, then "
                             f"{args.repeat} warm runs (median), timed whole. " if args.floor else "")
                          + "The outputs are compared line by line. "
                          f"Runs past {args.timeout:g} s are killed: \"> {args.timeout:g} s\". The graph column "
                          "gives the R-MAT spec (n = 2^scale vertices, about 2 * ef * n arcs: both arcs of each edge). "
                          "The host may be shared: its load average is beside each row.",
                   backend=args.backend, jit=args.jit, floor=args.floor, timeout_s=args.timeout, repeat=args.repeat,
                   seed=args.seed,
                   edge_factor=args.ef, versions={d: version_of(d) for d in ("numpy", "scipy", "numba", "cupy")},
                   results=[])
    kept, new = (earlier_rows(path, args) if args.append else []), []
    start = time.monotonic()
    for program in programs:
        for scale in (args.dense_scale if program in DENSE else args.scale):
            if args.budget is not None and time.monotonic() - start >= args.budget:
                doc.setdefault("not_run", []).append(f"{program} {spec_of(scale, args.ef, args.seed)}")
                write_results(doc, path, markdown(doc))
                continue
            row = measure(program, scale, args, reference, floor)
            new.append(row)
            kept = [r for r in kept if (r["program"], r["graph"]) != (row["program"], row["graph"])]
            doc["results"] = sorted([*kept, *new], key=lambda r: (r["program"], r["scale"]))
            print({k: v for k, v in row.items() if k not in ("reference_phases_s", "floor_phases_s")}, flush=True)
            write_results(doc, path, markdown(doc))
    print(f"wrote {path} and {path.with_suffix('.md')}")
    return 1 if any(r["status"] == "FAILED" for r in doc["results"]) else 0


if __name__ == "__main__":
    sys.exit(main())
