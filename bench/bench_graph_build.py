"""Building the L/R/W tables of R-MAT graphs (issue 13: tables straight from integer codes).

    python3 bench/bench_graph_build.py                                  # NumPy, scales 14-20
    python3 bench/bench_graph_build.py --quick                          # scales 8-10, seconds
    python3 bench/bench_graph_build.py --backend cupy --scales 18-22 --gpu-generate \\
        --old-scales 18 --out bench/results/graph_build_h100            # on the GPU host

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
bound being 2x that. Results: <out>.json and <out>.md, rewritten after every row.
"""
from __future__ import annotations

import argparse
import gc
import io
import json
import platform
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import numpy as np  # noqa: E402

import starvm  # noqa: E402
from starvm.benchmarking import clock, device_info, document, machine_info, write_results  # noqa: E402
from starvm.graphs import rmat  # noqa: E402

SEED = 2015
RMAT = dict(edge_factor=16, a=0.57, b=0.19, c=0.19, d=0.05)
PROGRAM = """
var L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_WBITS);
begin GRAPH_EDGES(L, R, W) end.
"""


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


def machine_text(machine: dict) -> str:
    return f"{platform.machine()}, {machine['cpu_count']} CPUs, Python {machine['python']}, NumPy {machine['numpy']}"


def write(doc: dict, out: Path) -> None:
    """<out>.json (the harness's header, then meta and rows) and <out>.md."""
    meta, rows = doc["meta"], doc["rows"]
    mib = 1 << 20
    lines = [f"Command: `{meta['command']}`", "",
             "| scale | vertices | arcs | generate s | build s (new) | build s (old) | speedup | "
             "peak MiB (new) | peak MiB (old) | tables + edge list MiB | new peak / (tables + list) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        old_t = f"{r['old_s']:.3f}" if r.get("old_s") is not None else "–"
        speed = f"{r['old_s'] / r['new_s']:.1f}x" if r.get("old_s") is not None else "–"
        old_p = f"{r['old_peak'] / mib:.1f}" if r.get("old_peak") is not None else "–"
        base = r["tables_bytes"] + r["edges_bytes"]
        lines.append(f"| {r['scale']} | {r['n']} | {r['m']} | {r['generate_s']:.2f} | {r['new_s']:.3f} | {old_t} | "
                     f"{speed} | {r['new_peak'] / mib:.1f} | {old_p} | {base / mib:.1f} | {r['new_peak'] / base:.2f} |")
    lines += ["", "Build: allocating L, R, W and filling them (GRAPH_EDGES). Peak: tracemalloc's peak during the "
              "build above what was allocated before (the tables themselves included; on a GPU backend the "
              "tables live in device memory and only host temporaries count). Old path: Graph.edges_bits' "
              "m x k bool arrays through Machine.table."]
    write_results(doc, out.with_suffix(".json"), lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--scales", default="14-20")
    ap.add_argument("--old-scales", default="14-16", help="scales at which the old bool-array path also runs")
    ap.add_argument("--gpu-generate", action="store_true", help="generate R-MAT with CuPy (another random stream)")
    ap.add_argument("--no-memory", action="store_true", help="skip the traced second run")
    ap.add_argument("--quick", action="store_true", help="scales 8-10, old path at 8-9")
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
        rows.append(row)
        print(json.dumps(row), flush=True)
        if row["new_peak"] is None:
            row["new_peak"] = 0
        write(doc, out)
        del g
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
