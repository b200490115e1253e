"""The compiled tier (starvm/jit, Numba) on the CPU, beside the interpreter and plain code.

    python bench/bench_compiled.py            # a few minutes on 2 cores
    python bench/bench_compiled.py --quick    # small sizes: a smoke test of this script

Every Star workload is a *user-named* copy of a library body (MY_WARSHALL_C, ...), so no
native kernel applies. Each is timed compiled (``Machine(jit="on")``): cold = the first
call in this process with an empty cache directory (Numba compiles it), warm = a later
call; the interpreter (``jit="off"``) at the same size where that is affordable, else at a
smaller size (said in the table); and the strongest plain alternative on the same packed
columns: a hand-written Numba loop, and plain NumPy. Compile times: cold, and from the
disk cache in a fresh process (Numba's own start-up reported separately). Results:
bench/results/compiled_cpu.json and .md (--out PATH: PATH.json and .md), written by the
harness (starvm/bench/) with its common header. Exit status 1 if any result is wrong.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_CACHE = tempfile.mkdtemp(prefix="starvm-jit-bench-")
os.environ.setdefault("STARVM_JIT_CACHE", _CACHE)

import starvm  # noqa: E402
from starvm.bench import clock, device_info, document, machine_info, write_results  # noqa: E402

TITLE = "The compiled tier on the CPU (Numba), NumPy backend"

WARSHALL_C = """
proc MY_WARSHALL_C(n: integer; var P: table);
var x: word; V, W: slice; i, k: integer;
begin for k := 1 to n do
  begin
    x := ROW(k, P);
    W := COL(k, P);
    i = STEP(x);
    while i > 0 do
    begin
      V := COL(i, P);
      V = V or W;
      COL(i, P) := V;
      i := STEP(x);
    end;
  end;
end;
"""
WARSHALL = """
proc MY_WARSHALL(n: integer; var P: table);
var X: slice(P); v, w: word; i, k: integer;
begin for k := 1 to n do
  begin
    X := COL(k, P);
    w := ROW(k, P);
    while SOME(X) do
    begin
      i := STEP(X);
      v := ROW(i, P);
      v = v or w;
      ROW(i, P) := v;
    end;
  end;
end;
"""
WARSHALL_ADAPT = """
proc MY_WARSHALL_ADAPT(n: integer; var P: table);
var V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin
      W := COL(k, P);
      V := COL(i, P);
      if V(k) = 1 then V := V or W;
      COL(i, P) := V;
    end;
end;
"""
SUMLOOP = """
function MY_SUMLOOP(m: integer): integer;
var i, s: integer;
begin
  s := 0;
  for i := 1 to m do s := s + i;
  MY_SUMLOOP := s;
end;
"""
COLLOOP = """
proc MY_COLLOOP(reps, i: integer; var P: table);
var V, W: slice; r: integer;
begin
  W := COL(1, P);
  for r := 1 to reps do
  begin
    V := COL(i, P);
    V := V or W;
    COL(i, P) := V;
  end;
