"""What a first `star run` costs (issue 32): each shipped program, on its bundled graph and on
generated graphs, run as a new user would, with its compiled-code cache empty (STARVM_JIT_CACHE
in a fresh folder per case; Numba's cache of starvm's kernels, NUMBA_CACHE_DIR, empty at the
start of the harness and shared by its cases: on --jit auto a first run compiles nothing in
the foreground, so the kernels' state changes only how long its background compile takes),
then again once the background compiles it started have finished (the warm run), and with
--jit off. The target: a first run <= 3 s, or <= 1.5x its warm run.

    python bench/bench_first_run.py [--programs bfs,dijkstra] [--graphs bundled,gnp:n=1000,p=0.005,seed=1]
                                    [--out NAME] [--timeout S]

``--kernels`` measures instead what compiling costs a first run that asks for it (`--jit on`),
in CPU seconds of the process (its children's resource usage): with every cache empty
(starvm's kernels and the program's routines), with only starvm's kernels in Numba's cache,
and warm; per checkout given with ``--tree PATH=LABEL`` (default this one), the trees
interleaved program by program, so that a change is measured against the code before it
under the same load:

    python bench/bench_first_run.py --kernels [--tree /tmp/before=before --tree .=after] [--programs bfs]

Writes bench/results/NAME.json and NAME.md (default first_run_cpu<cores>, with --kernels
first_run_kernels_cpu<cores>), case by case, so a run stopped midway keeps what it measured. Every run is a fresh process (`python -m starvm
run`), timed from its start to its end; the machine's load average is recorded beside each
case (on a shared machine, other work slows every figure).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from starvm.benchmarking import document, load_average, run_process, write_results

ROOT = Path(__file__).resolve().parents[1]

PROGRAMS = sorted(p.stem for p in (ROOT / "programs").glob("*.star"))
GRAPHS = ["bundled", "gnp:n=1000,p=0.005,seed=1", "gnp:n=4000,p=0.001,seed=1"]
FIRST_RUN_S = 3.0
OF_WARM = 1.5


def star_run(program: str, graph: str, env: dict, *extra, timeout: float) -> tuple[float | None, str]:
    """Seconds of one `star run`, a fresh process timed whole (None: it timed out or failed), and
    its stderr."""
    cmd = [sys.executable, "-m", "starvm", "run", str(ROOT / "programs" / f"{program}.star"), *extra]
    if graph != "bundled":
        cmd += ["--generate", graph]
    done = run_process(cmd, env=env, timeout=timeout, keep_stdout=False)
    return (done.seconds if done.ok else None), done.stderr


def workers_of(folder: Path) -> int:
    """Compile workers still running on this case's cache (their command line names it)."""
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if "compile_worker" in line and str(folder) in line)


def measure(program: str, graph: str, timeout: float, kernels: Path) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="starvm-first-run-"))
    env = {**os.environ, "STARVM_JIT_CACHE": str(folder / "jit"), "NUMBA_CACHE_DIR": str(kernels),
           "PYTHONPATH": str(ROOT)}
    for name in ("STARVM_JIT", "STARVM_JIT_THRESHOLD", "STARVM_JIT_BACKGROUND", "STARVM_BACKEND"):
        env.pop(name, None)
    row = {"program": program, "graph": graph, "load_before": load_average()}
    try:
        row["first_s"], err = star_run(program, graph, env, timeout=timeout)
        if row["first_s"] is None:
            row["error"] = err.strip()[-300:]
            return row
        t0 = time.monotonic()
        while workers_of(folder) and time.monotonic() - t0 < 600:
            time.sleep(1)
        row["background_wait_s"] = round(time.monotonic() - t0, 1)
        warm = []
        for _ in range(2):
            seconds, err = star_run(program, graph, env, "--profile", timeout=timeout)
            warm.append(seconds)
        row["warm_runs_s"] = warm
        row["compiled_in_warm_run"] = sorted(set(re.findall(r"^  (main block|\S+)(?: \(with [^)]*\))?: compiled;", err, re.M)))
        row["off_s"], _ = star_run(program, graph, env, "--jit", "off", timeout=timeout)
        good = [w for w in warm if w is not None]
        row["warm_s"] = min(good) if good else None
        limit = max(FIRST_RUN_S, OF_WARM * row["warm_s"]) if row["warm_s"] else FIRST_RUN_S
        row["limit_s"] = round(limit, 3)
        row["met"] = row["first_s"] <= limit
        row["load_after"] = load_average()
        return row
    finally:
        if not workers_of(folder):
            shutil.rmtree(folder, ignore_errors=True)


