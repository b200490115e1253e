"""Building the L/R/W tables of R-MAT graphs (issue 13: tables straight from integer codes).

    python3 bench/bench_graph_build.py                                  # NumPy, scales 14-20
    python3 bench/bench_graph_build.py --quick                          # scales 8-10, seconds
    python3 bench/bench_graph_build.py --backend cupy --scales 18-22 --gpu-generate \\
        --old-scales 18 --out bench/results/graph_build_h100            # on the GPU host
    python3 bench/bench_graph_build.py --scales 14,16,18 --old-scales none --e2e --profile \\
        --before /tmp/starvm-before --out bench/results/graph_input_cpu2  # whole star runs too
        # (and bench/results/graph_input_cpu2_profile.txt)

For each scale: the R-MAT graph (a, b, c, d = .57, .19, .19, .05, edge factor 16, seed 2015,
undirected, weights 1..100; the bench_stdlib graphs) is generated (timed apart: NumPy, or CuPy
with --gpu-generate, whose random stream differs), then a Star program fills its arc tables

    var L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_WBITS);
    begin GRAPH_EDGES(L, R, W) end.

(the tables' allocation and the fill: what a program pays before BORUVKA runs). ``new`` is
that run (the codes written into the packed words, backends/codes.py); ``old`` (at
--old-scales only) is the path before: ``Graph.edges_bits`` m x k bool arrays handed to
``Machine.table``. Time is wall time with the backend synchronised; host memory is the peak
that tracemalloc sees during the build (NumPy reports its buffers to it) above what was
allocated before, measured in a second run so that tracing does not slow the timed one; it
is compared with the packed tables plus the edge list (3 int64 arrays of m), the issue's
bound being 2x that. ``undirected`` times the undirected reading (Graph.undirected) of the
generated graph, which knows it holds both arcs of every edge, and ``undirected (sort)`` that
of the same arcs without that knowledge (a graph read from a file: one sort of the arcs).

--e2e (issue 31: start-up and graph input are most of a `star run` of the shipped programs)
also times whole `python -m starvm run` processes, start to exit, the median of --repeat after
one warm-up: the program above with GRAPH_READING('undirected') and writeln(GRAPH_M) on
``--generate rmat:scale=S,ef=16,seed=2015`` (start-up, generation, the undirected reading and
the tables; --jit off, --backend as given), and once a one-line program (start-up alone). The
processes write bytecode (into a temporary PYTHONPYCACHEPREFIX) and keep the parser tables
(STARVM_JIT_CACHE), as an installed starvm does. --before DIR times the same processes with
another checkout's starvm first on PYTHONPATH (the code before a change, e.g. a
`git worktree add DIR REV`); --profile runs the largest scale once more under cProfile in each
(<out>_profile.txt). Results: <out>.json and <out>.md, rewritten after every row.
"""
from __future__ import annotations

import argparse
import gc
import io
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import numpy as np  # noqa: E402

import starvm  # noqa: E402
from starvm.benchmarking import clock, device_info, document, machine_info, run_process, write_results  # noqa: E402
from starvm.graphs import rmat  # noqa: E402
from starvm.graphs.graph import Graph  # noqa: E402

SEED = 2015
RMAT = dict(edge_factor=16, a=0.57, b=0.19, c=0.19, d=0.05)
PROGRAM = """
var L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_WBITS);
begin GRAPH_EDGES(L, R, W) end.
"""
# what --e2e runs whole: the shipped programs' graph input, and a program that reads nothing
READ_PROGRAM = """program read_graph;
var L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_WBITS);
begin GRAPH_READING('undirected'); GRAPH_EDGES(L, R, W); writeln(GRAPH_M) end.
"""
EMPTY_PROGRAM = "program start; begin writeln(1) end.\n"


def scales(text: str) -> list[int]:
    """'14-20' | '14,16' | 'none' -> sorted scales."""
    if text.strip().lower() in ("", "none"):
        return []
    out = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return sorted(set(out))