end;
"""


# ------------------------------------------------------------------ graphs and references
def random_digraph(n: int, seed: int = 2016) -> np.ndarray:
    rng = np.random.default_rng([seed, n])
    adj = rng.random((n, n)) < 2.0 / n
    np.fill_diagonal(adj, False)
    return adj


def closure_numpy(adj: np.ndarray) -> np.ndarray:
    """Plain NumPy on packed rows: for each k, the rows holding bit k OR in row k."""
    n = adj.shape[0]
    rows = np.packbits(adj, axis=1)
    for k in range(n):
        has = (rows[:, k >> 3] >> (7 - (k & 7))) & 1
        rows[has.astype(bool)] |= rows[k]
    return np.unpackbits(rows, axis=1, count=n).astype(bool)


def hand_numba():
    from numba import njit

    @njit(cache=True)
    def warshall_cols(data, n):
        """WARSHALL-C by hand on the same k x words column array: for each k, for each set
        bit i of row k, column i |= column k."""
        nw = data.shape[1]
        for k in range(n):
            kw, kb = k >> 6, np.uint64(k & 63)
            for i in range(n):
                if (data[i, kw] >> kb) & np.uint64(1):
                    for t in range(nw):
                        data[i, t] |= data[k, t]
    return warshall_cols


def star_table(m, adj):
    return m.table(adj)


def time_call(m, name, *args):
    box = []
    secs = clock(lambda: box.append(m.call(name, *args)))
    return secs, box[0]


# ------------------------------------------------------------------ workloads
def bench_warshall(label, source, name, n, interp_n, results, problems):
    adj = random_digraph(n)
    want = closure_numpy(adj)
    row = {"workload": label, "n": n}
    m = starvm.Machine(jit="on", out=open(os.devnull, "w"))
    m.load(source, "bench.star")
    P = m.table(adj)
    row["cold_s"], _ = time_call(m, name, n, P)
    if not np.array_equal(P.to_numpy(), want):
        problems.append(f"{label} n={n}: compiled result wrong")
    routine = m.jit.routines[f"r_{name.lower()}"]
    row["compile_s"] = routine.compile_seconds
    P = m.table(adj)
    row["warm_s"], _ = time_call(m, name, n, P)
    if not np.array_equal(P.to_numpy(), want):
        problems.append(f"{label} n={n}: compiled result wrong (warm)")
    steps_compiled = m.last_call_stats
    # the interpreter, at interp_n
    small = random_digraph(interp_n)
    mi = starvm.Machine(jit="off")
    mi.load(source, "bench.star")
    Q = mi.table(small)
    row["interp_n"] = interp_n
    row["interp_s"], _ = time_call(mi, name, interp_n, Q)
    if not np.array_equal(Q.to_numpy(), closure_numpy(small)):
        problems.append(f"{label} n={interp_n}: interpreter result wrong")
    mc = starvm.Machine(jit="on")
    mc.load(source, "bench.star")
    Q = mc.table(small)
    row["compiled_at_interp_n_s"], _ = time_call(mc, name, interp_n, Q)
    row["steps_equal_at_interp_n"] = mc.last_call_stats == mi.last_call_stats
    if not row["steps_equal_at_interp_n"]:
        problems.append(f"{label}: step counts differ at n={interp_n}")
    row["steps_compiled"] = sum(steps_compiled.values())
    # plain alternatives on the same packed columns
    hand = hand_numba()
    data = m.table(adj).data.copy()
    hand(data, n)
    data = m.table(adj).data.copy()
    row["hand_numba_s"] = clock(lambda: hand(data, n))
    T = m.table(adj)
    T.data[...] = data
    if not np.array_equal(T.to_numpy(), want):
        problems.append(f"{label}: hand-written Numba loop wrong")
    row["numpy_s"] = clock(lambda: closure_numpy(adj))
    results.append(row)
    print(row, flush=True)


def bench_sumloop(m_iters, results, problems):
    m = starvm.Machine(jit="on")
    m.load(SUMLOOP, "bench.star")
    cold, r = time_call(m, "MY_SUMLOOP", m_iters)
    warm, r = time_call(m, "MY_SUMLOOP", m_iters)
    if r != m_iters * (m_iters + 1) // 2:
        problems.append("sum loop wrong")
    mi = starvm.Machine(jit="off")
    mi.load(SUMLOOP, "bench.star")
    interp, _ = time_call(mi, "MY_SUMLOOP", m_iters)
    npy = clock(lambda: int(np.arange(1, m_iters + 1, dtype=np.int64).sum()))
    row = {"workload": "for i := 1 to m do s := s + i", "n": m_iters, "cold_s": cold, "warm_s": warm,
           "interp_s": interp, "interp_n": m_iters, "numpy_s": npy,
           "compile_s": m.jit.routines["r_my_sumloop"].compile_seconds}
    results.append(row)
    print(row, flush=True)


def bench_colloop(n, reps, results, problems):
    adj = random_digraph(n)
    m = starvm.Machine(jit="on")
    m.load(COLLOOP, "bench.star")
    P = m.table(adj)
    cold, _ = time_call(m, "MY_COLLOOP", reps, 2, P)
    warm, _ = time_call(m, "MY_COLLOOP", reps, 2, P)
    want = adj.copy()
    want[:, 1] |= adj[:, 0]
    if not np.array_equal(P.to_numpy(), want):
        problems.append("COL/or/COL loop wrong")
    mi = starvm.Machine(jit="off")
    mi.load(COLLOOP, "bench.star")
    Q = mi.table(adj)
    ireps = max(1, reps // 100)
    interp, _ = time_call(mi, "MY_COLLOOP", ireps, 2, Q)
    row = {"workload": "V := COL(i,P); V := V or W; COL(i,P) := V", "n": n, "reps": reps,
           "cold_s": cold, "warm_s": warm, "warm_us_per_iteration": warm / reps * 1e6,
           "interp_us_per_iteration": interp / ireps * 1e6, "interp_reps": ireps,
           "compile_s": m.jit.routines["r_my_colloop"].compile_seconds}
    results.append(row)
    print(row, flush=True)


CACHE_PROBE = """
import json, sys, time
t0 = time.perf_counter(); import numba; t1 = time.perf_counter()
import starvm
loads = []
for source, name in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    m = starvm.Machine(jit="on")
    m.load(source, "bench.star")
    P = m.table(rows=64, cols=64)
    t2 = time.perf_counter(); m.call(name, 64, P); t3 = time.perf_counter()
    loads.append(m.jit.routines["r_" + name.lower()].compile_seconds)
