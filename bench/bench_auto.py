"""Does `--backend auto` place tables well? Measured on the GPU machine, one command:

    python bench/bench_auto.py [--out DIR]

1. Crossing points behind the placement rule (starvm/backends/auto_backend.py):
   * one step on a table of n rows, through the interpreter (COL read, or, COL write, FND,
     SOME: a Star loop of those five), NumPy backend vs CuPy backend, n = 2^8 .. 2^26;
   * one fused `parallel for` (a Warshall pivot over an n x n table), NumPy vs CuPy.
2. Whole programs on numpy, cupy and auto (default thresholds; median of 3 runs after a
   warm-up run), each result checked equal:
   WARSHALL-C (small columns: the CPU wins), WARSHALL-adapt's Star body (fused loops: the
   GPU wins), MIN + MATCH over 2^24 rows (the GPU wins), associative PRIM on an R-MAT graph
   (2^16 edge rows: small tables), and one program doing both kinds of work, where only
   auto is fast at both.
Writes auto_<device>.json and .md to bench/results/ (the harness's files, starvm/benchmarking/: the
same header as every benchmark).
"""
from __future__ import annotations

import argparse
import io
import statistics
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import cupy  # noqa: E402,F401  (needed: synchronizer() below waits on the CUDA device)

import starvm  # noqa: E402
from bench.bench_gpu import graph, procs  # (the random digraphs and listing texts of Table 2)
from starvm import config  # noqa: E402
from starvm.benchmarking import clock as harness_clock  # noqa: E402
from starvm.benchmarking import device_info, document, machine_info, repeat, synchronizer, write_results  # noqa: E402

STEP_LOOP = """proc STEPS(var T: table; r: integer);
var V, W: slice(T); i, p: integer; b: boolean;
begin
  W := COL(2, T);
  for i := 1 to r do
  begin
    V := COL(1, T); V := V or W; COL(3, T) := V; p := FND(V); b := SOME(W);
  end;
end;"""

PIVOT = """proc PIVOT(n, k: integer; var P: table);
var V, W: slice; i: integer;
begin
  parallel for i := 1 to n do
  begin W := COL(k, P); V := COL(i, P); if V(k) = 1 then V := V or W; COL(i, P) := V; end;
end;"""


sync = synchronizer()              # the CUDA device (CuPy is imported above)


def clock(fn, runs=3):
    """Median seconds of ``runs`` calls, the device synchronised around each."""
    return repeat(fn, runs, sync=sync).median_s


def machine(backend, native=True):
    return starvm.Machine(backend=backend, out=io.StringIO(), native=native)


def step_cost(backend, n, reps):
    m = machine(backend)
    m.load(STEP_LOOP)
    rng = np.random.default_rng(n)
    T = m.table(rng.random((n, 3)) < 0.5)
    m.call("STEPS", T, 2)
    return clock(lambda: m.call("STEPS", T, reps)) / (5 * reps) * 1e6      # µs per step


def pivot_cost(backend, n):
    m = machine(backend)
    m.load(PIVOT)
    P = m.table(np.random.default_rng(n).random((n, n)) < 2.0 / n)
    m.call("PIVOT", n, 1, P)
    return clock(lambda: m.call("PIVOT", n, 2, P), 5) * 1e6                 # µs per loop


def prog_warshall(name, file, n):
    a = graph(n)

    def run(backend):
        m = machine(backend, native=False)
        m.load(procs(file), file)
        P = m.table(a)
        return harness_clock(lambda: m.call(name, n, P), sync), P.to_numpy()
    return run


