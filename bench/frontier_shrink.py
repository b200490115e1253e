"""Does frontier shrinking pay for BFS-adapt and BELLMAN_FORD-adapt? (issue 13, item 4)

    python3 bench/frontier_shrink.py [--scales 14-18] [--runs 3] [--backend numpy] [--out PREFIX]

BORUVKA compacts its live arcs between rounds (COMPACT/EXPAND, stdlib/rows.star). This script
runs BFS-adapt and BELLMAN_FORD-adapt with and without shrinking (the variants written in Star
below under user names), on the same R-MAT graphs (the bench_stdlib model: a, b, c, d =
0.57, 0.19, 0.19, 0.05, edge factor 16, seed 2015, weights 1..100, undirected), same inputs,
warm medians; the variants' results must equal the library routines' and SciPy's.

  BFS-adapt    an arc whose tail was in a frontier never leaves one again: each level drops the
               arcs of its frontier, and once at most half the rows are live, left and right are
               COMPACTed to the live arcs and the levels go on there (BFS_LEVELS, BFS_LIVE in
               stdlib/graphs.star). The library does this since the measurement in
               bench/results/stdlib_frontier_shrink_cpu2.md (where the variant was BFS_SHRINK, the
               same code under another name); BFS_WHOLE below is the former body, the "without".
  BF_SHRINK    each round COMPACTs the arcs leaving the changed vertices (ACT) into tables of
               their size and runs the round's GATHERs, ADDT, SETMIN, GROUPMIN and SCATTERs on
               those rows only (BF_SHRINK_ROUND), instead of masked over every arc.

Writes PREFIX.json and PREFIX.md (default bench/results/stdlib_frontier_shrink_cpu2).
"""
from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import starvm  # noqa: E402
from scipy.sparse.csgraph import breadth_first_order, dijkstra  # noqa: E402
from starvm.benchmarking import device_info, document, machine_info, repeat, synchronizer, write_results  # noqa: E402
from starvm.graphs.generators import rmat  # noqa: E402

VARIANTS = r"""
{ BFS-adapt as it was before it shrank: every level over every arc }
proc BFS_WHOLE(n, s: integer; left, right: table; var L: table);
var FT, NT: table(n, 1); AT, ONES: table(NROWS(left), 1);
    F, V, NONE: slice(L); A, ALL: slice(left); d, one: word(L);
begin
  SETINF(L);
  SETINF(ONES);
  CLR(d); CLR(one); one(NCOLS(L)) := 1;
  SET(ALL); CLR(NONE);
  CLR(F); F(s) := 1;
  V := F;
  while SOME(F) do
  begin
    WCOPY(d, F, L);
    COL(1, FT) := F;
    GATHER(FT, left, ALL, AT);
    A := COL(1, AT);
    COL(1, NT) := NONE;
    SCATTER(ONES, right, A, NT);
    F := COL(1, NT) and not V;
    V := V or F;
    d := ADD(d, one);
  end;
end;

proc BF_SHRINK(n, s: integer; left, right, weight: table; var D: table);
var CHT: table(n, 1); CHL: table(NROWS(left), 1);
    ACT, ALL: slice(left); CH, NONE: slice(D); du: word(D); round, a: integer;
begin
  SETINF(D);
  CLR(du);
  ROW(s, D) := du;
  SET(ALL);
  CLR(NONE);
  CLR(CH); CH(s) := 1;
  round := 0;
  while SOME(CH) do
  begin
    if round = n then
      ERROR('BF_SHRINK: distances still change after n rounds');
    round := round + 1;
    COL(1, CHT) := CH;
    GATHER(CHT, left, ALL, CHL);    { the arcs leaving a changed vertex }
    ACT := COL(1, CHL);
    a := NUMB(ACT);
    COL(1, CHT) := NONE;
    if a > 0 then
      BF_SHRINK_ROUND(a, left, right, weight, ACT, D, CHT);
    CH := COL(1, CHT);
  end;
end;

{ one round of BELLMAN_FORD-adapt on the a arcs ACT marks, compacted; CHT gets the changed heads }
proc BF_SHRINK_ROUND(a: integer; left, right, weight: table; ACT: slice(left); var D, CHT: table);
var l, r: table(a, NCOLS(left)); w, DL, SC, DR: table(a, NCOLS(weight)); ONES: table(a, 1);
    X, Z, OV, IMP: slice(l);
begin
  COMPACT(left, ACT, l);
  COMPACT(right, ACT, r);
  COMPACT(weight, ACT, w);
  SET(X);
  SETINF(ONES);
  GATHER(D, l, X, DL);
  ADDT(DL, w, X, SC);
  SETMIN(SC, DL, X, OV);            { SC < DL: the sum overflowed }
  X := X and not OV;
  GROUPMIN(r, SC, X, Z);            { the least candidate into each head }
  GATHER(D, r, Z, DR);
  SETMIN(SC, DR, Z, IMP);
  SCATTER(SC, r, IMP, D);
  SCATTER(ONES, r, IMP, CHT);
end;
"""