def build_new(backend: str, g):
    m = starvm.Machine(backend=backend, out=io.StringIO(), graph=g)
    m.run(PROGRAM)
    m.backend.synchronize()
    return m


def build_old(backend: str, g):
    m = starvm.Machine(backend=backend, out=io.StringIO(), graph=g)
    tables = [m.table(b) for b in g.edges_bits(g.vbits, g.wbits)]
    m.backend.synchronize()
    return m, tables


def timed(fn):
    """(fn()'s result, its seconds after a garbage collection; fn synchronises its backend)."""
    box = []
    secs = clock(lambda: box.append(fn()), collect=True)
    return box[0], secs


def host_peak(fn) -> int:
    """Bytes allocated at the peak of fn() above what was allocated before it (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del out
    return peak


def sizes(g) -> tuple[int, int]:
    """(bytes of the packed L, R, W tables, bytes of the edge list: src, dst, weight int64)."""
    words = (g.m + 63) // 64
    return (2 * g.vbits + g.wbits) * words * 8, 3 * g.m * 8


class StarRuns:
    """Whole `python -m starvm run` processes, timed start to exit (--e2e)."""

    def __init__(self, backend: str, repeat: int, before: str | None):
        self.backend, self.repeat = backend, repeat
        self.folder = Path(tempfile.mkdtemp(prefix="bench-graph-input-"))
        (self.folder / "read.star").write_text(READ_PROGRAM)
        (self.folder / "start.star").write_text(EMPTY_PROGRAM)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(self.folder / "pyc")
        # this checkout's starvm, whether installed or not (the runs start in self.folder)
        path = [str(ROOT)] + [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        self.envs = {"now": dict(env, PYTHONPATH=os.pathsep.join(path))}
        if before:
            self.envs["before"] = dict(env, PYTHONPATH=os.pathsep.join([os.path.abspath(before)] + path))

    def seconds(self, which: str, program: str, *args: str) -> tuple[float, float]:
        """The median wall and CPU (user + system) seconds of --repeat runs after one warm-up; a
        failed run stops the bench. CPU time says more than wall time on a loaded host."""
        cmd = [sys.executable, "-m", "starvm", "run", str(self.folder / program), "--jit", "off",
               "--backend", self.backend, *args]
        wall, cpu = [], []
        for i in range(self.repeat + 1):
            here = os.getcwd()
            os.chdir(self.folder)         # `python -m` looks in the working folder first: not a checkout's
            try:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                run = run_process(cmd, env=self.envs[which], timeout=600)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
            finally:
                os.chdir(here)
            if run.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} ({which}) failed: {run.stderr.strip()[-2000:]}")
            if i:
                wall.append(run.seconds)
                cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        return statistics.median(wall), statistics.median(cpu)

    def row(self, scale: int) -> dict:
        spec = f"rmat:scale={scale},ef={RMAT['edge_factor']},seed={SEED}"
        out = {}
        for w in self.envs:
            out[f"star_run_{w}_s"], out[f"star_run_{w}_cpu_s"] = self.seconds(w, "read.star", "--generate", spec)
        return out

    def profile(self, scale: int, out: Path) -> None:
        """--profile: one run reading the graph of ``scale`` under cProfile in each checkout, the
        functions taking the most time (own and with callees) written to ``out``."""
        import pstats
        spec = f"rmat:scale={scale},ef={RMAT['edge_factor']},seed={SEED}"
        parts = []
        for w in self.envs:
            stats = self.folder / f"{w}.prof"
            cmd = [sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "starvm", "run",
                   str(self.folder / "read.star"), "--jit", "off", "--backend", self.backend, "--generate", spec]
            here = os.getcwd()
            os.chdir(self.folder)
            try:
                run = run_process(cmd, env=self.envs[w], timeout=900)
            finally:
                os.chdir(here)
            if run.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} ({w}) failed: {run.stderr.strip()[-2000:]}")
            for key in ("cumulative", "tottime"):
                text = io.StringIO()
                pstats.Stats(str(stats), stream=text).sort_stats(key).print_stats(25)
                body = text.getvalue()
                body = body[body.index("   ncalls"):] if "   ncalls" in body else body
                parts.append(f"== {w}: star run --generate {spec} under cProfile, {run.seconds:.2f} s wall, "
                             f"by {key} ==\n{body.rstrip()}\n")
        out.write_text("\n".join(parts))

    def startup(self) -> dict:
        out = {}
        for w in self.envs:
            out[f"startup_{w}_s"], out[f"startup_{w}_cpu_s"] = self.seconds(w, "start.star")
        return out


def machine_text(machine: dict) -> str:
    return f"{platform.machine()}, {machine['cpu_count']} CPUs, Python {machine['python']}, NumPy {machine['numpy']}"


def write(doc: dict, out: Path) -> None:
    """<out>.json (the harness's header, then meta and rows) and <out>.md."""
    meta, rows = doc["meta"], doc["rows"]
    mib = 1 << 20
    e2e = [w for w in ("now", "before") if any(f"star_run_{w}_s" in r for r in rows)]
    lines = [f"Command: `{meta['command']}`", ""]
    for w in e2e:
        if meta.get(f"startup_{w}_s") is not None:
            lines += [f"Start-up ({w}: `star run` of a one-line program, --jit off): "
                      f"{meta[f'startup_{w}_s']:.2f} s wall, {meta[f'startup_{w}_cpu_s']:.2f} s CPU", ""]
    lines += ["| scale | vertices | arcs | generate s | undirected s | undirected (sort) s | build s (new) | "
              "build s (old) | speedup | peak MiB (new) | peak MiB (old) | tables + edge list MiB | "
              "new peak / (tables + list) |" + "".join(f" star run s ({w}) | CPU s ({w}) |" for w in e2e),
              "| --- " * (13 + 2 * len(e2e)) + "|"]
    for r in rows:
        old_t = f"{r['old_s']:.3f}" if r.get("old_s") is not None else "–"
        speed = f"{r['old_s'] / r['new_s']:.1f}x" if r.get("old_s") is not None else "–"
        old_p = f"{r['old_peak'] / mib:.1f}" if r.get("old_peak") is not None else "–"
        base = r["tables_bytes"] + r["edges_bytes"]
        und = [f"{r[k]:.3f}" if r.get(k) is not None else "–" for k in ("undirected_s", "undirected_sort_s")]
        runs = "".join(f" {r[f'star_run_{w}_s']:.2f} | {r[f'star_run_{w}_cpu_s']:.2f} |"
                       if r.get(f"star_run_{w}_s") is not None else " – | – |" for w in e2e)
        lines.append(f"| {r['scale']} | {r['n']} | {r['m']} | {r['generate_s']:.2f} | {und[0]} | {und[1]} | "
                     f"{r['new_s']:.3f} | {old_t} | {speed} | {r['new_peak'] / mib:.1f} | {old_p} | {base / mib:.1f} | "
                     f"{r['new_peak'] / base:.2f} |{runs}")
    lines += ["", "Build: allocating L, R, W and filling them (GRAPH_EDGES). Peak: tracemalloc's peak during the "
              "build above what was allocated before (the tables themselves included; on a GPU backend the "
              "tables live in device memory and only host temporaries count). Old path: Graph.edges_bits' "
              "m x k bool arrays through Machine.table. Undirected: Graph.undirected() of the generated graph "
              "(it knows it has both arcs of every edge); (sort): of the same arcs as a Graph without that "
              "knowledge."]
    if e2e:
        lines += ["", "Star run: a fresh `python -m starvm run` process, start to exit, median of the runs after a "
                  "warm-up (bytecode and parser tables kept), reading the graph undirected into L, R, W "
                  "(--jit off), wall and CPU (user + system; the steadier figure on a loaded host); 'before': "
                  "the same with --before's checkout on PYTHONPATH."]
    write_results(doc, out.with_suffix(".json"), lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--scales", default="14-20")
    ap.add_argument("--old-scales", default="14-16", help="scales at which the old bool-array path also runs")
    ap.add_argument("--gpu-generate", action="store_true", help="generate R-MAT with CuPy (another random stream)")
    ap.add_argument("--no-memory", action="store_true", help="skip the traced second run")
    ap.add_argument("--quick", action="store_true", help="scales 8-10, old path at 8-9")
    ap.add_argument("--e2e", action="store_true", help="also time whole `star run` processes (start-up, "
                    "generation, the undirected reading, the tables)")
    ap.add_argument("--repeat", type=int, default=3, help="--e2e: timed runs a figure (their median)")
    ap.add_argument("--before", metavar="DIR", help="--e2e: also run another checkout's starvm (PYTHONPATH=DIR)")
    ap.add_argument("--profile", action="store_true", help="--e2e: also profile one run at the largest scale "
                    "(cProfile, each checkout) into <out>_profile.txt")
    ap.add_argument("--out", default=None, help="results path without suffix (default bench/results/graph_build[_BACKEND])")
    args = ap.parse_args(argv)
    if args.quick:
        args.scales, args.old_scales = "8-10", "8-9"
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / \
        ("graph_build" if args.backend == "numpy" else f"graph_build_{args.backend}")
    xp = None
    if args.gpu_generate:
        import cupy
        xp = cupy
    machine = machine_info()
    meta = dict(backend=args.backend, machine=machine_text(machine), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                command="python3 bench/bench_graph_build.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                generator="cupy" if xp is not None else "numpy", rmat=dict(RMAT, seed=SEED))
    old_scales = set(scales(args.old_scales))
    runs = StarRuns(args.backend, args.repeat, args.before) if args.e2e else None
    if runs is not None:
        meta.update(runs.startup())
    warm = build_new(args.backend, rmat(4, seed=SEED, **RMAT))   # warm-up: imports, kernels
    rows = []
    doc = document("graph_build", f"Building R-MAT arc tables (GRAPH_EDGES), backend {args.backend}",
                   machine=machine, device=device_info(warm, gpu=True if xp is not None else None),
                   meta=meta, rows=rows)
    del warm
    for s in scales(args.scales):
        g, t_gen = timed(lambda: rmat(s, seed=SEED, xp=xp, **RMAT))
        if xp is not None:
            xp.cuda.Device().synchronize()
        tables_bytes, edges_bytes = sizes(g)
        row = dict(scale=s, n=g.n, m=g.m, generate_s=t_gen, tables_bytes=tables_bytes, edges_bytes=edges_bytes)
        _, row["undirected_s"] = timed(g.undirected)
        plain = Graph(g.n, g.src, g.dst, g.weight)          # the same arcs, nothing known about them
        _, row["undirected_sort_s"] = timed(plain.undirected)
        del plain
        m_new, row["new_s"] = timed(lambda: build_new(args.backend, g))
        # the tables agree with the codes (a spot check of rows across the whole table)
        pick = np.unique(np.linspace(0, g.m - 1, 1000).astype(np.int64)) if g.m else np.zeros(0, np.int64)
        for name, codes in (("L", g.src), ("R", g.dst), ("W", g.weight)):
            got = m_new.global_(name).to_ints()
            assert np.array_equal(got[pick], codes[pick].astype(np.uint64)), f"{name} differs at scale {s}"
        del m_new
        row["new_peak"] = None if args.no_memory else host_peak(lambda: build_new(args.backend, g))
        if s in old_scales:
            _, row["old_s"] = timed(lambda: build_old(args.backend, g))
            row["old_peak"] = None if args.no_memory else host_peak(lambda: build_old(args.backend, g))
        if runs is not None:
            row.update(runs.row(s))
        rows.append(row)
        print(json.dumps(row), flush=True)
        if row["new_peak"] is None:
            row["new_peak"] = 0
        write(doc, out)
        del g
    if runs is not None and args.profile and scales(args.scales):
        runs.profile(max(scales(args.scales)), out.with_name(out.name + "_profile.txt"))
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