def cpu_run(tree: Path, program: str, graph: str, env: dict, timeout: float) -> tuple[float | None, float | None]:
    """(CPU seconds, wall seconds) of one `star run --jit on` of ``tree``'s starvm, a fresh
    process (None, None: it failed or timed out)."""
    # -P: the tree's starvm (PYTHONPATH), not one in the current folder
    cmd = [sys.executable, "-P", "-m", "starvm", "run", str(tree / "programs" / f"{program}.star"), "--jit", "on"]
    if graph != "bundled":
        cmd += ["--generate", graph]
    before = os.times()
    done = run_process(cmd, env={**env, "PYTHONPATH": str(tree)}, timeout=timeout, keep_stdout=False)
    after = os.times()
    if not done.ok:
        return None, None
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return round(cpu, 2), round(done.seconds, 2)


def measure_kernels(tree: Path, label: str, program: str, graph: str, timeout: float) -> dict:
    """CPU of a --jit on run cold (every cache empty), with starvm's kernels cached, warm."""
    folder = Path(tempfile.mkdtemp(prefix="starvm-first-run-kernels-"))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "numba")}
    for name in ("STARVM_JIT", "STARVM_JIT_THRESHOLD", "STARVM_JIT_BACKGROUND", "STARVM_BACKEND"):
        env.pop(name, None)
    row = {"tree": label, "program": program, "graph": graph, "load_before": load_average()}
    try:
        row["cold_cpu_s"], row["cold_wall_s"] = cpu_run(tree, program, graph, {**env, "STARVM_JIT_CACHE": str(folder / "a")},
                                                        timeout)
        # a second compiled-code cache: the routines compile again, starvm's kernels load
        row["kernels_cached_cpu_s"], row["kernels_cached_wall_s"] = cpu_run(
            tree, program, graph, {**env, "STARVM_JIT_CACHE": str(folder / "b")}, timeout)
        row["warm_cpu_s"], row["warm_wall_s"] = cpu_run(tree, program, graph, {**env, "STARVM_JIT_CACHE": str(folder / "b")},
                                                        timeout)
        if row["cold_cpu_s"] is not None and row["kernels_cached_cpu_s"] is not None:
            row["kernels_cpu_s"] = round(row["cold_cpu_s"] - row["kernels_cached_cpu_s"], 2)
        row["load_after"] = load_average()
        return row
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def kernels_markdown(doc: dict) -> list[str]:
    fmt = lambda x: "—" if x is None else f"{x:.2f}"  # noqa: E731
    lines = [doc["method"], "", "| tree | program | graph | cold CPU s | kernels cached CPU s | starvm's kernels CPU s | "
             "warm CPU s | cold wall s | load |", "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        lines.append(f"| {r['tree']} | {r['program']} | {r['graph']} | {fmt(r.get('cold_cpu_s'))} | "
                     f"{fmt(r.get('kernels_cached_cpu_s'))} | {fmt(r.get('kernels_cpu_s'))} | {fmt(r.get('warm_cpu_s'))} | "
                     f"{fmt(r.get('cold_wall_s'))} | {_load(r['load_before'])}-{_load(r.get('load_after', r['load_before']))} |")
    return lines


def _load(x: float | None) -> str:
    return "?" if x is None else f"{x:.1f}"