print(json.dumps({"numba_import_s": t1 - t0, "load_s": loads[0], "second_routine_load_s": loads[1]}))
"""


def bench_cache(results):
    """Compile from the disk cache, in fresh processes (the cache filled by the runs above)."""
    pairs = ((WARSHALL_C, "MY_WARSHALL_C", WARSHALL_ADAPT, "MY_WARSHALL_ADAPT"),
             (WARSHALL_ADAPT, "MY_WARSHALL_ADAPT", WARSHALL_C, "MY_WARSHALL_C"))
    for a, an, b, bn in pairs:
        out = subprocess.run([sys.executable, "-c", CACHE_PROBE, a, an, b, bn], capture_output=True, text=True,
                             env={**os.environ, "STARVM_JIT_CACHE": os.environ["STARVM_JIT_CACHE"]}, check=True)
        row = {"workload": f"{an}, then {bn}, loaded from the disk cache (fresh process)", **json.loads(out.stdout)}
        results.append(row)
        print(row, flush=True)


def new_document(results, problems) -> dict:
    """The harness's header (this machine, the NumPy backend), then the results."""
    return document("compiled_cpu", TITLE, machine=machine_info(("numba",)),
                    device=device_info(starvm.Machine(backend="numpy")), results=results, problems=problems)


def write(doc, path, quick):
    """path.json (the document) and path.md (the header, then the tables)."""
    results = doc["results"]
    lines = [f"`python bench/bench_compiled.py{' --quick' if quick else ''}`.",
             f"Load average when it finished: {os.getloadavg()[0]:.1f} (the machine is shared: figures are upper bounds).",
             "Star workloads are user-named copies of the library bodies (no native kernel applies). "
             "Cold = first call in the process with an empty cache (compile included); warm = a later call.",
             "",
             "| workload | n | compiled cold, s | compiled warm, s | compile, s | interpreter, s (at n) | hand Numba, s | NumPy, s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        if "cold_s" not in r:
            continue
        interp = f"{r['interp_s']:.3f} (n={r.get('interp_n', r['n'])})" if "interp_s" in r else ""
        if "interp_us_per_iteration" in r:
            interp = f"{r['interp_us_per_iteration']:.2f} us/iteration"
        warm = f"{r['warm_s']:.4f}"
        if "warm_us_per_iteration" in r:
            warm += f" ({r['warm_us_per_iteration']:.3f} us/iteration)"
        lines.append(f"| {r['workload']} | {r['n']} | {r['cold_s']:.3f} | {warm} | {r.get('compile_s', 0):.3f} | "
                     f"{interp} | {r.get('hand_numba_s', float('nan')):.3f} | {r.get('numpy_s', float('nan')):.3f} |")
    lines += ["", "Loading compiled code from the disk cache in a fresh process:", ""]
    for r in results:
        if "numba_import_s" in r:
            second = r.get("second_routine_load_s")
            lines.append(f"- {r['workload']}: `import numba` {r['numba_import_s']:.2f} s, then the first routine's "
                         f"load {r['load_s']:.3f} s (with Numba's start-up)"
                         + (f", the second's {second:.3f} s" if second is not None else ""))
    lines += ["", "What bounds each figure:", "",
              "- WARSHALL-C: one pass over the column's words per inner iteration (col_rmw: load column and W, "
              "store V and the column) against the hand loop's load-load-store; the rest is per-iteration "
              "bookkeeping (step counters, the step budget, the STEP hint). Same packed columns, so the "
              "ratio to the hand-written Numba loop is the tier's overhead.",
              "- WARSHALL-adapt body: the compiled tier runs `parallel for` iteration by iteration and copies the "
              "table once per loop (the forall snapshot): n pivots x the table's bytes of memcpy plus two column "
              "copies per (pivot, column). The interpreter's fused form (one whole-array operation per pivot) "
              "is faster, so `--jit auto` leaves such routines to it.",
              "- WARSHALL (Listing 1): every ROW read/write gathers or scatters one bit from each of the k "
              "columns (k cache lines); the layout, not the tier, bounds it.",
              "- The scalar loop: one checked 64-bit add, the step-budget decrement and the loop per iteration.",
              "- Cold compiles include Numba compiling the kernels each routine uses (they are cached too, "
              "beside starvm/jit/kernels.py); a fresh process pays `import numba` and Numba's first-call "
              "start-up before any cached routine runs."]
    write_results(doc, path.with_suffix(".json"), lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--md-only", action="store_true", help="rewrite the .md from the .json of the last run")
    ap.add_argument("--cache-only", action="store_true", help="measure again only the loads from the disk cache")
    ap.add_argument("--out", default=None, help="results path without suffix (default bench/results/compiled_cpu[_quick])")
    args = ap.parse_args()
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / ("compiled_cpu_quick" if args.quick else "compiled_cpu")
    if args.cache_only:   # refresh only the cache figures of the last run
        data = json.loads(out.with_suffix(".json").read_text())
        for src, routine in ((WARSHALL_C, "MY_WARSHALL_C"), (WARSHALL_ADAPT, "MY_WARSHALL_ADAPT")):
            m = starvm.Machine(jit="on")
            m.load(src, "bench.star")
            m.call(routine, 64, m.table(rows=64, cols=64))
        rows = []
        bench_cache(rows)
        data["results"] = [r for r in data["results"] if "numba_import_s" not in r] + rows
        if "machine" not in data:    # a file from before the harness: the header of this machine
            data = new_document(data["results"], data.get("problems", []))
        write(data, out, args.quick)
        return 0
    if args.md_only:
        data = json.loads(out.with_suffix(".json").read_text())
        if "machine" not in data:
            print(f"{out.with_suffix('.json')} has no harness header (written before it): rerun the benchmark",
                  file=sys.stderr)
            return 2
        write(data, out, args.quick)
        return 0
    n = 300 if args.quick else 5000
    results, problems = [], []
    bench_warshall("WARSHALL-C (Listing 2) as printed", WARSHALL_C, "MY_WARSHALL_C", n, 200 if args.quick else 1000,
                   results, problems)
    bench_warshall("WARSHALL-adapt body", WARSHALL_ADAPT, "MY_WARSHALL_ADAPT", n, 100 if args.quick else 300,
                   results, problems)
    bench_warshall("WARSHALL (Listing 1)", WARSHALL, "MY_WARSHALL", 200 if args.quick else 1000,
                   100 if args.quick else 300, results, problems)
    bench_sumloop(10_000 if args.quick else 1_000_000, results, problems)
    bench_colloop(n, 10_000 if args.quick else 1_000_000, results, problems)
    bench_cache(results)
    write(new_document(results, problems), out, args.quick)
    for p in problems:
        print("WRONG:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
