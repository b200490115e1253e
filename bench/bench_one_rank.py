"""One rank costs nothing (issue 33, item 2): `mpiexec -n 1 ... --distributed` against the plain
machine, on one GPU (or the CPU), in the same run.

    python3 bench/bench_one_rank.py --backend numpy --scale 10 --min-log2 20 --runs 2 --name cpu2   # this host
    # on the device machine (one GPU), after the .whl set-up of bench/bench_scale.py's docstring:
    python3 bench/bench_one_rank.py --backend cupy --scale 18 --min-log2 28 --runs 3 --name h200 --results-dir $OUT --timeout 560

Two workloads, each timed both ways, alternately (plain, one rank, plain, ...), after one untimed
run each way (the caches: CuPy's kernels, Numba's, the GPU tier's modules):

  programs  `star run programs/P.star --generate rmat:scale=S,seed=2015` as a fresh process,
            timed whole (what a user waits for), for P in --programs (mst_boruvka, bfs_adapt);
            plain: `python -m starvm run ...`; one rank: `mpiexec -n 1 python -m starvm run ...
            --distributed`. Both print the same lines (checked), and the one-rank run's
            --profile must say it ran as the plain machine ("1 rank: the plain ... machine").
  min       MIN (stdlib/search.star) over 2^--min-log2 rows x 32 bits in one process: a worker
            (this script, --min-worker) makes the table, calls MIN once untimed and then
            --min-runs times, and reports the median call; plain: a Python process; one rank:
            the same under `mpiexec -n 1` with Machine(comm=MPI.COMM_WORLD). The count and
            first row are checked against NumPy.

The target: one rank within 1.1x of the plain machine (ratio = one rank / plain, medians).
Results: bench/results/one_rank_<name>.{json,md} (--results-dir: another folder).

mpiexec is the one beside this Python (a venv with the mpich wheel), else on PATH (the device
machine's /tmp/site/bin from the carried .whl/ wheels).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from starvm.benchmarking import clock, device_info, document, machine_info, run_process, write_results

ROOT = Path(__file__).resolve().parent.parent
SEED = 2015


def mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else (shutil.which("mpiexec") or "mpiexec")


def splitmix(x: np.ndarray) -> np.ndarray:
    """A counter-based hash (bench_scale.py's): row i's value whatever makes it."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


# ------------------------------------------------------------------ the MIN worker (one process)
def min_worker(args) -> None:
    """MIN over 2^log2 rows x 32 bits; prints one JSON line: the call's times, the check, the
    backend the machine ran on (and its --profile line of the ranks)."""
    import starvm
    from starvm.execution.values import Bits
    comm = None
    if args.distributed:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    m = starvm.Machine(backend=args.backend, comm=comm, out=open(os.devnull, "w"), jit=args.jit)
    B = m.backend
    n = 1 << args.min_log2
    vals = splitmix(np.arange(n)) >> np.uint64(32)
    T = m.table(rows=n, cols=32)
    B.table_set_ints(T, vals)
    gmin = int(vals.min())
    cnt, first = int((vals == gmin).sum()), int(np.argmax(vals == gmin))
    X = Bits(B.ones(n), n)

    def call():
        Z = Bits(B.zeros(n), n)
        m.call("MIN", T, X, Z)
        return Z
    Z = call()                       # untimed: the memory pool's blocks, the kernels' first launch
    times = [clock(call, B.synchronize) for _ in range(args.min_runs)]
    ok = B.numb(Z.v) == cnt and B.fnd(Z.v) == first + 1
    lines = m.profile_report().splitlines()
    print(json.dumps({"times_s": times, "median_s": statistics.median(times), "ok": bool(ok),
                      "backend": B.name, "native_calls": m.native_timing[0],
                      "ranks": [line for line in lines if "rank" in line]}))


def run_min(args, one_rank: bool, env) -> dict:
    cmd = [sys.executable, __file__, "--min-worker", "--backend", args.backend, "--min-log2", str(args.min_log2),
           "--min-runs", str(args.min_runs), "--jit", args.jit]
    if one_rank:
        cmd = [mpiexec(), "-n", "1", *cmd, "--distributed"]
    run = run_process(cmd, env=env, timeout=args.timeout)
    if run.returncode != 0 or run.seconds is None:
        return {"error": (run.stderr or "")[-2000:], "command": " ".join(cmd)}
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "command": " ".join(cmd)}


# ------------------------------------------------------------------ star run, end to end
def program_command(args, program: str, one_rank: bool, profile: bool = False) -> list[str]:
    cmd = [sys.executable, "-m", "starvm", "run", f"programs/{program}.star", "--backend", args.backend,
           "--generate", f"rmat:scale={args.scale},seed={SEED}", "--jit", args.jit]
    if profile:
        cmd.append("--profile")
    if one_rank:
        cmd = [mpiexec(), "-n", "1", *cmd, "--distributed"]
    return cmd