def markdown(doc: dict) -> list[str]:
    """The Markdown body (the harness's write_results puts the header above it)."""
    lines = [doc["method"], "", "| program | graph | first run s | warm run s | --jit off s | limit s | met | "
              "compiled when warm | load |", "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        if r.get("first_s") is None:
            lines.append(f"| {r['program']} | {r['graph']} | failed: {r.get('error', '')[:80]} | | | | | | |")
            continue
        fmt = lambda x: "—" if x is None else f"{x:.2f}"  # noqa: E731
        lines.append(f"| {r['program']} | {r['graph']} | {fmt(r['first_s'])} | {fmt(r.get('warm_s'))} | "
                     f"{fmt(r.get('off_s'))} | {r.get('limit_s', '')} | {'✓' if r.get('met') else '✗'} | "
                     f"{', '.join(r.get('compiled_in_warm_run', [])) or '—'} | "
                     f"{_load(r['load_before'])}-{_load(r.get('load_after', r['load_before']))} |")
    met = [r for r in doc["results"] if r.get("met")]
    lines += ["", f"{len(met)} of {len(doc['results'])} cases meet the target (first run <= {FIRST_RUN_S:g} s "
              f"or <= {OF_WARM:g}x the warm run)."]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--graphs", default=";".join(GRAPHS), help="';'-separated: bundled or a --generate SPEC")
    ap.add_argument("--out", default=f"first_run_cpu{os.cpu_count()}")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one run may take")
    ap.add_argument("--kernels", action="store_true", help="the CPU a first --jit on run spends compiling "
                    "starvm's kernels and the program's routines (see above)")
    ap.add_argument("--tree", action="append", default=[], metavar="PATH=LABEL",
                    help="with --kernels: a checkout whose starvm runs (default: this one)")
    args = ap.parse_args(argv)
    if args.kernels:
        return main_kernels(args)
    out = ROOT / "bench" / "results" / args.out
    doc = document("first run", "The first `star run` of each shipped program, every cache empty",
                   method="Each case in a fresh cache folder (STARVM_JIT_CACHE; Numba's cache of starvm's "
                          "kernels empty at the start and shared by the cases), --jit auto: the first run (wall time of the "
                          "process), then, once the background compiles it started had ended, two warm runs "
                          "(the faster one counts) and one --jit off run. Target: first <= 3 s or <= 1.5x warm. "
                          "The host is shared with other developers' work: the load average is beside each case.",
                   results=[])
    kernels = Path(tempfile.mkdtemp(prefix="starvm-first-run-numba-"))
    for program in args.programs.split(","):
        for graph in args.graphs.split(";"):
            row = measure(program, graph, args.timeout, kernels)
            doc["results"].append(row)
            print(row, flush=True)
            write_results(doc, out.with_suffix(".json"), markdown(doc))
    return 0


def main_kernels(args) -> int:
    out = ROOT / "bench" / "results" / (args.out if args.out != f"first_run_cpu{os.cpu_count()}"
                                         else f"first_run_kernels_cpu{os.cpu_count()}")
    trees = [(Path(t.partition("=")[0]).resolve(), t.partition("=")[2] or t) for t in args.tree] or [(ROOT, "this")]
    doc = document("first run kernels", "What compiling costs a first `star run --jit on`: starvm's kernels and the routines",
                   method="Per program and checkout, three `star run --jit on` processes, their CPU time (user + system): "
                          "cold (the compiled-code cache and Numba's cache of starvm's kernels empty), then in a second "
                          "empty compiled-code cache with the kernels in Numba's cache (the routines compile again), then "
                          "warm. The kernels' share is the difference of the first two. Checkouts interleaved program by "
                          "program. The host is shared with other developers' work: the load average is beside each case.",
                   results=[])
    for program in args.programs.split(","):
        for graph in args.graphs.split(";"):
            for tree, label in trees:
                row = measure_kernels(tree, label, program, graph, args.timeout)
                doc["results"].append(row)
                print(row, flush=True)
                write_results(doc, out.with_suffix(".json"), kernels_markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
