"""--jit auto against --jit on with a warm cache (issue 32): a routine whose compiled code is in
the disk cache runs compiled from its first call on auto, so a run on auto costs what one on
--jit on costs. Workload: the COL/or/COL loop (bench/bench_compiled.py's COLLOOP, 20 000
iterations on a 5000-row table), the whole `star run` process timed, and the routine's
compiled time and load from --profile.

    python bench/bench_auto_warm.py [--runs 5] [--out NAME]

The cache of each mode is warmed first: `star compile` for auto (what auto compiles) and one
`star run --jit on` (--jit on compiles every routine, a module of its own). Writes
bench/results/NAME.json and NAME.md (default auto_warm_cpu<cores>).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

from bench.bench_compiled import COLLOOP
from starvm.benchmarking import Timing, document, load_average, run_process, write_results

ROOT = Path(__file__).resolve().parents[1]

N, REPS = 5000, 20000
PROGRAM = COLLOOP + f"""
var P: table({N}, 8); X: slice(P);
begin
  X := COL(1, P); X(1) := 1; X({N}) := 1; COL(1, P) := X;
  MY_COLLOOP({REPS}, 3, P);
  writeln(NUMB(COL(3, P)))
end.
"""
TARGET = 2.0


def star(*args, env) -> tuple[float, str]:
    """Seconds of one fresh `python -m starvm ARGS` process, timed whole, and its stderr."""
    done = run_process([sys.executable, "-m", "starvm", *args], env=env, timeout=600)
    if not done.ok:
        raise RuntimeError(done.stderr)
    return done.seconds, done.stderr


def routine_line(stderr: str) -> dict:
    # --jit on compiles the main block too, with MY_COLLOOP inside it
    found = re.search(r"(?:MY_COLLOOP|main block \(with MY_COLLOOP\)): compiled;(?: (?P<how>from the disk cache[^;]*|"
                      r"compiled in the background[^;]*);)? \d+ call\(s\) ran compiled in (?P<run>[\d.]+) s \(compiling or "
                      r"loading it from the cache: (?P<load>[\d.]+) s\)", stderr)
    if not found:
        return {"compiled": False}
    return {"compiled": True, "how": found["how"] or "compiled in this run", "call_s": float(found["run"]),
            "load_s": float(found["load"])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=f"auto_warm_cpu{os.cpu_count()}")
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="starvm-auto-warm-"))
    program = folder / "colloop.star"
    program.write_text(PROGRAM)
    env = {**os.environ, "STARVM_JIT_CACHE": str(folder / "jit"), "PYTHONPATH": str(ROOT)}
    for name in ("STARVM_JIT", "STARVM_JIT_THRESHOLD", "STARVM_JIT_BACKGROUND"):
        env.pop(name, None)
    star("compile", str(program), env=env)
    star("run", str(program), "--jit", "on", env=env)
    rows = {"on": [], "auto": []}
    for _ in range(args.runs):           # alternating, so that a change of the host's load hits both
        for mode in ("on", "auto"):
            seconds, stderr = star("run", str(program), "--jit", mode, "--profile", env=env)
            rows[mode].append({"process_s": seconds, "load": load_average(), **routine_line(stderr)})
    med = {m: Timing([r["process_s"] for r in rs]).median_s for m, rs in rows.items()}
    doc, lines = report(rows, med)
    write_results(doc, ROOT / "bench" / "results" / f"{args.out}.json", lines)
    print("\n".join(lines))
    return 0


def report(rows: dict, med: dict) -> tuple[dict, list[str]]:
    """The results document and its Markdown body (the harness writes both with their header)."""
    ratio = med["auto"] / med["on"]
    doc = document("auto warm", "--jit auto against --jit on with a warm cache: the COL/or/COL loop",
                   method=f"COLLOOP ({REPS} iterations, a {N}-row table) in the main block of a program; the "
                          "cache warmed (star compile; one --jit on run); then --runs pairs of fresh "
                          "`star run --profile` processes, --jit on and auto alternating, each process timed whole",
                   n=N, reps=REPS, runs=rows, median_process_s=med, ratio_auto_on=ratio, target_ratio=TARGET,
                   met=ratio <= TARGET, every_auto_run_compiled_from_the_first_call=all(
                       r.get("how") == "from the disk cache at its first call" for r in rows["auto"]))
    lines = [doc["method"], "", "| mode | median process s | runs s | MY_COLLOOP compiled call s |", "|---|---|---|---|"]
    for mode, rs in rows.items():
        runs = ", ".join(f"{r['process_s']:.3f}" for r in rs)
        calls = ", ".join(f"{r.get('call_s', float('nan')):.4f}" for r in rs)
        lines.append(f"| {mode} | {med[mode]:.3f} | {runs} | {calls} |")
    lines += ["", f"auto / on: {ratio:.2f} (target <= {TARGET:g}); every auto run ran MY_COLLOOP from the disk cache "
              f"at its first call: {doc['every_auto_run_compiled_from_the_first_call']}"]
    return doc, lines


if __name__ == "__main__":
    sys.exit(main())