# (routine, without shrinking, with shrinking)
PAIRS = (("BFS-adapt", "BFS_WHOLE", "BFS-adapt"), ("BELLMAN_FORD-adapt", "BELLMAN_FORD-adapt", "BF_SHRINK"))


def parse_scales(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def numbers(table) -> np.ndarray:
    bits = np.asarray(table.to_numpy(), dtype=np.uint64)
    return (bits << np.arange(bits.shape[1] - 1, -1, -1, dtype=np.uint64)).sum(axis=1)


def reference(name: str, g) -> np.ndarray:
    csr = g.weight_matrix()
    if name.startswith("BELLMAN"):
        return dijkstra(csr, directed=True, indices=0)
    order, pred = breadth_first_order(csr, 0, directed=True, return_predecessors=True)
    levels = np.full(g.n, -1)
    levels[0] = 0
    for v in order[1:]:
        levels[v] = levels[pred[v]] + 1
    return levels


def matches(name: str, got: np.ndarray, want: np.ndarray, width: int) -> bool:
    inf = (1 << width) - 1
    got = got.astype(np.float64)
    got[got == inf] = np.inf if name.startswith("BELLMAN") else -1
    return bool(np.array_equal(got, want.astype(np.float64)))


def run_scale(scale: int, runs: int, backend: str, routines: list[str]) -> list[dict]:
    g = rmat(scale, seed=2015)
    m = starvm.Machine(backend=backend, out=io.StringIO())
    m.load(VARIANTS, "frontier_shrink.star")
    L, R = m.table_from_ints(g.src, g.vbits), m.table_from_ints(g.dst, g.vbits)
    W = m.table_from_ints(g.weight, g.vbits + g.wbits)
    rows = []
    for routine, lib, variant in [p for p in PAIRS if p[0] in routines]:
        bf = routine.startswith("BELLMAN")
        width = g.vbits + g.wbits if bf else g.vbits + 1
        want = reference(routine, g)
        out = {}
        for name in (lib, variant):
            state = {}

            def setup():
                state["args"] = (g.n, 1, L, R, *((W,) if bf else ()), m.table(rows=g.n, cols=width))
            setup()
            m.call(name, *state["args"])                     # warm-up (library load, compiles)
            cpu = []                                         # process CPU seconds: the host is shared

            def call():
                c0 = time.process_time()
                m.call(name, *state["args"])
                cpu.append(time.process_time() - c0)
            t = repeat(call, runs, setup=setup, sync=synchronizer(m))
            t.cpu_s = statistics.median(cpu)
            got = numbers(state["args"][-1])
            if not matches(routine, got, want, width):
                raise SystemExit(f"{name} at scale {scale}: not SciPy's result")
            out[name] = (t, got)
        assert np.array_equal(out[lib][1], out[variant][1])
        lt, vt = out[lib][0], out[variant][0]      # library_s / variant_s: without / with shrinking
        rows.append({"scale": scale, "n": g.n, "arcs": g.m, "routine": routine, "without": lib, "with": variant,
                     "library_s": lt.median_s, "variant_s": vt.median_s, "ratio": vt.median_s / lt.median_s,
                     "library_cpu_s": lt.cpu_s, "variant_cpu_s": vt.cpu_s, "cpu_ratio": vt.cpu_s / lt.cpu_s})
        print(f"scale {scale} {routine}: {lib} {lt.median_s:.3f} s (CPU {lt.cpu_s:.3f}), {variant}: {vt.median_s:.3f} s "
              f"(CPU {vt.cpu_s:.3f})", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="14-18")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--routines", default="BFS-adapt,BELLMAN_FORD-adapt", help="library routines to compare")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "stdlib_frontier_shrink_cpu2"))
    args = ap.parse_args(argv)
    results = []
    for s in parse_scales(args.scales):
        results += run_scale(s, args.runs, args.backend, args.routines.split(","))
    doc = document("frontier_shrink", "BFS-adapt and BELLMAN_FORD-adapt with and without frontier shrinking",
                   machine=machine_info(("scipy",)), device=device_info(), backend=args.backend,
                   runs=args.runs, results=results)
    lines = [f"`python3 bench/frontier_shrink.py --scales {args.scales} --runs {args.runs} --backend {args.backend}` "
             "(`--jit auto`, native kernels on): each routine without and with shrinking (BFS_WHOLE against the "
             "library's BFS-adapt, the library's BELLMAN_FORD-adapt against BF_SHRINK) on the same R-MAT graphs, warm medians; every result equals SciPy's and the "
             "library routine's. Wall-clock and process CPU seconds (medians; the host is shared with other "
             "work, so CPU time is the steadier figure). Ratio = with / without (below 1: shrinking pays).", "",
             "| routine | scale | n | arcs | without, s | with shrinking, s | ratio | without, CPU s | "
             "with shrinking, CPU s | CPU ratio |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['routine']} | {r['scale']} | {r['n']} | {r['arcs']} | {r['library_s']:.3f} | "
                     f"{r['variant_s']:.3f} | {r['ratio']:.2f} | {r['library_cpu_s']:.3f} | "
                     f"{r['variant_cpu_s']:.3f} | {r['cpu_ratio']:.2f} |")
    write_results(doc, Path(args.out).with_suffix(".json"), lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