def run_program(args, program: str, env) -> dict:
    """Both ways, alternately, after one untimed run each (whose --profile is kept)."""
    out = {"plain": {"times_s": []}, "one_rank": {"times_s": []}}
    for way in ("plain", "one_rank"):
        warm = run_process(program_command(args, program, way == "one_rank", profile=True), env=env,
                           timeout=args.timeout)
        out[way]["warm_s"] = warm.seconds
        out[way]["command"] = " ".join(program_command(args, program, way == "one_rank"))
        out[way]["profile_tail"] = (warm.stderr or "").splitlines()[-40:]
        if warm.returncode != 0 or warm.seconds is None:
            out[way]["error"] = (warm.stderr or "")[-2000:]
            return out
        out[way]["stdout"] = warm.stdout
    for _ in range(args.runs):
        for way in ("plain", "one_rank"):
            run = run_process(program_command(args, program, way == "one_rank"), env=env, timeout=args.timeout)
            if run.returncode != 0 or run.seconds is None:
                out[way]["error"] = (run.stderr or "")[-2000:]
                return out
            out[way]["times_s"].append(run.seconds)
            out[way]["same_output"] = out[way].get("same_output", True) and run.stdout == out["plain"]["stdout"]
    for way in ("plain", "one_rank"):
        out[way]["median_s"] = statistics.median(out[way]["times_s"])
    out["same_output"] = out["plain"]["stdout"] == out["one_rank"]["stdout"] and all(
        out[w].get("same_output", False) for w in ("plain", "one_rank"))
    out["one_rank_is_plain"] = any("1 rank: the plain" in line for line in out["one_rank"]["profile_tail"])
    out["ratio"] = out["one_rank"]["median_s"] / out["plain"]["median_s"]
    for way in ("plain", "one_rank"):
        out[way]["stdout_lines"] = out[way].pop("stdout").splitlines()[:20]
    return out


# ------------------------------------------------------------------ the driver
def markdown(doc: dict) -> list[str]:
    lines = ["", f"{doc['mpi']}; --jit {doc['params']['jit']}; medians of {doc['params']['runs']} runs "
             f"(MIN: of {doc['params']['min_runs']} calls); target: one rank within 1.1x of the plain machine.", "",
             "| workload | plain, s | mpiexec -n 1 --distributed, s | ratio | same output | one rank ran as plain |",
             "| --- | ---: | ---: | ---: | --- | --- |"]
    for name, r in doc["results"].items():
        if "error" in r.get("plain", {}) or "error" in r.get("one_rank", {}) or "error" in r:
            lines.append(f"| {name} | error | error | | | |")
            continue
        if name.startswith("min"):
            ratio = r["one_rank"]["median_s"] / r["plain"]["median_s"]
            lines.append(f"| {name} | {r['plain']['median_s']:.6f} | {r['one_rank']['median_s']:.6f} | {ratio:.3f} | "
                         f"{r['plain']['ok'] and r['one_rank']['ok']} | "
                         f"{any('1 rank: the plain' in x for x in r['one_rank']['ranks'])} |")
        else:
            lines.append(f"| {name} | {r['plain']['median_s']:.2f} | {r['one_rank']['median_s']:.2f} | {r['ratio']:.3f} | "
                         f"{r['same_output']} | {r['one_rank_is_plain']} |")
    return lines


def mpi_version() -> str:
    try:
        from mpi4py import MPI
        return MPI.Get_library_version().splitlines()[0].strip()
    except Exception as e:  # noqa: BLE001
        return f"MPI unknown ({e})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="cupy", help="numpy, cupy or auto (default cupy)")
    ap.add_argument("--jit", default="auto", help="the compiled tier of every run (default auto)")
    ap.add_argument("--programs", default="mst_boruvka,bfs_adapt")
    ap.add_argument("--scale", type=int, default=18, help="R-MAT scale of the programs' graph (default 18)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each program each way (default 3)")
    ap.add_argument("--min-log2", type=int, default=28, help="MIN over 2^this rows (0: no MIN; default 28)")
    ap.add_argument("--min-runs", type=int, default=50, help="timed MIN calls per process (default 50)")
    ap.add_argument("--timeout", type=float, default=560, help="seconds per process (default 560)")
    ap.add_argument("--name", default="cpu2")
    ap.add_argument("--results-dir", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--min-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--distributed", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.min_worker:
        min_worker(args)
        return 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    results = {}
    if args.min_log2:
        results[f"min_2^{args.min_log2}x32"] = {"plain": run_min(args, False, env), "one_rank": run_min(args, True, env)}
        print(json.dumps({k: v.get("median_s") for k, v in results[f"min_2^{args.min_log2}x32"].items()}), flush=True)
    for program in filter(None, args.programs.split(",")):
        results[f"{program}_rmat{args.scale}"] = r = run_program(args, program, env)
        print(program, r.get("ratio"), flush=True)
    machine = machine_info(("mpi4py", "cupy"))
    doc = document(f"one_rank_{args.name}", f"One rank against the plain machine ({args.backend} backend, "
                   f"{platform.node()})", machine=machine, device=device_info(gpu=args.backend != "numpy"),
                   params={"backend": args.backend, "jit": args.jit, "scale": args.scale, "runs": args.runs,
                           "min_log2": args.min_log2, "min_runs": args.min_runs, "programs": args.programs},
                   mpi=mpi_version(), results=results)
    out = Path(args.results_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_results(doc, out / f"one_rank_{args.name}.json", markdown(doc))
    bad = [k for k, r in results.items() if "error" in r.get("plain", {}) or "error" in r.get("one_rank", {})
           or r.get("same_output") is False or (k.startswith("min") and not (r["plain"]["ok"] and r["one_rank"]["ok"]))]
    if bad:
        print("failed or differing:", ", ".join(bad), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
