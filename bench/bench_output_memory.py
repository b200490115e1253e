"""Peak memory of a routine that writes many lines, compiled against interpreted (issue 36, item 3:
"memory stays bounded, within 2x the interpreter's peak for any amount of output").

    nice python bench/bench_output_memory.py [--lines 0,1000000,10000000] [--tiers off,on,auto] [--out NAME]

Each case is a fresh `star run --jit TIER` (a subprocess) of one procedure writing N lines
(`for k := 1 to m do writeln('line ', k, ' of ', m)`, m = N given by the main block), its
standard output a pipe this script reads to the end (counting the lines: every one must
arrive); the process's peak resident memory (its rusage's ru_maxrss, from os.wait4) and wall
time are recorded. The compiled-code cache is a fresh folder, filled first by an untimed run
of each file under --max-steps 100 (it compiles, then stops), so the measured runs load their
code: the figures are the run's, not Numba's compiler's (the cold run's peak is given apart).
Results: bench/results/NAME.json and .md (default output_memory_cpu<cores>).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from starvm.benchmarking import document, load_average, write_results

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = """proc talk(m: integer);
var k: integer;
begin
  for k := 1 to m do writeln('line ', k, ' of ', m)
end;
begin
  talk({lines})
end.
"""


def star_run(path: Path, tier: str, env: dict, *extra: str) -> dict:
    """One `star run` of ``path``: peak RSS (KiB), wall seconds, exit status, lines read."""
    cmd = [sys.executable, "-m", "starvm", "run", "--jit", tier, str(path), *extra]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    lines = 0
    while chunk := proc.stdout.read(1 << 20):
        lines += chunk.count(b"\n")
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return dict(rss_kib=usage.ru_maxrss, seconds=round(time.perf_counter() - t0, 2),
                rc=proc.returncode, lines=lines)


def import_peak(module: str, env: dict) -> int:
    """Peak RSS (KiB) of a Python that imports ``module`` and exits: the fixed part of a run."""
    proc = subprocess.Popen([sys.executable, "-c", f"import {module}"], env=env)
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", default="0,1000000,10000000")
    ap.add_argument("--tiers", default="off,on,auto")
    ap.add_argument("--out", default=f"output_memory_cpu{os.cpu_count()}")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.lines.split(",")]
    tiers = args.tiers.split(",")
    folder = Path(tempfile.mkdtemp(prefix="starvm-output-memory-"))
    env = {**os.environ, "STARVM_JIT_CACHE": str(folder / "jit"), "PYTHONPATH": str(ROOT)}
    for name in ("STARVM_JIT", "STARVM_BACKEND", "STARVM_JIT_THRESHOLD"):
        env.pop(name, None)
    cases = []
    imports = {m: import_peak(m, env) for m in ("sys", "starvm", "numba")}
    out = ROOT / "bench" / "results" / f"{args.out}.json"

    def save():
        doc = document("output memory", "Peak memory of a routine writing N lines: compiled against interpreted",
                       lines=sizes, tiers=tiers, cases=cases, import_rss_kib=imports,
                       method="A fresh `star run --jit TIER` per case (numpy backend), stdout a pipe read to the end; "
                              "peak RSS from the child's rusage (os.wait4); compiled code loaded from a cache filled "
                              "by an untimed --max-steps 100 run of the same file (its peak: cold_rss_kib).")
        write_results(doc, out, markdown(doc))

    for n in sizes:
        path = folder / f"talk{n}.star"
        path.write_text(PROGRAM.format(lines=n))
        cold = {t: star_run(path, t, env, "--max-steps", "100") for t in tiers if t != "off"}
        for tier in tiers:
            run = star_run(path, tier, env)
            run.update(lines_asked=n, tier=tier, load=load_average(),
                       cold_rss_kib=cold[tier]["rss_kib"] if tier in cold else None)
            if run["rc"] != 0 or run["lines"] != n:
                run["problem"] = f"exit {run['rc']}, {run['lines']} lines of {n}"
            cases.append(run)
            print(run, flush=True)
            save()
    return 1 if any("problem" in c for c in cases) else 0


def markdown(doc: dict) -> list[str]:
    cases = doc["cases"]
    off = {c["lines_asked"]: c for c in cases if c["tier"] == "off"}
    lines = [doc["method"], "",
             "| lines | tier | peak RSS MiB | of --jit off's | growth over 0 lines MiB | seconds | cold run's peak MiB | load |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    base = {c["tier"]: c["rss_kib"] for c in cases if c["lines_asked"] == 0}
    for c in cases:
        ref = off.get(c["lines_asked"])
        ratio = f"{c['rss_kib'] / ref['rss_kib']:.2f}x" if ref else ""
        growth = f"{(c['rss_kib'] - base[c['tier']]) / 1024:.1f}" if c["tier"] in base else ""
        cold = f"{c['cold_rss_kib'] / 1024:.1f}" if c.get("cold_rss_kib") else ""
        lines.append(f"| {c['lines_asked']} | {c['tier']} | {c['rss_kib'] / 1024:.1f} | {ratio} | {growth} | "
                     f"{c['seconds']} | {cold} | {c['load']} |" + (f" {c['problem']}" if "problem" in c else ""))
    imports = doc["import_rss_kib"]
    lines += ["", "The fixed part, a Python that only imports (peak RSS MiB): "
              + ", ".join(f"`import {m}` {kib / 1024:.1f}" for m, kib in imports.items())
              + " (Numba loads LLVM: the compiled tier's cost however little the program writes)."]
    return lines


if __name__ == "__main__":
    sys.exit(main())
