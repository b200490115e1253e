"""Where a GPU-tier call's time goes (issue 10): the MIN and MATCH bodies of bench_compiled.py
over ROWS x 32 bits on the CuPy backend, each call taken apart on the host.

    python bench/gpu_call_phases.py [--rows 134217728] [--out DIR] [--min-variants]

For each body: the whole call (Machine.call with the word argument made in the call, as
bench_compiled --gpu times it, and made once), the routine called directly (no Machine.call),
the kernel alone (device events around the launch), each step of GpuRoutine.run timed with
the device synchronised before and after it (so the steps' own costs, not their overlap), and
a cProfile of 50 calls; then what the CuPy operations of a call cost alone (an allocation, a
small device copy, a small read-back, a launch). Prints a table; DIR gets phases.json and
profile_*.txt. Needs CuPy and a GPU. The current runs: bench/results/gpu_call_phases_h100.json and
bench/results/gpu_call_phases_h100_profile_match.txt; --min-variants: bench/results/compiled_gpu_h100_min_variants.json.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import starvm  # noqa: E402
from bench.bench_compiled import MATCH_BODY, MIN_BODY, _LaunchTimer, _table_of_values
from starvm.benchmarking import device_info, document, machine_info, write_json  # noqa: E402


def sync():
    import cupy as cp
    cp.cuda.Device().synchronize()


def median_us(fn, runs=21, synced=True):
    out = []
    for _ in range(runs):
        if synced:
            sync()
        t0 = time.perf_counter()
        fn()
        if synced:
            sync()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e6


def events_us(fn, runs=21):
    import cupy as cp
    out = []
    for _ in range(runs):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    return statistics.median(out)


class Stamps:
    """perf_counter stamps with the device synchronised at each (each step's own cost)."""

    def __init__(self):
        self.t = {}

    def start(self):
        sync()
        self.last = time.perf_counter()

    def __call__(self, name):
        sync()
        now = time.perf_counter()
        self.t.setdefault(name, []).append(now - self.last)
        self.last = time.perf_counter()


def phased_run(r, args, st: Stamps):
    """GpuRoutine.run's steps (a call with no failure, no `parallel for`), stamped."""
    import cupy as cp
    from starvm.jit import cuda_runtime as cr
    st.start()
    converted = r.convert_args(args)
    st("convert_args")
    caps, kw = r.shape(converted)
    fn, threads, blocks, R = r.kernel_for(caps, kw)
    st("shape+kernel_for")
    nout = len(r.plan.outputs)
    vcap = max(caps, kw)
    io_ = r.io_block(nout)
    st("io_block")
    scr, ob = r.buffers(vcap)
    vout = cp.empty(max(1, nout) * vcap, cp.uint64)
    st("buffers+vout")
    kargs = r.kernel_args(converted, io_, ob, scr, vcap, cr._UNLIMITED, vout)
    st("kernel_args")
    t0 = time.perf_counter()
    fn((blocks,), (threads,), kargs)
    st.t.setdefault("launch (host only)", []).append(time.perf_counter() - t0)
    st("launch+kernel")
    back = io_.get()
    st("io.get")
    sth = back[:cr.STATUS_SIZE]
    counts = back[cr.STATUS_SIZE:cr.STATUS_SIZE + cr.NK]
    out = back[cr.STATUS_SIZE + cr.NK:cr.STATUS_SIZE + cr.NK + nout]
    obh = np.zeros(0, np.int64)
    r.finish_gpu(counts, sth, obh, cr._UNLIMITED, None, time.perf_counter())
    st("finish_gpu")
    res = r.results_gpu(args, out, vout, vcap)
    st("results_gpu")
    return res


def cupy_ops(rows):
    """What the CuPy operations of one call cost alone, on the host, device synchronised."""
    import cupy as cp
    vcap = rows // 64
    tmpl = cp.zeros(64, cp.int64)
    small = cp.zeros(64, cp.int64)
    pinned = cp.cuda.alloc_pinned_memory(64 * 8)
    host = np.frombuffer(pinned, np.int64, 64)
    big = cp.empty(vcap, cp.uint64)
    src = "extern \"C\" __global__ void k20(" + ", ".join(
        f"long long a{i}" for i in range(19)) + ", long long* o) { if (threadIdx.x + blockIdx.x == 0) o[0] = a0; }"
    k = cp.RawModule(code=src).get_function("k20")
    kargs = tuple(np.int64(i) for i in range(19)) + (small,)
    k((1,), (32,), kargs)
    ops = {
        "cp.empty(vcap) from the pool": lambda: cp.empty(vcap, cp.uint64),
        "tmpl.copy() (64 int64)": lambda: tmpl.copy(),
        "cp.copyto(small, tmpl)": lambda: cp.copyto(small, tmpl),
        "small.data.copy_from_device_async": lambda: small.data.copy_from_device_async(tmpl.data, 512),
        "small.get() (512 B)": lambda: small.get(),
        "small.get(out=pinned)": lambda: small.get(out=host),
        "launch 20 args, 1 block": lambda: k((1,), (32,), kargs),
        "big[0:vcap] view": lambda: big[0:vcap],
        "device synchronize": sync,
        "cp.cuda.Event() x2 + record": lambda: (cp.cuda.Event().record(), cp.cuda.Event().record()),
    }
    return {name: median_us(fn, 101) for name, fn in ops.items()}


MIN_REMAT = r"""
// MIN's body by hand as the tier would compile it with Y rematerialised: only Z in registers
// (R words a thread), Y = Z and not COL(j) computed for SOME, then again (COL(j) from L2) for
// Z := Y after the barrier
extern "C" __global__ void min_remat(const u64* T, i64 n, i64 k, u64* zout, u64* bar, u64* red) {
    Ctx c; c.bar = bar; c.red = red; c.nb = 0ULL; c.gen = 0u; c.ri = 0;
    c.gt = (i64)blockIdx.x * blockDim.x + threadIdx.x; c.G = (i64)gridDim.x * blockDim.x;
    i64 W = nwords(n);
    V<RR> z; z.n = n; d_set(z, c.gt, c.G);
    for (i64 j = 0; j < k; ++j) {
        const u64* col = T + j * W;
        u64 a = 0ULL;
#pragma unroll
        for (int r = 0; r < RR; ++r) { i64 w = c.gt + r * c.G; a |= w < W ? (z.w[r] & ~__ldcg(col + w)) : 0ULL; }
        if (grid_red(c, a != 0ULL ? 1ULL : 0ULL, 0)) {
#pragma unroll
            for (int r = 0; r < RR; ++r) { i64 w = c.gt + r * c.G; if (w < W) z.w[r] &= ~__ldcg(col + w); }
        }
    }
    d_store(zout, z, c.gt, c.G);
}"""


def min_prototype(T, want, rr, threads):
    """The kernel alone of MIN_REMAT (rr words a thread): microseconds, registers, correct."""
    import cupy as cp
    from starvm.ir.ops import BASE_OPS
    from starvm.targets.cuda.prelude import PRELUDE, defines
    src = f"#define RR {rr}\n" + defines(len(BASE_OPS)) + PRELUDE + MIN_REMAT
    fn = cp.RawModule(code=src, options=("--std=c++14",), enable_cooperative_groups=True).get_function("min_remat")
    W = (T.n + 63) // 64
    blocks = -(-W // (rr * threads))
    bar, red = cp.zeros(1, cp.uint64), cp.zeros(9, cp.uint64)
    z = cp.empty(W, cp.uint64)

    def go():
        bar.fill(0)
        red[:6] = 0
        red[6:] = ~np.uint64(0)
        fn((blocks,), (threads,), (T.data, np.int64(T.n), np.int64(T.k), z, bar, red))
    go()
    sync()
    got = np.unpackbits(cp.asnumpy(z).view(np.uint8), count=T.n, bitorder="little").astype(bool)
    return {"RR": rr, "threads": threads, "blocks": blocks, "regs": int(getattr(fn, "num_regs", -1)),
            "local_bytes": int(getattr(fn, "local_size_bytes", -1)), "kernel_us": events_us(go),
            "correct": bool(np.array_equal(got, want))}


# MIN's kernel under the settings that choose how it is built (cuda_runtime, cuda_lower.SWITCHES)
MIN_VARIANTS = (
    ("default", {}),
    ("op by op, as before (UNFUSED)", {"STARVM_GPU_SWITCHES": "UNFUSED"}),
    ("R = 32, 128 threads, 4 blocks an SM (FIT), Y in shared memory",
     {"STARVM_GPU_R": "32", "STARVM_GPU_THREADS": "128", "STARVM_GPU_FIT": "1"}),
    ("R = 32, 128 threads FIT, Y in registers (NO_YSH)",
     {"STARVM_GPU_R": "32", "STARVM_GPU_THREADS": "128", "STARVM_GPU_FIT": "1", "STARVM_GPU_SWITCHES": "NO_YSH"}),
    ("R = 16, 256 threads, 4 blocks an SM (FIT), Y in shared memory", {"STARVM_GPU_R": "16", "STARVM_GPU_FIT": "1"}),
    ("R = 16 FIT, Y in registers (NO_YSH)",
     {"STARVM_GPU_R": "16", "STARVM_GPU_FIT": "1", "STARVM_GPU_SWITCHES": "NO_YSH"}),
)
_VARIANT_ENV = ("STARVM_GPU_SWITCHES", "STARVM_GPU_R", "STARVM_GPU_FIT", "STARVM_GPU_THREADS")


def min_variants(rows, variants=MIN_VARIANTS, runs=15):
    """MIN's body over rows x 32 bits under each variant, on random values (each column
    leaves about half the rows: after a few columns most words of Z are 0 and their column
    words are not read) and on equal values (Z keeps every row: every word of every column is
    read), beside cupy.min: the call (median, device synchronised), the kernel alone (events),
    its shape, registers and local memory; results checked against cupy.min."""
    import os
    import cupy as cp
    rng = cp.random.default_rng(7)
    datasets = {"random": rng.integers(0, 1 << 32, size=rows, dtype=cp.uint64).astype(cp.uint32),
                "all equal": cp.full(rows, 0x5A5A5A5A, cp.uint32)}
    out = []
    for data, vals in datasets.items():
        m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
        m.load(MIN_BODY, "bench.star")
        T = _table_of_values(m, vals)
        X = m.slice(np.ones(rows, bool))
        want = cp.asnumpy(vals == cp.min(vals))
        cupy_min = median_us(lambda: cp.min(vals), runs)
        for label, env in variants:
            saved = {k: os.environ.get(k) for k in _VARIANT_ENV}
            for k in saved:
                os.environ.pop(k, None)
            os.environ.update(env)
            try:
                Z = m.slice(np.zeros(rows, bool))
                m.call("MY_MIN", T, X, Z)
                r = m.jit.routines["r_my_min"]
                ok = bool(np.array_equal(Z.to_numpy(), want))
                call = median_us(lambda: m.call("MY_MIN", T, X, Z), runs)
                fn, threads, blocks, R = r.kernel_for((rows + 63) // 64, 1)
                key = next(k for k, v in r.kernels.items() if v[0] is fn or getattr(v[0], "fn", None) is fn)
                timer = _LaunchTimer(fn)
                r.kernels[key] = (timer, threads, blocks, R)
                for _ in range(runs):
                    m.call("MY_MIN", T, X, Z)
                r.kernels[key] = (fn, threads, blocks, R)
                row = {"data": data, "variant": label, "env": env, "rows": rows, "correct": ok,
                       "call_us": call, "kernel_us": timer.median_s() * 1e6, "cupy_min_us": cupy_min,
                       "ratio": call / cupy_min, "R": R, "blocks": blocks, "threads": threads,
                       "regs": int(getattr(fn, "num_regs", -1)), "local_bytes": int(getattr(fn, "local_size_bytes", -1))}
            except Exception as e:  # noqa: BLE001 - a variant that does not build or launch: said
                row = {"data": data, "variant": label, "env": env, "error": f"{type(e).__name__}: {e}"[:300]}
            finally:
                for k, v in saved.items():
                    os.environ.pop(k, None)
                    if v is not None:
                        os.environ[k] = v
            out.append(row)
            print(json.dumps(row), flush=True)
        T = X = Z = m = None      # the next data set's table in their place
        cp.get_default_memory_pool().free_all_blocks()
    return out


def ncu_body(which, rows):
    import cupy as cp
    m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
    if which == "min":
        vals = cp.random.default_rng(7).integers(0, 1 << 32, size=rows, dtype=cp.uint64).astype(cp.uint32)
        m.load(MIN_BODY, "bench.star")
        T, X, Z = _table_of_values(m, vals), m.slice(np.ones(rows, bool)), m.slice(np.zeros(rows, bool))
        for _ in range(3):
            m.call("MY_MIN", T, X, Z)
        ok = bool(np.array_equal(Z.to_numpy(), cp.asnumpy(vals == cp.min(vals))))
    else:
        from bench.bench_compiled import WARSHALL_ADAPT, random_digraph
        m.load(WARSHALL_ADAPT, "bench.star")
        adj = random_digraph(5000)
        for _ in range(3):
            P = m.table(adj)
            m.call("MY_WARSHALL_ADAPT", 5000, P)
        ok = bool(P.to_numpy()[np.nonzero(adj)].all())
    sync()
    print(which, "ran, result plausible:", ok)
    return 0 if ok else 1


def print_variants(rows_out):
    print(f"{'data':10} {'variant':52} {'call us':>8} {'kernel':>8} {'x min':>6} {'R':>3} {'grid':>10} {'regs':>4} "
          f"{'local':>5} ok")
    for r in rows_out:
        if "error" in r:
            print(f"{r['data']:10} {r['variant']:52} {r['error']}")
            continue
        print(f"{r['data']:10} {r['variant']:52} {r['call_us']:8.1f} {r['kernel_us']:8.1f} {r['ratio']:6.2f} "
              f"{r['R']:3d} {str(r['blocks']) + 'x' + str(r['threads']):>10} {r['regs']:4d} {r['local_bytes']:5d} "
              f"{r['correct']}")


def main():
    import cupy as cp
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1 << 27)
    ap.add_argument("--out", default=None)
    ap.add_argument("--ncu-body", choices=("min", "warshall"), default=None,
                    help="only call MIN's body (ROWS x 32 bits) or WARSHALL-adapt's (n = 5000) three times")
    ap.add_argument("--min-variants", action="store_true",
                    help="only MIN's kernel under each of MIN_VARIANTS, on random and on equal values")
    a = ap.parse_args()
    rows = a.rows
    out_dir = Path(a.out) if a.out else None
    if a.ncu_body:      # a few calls of one body, for Nsight Compute to profile a launch of its kernel
        return ncu_body(a.ncu_body, rows)
    if a.min_variants:
        got = min_variants(rows)
        if out_dir:
            write_json(document("gpu_min_variants", "MIN's body under each way of building its kernel",
                                machine=machine_info(("cupy",)), rows=rows, variants=got),
                       out_dir / "min_variants.json")
        print_variants(got)
        return 1 if any(not r.get("correct", False) for r in got) else 0
    rng = cp.random.default_rng(5)
    vals = rng.integers(0, 1 << 32, size=rows, dtype=cp.uint64).astype(cp.uint32)
    m = starvm.Machine(backend="cupy", jit="on", native=False, out=io.StringIO())
    m.load(MIN_BODY + MATCH_BODY, "bench.star")
    T = _table_of_values(m, vals)
    X = m.slice(np.ones(rows, bool))
    pattern = [(int(vals[rows // 3].get()) >> (31 - j)) & 1 for j in range(32)]
    W = m.word(np.array(pattern, bool))
    report = document("gpu_call_phases", "A GPU-tier call of the MIN and MATCH bodies taken apart",
                      machine=machine_info(("cupy",)), device=device_info(m),
                      rows=rows, cupy_min_us=median_us(lambda: cp.min(vals)),
                      cupy_min_events_us=events_us(lambda: cp.min(vals)), bodies={})
    wants = {"MY_MIN": cp.asnumpy(vals == cp.min(vals)), "MY_MATCH": cp.asnumpy(vals == vals[rows // 3])}
    for name in ("MY_MATCH", "MY_MIN"):
        Z = m.slice(np.zeros(rows, bool))
        args = (T, X, W, Z) if name == "MY_MATCH" else (T, X, Z)
        for _ in range(3):
            m.call(name, *args)
        ok = bool(np.array_equal(Z.to_numpy(), wants[name]))
        r = m.jit.routines["r_" + name.lower()]
        info = r.compiled.info
        conv = [m._from_python(x, p, info) for x, p in zip(args, info.params)]
        row = {"correct": ok, "state": r.state, "why": r.why,
               "call_us": median_us(lambda: m.call(name, *args)),
               "routine_direct_us": median_us(lambda: r(*conv)),
               "unsynced_call_us": median_us(lambda: m.call(name, *args), synced=False)}
        if name == "MY_MATCH":
            row["call_word_made_in_call_us"] = median_us(
                lambda: m.call(name, T, X, m.word(np.array(pattern, bool)), Z))
        (key, (fn, threads, blocks, R)), = [(k, v) for k, v in r.kernels.items()]
        row["kernel"] = {"R": R, "blocks": blocks, "threads": threads, "regs": int(getattr(fn, "num_regs", -1)),
                         "local_bytes": int(getattr(fn, "local_size_bytes", -1))}
        timer = _LaunchTimer(fn)
        r.kernels[key] = (timer, threads, blocks, R)
        for _ in range(21):
            m.call(name, *args)
        row["kernel_alone_us"] = timer.median_s() * 1e6
        r.kernels[key] = (fn, threads, blocks, R)
        st = Stamps()
        for _ in range(21):
            phased_run(r, conv, st)
        row["phases_us"] = {k: statistics.median(v) * 1e6 for k, v in st.t.items()}
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(50):
            m.call(name, *args)
        sync()
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(30)
        if out_dir:
            (out_dir / f"profile_{name}.txt").write_text(s.getvalue())
        row["correct_after"] = bool(np.array_equal(Z.to_numpy(), wants[name]))
        report["bodies"][name] = row
        print(name, json.dumps(row, indent=1), flush=True)
    # MIN's kernel with Y computed again after the barrier (STARVM_GPU_SWITCHES=RECOMPUTE), where the switch exists
    import os
    from starvm.targets.cuda.routine import SWITCHES
    if "RECOMPUTE" in SWITCHES:
        os.environ["STARVM_GPU_SWITCHES"] = "RECOMPUTE"
        try:
            Z = m.slice(np.zeros(rows, bool))
            r = m.jit.routines["r_my_min"]
            m.call("MY_MIN", T, X, Z)
            key = [k for k in r.kernels if "RECOMPUTE" in str(k)][0]
            fn, threads, blocks, R = r.kernels[key]
            call_us = median_us(lambda: m.call("MY_MIN", T, X, Z))
            timer = _LaunchTimer(fn)
            r.kernels[key] = (timer, threads, blocks, R)
            for _ in range(21):
                m.call("MY_MIN", T, X, Z)
            r.kernels[key] = (fn, threads, blocks, R)
            report["min_recompute"] = {
                "call_us": call_us, "R": R, "blocks": blocks, "threads": threads, "regs": int(getattr(fn, "num_regs", -1)),
                "local_bytes": int(getattr(fn, "local_size_bytes", -1)),
                "kernel_alone_us": timer.median_s() * 1e6,
                "correct": bool(np.array_equal(Z.to_numpy(), wants["MY_MIN"]))}
            print("MIN, RECOMPUTE:", report["min_recompute"], flush=True)
        finally:
            os.environ.pop("STARVM_GPU_SWITCHES", None)
    report["cupy_ops_us"] = cupy_ops(rows)
    report["min_remat"] = []
    for rr, threads in ((64, 256), (32, 512), (64, 128)):
        try:
            report["min_remat"].append(min_prototype(T, wants["MY_MIN"], rr, threads))
        except Exception as e:  # noqa: BLE001 - a variant that does not compile or launch: said
            report["min_remat"].append({"RR": rr, "threads": threads, "error": f"{type(e).__name__}: {e}"[:300]})
    if out_dir:
        write_json(report, out_dir / "phases.json")
    print(f"rows {rows}  cupy.min {report['cupy_min_us']:.1f} us (events {report['cupy_min_events_us']:.1f})")
    for name, row in report["bodies"].items():
        print(f"{name}: call {row['call_us']:.1f} direct {row['routine_direct_us']:.1f} "
              f"kernel {row['kernel_alone_us']:.1f} = {row['call_us'] / report['cupy_min_us']:.2f}x cupy.min; "
              f"correct {row['correct']} {row['correct_after']}")
        print("   " + ", ".join(f"{k} {v:.1f}" for k, v in row["phases_us"].items()))
    print("MIN remat prototype:", report["min_remat"])
    print("cupy ops: " + ", ".join(f"{k} {v:.1f}" for k, v in report["cupy_ops_us"].items()))


if __name__ == "__main__":
    main()
