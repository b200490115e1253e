"""Correctness and speed of the fused MATCH / MIN / MAX kernels (starvm/native/match/cuda.py, min/cuda.py).

    python3 bench/check_search_gpu.py [--rows 134217728] [--runs 30] [--no-variants] [--json PATH]

Run on a machine with an NVIDIA GPU and CuPy, from the repository root. In one run:

(a) correctness: match.cuda.match / min.cuda.extreme against a NumPy model on the host (the
    bit-sliced table unpacked into integers) for sizes n = 1 .. 1 000 003 (one word, partial
    last words, many blocks), k = 1 .. 64, tables random / all ones / all zeros / heavy ties /
    mostly ones / descending (every block the best so far), control slices random / all ones
    / all zeros / one row / sparse; the memory each result is allocated from is filled with
    ones first (a word the kernels forget shows). Then the same through starvm.Machine, and
    on a second CUDA stream. Every launch shape timed in (b) is checked the same way first.
(b) speed over --rows rows x 32 columns (random uint32 values, column 1 the most significant
    bit), X all ones: MIN, MAX, MATCH (probe: the value of row rows/3) beside cupy.min over
    the same values as a uint32 array, in the same run and interleaved round by round, median
    of --runs, L2 flushed before each op. "GPU ms" is CUDA-event time with the host's launch
    latency hidden (a 0.2 ms spin kernel runs first, so the GPU never waits for the host,
    except where the op itself synchronises: the old MATCH copies its pattern to the host);
    "wall ms" is perf_counter around the call plus a device synchronise, as bench/bench_gpu.py
    measures (its figures, quoted, were taken through Machine.call). The previous kernels
    (embedded below, as in the commit before this one) run in the same rounds, and all of it
    again on data that defeats the early exits (all rows equal; values descending with the
    row). Each timed result is checked against cupy's own answer. Then each launch shape in
    VARIANTS is checked and timed (random data and all rows equal), to pick the default.

Exits 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import cupy as cp  # noqa: E402

import starvm  # noqa: E402
from starvm.benchmarking import clock, device_info, document, machine_info, synchronizer, write_json  # noqa: E402
from starvm.native.match.cuda import match as _match  # noqa: E402
from starvm.native.min.cuda import extreme as _extreme  # noqa: E402
from starvm.native.shared import cuda_search  # noqa: E402
from types import SimpleNamespace  # noqa: E402

# MATCH's and MIN/MAX's kernels and their launch shape
sc = SimpleNamespace(match=_match, extreme=_extreme, launch_shape=cuda_search.launch_shape,
                     configure=cuda_search.configure)
from tests.reference.search_model import model_bools, pack, reference, row_mask, values, word_of  # noqa: E402  (the one NumPy model)

M64 = (1 << 64) - 1
OLD_QUOTED = {"cupy.min": 0.204, "MIN": 0.292, "MAX": 0.315, "MATCH": 0.268}   # bench/results/gpu_h100.md (wall)
VARIANTS = [  # (block, words per thread, batch); the first is the module's default
    (256, 1, 8), (256, 1, 0), (256, 1, 4), (256, 1, 16), (256, 2, 8), (128, 1, 8), (512, 1, 8)]


def rand_words(rng, shape):
    return rng.integers(0, M64, size=shape, dtype=np.uint64, endpoint=True)


def make_table(rng, n, k, mode):
    W = (n + 63) // 64
    if mode == "random":
        T = rand_words(rng, (k, W))
    elif mode == "ones":
        T = np.full((k, W), M64, dtype=np.uint64)
    elif mode == "zeros":
        T = np.zeros((k, W), dtype=np.uint64)
    elif mode == "ties":                           # values 0..3: many rows tie, across blocks
        T = np.zeros((k, W), dtype=np.uint64)
        T[-min(k, 2):] = rand_words(rng, (min(k, 2), W))
    elif mode == "dense":                          # mostly ones
        T = ~(rand_words(rng, (k, W)) & rand_words(rng, (k, W)) & rand_words(rng, (k, W)))
    elif mode == "descending":                     # every block of MIN improves on the earlier ones
        vals = np.arange(n, 0, -1, dtype=np.uint64)
        if k < 64:
            vals = np.minimum(vals, np.uint64((1 << k) - 1))
        T = np.stack([pack(((vals >> np.uint64(k - 1 - c)) & np.uint64(1)).astype(bool)) for c in range(k)])
    else:
        raise ValueError(mode)
    return T & row_mask(n)


def make_control(rng, n, mode):
    if mode == "ones":
        return row_mask(n)
    if mode == "zeros":
        return np.zeros((n + 63) // 64, dtype=np.uint64)
    if mode == "one_row":
        return pack(np.arange(n) == int(rng.integers(n)))
    if mode == "sparse":
        return pack(rng.random(n) < 0.01)
    return pack(rng.random(n) < 0.5)


class Tab:                                         # what the search kernels read of a table
    def __init__(self, data, n):
        self.data, self.n, self.k = data, n, data.shape[0]


def poison(words):
    junk = cp.full(words, M64, dtype=cp.uint64)    # the pool hands this block out next
    del junk


# ------------------------------------------------------------------ (a) correctness
def check_kernels(full: bool, label: str) -> int:
    """Compare match/extreme with the model; returns the number of mismatches."""
    rng = np.random.default_rng(2016)
    sizes = [1, 63, 64, 65, 1000, 70_001, 1_000_003] if full else [65, 70_001, 300_007]
    ks = [1, 7, 13, 32, 33, 63, 64] if full else [7, 32, 64]
    tmodes = ["random", "ones", "zeros", "ties", "dense", "descending"]
    xmodes = ["random", "ones", "zeros", "one_row", "sparse"]
    bad = cases = 0
    for n in sizes:
        for k in ks:
            big = n > 100_000
            for tmode in (["random", "ties", "descending"] if big else tmodes):
                T = make_table(rng, n, k, tmode)
                dT = Tab(cp.asarray(T), n)
                vals = values(T, n)
                for xmode in (["random", "ones"] if big else xmodes):
                    X = make_control(rng, n, xmode)
                    dX = cp.asarray(X)
                    if rng.random() < 0.7:
                        probe = int(vals[int(rng.integers(n))])
                    else:
                        probe = int(rand_words(rng, 1)[0]) >> (64 - k)
                    for name in ("MIN", "MAX", "MATCH"):
                        poison(T.shape[1])
                        if name == "MATCH":
                            got = sc.match(dT, dX, cp.asarray(word_of(probe, k)), k)
                        else:
                            got = sc.extreme(dT, dX, name == "MAX")
                        want = reference(name, vals, X, n, probe)
                        cases += 1
                        if not np.array_equal(cp.asnumpy(got), want):
                            bad += 1
                            if bad <= 10:
                                print(f"  MISMATCH [{label}] {name} n={n} k={k} table={tmode} X={xmode}")
    print(f"  kernels [{label}]: {cases} cases, {bad} mismatches", flush=True)
    return bad


def check_machine() -> int:
    """The registered routines through starvm.Machine, Z holding ones before the call."""
    rng = np.random.default_rng(7)
    m = starvm.Machine(backend="cupy", native=True)
    bad = cases = 0
    for n, k in [(1, 1), (63, 7), (64, 32), (65, 64), (1000, 32), (70_001, 13)]:
        for trial in range(3):
            T = rng.random((n, k)) < (0.5 if trial == 0 else 0.95)
            X = [rng.random(n) < 0.5, np.ones(n, bool), np.zeros(n, bool)][trial]
            v = T[int(rng.integers(n))]
            for name in ("MIN", "MAX", "MATCH"):
                Z = m.slice(np.ones(n, bool))
                args = (m.table(T), m.slice(X)) + ((m.word(v),) if name == "MATCH" else ()) + (Z,)
                m.call(name, *args)
                cases += 1
                if not np.array_equal(Z.to_numpy(), model_bools(name, T, X, v)):
                    bad += 1
                    print(f"  MISMATCH [Machine] {name} n={n} k={k} trial={trial}")
    if m.native_timing[0] != cases:
        bad += 1
        print(f"  the native kernels ran {m.native_timing[0]} times for {cases} calls")
    # on another stream (its own scratch), interleaved with the default stream
    rng2 = np.random.default_rng(11)
    n, k = 200_003, 20
    T = make_table(rng2, n, k, "random")
    X = make_control(rng2, n, "random")
    dT, dX = Tab(cp.asarray(T), n), cp.asarray(X)
    s = cp.cuda.Stream(non_blocking=True)
    cp.cuda.Device().synchronize()                 # the uploads above are on the default stream
    with s:
        a = sc.extreme(dT, dX, False)
    b = sc.extreme(dT, dX, True)
    s.synchronize()
    cases += 2
    for name, got in (("MIN", a), ("MAX", b)):
        if not np.array_equal(cp.asnumpy(got), reference(name, values(T, n), X, n, 0)):
            bad += 1
            print(f"  MISMATCH [streams] {name}")
    # back to back, no synchronisation between calls (the scratch is reset on the device)
    runs = []
    for i in range(12):
        n, k = (1_000_003, 32) if i % 2 else (4099, 64)
        T = make_table(rng2, n, k, ["random", "ties", "descending"][i % 3])
        X = make_control(rng2, n, "random")
        dT, dX = Tab(cp.asarray(T), n), cp.asarray(X)
        name = ("MIN", "MAX", "MATCH", "MAX")[i % 4]
        vals = values(T, n)
        probe = int(vals[n // 2])
        runs.append((name, vals, X, n, probe, dT, dX))
    cp.cuda.Device().synchronize()
    outs = [sc.match(dT, dX, cp.asarray(word_of(probe, dT.k)), dT.k) if name == "MATCH"
            else sc.extreme(dT, dX, name == "MAX") for name, _, _, _, probe, dT, dX in runs]
    for (name, vals, X, n, probe, _, _), got in zip(runs, outs):
        cases += 1
        if not np.array_equal(cp.asnumpy(got), reference(name, vals, X, n, probe)):
            bad += 1
            print(f"  MISMATCH [back to back] {name} n={n}")
    print(f"  Machine, streams, back to back: {cases} cases, {bad} mismatches", flush=True)
    return bad


# ------------------------------------------------------------------ the previous kernels
_OLD_SRC = r"""
extern "C" __global__ void match_rows(const unsigned long long* T, const unsigned long long* X,
                                      const unsigned long long* vmask, int k, long long W,
                                      unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w >= W) return;
    unsigned long long z = X[w];
    for (int j = 0; j < k && z; ++j) z &= ~(T[(long long)j * W + w] ^ vmask[j]);
    Z[w] = z;
}
extern "C" __global__ void extreme_local(const unsigned long long* T, const unsigned long long* X,
                                         int k, long long W, int want_max,
                                         unsigned long long* cand, unsigned long long* local,
                                         unsigned long long* global) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    unsigned long long z = 0ULL, val = ~0ULL;
    if (w < W) {
        z = X[w];
        if (z) {
            val = 0ULL;
            for (int j = 0; j < k; ++j) {
                unsigned long long col = T[(long long)j * W + w];
                unsigned long long y = want_max ? (z & col) : (z & ~col);
                unsigned long long bit = 1ULL << (k - 1 - j);
                if (y) { z = y; if (want_max) val |= bit; }
                else if (!want_max) val |= bit;
            }
            if (want_max) val = (k == 64 ? ~val : (~val & ((1ULL << k) - 1)));
        }
        cand[w] = z;
        local[w] = val;
    }
    for (int off = 16; off; off >>= 1) {
        unsigned long long o = __shfl_down_sync(0xffffffffu, val, off);
        val = o < val ? o : val;
    }
    if ((threadIdx.x & 31) == 0 && val != ~0ULL) atomicMin(global, val);
}
extern "C" __global__ void extreme_select(const unsigned long long* cand, const unsigned long long* local,
                                          const unsigned long long* global, long long W,
                                          unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w < W) Z[w] = (local[w] == global[0]) ? cand[w] : 0ULL;
}
"""
_old = {}


def _old_k(name):
    if not _old:
        mod = cp.RawModule(code=_OLD_SRC)
        for f in ("match_rows", "extreme_local", "extreme_select"):
            _old[f] = mod.get_function(f)
    return _old[name]


def _grid256(W):
    return (max(1, (W + 255) // 256),), (256,)


def old_match(T, X, v, k):
    W = T.data.shape[1]
    bits = np.unpackbits(cp.asnumpy(v).view(np.uint8), count=k, bitorder="little")
    vmask = cp.asarray(np.where(bits.astype(bool), np.uint64(M64), np.uint64(0)))
    Z = cp.empty(W, dtype=cp.uint64)
    _old_k("match_rows")(*_grid256(W), (T.data, X, vmask, np.int32(k), np.int64(W), Z))
    return Z


def old_extreme(T, X, want_max):
    W = T.data.shape[1]
    cand = cp.empty(W, dtype=cp.uint64)
    local = cp.empty(W, dtype=cp.uint64)
    glob = cp.full(1, M64, dtype=cp.uint64)
    _old_k("extreme_local")(*_grid256(W), (T.data, X, np.int32(T.k), np.int64(W), np.int32(want_max),
                                           cand, local, glob))
    Z = cp.empty(W, dtype=cp.uint64)
    _old_k("extreme_select")(*_grid256(W), (cand, local, glob, np.int64(W), Z))
    return Z


# ------------------------------------------------------------------ (b) speed
_AUX_SRC = r"""
// Warp w packs rows 64w .. 64w+63 of vals into word w of each of the k columns; column c
// takes bit k-1-c of a value (column 1 the most significant bit).
extern "C" __global__ void pack_u32(const unsigned int* vals, long long n, int k, long long W,
                                    unsigned long long* T) {
    long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (w >= W) return;
    long long r = w * 64 + lane;
    unsigned int a = r < n ? vals[r] : 0u, b = r + 32 < n ? vals[r + 32] : 0u;
    for (int c = 0; c < k; ++c) {
        unsigned int lo = __ballot_sync(0xffffffffu, (a >> (k - 1 - c)) & 1u);
        unsigned int hi = __ballot_sync(0xffffffffu, (b >> (k - 1 - c)) & 1u);
        if (lane == (c & 31)) T[(long long)c * W + w] = ((unsigned long long)hi << 32) | lo;
    }
}
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""
_aux = {}


