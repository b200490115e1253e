"""WARSHALL-adapt's body under a user's name on the GPU tier, under variants of its pivot loop,
and the grid barrier alone under variants of its arrival and spin: one compact table.

    python bench/gpu_pivot_variants.py [--sizes 5000,16384] [--out PATH] [--only LABEL;...] [--barrier]

Each variant is a set of environment settings (STARVM_GPU_SWITCHES, STARVM_GPU_OWNC,
STARVM_GPU_PFOR_THREADS, ...) read when its kernel is built; every result is checked
against the hand kernel's closure of the same graph. --out PATH writes PATH.json and PATH.md
through the harness (starvm/benchmarking). For measuring (issue 10: n = 5000 at <= 3.0 us a pivot);
bench/bench_compiled.py --gpu gives the figures that are reported. The current run:
bench/results/gpu_pivot_variants_h100.json.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from bench.bench_compiled import WARSHALL_ADAPT, _gpu_sync, random_digraph

import starvm  # noqa: E402
from starvm.benchmarking import clock, device_info, document, machine_info, write_results  # noqa: E402

# (label, environment) of the pivot loop; each runs at every size
VARIANTS = [
    ("default", {}),
    ("full fences in the barrier (FENCE_BARRIER, as before)", {"STARVM_GPU_SWITCHES": "FENCE_BARRIER"}),
    ("own columns loaded every pivot (OWN_LOADS)", {"STARVM_GPU_SWITCHES": "OWN_LOADS"}),
    ("OWNC=3", {"STARVM_GPU_OWNC": "3"}),
    ("16 lanes an iteration", {"STARVM_GPU_LANES": "16"}),
    ("16 lanes, OWNC=0", {"STARVM_GPU_LANES": "16", "STARVM_GPU_OWNC": "0"}),
    ("16 lanes, OWNC=1", {"STARVM_GPU_LANES": "16", "STARVM_GPU_OWNC": "1"}),
    ("16 lanes, 2 blocks an SM x 256", {"STARVM_GPU_LANES": "16", "STARVM_GPU_PFOR_THREADS": "256",
                                        "STARVM_GPU_PFOR_BLOCKS_PER_SM": "2"}),
    ("16 lanes, 1024 threads, OWNC=1", {"STARVM_GPU_LANES": "16", "STARVM_GPU_PFOR_THREADS": "1024",
                                        "STARVM_GPU_OWNC": "1"}),
    ("8 lanes", {"STARVM_GPU_LANES": "8"}),
]
LARGE = ("default", "full fences in the barrier (FENCE_BARRIER, as before)", "16 lanes an iteration")  # n > 8192
_KEYS = sorted({k for _label, env in VARIANTS for k in env})

# the grid barrier alone: the arrival (fence + atomicAdd, or one atom.add.release) and the
# spin (volatile loads, or ld.acquire; with or without __nanosleep between loads)
BARRIER = r"""
typedef unsigned long long u64;
#define BAR_COUNT 0xFFFFFFFFFFULL
extern "C" __global__ void barriers(u64* bar, long long n, u64* out) {
    __shared__ int sflag_;
    u64 nb = 0ULL;
    for (long long i = 0; i < n; ++i) {
        int f = __syncthreads_or(0);
        if (threadIdx.x == 0) {
            nb += gridDim.x;
            u64 add = f ? (BAR_COUNT + 2ULL) : 1ULL, v;
#if RELACQ
            asm volatile("atom.add.release.gpu.u64 %0, [%1], %2;" : "=l"(v) : "l"(bar), "l"(add) : "memory");
            v += add;
            while ((v & BAR_COUNT) < nb && v <= BAR_COUNT) {
                if (SLEEP) __nanosleep(SLEEP);
                asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(bar) : "memory");
            }
#else
            volatile u64* vb = bar;
            __threadfence();
            v = atomicAdd(bar, add) + add;
            while ((v & BAR_COUNT) < nb && v <= BAR_COUNT) { if (SLEEP) __nanosleep(SLEEP); v = *vb; }
            __threadfence();
#endif
            sflag_ = v > BAR_COUNT ? 1 : 0;
        }
        __syncthreads();
        if (sflag_) { out[0] = 1ULL; return; }
    }
}
"""
BARRIER_VARIANTS = [("fence + atomicAdd, volatile spin (the tier's)", 0, 0), ("... + nanosleep(32)", 0, 32),
                    ("... + nanosleep(200)", 0, 200), ("atom.add.release, ld.acquire spin", 1, 0),
                    ("atom.add.release, ld.acquire spin + nanosleep(32)", 1, 32)]


def barrier_rows(blocks_threads, count=5000):
    import cupy as cp
    rows = []
    for label, relacq, sleep in BARRIER_VARIANTS:
        src = f"#define RELACQ {relacq}\n#define SLEEP {sleep}\n" + BARRIER
        fn = cp.RawModule(code=src, options=("--std=c++14",), enable_cooperative_groups=True).get_function("barriers")
        for blocks, threads in blocks_threads:
            bar, out = cp.zeros(1, cp.uint64), cp.zeros(1, cp.uint64)

            def go():
                bar.fill(0)
                fn((blocks,), (threads,), (bar, np.int64(count), out))
            times = [clock(go, _gpu_sync) for _ in range(5)]
            rows.append({"what": "barrier", "variant": label, "grid": f"{blocks}x{threads}",
                         "us": statistics.median(times[1:]) / count * 1e6})
            print(rows[-1], flush=True)
    return rows


def warshall_rows(sizes, only):
    import cupy as cp
    rows = []
    want = {}
    for n in sizes:
        adj = random_digraph(n)
        hand = starvm.Machine(backend="cupy", native=True)
        H = hand.table(adj)
        hand.call("WARSHALL-adapt", n, H)
        want[n] = H.to_numpy()
        for label, env in VARIANTS:
            if (only and label not in only) or (n > 8192 and label not in LARGE):
                continue
            for k in _KEYS:
                os.environ.pop(k, None)
            os.environ.update(env)
            try:
                m = starvm.Machine(backend="cupy", jit="on", native=False)
                m.load(WARSHALL_ADAPT, "variants.star")
                times, ok = [], True
                for _ in range(4 if n <= 8192 else 3):
                    P = m.table(adj)
                    _gpu_sync()
                    times.append(clock(lambda: m.call("MY_WARSHALL_ADAPT", n, P), _gpu_sync))
                    ok = ok and np.array_equal(P.to_numpy(), want[n])
                r = m.jit.routines["r_my_warshall_adapt"]
                shapes = [f"R={R} RP={key[2]} {blocks}x{threads} {int(getattr(fn, 'num_regs', -1))} regs "
                          f"{int(getattr(fn, 'local_size_bytes', 0) or 0)} B local"
                          for key, (fn, threads, blocks, R) in r.kernels.items()]
                warm = statistics.median(times[1:])
                rows.append({"what": "warshall_adapt", "variant": label, "n": n, "warm_s": warm,
                             "us_per_pivot": warm / n * 1e6, "cold_s": times[0], "correct": ok,
                             "compiled_calls": r.compiled_calls, "reruns": r.reruns, "kernels": shapes})
            except Exception as e:  # noqa: BLE001 - a variant that does not build: said, the rest go on
                rows.append({"what": "warshall_adapt", "variant": label, "n": n, "error": f"{type(e).__name__}: {e}"[:300]})
            print(rows[-1], flush=True)
            cp.get_default_memory_pool().free_all_blocks()
        for k in _KEYS:
            os.environ.pop(k, None)
    return rows


def table(rows) -> str:
    out = [f"{'variant':58} {'n':>6} {'us/pivot':>9} {'warm ms':>8} ok  kernel"]
    for r in rows:
        if r["what"] == "barrier":
            out.append(f"{'barrier: ' + r['variant']:58} {r['grid']:>6} {r['us']:9.3f}")
        elif "error" in r:
            out.append(f"{r['variant']:58} {r['n']:6} {r['error']}")
        else:
            out.append(f"{r['variant']:58} {r['n']:6} {r['us_per_pivot']:9.3f} {r['warm_s'] * 1e3:8.2f} "
                       f"{'y' if r['correct'] and r['compiled_calls'] and not r['reruns'] else 'NO'}  "
                       f"{'; '.join(r['kernels'])}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,16384")
    ap.add_argument("--only", default="", help="variant labels, separated by ';' (default: all)")
    ap.add_argument("--barrier", action="store_true", help="the grid barrier alone under variants, too")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    from starvm.jit.cuda_runtime import _sm_count
    rows = []
    if args.barrier:
        sms = _sm_count()
        rows += barrier_rows(((sms, 512), (sms, 1024)))
    rows += warshall_rows([int(x) for x in args.sizes.split(",") if x], [x for x in args.only.split(";") if x])
    text = table(rows)
    print(text)
    if args.out:
        doc = document("gpu_pivot_variants", "WARSHALL-adapt's body under variants of its pivot loop (GPU tier)",
                       machine=machine_info(("cupy",)), device=device_info(starvm.Machine(backend="cupy")),
                       results=rows)
        write_results(doc, Path(args.out).with_suffix(".json"), ["```", text, "```"])
    return 0 if all(r.get("correct", True) and "error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
