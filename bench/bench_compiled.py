"""The compiled tier (starvm/jit, Numba) on the CPU, beside the interpreter and plain code.

    python bench/bench_compiled.py            # a few minutes on 2 cores
    python bench/bench_compiled.py --quick    # small sizes: a smoke test of this script
    python bench/bench_compiled.py --cold-only --cold-repeats 3 --out bench/results/compiled_cpu2
    #   only the cold compiles again, the least CPU of 3 fresh processes each

Every Star workload is a *user-named* copy of a library body (MY_WARSHALL_C, ...), so no
native kernel applies. Each is timed compiled (``Machine(jit="on")``): cold = the first
call in this process with an empty cache directory (Numba compiles it), warm = a later
call; the interpreter (``jit="off"``) at the same size where that is affordable, else at a
smaller size (said in the table); and the strongest plain alternative on the same packed
columns: a hand-written Numba loop, and plain NumPy. Compile times: cold, and from the
disk cache in a fresh process (Numba's own start-up reported separately). Results:
bench/results/compiled_cpu.json and .md (--out PATH: PATH.json and .md), written by the
harness (starvm/benchmarking/) with its common header. Exit status 1 if any result is wrong.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
_CACHE = tempfile.mkdtemp(prefix="starvm-jit-bench-")
os.environ.setdefault("STARVM_JIT_CACHE", _CACHE)

import starvm  # noqa: E402
from starvm.benchmarking import clock, device_info, document, machine_info, write_results  # noqa: E402
from starvm.distributed.user_named import warshall_adapt  # noqa: E402

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
WARSHALL_ADAPT = warshall_adapt()     # MY_WARSHALL_ADAPT, the text the MPI ranks are measured with
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


WARM_RUNS = 3


def star_table(m, adj):
    return m.table(adj)


def time_call(m, name, *args):
    box = []
    secs = clock(lambda: box.append(m.call(name, *args)))
    return secs, box[0]


def cpu_time_call(m, name, *args):
    """(wall seconds, this process's CPU seconds) of one call: on the shared host the CPU time
    leaves out the time other engineers' processes held the cores."""
    c0 = time.process_time()
    secs, _ = time_call(m, name, *args)
    return secs, time.process_time() - c0


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
    row["warm_runs_s"], row["warm_cpu_runs_s"] = [], []
    for _ in range(WARM_RUNS):     # the fastest of a few: the shared host's bursts only slow a run down
        P = m.table(adj)
        wall, cpu = cpu_time_call(m, name, n, P)
        row["warm_runs_s"].append(wall)
        row["warm_cpu_runs_s"].append(cpu)
        if not np.array_equal(P.to_numpy(), want):
            problems.append(f"{label} n={n}: compiled result wrong (warm)")
    row["warm_s"] = min(row["warm_runs_s"])
    row["warm_cpu_s"] = min(row["warm_cpu_runs_s"])
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


# ------------------------------------------------------------------ natives against compiled bodies
NATIVE_ROUTINES = ("IOTA", "GATHER", "SCATTER", "GROUPMIN", "COMPACT", "EXPAND")


def rows_renamed() -> str:
    """stdlib/rows.star with its routines under user names (MY_IOTA, ...): no native kernel
    replaces them; the library routines they call (NUMOF, MATCH, MIN, SETNUM) stay."""
    import re
    text = (ROOT / "stdlib" / "rows.star").read_text()
    for name in NATIVE_ROUTINES:
        text = re.sub(rf"(?i)\b{name}\b(?![-\w])", f"MY_{name}", text)
    return text


def native_inputs(m, rows: int, rng):
    """Arguments of each rows routine on machine m: tables of `rows` rows, 12 data columns,
    index tables of row codes (a permutation, so SCATTER has one writer per row), half of
    the rows marked, rows / 16 groups for GROUPMIN."""
    width = max(1, rows.bit_length())
    data = rng.random((rows, 12)) < 0.5
    perm = rng.permutation(rows) + 1
    marks = rng.random(rows) < 0.5
    groups = rng.integers(0, max(1, rows // 16), rows)   # many groups, as in BORUVKA
    keys = rng.integers(0, 1 << 16, rows)
    return {
        "IOTA": lambda: (m.table(rows=rows, cols=width),),
        "GATHER": lambda: (m.table(data), m.table_from_ints(perm, width), m.slice(marks), m.table(rows=rows, cols=12)),
        "SCATTER": lambda: (m.table(data), m.table_from_ints(perm, width), m.slice(marks), m.table(rows=rows, cols=12)),
        "GROUPMIN": lambda: (m.table_from_ints(groups, width), m.table_from_ints(keys, 16), m.slice(marks),
                             m.slice(np.zeros(rows, bool))),
        "COMPACT": lambda: (m.table(data), m.slice(marks), m.table(rows=rows, cols=12)),
        "EXPAND": lambda: (m.table(data), m.slice(marks), m.table(rows=rows, cols=12)),
    }


def bench_natives(rows: int, adapt_n: int, results, problems):
    """Each NumPy native kernel against the compiled Star body of its routine under a user's
    name, on the same inputs (warm: the second call; compile excluded)."""
    body = rows_renamed()
    for name in NATIVE_ROUTINES:
        timings, outs = {}, {}
        for how in ("native", "compiled"):
            m = starvm.Machine(jit="off" if how == "native" else "on", native=how == "native",
                               out=open(os.devnull, "w"))
            if how == "compiled":
                m.load(body, "rows_user.star")
            routine = name if how == "native" else f"MY_{name}"
            runs = []
            for run in range(4):     # the first compiles (and warms the caches); the median of the others
                args = native_inputs(m, rows, np.random.default_rng([7, rows]))[name]()
                secs, _ = time_call(m, routine, *args)
                runs.append(secs)
            timings[how] = float(np.median(runs[1:]))
            outs[how] = ([a.to_numpy().tolist() for a in args], m.last_call_stats)
        if outs["native"] != outs["compiled"]:
            problems.append(f"{name}: the native kernel and the compiled body differ (result or steps)")
        row = {"workload": f"native {name} vs compiled body", "routine": name, "n": rows,
               "native_s": timings["native"], "compiled_s": timings["compiled"],
               "ratio": timings["compiled"] / timings["native"]}
        results.append(row)
        print(row, flush=True)
    # WARSHALL-adapt: the bit-packed Warshall of starvm/native/warshall_adapt/numpy.py against the body
    from starvm.native.warshall_adapt.numpy import closure_in_place
    adj = random_digraph(adapt_n)
    m = starvm.Machine(jit="off")
    mc = starvm.Machine(jit="on")
    mc.load(WARSHALL_ADAPT, "bench.star")
    mc.call("MY_WARSHALL_ADAPT", adapt_n, mc.table(adj))
    natives, compiled = [], []
    for run in range(3):     # alternating, the median of each (the host is shared)
        P, Q = m.table(adj), mc.table(adj)
        natives.append(clock(lambda: closure_in_place(P)))
        compiled.append(time_call(mc, "MY_WARSHALL_ADAPT", adapt_n, Q)[0])
        if not np.array_equal(P.to_numpy(), Q.to_numpy()):
            problems.append("WARSHALL-adapt: the native kernel and the compiled body differ")
    native_s, compiled_s = float(np.median(natives)), float(np.median(compiled))
    row = {"workload": "native WARSHALL-adapt vs compiled body", "routine": "WARSHALL-adapt", "n": adapt_n,
           "native_s": native_s, "compiled_s": compiled_s, "ratio": compiled_s / native_s}
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
    routine = m.jit.routines["r_" + name.lower()]
    loads.append((routine.compile_seconds, t3 - t2, getattr(routine, "loaded_by", "")))
print(json.dumps({"numba_import_s": t1 - t0, "load_s": loads[0][0], "second_routine_load_s": loads[1][0],
                  "first_call_s": loads[0][1], "second_first_call_s": loads[1][1],
                  "loaded_by": [l[2] for l in loads],
                  "pyc_written": not sys.dont_write_bytecode}))     # else starvm's modules compile from source each time
"""


def bench_cache(results, repeats: int = 1):
    """Compile from the disk cache, in fresh processes (the cache filled by the runs above):
    per pair, ``repeats`` processes; the row is the one whose first call (from the call to its
    result) was the median, with every process's first call beside it."""
    pairs = ((WARSHALL_C, "MY_WARSHALL_C", WARSHALL_ADAPT, "MY_WARSHALL_ADAPT"),
             (WARSHALL_ADAPT, "MY_WARSHALL_ADAPT", WARSHALL_C, "MY_WARSHALL_C"))
    for a, an, b, bn in pairs:
        runs = []
        for _ in range(repeats):
            out = subprocess.run([sys.executable, "-c", CACHE_PROBE, a, an, b, bn], capture_output=True, text=True,
                                 env={**os.environ, "STARVM_JIT_CACHE": os.environ["STARVM_JIT_CACHE"]}, check=True)
            runs.append(json.loads(out.stdout))
        runs.sort(key=lambda r: r["first_call_s"])
        row = {"workload": f"{an}, then {bn}, loaded from the disk cache (fresh process)", **runs[(len(runs) - 1) // 2],
               "runs_first_call_s": [r["first_call_s"] for r in runs]}
        results.append(row)
        print(row, flush=True)


COLD_PROBE = """
import json, sys, time
t0 = time.perf_counter(); import numba; from numba.core import event; t1 = time.perf_counter()
import starvm
source, name, call = sys.argv[1], sys.argv[2], sys.argv[3]
m = starvm.Machine(jit="on")
m.load(source, "bench.star")
args = {"table": (64, m.table(rows=64, cols=64)), "colloop": (10, 2, m.table(rows=64, cols=64)), "int": (1000,)}[call]
with event.install_recorder("numba:llvm_lock") as llvm:
    c2 = time.process_time(); t2 = time.perf_counter(); m.call(name, *args); t3 = time.perf_counter()
    c3 = time.process_time()
held, starts = 0.0, []
for ts, ev in llvm.buffer:
    if ev.is_start:
        starts.append(ts)
    else:
        held += ts - starts.pop()
r = m.jit.routines["r_" + name.lower()]
print(json.dumps({"numba_import_s": t1 - t0, "first_call_s": t3 - t2, "compile_s": r.compile_seconds, "llvm_s": held,
                  "first_call_cpu_s": c3 - c2}))
"""
COLD_ROUTINES = (("WARSHALL-C", WARSHALL_C, "MY_WARSHALL_C", "table"), ("WARSHALL (Listing 1)", WARSHALL, "MY_WARSHALL", "table"),
                 ("WARSHALL-adapt body", WARSHALL_ADAPT, "MY_WARSHALL_ADAPT", "table"),
                 ("for i := 1 to m do s := s + i", SUMLOOP, "MY_SUMLOOP", "int"),
                 ("COL/or/COL loop", COLLOOP, "MY_COLLOOP", "colloop"))


def bench_cold_compiles(results, repeats=1):
    """Each routine compiled in a fresh process with an empty module cache (the kernels it
    calls come from Numba's cache beside kernels.py, filled by the runs above): how long,
    and how much of it LLVM took (under Numba's LLVM lock); the rest is Numba's typing and
    lowering (LLVM inlines the kernels: kernels.py). With repeats > 1 the row is the run that took the least CPU time
    (the host is shared: the others were slowed by other work), all runs' CPU times beside it."""
    for label, source, name, call in COLD_ROUTINES:
        runs = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="starvm-cold-") as empty:
                out = subprocess.run([sys.executable, "-c", COLD_PROBE, source, name, call], capture_output=True,
                                     text=True, env={**os.environ, "STARVM_JIT_CACHE": empty}, check=True, timeout=600)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        best = min(runs, key=lambda r: r["first_call_cpu_s"])
        row = {"workload": f"cold compile of {name} (fresh process, empty cache)", "routine": label, **best}
        if repeats > 1:
            row["runs_cpu_s"] = [r["first_call_cpu_s"] for r in runs]
        results.append(row)
        print(row, flush=True)


def measured_stamp(repeats: int) -> dict:
    """When rows refreshed alone (--cold-only, --cache-only) were measured: commit, time, load."""
    return {"git": machine_info(("numba",)).get("git"), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "load_average_1min": os.getloadavg()[0], "repeats": repeats}


def cold_only(out: Path, quick: bool, repeats: int) -> int:
    """Measure again only the cold compiles of the last run's results file, stamped with the
    commit, time and load they were measured at (the rest of the file keeps its own)."""
    data = json.loads(out.with_suffix(".json").read_text())
    for label, source, name, call in COLD_ROUTINES:    # the kernels into Numba's cache first
        m = starvm.Machine(jit="on")
        m.load(source, "bench.star")
        m.call(name, *{"table": (64, m.table(rows=64, cols=64)), "colloop": (10, 2, m.table(rows=64, cols=64)),
                       "int": (1000,)}[call])
    rows = []
    bench_cold_compiles(rows, repeats)
    stamp = measured_stamp(repeats)
    for r in rows:
        r["measured"] = stamp
    data["results"] = [r for r in data["results"] if "llvm_s" not in r] + rows
    write(data, out, quick)
    return 0


def bench_auto_warshall_c(n, results, problems):
    """WARSHALL-C as printed on --backend auto with the default placement: a table of n < 2^20
    rows stays on the host, so the call runs on the CPU tier (auto_tier.py). Without a GPU
    the device side is the emulated one (STARVM_AUTO_EMULATE=1's)."""
    from starvm import config
    from starvm.backends import get_backend
    from starvm.backends.auto_backend import AutoBackend
    from starvm.backends.emulated_device import EmulatedDevice
    backend = AutoBackend(get_backend("numpy"), EmulatedDevice(), config.auto_gpu_rows(), config.auto_gpu_bits())
    adj = random_digraph(n)
    want = closure_numpy(adj)
    m = starvm.Machine(backend=backend, jit="on", out=open(os.devnull, "w"))
    m.load(WARSHALL_C, "bench.star")
    P = m.table(adj)
    cold, _ = time_call(m, "MY_WARSHALL_C", n, P)
    warms, cpus = [], []
    for _ in range(WARM_RUNS):
        P = m.table(adj)
        wall, cpu = cpu_time_call(m, "MY_WARSHALL_C", n, P)
        warms.append(wall)
        cpus.append(cpu)
    warm = min(warms)
    r = m.jit.routines["r_my_warshall_c"]
    if not np.array_equal(P.to_numpy(), want) or P.backend is not backend.host:
        problems.append(f"WARSHALL-C on auto n={n}: wrong closure or the table moved")
    if r.host is None or r.host.compiled_calls != 1 + WARM_RUNS:
        problems.append(f"WARSHALL-C on auto n={n}: not run on the CPU tier ({r.why})")
    row = {"workload": "WARSHALL-C as printed, --backend auto (emulated device), default placement: CPU tier "
                       "(cold: the module compiled above, same text)",
           "n": n, "cold_s": cold, "warm_s": warm, "warm_runs_s": warms, "warm_cpu_s": min(cpus),
           "compile_s": r.compile_seconds,
           "gpu_rows": backend.gpu_rows, "tier_calls": {"cpu": r.host.compiled_calls if r.host else 0,
                                                        "interpreted": r.calls - r.compiled_calls}}
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
             f"Load average when it finished: {os.getloadavg()[0]:.1f}. The host is shared with other engineers' work "
             "(tests, benchmarks) running at the same time: every figure is an upper bound.",
             "Star workloads are user-named copies of the library bodies (no native kernel applies). "
             f"Cold = first call in the process with an empty cache (compile included); warm = the fastest of "
             f"{WARM_RUNS} later calls (the Warshalls), else a later call.",
             "",
             "| workload | n | compiled cold, s | compiled warm, s | compile, s | interpreter, s (at n) | hand Numba, s | NumPy, s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    if not any("cold_s" in r and "ratio" not in r for r in results):     # a file of --cache-only rows alone
        lines = [doc.get("note", "`python bench/bench_compiled.py --cache-only`.")]
    for r in results:
        if "cold_s" not in r or "ratio" in r:
            continue
        interp = f"{r['interp_s']:.3f} (n={r.get('interp_n', r['n'])})" if "interp_s" in r else ""
        if "interp_us_per_iteration" in r:
            interp = f"{r['interp_us_per_iteration']:.2f} us/iteration"
        warm = f"{r['warm_s']:.4f}"
        if "warm_us_per_iteration" in r:
            warm += f" ({r['warm_us_per_iteration']:.3f} us/iteration)"
        lines.append(f"| {r['workload']} | {r['n']} | {r['cold_s']:.3f} | {warm} | {r.get('compile_s', 0):.3f} | "
                     f"{interp} | {r.get('hand_numba_s', float('nan')):.3f} | {r.get('numpy_s', float('nan')):.3f} |")
    cpus = [r for r in results if "warm_cpu_s" in r]
    if cpus:
        lines += ["", "CPU time of this process in the fastest warm call (what the call needs of one core, without "
                  "the time other processes held it):", ""]
        lines += [f"- {r['workload']}, n = {r['n']}: {r['warm_cpu_s']:.3f} s (wall {r['warm_s']:.3f} s)" for r in cpus]
    natives = [r for r in results if "ratio" in r]
    if natives:
        lines += ["", "Native kernels (starvm/native/, NumPy) against the compiled Star body of the same routine "
                  "under a user's name, same inputs, warm, medians of 3 runs (ratio = compiled / native; within 2x "
                  "the native is deleted):", "",
                  "| routine | rows (n) | native, s | compiled body, s | ratio |", "| --- | ---: | ---: | ---: | ---: |"]
        for r in natives:
            lines.append(f"| {r['routine']} | {r['n']} | {r['native_s']:.4f} | {r['compiled_s']:.4f} | {r['ratio']:.1f} |")
    lines += ["", "Loading compiled code from the disk cache in a fresh process:", ""]
    for r in results:
        if "load_s" in r:
            second = r.get("second_routine_load_s")
            direct = all(how == "direct" for how in r.get("loaded_by", [""]))
            lines.append(f"- {r['workload']}: `import numba` {r['numba_import_s']:.2f} s, then the first routine's "
                         f"load {r['load_s']:.3f} s "
                         + ("(cache.load_overload, without Numba's start-up)" if direct else "(with Numba's start-up)")
                         + (f", the second's {second:.3f} s" if second is not None else "")
                         + (f"; from the first call to its result {r['first_call_s']:.3f} s (fresh processes: "
                            + ", ".join(f"{t:.3f}" for t in r.get("runs_first_call_s", [r["first_call_s"]]))
                            + f"), loaded {' then '.join(r['loaded_by']) if any(r['loaded_by']) else 'through Numba'}"
                            + ("" if r.get("pyc_written", True) else ", Python modules compiled from source "
                               "(PYTHONDONTWRITEBYTECODE)")
                            if "first_call_s" in r else ""))
    stamp = next((r["measured"] for r in results if "load_s" in r and "measured" in r), None)
    if stamp:
        lines += ["", f"These loads were measured again (`--cache-only --cache-repeats {stamp.get('repeats', 1)}`) at git "
                  f"{((stamp.get('git') or {}).get('commit') or '?')[:12]} on {stamp['date']}, load average "
                  f"{stamp['load_average_1min']:.1f} when done."]
    colds = [r for r in results if "llvm_s" in r]
    if colds:
        lines += ["", "Cold compiles, each routine in a fresh process with an empty module cache (the kernels it "
                  "calls loaded from Numba's cache beside starvm/targets/numba/kernels.py): the first call, of which LLVM "
                  "(time under Numba's LLVM lock); the rest is Numba's typing and lowering (LLVM inlines the kernels):", "",
                  "| routine | `import numba`, s | compile (first call), s | of which LLVM, s | typing and lowering, s | "
                  "CPU time of the first call, s |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for r in colds:
            lines.append(f"| {r['routine']} | {r['numba_import_s']:.2f} | {r['compile_s']:.2f} | {r['llvm_s']:.2f} | "
                         f"{r['compile_s'] - r['llvm_s']:.2f} | {r.get('first_call_cpu_s', float('nan')):.2f}"
                         + (" (runs: " + ", ".join(f"{c:.2f}" for c in r["runs_cpu_s"]) + ")" if "runs_cpu_s" in r else "")
                         + " |")
        stamp = colds[0].get("measured")
        if stamp:
            commit = ((stamp.get("git") or {}).get("commit") or "?")[:12]
            lines += ["", f"These cold compiles were measured again (`--cold-only --cold-repeats {stamp['repeats']}`) "
                      f"at git {commit} on {stamp['date']}, load average {stamp['load_average_1min']:.1f} when done; "
                      f"each row is the run of {stamp['repeats']} fresh processes that took the least CPU time "
                      "(the CPU times of all runs beside it). The rest of this file is from the run in its header."]
    lines += ["", "What bounds each figure:", "",
              "- WARSHALL-C: one pass over the column's words per inner iteration (col_rmw: load column and W, "
              "store V and the column) against the hand loop's load-load-store; the rest is per-iteration "
              "bookkeeping (step counters, the step budget, the STEP hint). Same packed columns, so the "
              "ratio to the hand-written Numba loop is the tier's overhead.",
              "- WARSHALL-adapt body: `parallel for` runs iteration by iteration without a copy of the table "
              "(kernels.cow_*: the body reads columns i and k only, so column k is saved before each pivot and "
              "nothing else is copied); V := COL(i, P) is a view, so an iteration whose bit k is 0 touches one "
              "word; one with bit k set reads column i and W and writes V's own words and column i (4 passes over "
              "the column against the hand loop's read-read-write), plus the per-iteration checks and counters.",
              "- WARSHALL (Listing 1): the routine changes P only by ROW writes, so compiled code keeps P's rows "
              "as words beside the columns (kernels.rc_*): a row is gathered from the k columns once, then a "
              "ROW read copies ceil(k/64) words and `v := ROW; v := v or w; ROW := v` is one pass over them "
              "(row_rmw_rc) that flips in the columns only the bits that change (at most n^2 in the whole run, "
              "each a store to another column: cache misses bound it beside the word passes).",
              "- WARSHALL-C on auto: the same compiled code as on the NumPy backend (the table stays on the host "
              "below STARVM_AUTO_GPU_ROWS rows); PlacedRoutine's placement check is per call, not per iteration.",
              "- The scalar loop: one checked 64-bit add, the step-budget decrement and the loop per iteration.",
              "- Cold compiles: the kernels come from Numba's cache beside starvm/targets/numba/kernels.py (machine code "
              "and bitcode); LLVM links the bitcode of every kernel a routine calls into the routine's module, "
              "inlines the small ones and optimizes and compiles it all again with the routine, slow paths "
              "included (col_rmw_steps, asg, op_row_get: more than half of WARSHALL-C's module). A fresh "
              "process pays `import numba` and Numba's first-call start-up before any routine runs: a one-line "
              "function's first call takes about 0.4 s of CPU."]
    write_results(doc, path.with_suffix(".json"), lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--md-only", action="store_true", help="rewrite the .md from the .json of the last run")
    ap.add_argument("--cache-only", action="store_true", help="measure again only the loads from the disk cache "
                    "(into a new results file where --out names none)")
    ap.add_argument("--cache-repeats", type=int, default=1, help="fresh processes per load from the disk cache "
                    "(the median kept)")
    ap.add_argument("--natives-only", action="store_true", help="measure again only the natives against the bodies")
    ap.add_argument("--cold-only", action="store_true", help="measure again only the cold compiles")
    ap.add_argument("--cold-repeats", type=int, default=1, help="fresh processes per cold compile (the least CPU kept)")
    ap.add_argument("--out", default=None, help="results path without suffix (default bench/results/compiled_cpu[_quick])")
    ap.add_argument("--gpu", action="store_true", help="the GPU tier instead (CuPy backend): compiled_gpu_h100.*")
    ap.add_argument("--gpu-parts", default="", help="with --gpu: only these, comma-separated (warshall_adapt, "
                    "variants, barrier, search, colloop, warshall_c; default all)")
    args = ap.parse_args()
    if args.gpu:
        return main_gpu(args)
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / ("compiled_cpu_quick" if args.quick else "compiled_cpu")
    if args.cache_only:   # refresh only the cache figures of the last run
        known = out.with_suffix(".json")
        data = json.loads(known.read_text()) if known.exists() else new_document([], [])
        for src, routine in ((WARSHALL_C, "MY_WARSHALL_C"), (WARSHALL_ADAPT, "MY_WARSHALL_ADAPT")):
            m = starvm.Machine(jit="on")
            m.load(src, "bench.star")
            m.call(routine, 64, m.table(rows=64, cols=64))
        rows = []
        bench_cache(rows, args.cache_repeats)
        for r in rows:
            r["measured"] = measured_stamp(args.cache_repeats)
        data["results"] = [r for r in data["results"] if "load_s" not in r] + rows   # the cache rows only
        if "machine" not in data:    # a file from before the harness: the header of this machine
            data = new_document(data["results"], data.get("problems", []))
        write(data, out, args.quick)
        return 0
    if args.cold_only:
        return cold_only(out, args.quick, args.cold_repeats)
    if args.natives_only:   # refresh only the natives' rows of the last run
        data = json.loads(out.with_suffix(".json").read_text())
        rows, problems = [], []
        bench_natives(2000 if args.quick else 1 << 16, 300 if args.quick else 5000, rows, problems)
        data["results"] = [r for r in data["results"] if "ratio" not in r] + rows
        data["problems"] = [p for p in data.get("problems", []) if "native" not in p] + problems
        write(data, out, args.quick)
        return 1 if problems else 0
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
    bench_warshall("WARSHALL (Listing 1)", WARSHALL, "MY_WARSHALL", n, 100 if args.quick else 300, results, problems)
    bench_auto_warshall_c(n, results, problems)
    bench_sumloop(10_000 if args.quick else 1_000_000, results, problems)
    bench_colloop(n, 10_000 if args.quick else 1_000_000, results, problems)
    bench_natives(2000 if args.quick else 1 << 16, 300 if args.quick else n, results, problems)
    bench_cache(results)
    bench_cold_compiles(results, args.cold_repeats)
    write(new_document(results, problems), out, args.quick)
    for p in problems:
        print("WRONG:", p)
    return 1 if problems else 0


# ------------------------------------------------------------------ the GPU tier (--gpu): one CUDA kernel per routine
GPU_TITLE = "The compiled tier on the GPU (one CUDA kernel per routine), CuPy backend"
MIN_BODY = """
proc MY_MIN(T: table; X: slice(T); var Z: slice(T));
var j: integer; Y: slice(T);
begin
  Z := X;
  for j := 1 to NCOLS(T) do
  begin
    Y := Z and not COL(j, T);
    if SOME(Y) then Z := Y;
  end;
end;
"""
MATCH_BODY = """
proc MY_MATCH(T: table; X: slice(T); v: word(T); var Z: slice(T));
var j: integer;
begin
  Z := X;
  for j := 1 to NCOLS(T) do
    if v(j) = 1 then Z := Z and COL(j, T)
    else Z := Z and not COL(j, T);
end;
"""


def _gpu_sync():
    import cupy as cp
    cp.cuda.Device().synchronize()


def _gpu_times(fn, setup=None, runs=5):
    """(first run, median of the later runs) in seconds, the device synchronised."""
    import statistics
    out = []
    for _ in range(runs):
        if setup is not None:
            setup()
        out.append(clock(fn, _gpu_sync))
    return out[0], statistics.median(out[1:])


class _LaunchTimer:
    """Wraps a compiled routine's kernel: device events around each launch (the kernel alone,
    without the call's host side)."""

    def __init__(self, fn):
        self.fn, self.events = fn, []
        self.num_regs = getattr(fn, "num_regs", -1)

    def __call__(self, *args, **kw):
        import cupy as cp
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        self.fn(*args, **kw)
        end.record()
        self.events.append((start, end))

    def median_s(self):
        import cupy as cp
        import statistics
        _gpu_sync()
        return statistics.median(cp.cuda.get_elapsed_time(a, b) / 1e3 for a, b in self.events) if self.events else None


def _time_launches(m, pyname):
    """Put a _LaunchTimer around each kernel of the routine; returns them."""
    r = m.jit.routines[pyname]
    timers = []
    for key, (fn, threads, blocks, R) in list(r.kernels.items()):
        t = fn if isinstance(fn, _LaunchTimer) else _LaunchTimer(fn)
        t.events.clear()
        r.kernels[key] = (t, threads, blocks, R)
        timers.append(t)
    return timers


def gpu_barrier(results):
    """The grid barrier alone (cuda_prelude.gsync_or) 5000 times on the grids the tier launches:
    what one costs, against the generation-word barrier of before (the switch GEN_BARRIER)."""
    import cupy as cp
    from starvm.ir.ops import BASE_OPS
    from starvm.targets.cuda.prelude import PRELUDE, defines
    from starvm.jit.cuda_runtime import PFOR_THREADS, THREADS, _sm_count
    sms = _sm_count()
    for switch, what in (("", "arrival counter, release/acquire"), ("FENCE_BARRIER", "arrival counter, full fences"),
                         ("GEN_BARRIER", "generation word, as before")):
        src = (f"#define {switch} 1\n" if switch else "") + defines(len(BASE_OPS)) + PRELUDE + r"""
extern "C" __global__ void barriers(u64* bar, long long n, u64* out) {
    Ctx c; c.bar = bar; c.nb = 0ULL; c.gen = 0u; c.gt = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = 0; i < n; ++i) if (gsync_or(c, 0)) { out[0] = 1ULL; return; }
}"""
        fn = cp.RawModule(code=src, options=("--std=c++14",), enable_cooperative_groups=True).get_function("barriers")
        for blocks, threads in ((sms, PFOR_THREADS), (sms, THREADS), (2 * sms, THREADS)):
            bar, out = cp.zeros(1, cp.uint64), cp.zeros(1, cp.uint64)

            def go():
                bar.fill(0)
                fn((blocks,), (threads,), (bar, np.int64(5000), out))
            first, warm = _gpu_times(go, runs=5)
            row = {"workload": f"grid barrier alone ({what})",
                   "n": 5000, "cold_s": first, "warm_s": warm, "us_per_barrier": warm / 5000 * 1e6,
                   "blocks": blocks, "threads": threads}
            results.append(row)
            print(row, flush=True)


def _kernel_shape(m, pyname):
    r = m.jit.routines[pyname]
    shapes = [{"R": R, "KW": key[1], "RP": key[2], "threads": threads, "blocks": blocks,
               "regs": int(getattr(fn, "num_regs", -1))} for key, (fn, threads, blocks, R) in r.kernels.items()]
    return {"compile_s": r.compile_seconds, "launches": r.launches, "reruns": r.reruns, "kernels": shapes}


_CLOSURES: dict = {}       # n -> the hand kernel's closure of random_digraph(n)


def gpu_warshall_adapt(n, results, problems, interp=True, compare=True, label=""):
    """WARSHALL-adapt's body under a user's name vs the hand kernel (stdlib name) and a per-k
    CuPy loop from Python."""
    import cupy as cp
    adj = random_digraph(n)
    m = starvm.Machine(backend="cupy", jit="on", native=False)
    m.load(WARSHALL_ADAPT, "bench.star")
    box = {}
    first, warm = _gpu_times(lambda: m.call("MY_WARSHALL_ADAPT", n, box["P"]),
                             lambda: box.__setitem__("P", m.table(adj)), runs=4)
    got = box["P"].to_numpy()
    if not compare:      # against the hand kernel's closure of the same graph (NumPy's takes minutes at 16384)
        want = _CLOSURES[n] if n in _CLOSURES else closure_numpy(adj)
        if not np.array_equal(got, want):
            problems.append(f"WARSHALL-adapt body n={n} {label}: wrong closure")
        row = {"workload": f"WARSHALL-adapt body (user name){label}", "n": n, "cold_s": first, "warm_s": warm,
               "us_per_pivot": warm / n * 1e6, "barriers": _barriers(n), "target_s": 0.015 if n <= 5000 else 0.150,
               **_kernel_shape(m, "r_my_warshall_adapt")}
        results.append(row)
        print(row, flush=True)
        return
    hand = starvm.Machine(backend="cupy", native=True)
    hbox = {}
    _, hand_s = _gpu_times(lambda: hand.call("WARSHALL-adapt", n, hbox["P"]),
                           lambda: hbox.__setitem__("P", hand.table(adj)), runs=4)
    _CLOSURES[n] = hbox["P"].to_numpy()
    if not np.array_equal(got, _CLOSURES[n]):
        problems.append(f"WARSHALL-adapt body n={n}: compiled result differs from the hand kernel's")
    # plain CuPy: per pivot k, the rows whose bit k is set take column k (as the paper's kernel)
    data0 = m.table(adj).data

    def plain():
        P = data0.copy()
        for k in range(n):
            bits = (P[:, k >> 6] >> np.uint64(k & 63)) & np.uint64(1)
            P |= P[k][None, :] * bits[:, None]
        box["plain"] = P
    _, plain_s = _gpu_times(plain, runs=3)
    row = {"workload": "WARSHALL-adapt body (user name)", "n": n, "cold_s": first, "warm_s": warm,
           "hand_kernel_s": hand_s, "plain_cupy_s": plain_s, **_kernel_shape(m, "r_my_warshall_adapt"),
           "barriers": _barriers(n), "target_s": 0.015 if n <= 5000 else 0.150}
    row["us_per_pivot"] = warm / n * 1e6
    if interp:
        mi = starvm.Machine(backend="cupy", jit="off", native=False)
        mi.load(WARSHALL_ADAPT, "bench.star")
        Q = mi.table(adj)
        row["interp_s"] = clock(lambda: mi.call("MY_WARSHALL_ADAPT", n, Q), _gpu_sync)
    results.append(row)
    print(row, flush=True)
    cp.get_default_memory_pool().free_all_blocks()


def _barriers(n):
    """Grid barriers of one WARSHALL-adapt call: one a pivot and one at the end (a pivot loop),
    or two a pivot (STARVM_GPU_PIVOT_LOOP=0)."""
    return 2 * n if os.environ.get("STARVM_GPU_PIVOT_LOOP", "1") == "0" else n + 1


def _table_of_values(m, vals):
    """A rows x 32 table whose row i holds vals[i] (column 1 the most significant bit)."""
    import cupy as cp
    rows = vals.size
    T = m.table(rows=rows, cols=32)
    shifts = cp.arange(64, dtype=cp.uint64)
    for j in range(32):
        bits = ((vals >> np.uint32(31 - j)) & np.uint32(1)).astype(cp.uint64).reshape(-1, 64)
        T.data[j] = cp.sum(bits << shifts, axis=1, dtype=cp.uint64)
    return T


def gpu_search(rows, results, problems):
    """MIN and MATCH bodies (user names) over rows x 32 bits, beside cupy.min and the hand kernels."""
    import cupy as cp
    rng = cp.random.default_rng(5)
    vals = rng.integers(0, 1 << 32, size=rows, dtype=cp.uint64).astype(cp.uint32)
    m = starvm.Machine(backend="cupy", jit="on", native=False)
    m.load(MIN_BODY + MATCH_BODY, "bench.star")
    T = _table_of_values(m, vals)
    ones = np.ones(rows, bool)
    X = m.slice(ones)
    _, cupy_min_s = _gpu_times(lambda: cp.min(vals), runs=7)
    target = int(cp.min(vals).get())
    pattern = [(int(vals[rows // 3].get()) >> (31 - j)) & 1 for j in range(32)]
    W = m.word(np.array(pattern, bool))     # made once: the call is what is timed (made in the call: +~20 us)
    for name, args, want in (
            ("MY_MIN", lambda Z: (T, X, Z), vals == target),
            ("MY_MATCH", lambda Z: (T, X, W, Z), vals == vals[rows // 3])):
        Z = m.slice(np.zeros(rows, bool))
        first, warm = _gpu_times(lambda: m.call(name, *args(Z)), runs=7)
        got = Z.to_numpy()
        timers = _time_launches(m, "r_" + name.lower())
        _gpu_times(lambda: m.call(name, *args(Z)), runs=7)
        kernel_s = min((t.median_s() for t in timers if t.events), default=None)
        if not np.array_equal(got, cp.asnumpy(want)):
            problems.append(f"{name} over {rows} rows: wrong rows marked")
        hand = starvm.Machine(backend="cupy", native=True)
        HT = _table_of_values(hand, vals)
        HX, HZ = hand.slice(ones), hand.slice(np.zeros(rows, bool))
        hargs = (HT, HX, HZ) if name == "MY_MIN" else (HT, HX, hand.word(np.array(pattern, bool)), HZ)
        _, hand_s = _gpu_times(lambda: hand.call(name[3:], *hargs), runs=7)
        row = {"workload": f"{name[3:]} body (user name), {rows} rows x 32 bits", "n": rows, "cold_s": first,
               "warm_s": warm, "cupy_min_s": cupy_min_s, "hand_kernel_s": hand_s,
               "ratio_to_cupy_min": warm / cupy_min_s, "target": "<= 2x cupy.min",
               "bytes_read": 32 * rows // 8, "kernel_s": kernel_s,
               "kernel_TB_per_s": 32 * rows / 8 / kernel_s / 1e12 if kernel_s else None,
               **_kernel_shape(m, "r_" + name.lower())}
        results.append(row)
        print(row, flush=True)
        del HT, HX, HZ
    # MIN as before fused slice logic (UNFUSED: every word of every column read), and on equal
    # values (Z keeps every row, so every word of every column is read: the fused kernel's worst case)
    for label, env, data in ((", slice logic op by op as before (UNFUSED)", {"STARVM_GPU_SWITCHES": "UNFUSED"}, vals),
                             (", equal values (every word of every column read)", {}, None)):
        os.environ.update(env)
        try:
            TT = T if data is not None else _table_of_values(m, cp.full(rows, 0x5A5A5A5A, cp.uint32))
            want = cp.asnumpy(vals == target) if data is not None else np.ones(rows, bool)
            Z = m.slice(np.zeros(rows, bool))
            first, warm = _gpu_times(lambda: m.call("MY_MIN", TT, X, Z), runs=7)
            if not np.array_equal(Z.to_numpy(), want):
                problems.append(f"MY_MIN over {rows} rows{label}: wrong rows marked")
            timers = _time_launches(m, "r_my_min")
            _gpu_times(lambda: m.call("MY_MIN", TT, X, Z), runs=7)
            kernel_s = min((t.median_s() for t in timers if t.events), default=None)
            row = {"workload": f"MIN body (user name), {rows} rows x 32 bits{label}",
                   "n": rows, "cold_s": first, "warm_s": warm, "cupy_min_s": cupy_min_s,
                   "ratio_to_cupy_min": warm / cupy_min_s, "target": "<= 2x cupy.min", "bytes_read": 32 * rows // 8,
                   "kernel_s": kernel_s, "kernel_TB_per_s": 32 * rows / 8 / kernel_s / 1e12 if kernel_s else None,
                   **_kernel_shape(m, "r_my_min")}
            results.append(row)
            print(row, flush=True)
            TT = None
        finally:
            for k in env:
                os.environ.pop(k, None)
    # MATCH launched as the resident grid of the barrier kernels (STARVM_GPU_FREE_R=0: R = 64 words a
    # thread, 255 registers) and with 2 words a thread instead of 4
    want = cp.asnumpy(vals == vals[rows // 3])
    for free_r in ("0", "2"):
        os.environ["STARVM_GPU_FREE_R"] = free_r
        try:
            Z = m.slice(np.zeros(rows, bool))
            first, warm = _gpu_times(lambda: m.call("MY_MATCH", T, X, W, Z), runs=7)
            if not np.array_equal(Z.to_numpy(), want):
                problems.append(f"MY_MATCH over {rows} rows, STARVM_GPU_FREE_R={free_r}: wrong rows marked")
            row = {"workload": f"MATCH body (user name), {rows} rows x 32 bits, STARVM_GPU_FREE_R={free_r}",
                   "n": rows, "cold_s": first, "warm_s": warm, "cupy_min_s": cupy_min_s,
                   "ratio_to_cupy_min": warm / cupy_min_s, "target": "<= 2x cupy.min", "bytes_read": 32 * rows // 8,
                   **_kernel_shape(m, "r_my_match")}
            results.append(row)
            print(row, flush=True)
        finally:
            os.environ.pop("STARVM_GPU_FREE_R", None)
    del T, X
    cp.get_default_memory_pool().free_all_blocks()


def gpu_colloop(n, reps, results, problems):
    adj = random_digraph(n)
    m = starvm.Machine(backend="cupy", jit="on")
    m.load(COLLOOP, "bench.star")
    P = m.table(adj)
    cold = clock(lambda: m.call("MY_COLLOOP", reps, 2, P), _gpu_sync)
    warm = clock(lambda: m.call("MY_COLLOOP", reps, 2, P), _gpu_sync)
    want = adj.copy()
    want[:, 1] |= adj[:, 0]
    if not np.array_equal(P.to_numpy(), want):
        problems.append("COL/or/COL loop wrong on the GPU")
    row = {"workload": "V := COL(i,P); V := V or W; COL(i,P) := V (GPU)", "n": n, "reps": reps, "cold_s": cold,
           "warm_s": warm, "warm_us_per_iteration": warm / reps * 1e6, "target_us": 2.0,
           **_kernel_shape(m, "r_my_colloop")}
    results.append(row)
    print(row, flush=True)


def gpu_warshall_c_auto(n, results, problems):
    """WARSHALL-C as printed on --backend auto: as placed by default (a 5000-row table stays on
    the host) and with STARVM_AUTO_GPU_ROWS low enough that it is made on the device."""
    adj = random_digraph(n)
    want = closure_numpy(adj)
    for gpu_rows in (None, 4096):
        if gpu_rows is not None:
            os.environ["STARVM_AUTO_GPU_ROWS"] = str(gpu_rows)
        try:
            if gpu_rows is None:
                m = starvm.Machine(backend="auto", jit="on")
            else:     # the registry keeps one auto backend: this one makes 5000-row tables on the device
                from starvm.backends import get_backend
                from starvm.backends.auto_backend import AutoBackend
                m = starvm.Machine(backend=AutoBackend(get_backend("numpy"), get_backend("cupy"), gpu_rows,
                                                       1 << 20), jit="on")
            m.load(WARSHALL_C, "bench.star")
            box = {}
            first, warm = _gpu_times(lambda: m.call("MY_WARSHALL_C", n, box["P"]),
                                     lambda: box.__setitem__("P", m.table(adj)), runs=3)
            if not np.array_equal(box["P"].to_numpy(), want):
                problems.append(f"WARSHALL-C on auto (gpu_rows={gpu_rows}) wrong")
            r = m.jit.routines.get("r_my_warshall_c")
            row = {"workload": "WARSHALL-C as printed, --backend auto, " +
                               ("default placement (the table on the host: the CPU tier)" if gpu_rows is None else
                                f"STARVM_AUTO_GPU_ROWS={gpu_rows} (the table made on the device)"),
                   "tier_calls": {"cpu": getattr(getattr(r, "host", None), "compiled_calls", 0),
                                  "gpu": getattr(getattr(r, "gpu", None), "compiled_calls", 0)},
                   "n": n, "cold_s": first, "warm_s": warm, "target_s": 0.5,
                   "ran_compiled": bool(r and r.compiled_calls), "why": r.why if r else "",
                   **(_kernel_shape(m, "r_my_warshall_c") if r is not None and hasattr(r, "kernels") else {})}
            results.append(row)
            print(row, flush=True)
        finally:
            os.environ.pop("STARVM_AUTO_GPU_ROWS", None)


def write_gpu(doc, path):
    lines = ["`python bench/bench_compiled.py --gpu`: user-named copies of library bodies (no native kernel "
             "applies), each a single cooperative CUDA kernel per call (starvm/targets/cuda/routine.py). Cold = the first "
             "call in the process (NVRTC compile, or CuPy's kernel cache); warm = median of the later calls.", "",
             "| workload | n | cold, s | warm, s | target | plain / hand, s | kernel (R, blocks x threads, regs) |",
             "| --- | ---: | ---: | ---: | --- | --- | --- |"]
    for r in doc["results"]:
        if "cold_s" not in r:
            lines.append(f"| {r['workload']} | {r['n']} | - | - | - | ran compiled: {r['ran_compiled']} ({r['why']}) | |")
            continue
        plain = ", ".join(f"{k[:-2]} {r[k]:.5f}" for k in ("plain_cupy_s", "hand_kernel_s", "cupy_min_s", "interp_s")
                          if k in r)
        shape = "; ".join(f"R={k['R']} RP={k['RP']} KW={k['KW']}, {k['blocks']} x {k['threads']}, {k['regs']} regs"
                          for k in r.get("kernels", []))
        target = r.get("target") or (f"<= {r['target_s']} s" if "target_s" in r else
                                     f"<= {r['target_us']} us/it" if "target_us" in r else "-")
        warm = f"{r['warm_s']:.5f}" + "".join(f" ({r[k]:.3f} {unit})" for k, unit in (
            ("warm_us_per_iteration", "us/it"), ("us_per_pivot", "us/pivot"), ("us_per_barrier", "us/barrier"))
            if k in r)
        if r.get("kernel_s"):
            plain += f"; kernel alone {r['kernel_s'] * 1e3:.3f} ms ({r['kernel_TB_per_s']:.2f} TB/s)"
        if "blocks" in r and not r.get("kernels"):
            shape = f"{r['blocks']} x {r['threads']}"
        lines.append(f"| {r['workload']} | {r['n']} | {r['cold_s']:.3f} | {warm} | {target} | {plain} | {shape} |")
    lines += ["", "What bounds each figure:", "",
              "- WARSHALL-adapt body: a pivot loop (a FOR whose body is one parallel for): per pivot one grid "
              "barrier (n + 1 in all; `barriers`; the barrier alone is a row of its own), which also carries the OR "
              "of the failure flags; then each block loads the pivot column (the buffer that iteration k of the "
              "previous pivot filled) into shared memory once, and the n iterations run on groups of lanes, "
              "ceil(n / groups) of them a group one after another: n = 5000 on 16 lanes an iteration (5 words a "
              "lane, two iterations a warp at once, 4224 groups on 132 x 512 threads: 2 a group), each group "
              "keeping its iterations' own columns in registers from pivot to pivot (no load); n = 16384 on 32 "
              "lanes (8 words a lane, 8 iterations a warp), each an L2 round trip for its own column (the table, "
              "33.5 MB, read once a pivot from L2). Each iteration is a shuffle for bit k, an OR, and stores of "
              "the words that changed, plus the checks and step counts: with the columns in registers the SMs' "
              "instruction issue, not memory latency, bounds the iterations (at 87b51af, 32 lanes: 132 x 256 "
              "threads, 6 iterations a warp, 3.40 us a pivot; 132 x 512, 3 a warp, 3.42), so us/pivot is one barrier "
              "(the barrier alone is a row of its own) plus the iterations' instructions. The rows below the "
              "first two change one thing each. The hand kernel does 64 pivots per launch in shared memory.",
              "- MIN body: 32 COL reads of rows/64 words each (bytes_read, an upper bound: `Y := Z and not COL(j, T)` "
              "is fused word by word and reads a column's word only where Z's word is not 0, so on random values "
              "the columns after the first few are mostly not read; on equal values every word is read) plus one "
              "grid barrier per column (SOME, of the OR made as Y was). Z (16 MB at 2^27 rows) stays in the "
              "registers of a resident grid (33 MB on the H100): R = 64 words a thread at 255 registers spills, so "
              "the tier takes R = 16 capped at 64 registers (4 blocks an SM), Y waiting in shared memory across "
              "the barrier. Nsight Compute at 67d6c7b (R = 64): 8 warps an SM, 0.17 instructions issued a cycle "
              "per scheduler, DRAM at 22% of its peak, stalls on L1TEX (spills and loads): latency- and "
              "instruction-bound, not bandwidth-bound; 'kernel alone' (device events around the launch) against "
              "the call gives the host's share (bench/gpu_call_phases.py takes it apart); cupy.min reads rows x 4 "
              "bytes once.",
              "- MATCH body: no grid barrier (its bit tests read a word every thread holds), so it is an ordinary "
              "launch of 4 words a thread: one pass over the 32 columns, a word's columns read only while its Z "
              "word is not 0 (fused, as MIN); the call adds the host's share as for MIN.",
              "- COL/or/COL loop: one block of threads (79 words for n = 5000), no barrier: each iteration is a "
              "load, an OR and a store per word plus the uniform bookkeeping (steps, the step budget) in every "
              "thread: latency-bound.",
              "- WARSHALL-C: one block for n = 5000; per pivot a ROW read (the block's warps ballot 32 columns' "
              "bits at a time into shared memory) and the inner iterations, each a dependent L2 round trip for "
              "column i plus the scalar bookkeeping run by every thread: latency-bound."]
    write_results(doc, path.with_suffix(".json"), lines)


GPU_PARTS = ("warshall_adapt", "variants", "barrier", "search", "colloop", "warshall_c")


def main_gpu(args) -> int:
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / "compiled_gpu_h100"
    results, problems = [], []
    quick = args.quick
    parts = set(GPU_PARTS if not args.gpu_parts else args.gpu_parts.split(","))
    if parts - set(GPU_PARTS):
        print(f"--gpu-parts: unknown {sorted(parts - set(GPU_PARTS))}; choose from {','.join(GPU_PARTS)}")
        return 2
    for n in ((300,) if quick else (5000, 16384)) if "warshall_adapt" in parts else ():
        gpu_warshall_adapt(n, results, problems, interp=(n <= 5000))
    # parallel for's grid and the pivot loop, one change each: the barrier's cost grows with the
    # blocks, an iteration's latency with the iterations a warp runs
    variants = [(", 32 lanes an iteration (one iteration a warp, as before)", {"STARVM_GPU_LANES": "32"}, (5000,)),
                (", 16 lanes an iteration", {"STARVM_GPU_LANES": "16"}, (16384,)),
                (", own columns loaded every pivot (OWN_LOADS)", {"STARVM_GPU_SWITCHES": "OWN_LOADS"}, (5000,)),
                (", full fences in the grid barrier (FENCE_BARRIER)", {"STARVM_GPU_SWITCHES": "FENCE_BARRIER"},
                 (5000, 16384)),
                (", these three as before (32 lanes, OWN_LOADS, FENCE_BARRIER)",
                 {"STARVM_GPU_LANES": "32", "STARVM_GPU_SWITCHES": "OWN_LOADS,FENCE_BARRIER"}, (5000,)),
                (", 256 threads a block", {"STARVM_GPU_PFOR_THREADS": "256"}, (5000, 16384)),
                (", 1024 threads a block (64 registers)", {"STARVM_GPU_PFOR_THREADS": "1024"}, (5000,)),
                (", the generation-word barrier of before (GEN_BARRIER)", {"STARVM_GPU_SWITCHES": "GEN_BARRIER"},
                 (5000,)),
                (", every word of COL(i, P) := V stored (STORE_ALL)", {"STARVM_GPU_SWITCHES": "STORE_ALL"},
                 (5000, 16384)),
                (", each warp loading the pivot column from L2 (WARP_LOADS)", {"STARVM_GPU_SWITCHES": "WARP_LOADS"},
                 (5000,)),
                (", two barriers a pivot (STARVM_GPU_PIVOT_LOOP=0)", {"STARVM_GPU_PIVOT_LOOP": "0"}, (5000,))]
    for label, env, sizes in variants if "variants" in parts else ():
        os.environ.update(env)
        try:
            for n in ((300,) if quick else sizes):
                gpu_warshall_adapt(n, results, problems, compare=False, label=label)
        finally:
            for k in env:
                os.environ.pop(k, None)
    if "barrier" in parts:
        gpu_barrier(results)
    if "search" in parts:
        gpu_search(1 << (20 if quick else 27), results, problems)
    if "colloop" in parts:
        gpu_colloop(300 if quick else 5000, 10_000 if quick else 1_000_000, results, problems)
    if "warshall_c" in parts:
        gpu_warshall_c_auto(300 if quick else 5000, results, problems)
    doc = document("compiled_gpu", GPU_TITLE, machine=machine_info(("numba", "cupy")),
                   device=device_info(starvm.Machine(backend="cupy")), results=results, problems=problems)
    write_gpu(doc, out)
    for p in problems:
        print("WRONG:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