def aux(name):
    if not _aux:
        mod = cp.RawModule(code=_AUX_SRC)
        _aux["pack_u32"], _aux["spin"] = mod.get_function("pack_u32"), mod.get_function("spin")
    return _aux[name]


def pack_device(vals_u32, k, out=None):
    n = int(vals_u32.size)
    W = (n + 63) // 64
    T = out if out is not None else cp.empty((k, W), dtype=cp.uint64)
    aux("pack_u32")(((W * 32 + 255) // 256,), (256,), (vals_u32, np.int64(n), np.int32(k), np.int64(W), T))
    return T


def time_rounds(ops: dict, runs: int) -> dict:
    """ops: name -> callable. GPU ms (events, launch latency hidden) and wall ms, medians."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    spin = aux("spin")
    flush = cp.ones(32 << 20, dtype=cp.uint32)     # read before each op: L2 (50 MB on an H100)
                                                   # then holds none of its data, and nothing dirty
    for f in ops.values():                         # warm up (compiles, pools)
        f(), f()
    cp.cuda.Device().synchronize()
    gpu = {k: [] for k in ops}
    wall = {k: [] for k in ops}
    for _ in range(runs):
        for name, f in ops.items():
            flush.sum()
            cp.cuda.Device().synchronize()
            spin((1,), (1,), (np.uint64(200_000),))          # 0.2 ms: the host launches meanwhile
            start.record()
            f()
            end.record()
            end.synchronize()
            gpu[name].append(cp.cuda.get_elapsed_time(start, end))
        for name, f in ops.items():
            flush.sum()
            wall[name].append(1e3 * clock(f, synchronizer()))    # synchronised before and after
    return {k: {"gpu_ms": statistics.median(gpu[k]), "wall_ms": statistics.median(wall[k]),
                "gpu_runs_ms": gpu[k]} for k in ops}


class Dataset:
    """One table of rows x 32 columns on the device, its values as uint32 and the answers."""
    def __init__(self, label, vals, k=32):
        self.label, self.vals, self.k = label, vals, k
        self.rows = int(vals.size)
        self.T = Tab(pack_device(vals, k), self.rows)
        self.lo, self.hi = int(cp.min(vals)), int(cp.max(vals))
        self.probe = int(vals[self.rows // 3])
        self.v = cp.asarray(word_of(self.probe, k))
        W = (self.rows + 63) // 64
        self.X = cp.full(W, M64, dtype=cp.uint64)
        if self.rows % 64:
            self.X[-1] = np.uint64((1 << (self.rows % 64)) - 1)

    def ops(self, old=True):
        T, X, v, k = self.T, self.X, self.v, self.k
        out = {"cupy.min": lambda: cp.min(self.vals),
               "MIN": lambda: sc.extreme(T, X, False), "MAX": lambda: sc.extreme(T, X, True),
               "MATCH": lambda: sc.match(T, X, v, k)}
        if old:
            out.update({"old MIN": lambda: old_extreme(T, X, False), "old MAX": lambda: old_extreme(T, X, True),
                        "old MATCH": lambda: old_match(T, X, v, k)})
        return out

    def verify(self, label, old=True) -> int:
        """Each op's result against cupy's own answer; returns the number of mismatches."""
        bad = 0
        want = {"MIN": self.vals == self.lo, "MAX": self.vals == self.hi, "MATCH": self.vals == self.probe}
        for name, f in self.ops(old).items():
            if name == "cupy.min":
                continue
            expect = pack_device(want[name.replace("old ", "")].astype(cp.uint32), 1)[0]
            if not bool((f() == expect).all()):
                bad += 1
                print(f"  MISMATCH in the timed data: {self.label}, {label}: {name}")
        return bad


def bench(rows: int, runs: int, variants: bool) -> tuple[dict, int]:
    bad = 0
    rng = cp.random.default_rng(7)
    data = [Dataset("random", rng.integers(0, 2 ** 32, size=rows, dtype=cp.uint64).astype(cp.uint32)),
            # every row equal: each word needs every column, every block of MIN/MAX ties with the result
            Dataset("all rows equal", cp.full(rows, 0x5A5A5A5A, dtype=cp.uint32)),
            # values descending with the row: every block of MIN improves on those before it
            Dataset("descending", (rows - cp.arange(rows, dtype=cp.uint64)).astype(cp.uint32))]
    res = {"rows": rows, "cols": 32, "runs": runs, "launch_shape": sc.launch_shape()}
    for i, d in enumerate(data):
        bad += d.verify("default shape")
        res[d.label] = time_rounds(d.ops(), runs if i == 0 else max(5, runs // 3))
        print(f"  timed: {d.label}", flush=True)
    if variants:
        default = sc.launch_shape()
        var = {}
        for block, wpt, batch in VARIANTS[1:]:
            sc.configure(block, wpt, batch)
            name = f"block {block}, words/thread {wpt}, batch {batch}"
            bad += check_kernels(False, name)
            row = {}
            for d in data[:2]:
                bad += d.verify(name, old=False)
                t = time_rounds(d.ops(old=False), max(10, runs // 2) if d is data[0] else max(5, runs // 3))
                row[d.label] = {op: t[op]["gpu_ms"] / t["cupy.min"]["gpu_ms"] for op in ("MIN", "MAX", "MATCH")}
            var[name] = row
        sc.configure(default["block"], default["words_per_thread"], default["batch"])
        res["variants_ratio_gpu"] = var
    return res, bad


def report(res, dev_name):
    r = res["random"]
    base_g, base_w = r["cupy.min"]["gpu_ms"], r["cupy.min"]["wall_ms"]
    shape = res["launch_shape"]
    print()
    print(f"device: {dev_name}   CuPy {cp.__version__}   {res['rows']} rows x {res['cols']} columns "
          f"(random uint32 values), X all ones, median of {res['runs']}")
    print(f"launch shape: block {shape['block']}, words/thread {shape['words_per_thread']}, "
          f"column batch {shape['batch']}")
    print()
    print("| op | GPU ms | / cupy.min | wall ms | / cupy.min | old kernels, GPU ms (this run) | / cupy.min "
          "| old, quoted (wall ms, ratio) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for op in ("cupy.min", "MIN", "MAX", "MATCH"):
        g, w = r[op]["gpu_ms"], r[op]["wall_ms"]
        old = r.get("old " + op)
        og = f"{old['gpu_ms']:.3f} | {old['gpu_ms'] / base_g:.2f}" if old else "- | -"
        q = OLD_QUOTED[op]
        print(f"| {op} | {g:.3f} | {g / base_g:.2f} | {w:.3f} | {w / base_w:.2f} | {og} | "
              f"{q:.3f}, {q / OLD_QUOTED['cupy.min']:.2f} |")
    for label in ("all rows equal", "descending"):
        a = res[label]
        bg = a["cupy.min"]["gpu_ms"]
        cells = ", ".join(f"{op} {a[op]['gpu_ms']:.3f} ms = {a[op]['gpu_ms'] / bg:.2f}x (old "
                          f"{a['old ' + op]['gpu_ms'] / bg:.2f}x)" for op in ("MIN", "MAX", "MATCH"))
        print(f"\n{label}: cupy.min {bg:.3f} ms; {cells}")
    if "variants_ratio_gpu" in res:
        print("\nlaunch shapes, GPU ms / cupy.min (random data | all rows equal):")

        def line(name, q):
            return (f"  {name}: " + "  ".join(f"{op} {q['random'][op]:.2f} | {q['all rows equal'][op]:.2f}"
                                             for op in ("MIN", "MAX", "MATCH")))
        here = {lab: {op: res[lab][op]["gpu_ms"] / res[lab]["cupy.min"]["gpu_ms"] for op in ("MIN", "MAX", "MATCH")}
                for lab in ("random", "all rows equal")}
        print(line(f"block {shape['block']}, words/thread {shape['words_per_thread']}, batch {shape['batch']} "
                   "(default)", here))
        for name, q in res["variants_ratio_gpu"].items():
            print(line(name, q))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2 ** 27)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--no-variants", action="store_true", help="time the default launch shape only")
    ap.add_argument("--json", type=Path, help="write the figures there")
    args = ap.parse_args()

    doc = document("search", "", machine=machine_info(), device=device_info(gpu=True))
    dev_name = doc["device"]
    doc["title"] = f"Fused MATCH / MIN / MAX (starvm/native/match, min) on {dev_name}"
    print(f"{dev_name}, CuPy {cp.__version__}, launch shape {sc.launch_shape()}", flush=True)
    t0 = time.perf_counter()
    print("(a) correctness", flush=True)
    bad = check_kernels(True, "default") + check_machine()
    print(f"    {time.perf_counter() - t0:.1f} s", flush=True)
    print("(b) speed", flush=True)
    res, bad_b = bench(args.rows, args.runs, not args.no_variants)
    bad += bad_b
    res.update(device=dev_name, cupy=cp.__version__, mismatches=bad)
    report(res, dev_name)
    if args.json:
        write_json({**doc, **res}, args.json)
    print(f"\n{'FAIL' if bad else 'OK'}: {bad} mismatches; {time.perf_counter() - t0:.1f} s in all")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
