"""GPU benchmark of starvm (CuPy backend): the paper's Tables 1 and 2, first figures.

    python bench/bench_gpu.py [--out DIR] [--sizes 1000,2000,...]

Run on the device machine (an NVIDIA GPU with CuPy). Measures, median of >= 3 runs with the
device synchronised before each clock read:
  * Table 2: WARSHALL-adapt (`parallel for`, fused) and WARSHALL-C (Listing 2, unmodified; the
    smallest sizes only: it is launch-bound) through the Python API on the cupy backend;
    WARSHALL (Listing 1), WARSHALL-C and WARSHALL-adapt on the auto backend (which keeps
    the tables of these sizes on the CPU unless a fused loop works on them), Listings 1 and
    2 in parallel worker processes, one core and one size each; beside, in the same run,
    closure by repeated boolean squaring with cupy.matmul in float16 (cuBLAS) and a NumPy
    bit-packed Warshall on the host CPU;
  * Table 1: mean microseconds per base operation (ROW read/write, or, FND, STEP, SOME, COL)
    through the interpreter, from the machine's profile, on the cupy and auto backends.
Every closure is checked against the host NumPy closure. Writes gpu_<device>.json and .md
(the harness's files, starvm/benchmarking/: the same header as every benchmark).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import cupy as cp  # noqa: E402

import starvm  # noqa: E402
from starvm.benchmarking import clock, device_info, document, machine_info, repeat, synchronizer, write_results  # noqa: E402
from starvm.ir.ops import BASE_OPS, OP_TITLES  # noqa: E402

PAPER_T2 = {"WARSHALL-C": {1000: 4.827, 2000: 11.161, 3000: 23.363, 4000: 42.661, 5000: 64.454},
            "WARSHALL-adapt": {1000: 0.003, 2000: 0.027, 3000: 0.093, 4000: 0.236, 5000: 0.372}}


def procs(name):
    src = (ROOT / "programs" / name).read_text()
    return src[:src.index("{ The graph:")]


def graph(n):
    rng = np.random.default_rng([2016, n])
    a = rng.random((n, n)) < 2.0 / n
    np.fill_diagonal(a, False)
    return a


def numpy_closure(a):
    n = a.shape[0]
    rows = np.packbits(a, axis=1, bitorder="little")
    pad = (-rows.shape[1]) % 8
    rows = np.pad(rows, ((0, 0), (0, pad))).view(np.uint64)
    for k in range(n):
        has = (rows[:, k >> 6] >> np.uint64(k & 63)) & np.uint64(1)
        rows[has.astype(bool)] |= rows[k]
    return np.unpackbits(rows.view(np.uint8), axis=1, count=n, bitorder="little").astype(bool)


def cublas_closure(a_dev):
    """Closure by repeated squaring of (A) in float16: R := R or R*R until stable."""
    r = a_dev.astype(cp.float16)
    while True:
        nxt = ((r + r @ r) > 0).astype(cp.float16)
        if bool((nxt == r).all()):
            return r > 0
        r = nxt


def listing_worker(name: str, n: int, backend: str) -> None:
    """One run of a Star listing (a separate process): prints one JSON line."""
    files = {"WARSHALL": "warshall.star", "WARSHALL-C": "warshall_c.star"}
    a = graph(n)
    m = starvm.Machine(backend=backend)
    m.load(procs(files[name]), files[name])
    P = m.table(a)
    secs = clock(lambda: m.call(name, n, P), synchronizer(m))
    ok = bool((P.to_numpy() == numpy_closure(a)).all())
    print(json.dumps({"name": name, "n": n, "backend": backend, "s": secs, "correct": ok,
                      "steps": sum(m.counts), "placement": P.backend.name}), flush=True)


def run_listings(jobs, workers):
    """Run (name, n, backend) jobs in worker processes; {(name, n, backend): [results]}."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    def one(job):
        name, n, backend = job
        r = subprocess.run([sys.executable, __file__, "--worker", name, str(n), backend],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"{job}: {r.stderr[-2000:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])
    out = {}
    with ThreadPoolExecutor(workers) as pool:
        for res in pool.map(one, jobs):
            assert res["correct"], f"{res['name']} wrong at n={res['n']} on {res['backend']}"
            out.setdefault((res["name"], res["n"], res["backend"]), []).append(res)
            print("listing", res, flush=True)
    return out


def timed(fn, runs):
    """(median seconds, the runs, the last result) of ``runs`` calls, the device synchronised."""
    res = []
    t = repeat(lambda: res.append(fn()), runs, sync=synchronizer())
    return t.median_s, t.runs_s, res[-1]


def bitsliced_from_uint32(m, vals):
    """A rows x 32 table whose row i holds vals[i] (column 1 the most significant bit)."""
    n = int(vals.size)
    words = (n + 63) // 64
    t = m.backend.table(n, 32)
    shifts = cp.arange(64, dtype=cp.uint64)
    for j in range(32):
        bits = cp.zeros(words * 64, dtype=cp.uint64)
        bits[:n] = (vals >> (31 - j)) & 1
        t.data[j] = (bits.reshape(words, 64) << shifts).sum(axis=1, dtype=cp.uint64)
    return t


def bench_search(rows):
    """MIN / MAX / MATCH over `rows` 32-bit fields beside cupy.min of the same values."""
    from starvm.runtime.machine import BitVector
    rng = cp.random.default_rng(7)
    vals = rng.integers(0, 2 ** 32, size=rows, dtype=cp.uint64).astype(cp.uint32)
    res = {"rows": rows}
    res["cupy_min_ms"] = 1e3 * timed(lambda: cp.min(vals), 5)[0]
    lo, hi = int(cp.min(vals)), int(cp.max(vals))
    probe = int(vals[rows // 3])
    for native in (True, False):
        m = starvm.Machine(backend="cupy", native=native)
        t = bitsliced_from_uint32(m, vals)
        X = BitVector(m.backend.ones(rows), rows, m.backend)
        v = m.word([(probe >> (31 - j)) & 1 for j in range(32)])
        for name in (("MIN", "MAX", "MATCH") if native else ("MIN",)):
            Z = BitVector(m.backend.zeros(rows), rows, m.backend)
            args = (t, X, v, Z) if name == "MATCH" else (t, X, Z)
            m.call(name, *args)                                   # load + compile + warm up
            med, runs, _ = timed(lambda: m.call(name, *args), 5 if native else 3)
            hits = cp.flatnonzero(cp.asarray(BitVector(Z.v, rows, m.backend).to_numpy()))
            want = {"MIN": lo, "MAX": hi, "MATCH": probe}[name]
            assert hits.size == int((vals == want).sum()) and bool((vals[hits] == want).all()), name
            key = name if native else "MIN_star_body"
            res[key if native else "MIN_star_body_ms"] = ({"ms": med * 1e3, "runs_ms": [r * 1e3 for r in runs]}
                                                         if native else med * 1e3)
        del t
    print(res, flush=True)
    return res


def bench_memory(n):
    """The paper's 180 000-vertex adjacency matrix as a bit-sliced table on the device."""
    m = starvm.Machine(backend="cupy")
    cp.get_default_memory_pool().free_all_blocks()
    free0 = cp.cuda.runtime.memGetInfo()[0]
    t = m.table(rows=n, cols=n)
    cp.cuda.Device().synchronize()
    free1 = cp.cuda.runtime.memGetInfo()[0]
    words = (n + 63) // 64
    m.load("proc TOUCH(var P: table; n: integer); var w: word; begin COL(n, P) := not COL(1, P); w := ROW(n, P) end;")
    m.call("TOUCH", t, n)          # compile and warm up
    m.reset_stats()
    m.profile = True
    m.call("TOUCH", t, n)
    from starvm.ir.ops import Op
    from starvm.ir.ops import STEP_INDEX as IDX
    res = {"n": n, "table_bytes": int(t.data.nbytes), "formula_bytes": words * 8 * n,
           "paper_bytes": 8 * (n * (words + 1) + 1), "allocated_bytes": int(free0 - free1),
           "col_write_us": m.times[IDX[Op.COL_SET]] * 1e6, "row_read_us": m.times[IDX[Op.ROW_GET]] * 1e6}
    assert res["table_bytes"] == res["formula_bytes"]
    del t
    cp.get_default_memory_pool().free_all_blocks()
    print(res, flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--sizes", default="1000,2000,3000,4000,5000,16384")
    ap.add_argument("--star-body-max", type=int, default=5000,
                    help="largest n for the Star body of WARSHALL-adapt (fused parallel for)")
    ap.add_argument("--warshall-c-max", type=int, default=1000)
    ap.add_argument("--search-rows", type=int, default=2 ** 27)
    ap.add_argument("--listing-max", type=int, default=5000,
                    help="largest n for WARSHALL and WARSHALL-C on the auto backend")
    ap.add_argument("--workers", type=int, default=15, help="processes for the listings")
    ap.add_argument("--worker", nargs=3, metavar=("NAME", "N", "BACKEND"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return listing_worker(args.worker[0], int(args.worker[1]), args.worker[2])
    sizes = [int(s) for s in args.sizes.split(",")]
    doc = document("gpu", "", machine=machine_info(), device=device_info(gpu=True))
    gpu = doc["device_info"]["gpu"]
    info = {"device": gpu["name"], "cupy": gpu["cupy"], "cuda_runtime": gpu["cuda_runtime_raw"],
            "numpy": doc["machine"]["numpy"], "python": doc["machine"]["python"], "starvm": starvm.__version__,
            "date": doc["date"]}
    doc["title"] = f"starvm on the GPU ({info['device']})"
    print(info, flush=True)
    listing_sizes = [n for n in sizes if n <= args.listing_max]
    jobs = [(name, n, "auto") for n in reversed(listing_sizes) for name in ("WARSHALL", "WARSHALL-C")
            for _ in range(3)]
    t_list = time.perf_counter()
    listings = run_listings(jobs, args.workers)
    print(f"listings: {time.perf_counter() - t_list:.0f} s wall", flush=True)
    rows = []
    for n in sizes:
        a = graph(n)
        t0 = time.perf_counter()
        ref = numpy_closure(a)
        t_np = time.perf_counter() - t0
        entry = {"n": n, "numpy_packed_host_s": t_np, "closure_ones": float(ref.mean())}
        # WARSHALL-adapt from the standard library: the native blocked kernel (starvm/native)
        mn = starvm.Machine(backend="cupy")
        mn.call("WARSHALL-adapt", 2, mn.table(np.zeros((2, 2), bool)))   # load + compile + warm up
        nat = []
        for _ in range(5):
            P = mn.table(a)
            nat.append(clock(lambda: mn.call("WARSHALL-adapt", n, P), synchronizer(mn)))
        assert mn.native_timing[0] == 6
        assert (P.to_numpy() == ref).all(), f"native WARSHALL-adapt wrong at n={n}"
        entry["WARSHALL-adapt_native_s"] = statistics.median(nat)
        entry["WARSHALL-adapt_native_runs"] = nat
        print("native", n, statistics.median(nat), flush=True)
        if n > args.star_body_max:
            a_dev = cp.asarray(a)
            cublas_closure(a_dev)
            med, rr, res = timed(lambda: cublas_closure(a_dev), 3)
            assert (cp.asnumpy(res) == ref).all(), f"cuBLAS closure wrong at n={n}"
            entry["cublas_fp16_squaring_s"], entry["cublas_runs"] = med, rr
            rows.append(entry)
            print(entry, flush=True)
            continue
        # WARSHALL-adapt, the Star body: fused parallel for
        m = starvm.Machine(backend="cupy")
        m.load(procs("warshall_adapt.star"), "warshall_adapt.star")
        m.call("WARSHALL-adapt", 2, m.table(np.zeros((2, 2), bool)))   # warm-up
        tabs = []

        def run_adapt():
            P = m.table(a)
            tabs.append(P)
            return clock(lambda: m.call("WARSHALL-adapt", n, P), synchronizer(m))
        runs = [run_adapt() for _ in range(3)]
        assert (tabs[-1].to_numpy() == ref).all(), f"WARSHALL-adapt wrong at n={n}"
        entry["WARSHALL-adapt_s"] = statistics.median(runs)
        entry["WARSHALL-adapt_runs"] = runs
        m = starvm.Machine(backend="auto")
        m.load(procs("warshall_adapt.star"), "warshall_adapt.star")
        m.call("WARSHALL-adapt", 2, m.table(np.zeros((2, 2), bool)))   # warm-up
        tabs.clear()
        runs = [run_adapt() for _ in range(3)]
        assert (tabs[-1].to_numpy() == ref).all(), f"WARSHALL-adapt (auto) wrong at n={n}"
        entry["WARSHALL-adapt_auto_s"] = statistics.median(runs)
        entry["WARSHALL-adapt_auto_placement"] = tabs[-1].backend.name
        for name in ("WARSHALL", "WARSHALL-C"):
            got = listings.get((name, n, "auto"))
            if got:
                entry[f"{name}_auto_s"] = statistics.median(r["s"] for r in got)
                entry[f"{name}_auto_runs"] = [r["s"] for r in got]
                entry[f"{name}_auto_placement"] = got[0]["placement"]
        # cuBLAS squaring
        a_dev = cp.asarray(a)
        cublas_closure(a_dev)
        med, rr, res = timed(lambda: cublas_closure(a_dev), 3)
        assert (cp.asnumpy(res) == ref).all(), f"cuBLAS closure wrong at n={n}"
        entry["cublas_fp16_squaring_s"], entry["cublas_runs"] = med, rr
        if n <= args.warshall_c_max:
            mc = starvm.Machine(backend="cupy")
            mc.load(procs("warshall_c.star"), "warshall_c.star")
            P = mc.table(a)
            entry["WARSHALL-C_s"] = clock(lambda: mc.call("WARSHALL-C", n, P), synchronizer(mc))
            entry["WARSHALL-C_steps"] = sum(mc.counts)
            assert (P.to_numpy() == ref).all(), f"WARSHALL-C wrong at n={n}"
        print(entry, flush=True)
        rows.append(entry)
    # Table 1: per-operation times through the interpreter
    table1 = []
    for n, backend in [(n, b) for b in ("cupy", "auto") for n in (100, 1000, 3000, 5000)]:
        if n > max(sizes):
            continue
        a = graph(n)
        m = starvm.Machine(backend=backend)
        m.load(procs("warshall.star"), "warshall.star")
        m.load(procs("warshall_c.star"), "warshall_c.star")
        m.profile = True
        P = m.table(a)
        m.call("WARSHALL-C", min(n, 200), P)     # COL read/write, or, STEP, ROW read
        Q = m.table(a)
        m.call("WARSHALL", min(n, 100), Q)       # ROW read/write, SOME, STEP
        per = {OP_TITLES[op]: (m.times[i] / m.counts[i] * 1e6) for i, op in enumerate(BASE_OPS) if m.counts[i]}
        table1.append({"n": n, "backend": backend, "mean_us": per})
        print(n, per, flush=True)
    search = bench_search(args.search_rows)
    memory = bench_memory(180_000)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slug = "h100" if "H100" in info["device"] else ("h200" if "H200" in info["device"] else "gpu")
    doc.update(info=info, table2=rows, table1=table1, search=search, memory=memory)
    md = ["## Table 2: transitive closure, seconds (median of 3; paper: NVIDIA K40)", "",
          "Columns: the backend each ran on (`auto`: tables placed by auto_backend.py; the placement "
          "is named where it matters). WARSHALL and WARSHALL-C ran in parallel worker processes, one "
          "core each.", "",
          "| n | WARSHALL-adapt native kernel (cupy) | WARSHALL-adapt Star body, cupy | Star body, auto | paper "
          "| WARSHALL (Listing 1), auto | WARSHALL-C, cupy | WARSHALL-C, auto | paper "
          "| cuBLAS fp16 squaring | NumPy packed (host) |",
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def cell(r, key, fmt):
        return format(r[key], fmt) if key in r else "—"
    for r in rows:
        n = r["n"]
        md.append(f"| {n} | {r['WARSHALL-adapt_native_s']:.5f} | {cell(r, 'WARSHALL-adapt_s', '.4f')} | "
                  f"{cell(r, 'WARSHALL-adapt_auto_s', '.4f')} | {PAPER_T2['WARSHALL-adapt'].get(n, '—')} | "
                  f"{cell(r, 'WARSHALL_auto_s', '.2f')} | {cell(r, 'WARSHALL-C_s', '.3f')} | "
                  f"{cell(r, 'WARSHALL-C_auto_s', '.3f')} | {PAPER_T2['WARSHALL-C'].get(n, '—')} | "
                  f"{r['cublas_fp16_squaring_s']:.4f} | {r['numpy_packed_host_s']:.4f} |")
    md += ["", "## Table 1: mean µs per base operation through the interpreter", "",
           "| operation | " + " | ".join(f"{t['backend']}, n={t['n']}" for t in table1) + " |",
           "| --- |" + " ---: |" * len(table1)]
    ops = sorted({k for t in table1 for k in t["mean_us"]})
    for o in ops:
        md.append(f"| {o} | " + " | ".join(f"{t['mean_us'].get(o, float('nan')):.1f}" for t in table1) + " |")
    md += ["", f"## Associative search over {search['rows']} rows x 32-bit fields (bit-sliced table), ms, median of 5",
           "", "| operation | starvm | cupy.min on the same data as uint32 | ratio |", "| --- | ---: | ---: | ---: |"]
    for name in ("MIN", "MAX", "MATCH"):
        r = search[name]
        md.append(f"| {name} (stdlib, fused kernels) | {r['ms']:.3f} | {search['cupy_min_ms']:.3f} | "
                  f"{r['ms'] / search['cupy_min_ms']:.2f} |")
    md.append(f"| MIN (Star body, one step per column) | {search['MIN_star_body_ms']:.3f} | "
              f"{search['cupy_min_ms']:.3f} | {search['MIN_star_body_ms'] / search['cupy_min_ms']:.2f} |")
    md += ["", "## Memory", "",
           f"An adjacency table of {memory['n']} vertices: {memory['table_bytes'] / 2**30:.2f} GiB of device memory "
           f"(⌈n/64⌉·8·k = {memory['formula_bytes']} bytes exactly; the device's free memory fell by "
           f"{memory['allocated_bytes'] / 2**30:.2f} GiB); the paper's layout needs 8(n(⌈n/64⌉ + 1) + 1) = "
           f"{memory['paper_bytes'] / 2**30:.2f} GiB. A column write and a ROW read on it took "
           f"{memory['col_write_us']:.0f} µs and {memory['row_read_us']:.0f} µs."]
    _, md_path = write_results(doc, out / f"gpu_{slug}.json", md)
    print(md_path.read_text())


if __name__ == "__main__":
    main()