def prog_search(rows):
    rng = np.random.default_rng(5)
    vals = rng.integers(0, 2 ** 20, size=rows)
    bits = ((vals[:, None] >> np.arange(19, -1, -1)) & 1).astype(bool)
    probe = bits[rows // 3]

    def run(backend):
        m = machine(backend)
        T = m.table(bits)
        X = m.slice(np.ones(rows, bool))
        Z, Y = m.slice(np.zeros(rows, bool)), m.slice(np.zeros(rows, bool))
        v = m.word(probe)

        def both():
            m.call("MIN", T, X, Z)
            m.call("MATCH", T, X, v, Y)
        both()                          # load the library, compile, warm up
        return clock(both, 5), (Z.to_numpy(), Y.to_numpy())
    return run


def prog_prim(scale):
    from starvm.graphs import rmat
    g = rmat(scale, edge_factor=4, seed=2015)

    def run(backend):
        m = machine(backend)
        L, R, W = (m.table(b) for b in g.edges_bits(g.vbits, g.wbits))
        Tr = m.slice(np.zeros(g.m, bool))
        return harness_clock(lambda: m.call("PRIM", g.n, L, R, W, Tr), sync), Tr.to_numpy()
    return run


MIXED = procs("warshall_c.star") + """
proc BOTH(n: integer; var P: table; T: table; var Z: slice(T));
var X: slice(T);
begin
  SET(X);
  MIN(T, X, Z);
  WARSHALL-C(n, P);
end;"""


def prog_mixed(n, rows):
    a = graph(n)
    rng = np.random.default_rng(9)
    bits = rng.random((rows, 20)) < 0.5

    def run(backend):
        m = machine(backend)
        m.load(MIXED, "mixed.star")
        P, T = m.table(a), m.table(bits)
        Z = m.slice(np.zeros(rows, bool))
        return harness_clock(lambda: m.call("BOTH", n, P, T, Z), sync), (P.to_numpy(), Z.to_numpy())
    return run


def same(x, y):
    if isinstance(x, tuple):
        return all(same(a, b) for a, b in zip(x, y))
    return bool(np.array_equal(x, y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    doc = document("auto", "", machine=machine_info(), device=device_info(starvm.Machine(backend="auto")))
    gpu = doc["device_info"]["gpu"]
    device = gpu["name"]
    info = {"device": device, "cupy": gpu["cupy"], "cuda_runtime": gpu["cuda_runtime_raw"],
            "numpy": doc["machine"]["numpy"], "python": doc["machine"]["python"], "starvm": starvm.__version__,
            "date": doc["date"], "gpu_rows": config.auto_gpu_rows(), "gpu_bits": config.auto_gpu_bits()}
    doc["title"] = f"`--backend auto`: where tables live ({device})"
    print(info, flush=True)

    steps = []
    for e in range(8, 27, 2):
        n = 1 << e
        reps = 400 if e <= 20 else 60
        row = {"n": n, "numpy_us": step_cost("numpy", n, reps), "cupy_us": step_cost("cupy", n, reps)}
        steps.append(row)
        print("step", row, flush=True)
    pivots = []
    for n in (64, 128, 256, 512, 1024, 2048, 4096):
        row = {"n": n, "bits": n * n, "numpy_us": pivot_cost("numpy", n), "cupy_us": pivot_cost("cupy", n)}
        pivots.append(row)
        print("pivot", row, flush=True)

    programs = [
        ("WARSHALL-C (Listing 2), n = 500", prog_warshall("WARSHALL-C", "warshall_c.star", 500)),
        ("WARSHALL-adapt Star body, n = 2000", prog_warshall("WARSHALL-adapt", "warshall_adapt.star", 2000)),
        ("MIN + MATCH over 2^24 rows x 20 bits (median of 5 in each run)", prog_search(1 << 24)),
        ("PRIM (associative MST), R-MAT scale 12, 4 edges/vertex", prog_prim(12)),
        ("MIN over 2^24 rows, then WARSHALL-C n = 300 (one program)", prog_mixed(300, 1 << 24)),
    ]
    progs = []
    for title, run in programs:
        row = {"program": title}
        results = {}
        for b in ("numpy", "cupy", "auto"):
            run(b) if b != "numpy" else None     # warm-up of kernels on the GPU backends
            times = []
            for _ in range(3):
                secs, res = run(b)
                times.append(secs)
            row[b + "_s"] = statistics.median(times)
            results[b] = res
            print(title, b, times, flush=True)
        assert same(results["numpy"], results["cupy"]) and same(results["numpy"], results["auto"]), title
        row["auto_vs_best"] = row["auto_s"] / min(row["numpy_s"], row["cupy_s"])
        progs.append(row)

    cross = next((r["n"] for r in steps if r["cupy_us"] < r["numpy_us"]), None)
    pcross = next((r["bits"] for r in pivots if r["cupy_us"] < r["numpy_us"]), None)
    slug = "h100" if "H100" in device else ("h200" if "H200" in device else "gpu")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc.update(info=info, steps=steps, pivots=pivots, programs=progs, step_crossing_rows=cross,
               pivot_crossing_bits=pcross)
    md = [f"Thresholds: gpu_rows = {info['gpu_rows']}, gpu_bits = {info['gpu_bits']}.", "",
          "## One step on a table of n rows, µs (through the interpreter; mean of COL read, or, COL write, FND, SOME)",
          "", "| rows | NumPy | CuPy | faster |", "| ---: | ---: | ---: | --- |"]
    for r in steps:
        md.append(f"| {r['n']} | {r['numpy_us']:.2f} | {r['cupy_us']:.2f} | "
                  f"{'GPU' if r['cupy_us'] < r['numpy_us'] else 'CPU'} |")
    md += ["", f"The GPU is faster from {cross} rows on." if cross else "The CPU was faster at every size.", "",
           "## One fused `parallel for` (a Warshall pivot over an n x n table), µs", "",
           "| n | table bits | NumPy | CuPy | faster |", "| ---: | ---: | ---: | ---: | --- |"]
    for r in pivots:
        md.append(f"| {r['n']} | {r['bits']} | {r['numpy_us']:.0f} | {r['cupy_us']:.0f} | "
                  f"{'GPU' if r['cupy_us'] < r['numpy_us'] else 'CPU'} |")
    md += ["", f"The GPU is faster from {pcross} table bits on." if pcross else "The CPU was faster at every size.", "",
           "## Whole programs, seconds (results checked equal on the three backends)", "",
           "| program | numpy | cupy | auto | auto / best of the two |", "| --- | ---: | ---: | ---: | ---: |"]
    for r in progs:
        md.append(f"| {r['program']} | {r['numpy_s']:.3f} | {r['cupy_s']:.3f} | {r['auto_s']:.3f} | "
                  f"{r['auto_vs_best']:.2f} |")
    md += ["", "Reproduce: `python bench/bench_auto.py` on a machine with an NVIDIA GPU and CuPy."]
    _, md_path = write_results(doc, out / f"auto_{slug}.json", md)
    print(md_path.read_text())


if __name__ == "__main__":
    main()
