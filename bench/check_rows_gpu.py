"""GPU self-check of IOTA / GATHER / SCATTER / GROUPMIN / COMPACT / EXPAND (starvm/native/<routine>/cuda.py).

    python3 bench/check_rows_gpu.py [--max-rows 8388608] [--runs 5]

Run on a machine with an NVIDIA GPU and CuPy, from the repository root. The CuPy kernels
are compared bit for bit with the NumPy kernels (starvm/native/<routine>/numpy.py, themselves
checked against the Star bodies of stdlib/rows.star by tests/unit/test_native_rows.py) on
random inputs of 1 .. --max-rows rows: partial last words, unmarked rows of R prefilled
with random bits, duplicate targets for SCATTER, ties and many groups for GROUPMIN (keys of
19 and 45 columns; groups wider than 26 columns, sorted: G of 40 with K of 7, and G = K of 53
columns with every row marked, BORUVKA's dedupe, hashed up to 63 columns), COMPACT and EXPAND (with their counts),
control slices random / all ones / sparse / all zeros. Device outputs
are allocated from memory filled with ones first, so a word a kernel forgets shows. Prints
the time of each NumPy kernel (one run) and each CuPy kernel (median of --runs, device
synchronised). Exits 1 on any mismatch. The last run's output: bench/results/check_rows_gpu_h100.txt.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from types import SimpleNamespace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import cupy as cp  # noqa: E402

from starvm.benchmarking import clock, device_info, device_label, machine_info, repeat, synchronizer  # noqa: E402
from starvm.native.shared import cuda_rows  # noqa: E402

ROWS = ("iota", "gather", "scatter", "groupmin", "compact", "expand")


def row_kernels(target: str) -> SimpleNamespace:
    """The row moves' kernels of one target (starvm/native/<routine>/<target>.py), by routine name."""
    mods = [importlib.import_module(f"starvm.native.{r}.{target}") for r in ROWS]
    return SimpleNamespace(**{r: getattr(m, r) for r, m in zip(ROWS, mods)}, numb=cuda_rows.numb)


rc, rn = row_kernels("cuda"), row_kernels("numpy")

M64 = np.iinfo(np.uint64).max


class Tab:                                     # what the kernels read of a table
    def __init__(self, data, n):
        self.data, self.n, self.k = data, n, data.shape[0]


def words(n):
    return (n + 63) // 64


def pack_values(vals: np.ndarray, k: int) -> np.ndarray:
    """Unsigned numbers (uint64) -> k x W bit-sliced words, column 0 the most significant bit."""
    n = vals.size
    out = np.zeros((k, words(n) * 8), dtype=np.uint8)
    for c in range(k):
        b = k - 1 - c
        if b < 64:
            bits = ((vals >> np.uint64(b)) & np.uint64(1)).astype(bool)
            p = np.packbits(bits, bitorder="little")
            out[c, :p.size] = p
    return out.view(np.uint64).reshape(k, words(n))


def random_table(rng, n, k):
    t = rng.integers(0, M64, size=(k, words(n)), dtype=np.uint64, endpoint=True)
    if n % 64:
        t[:, -1] &= np.uint64((1 << (n % 64)) - 1)
    return t


def control(rng, n, mode):
    if mode == "ones":
        bits = np.ones(n, bool)
    elif mode == "zeros":
        bits = np.zeros(n, bool)
    elif mode == "sparse":
        bits = rng.random(n) < 0.01
    else:
        bits = rng.random(n) < 0.5
    return pack_values(bits.astype(np.uint64), 1)[0]


def poison(n_words):
    junk = cp.full(max(1, n_words), M64, dtype=cp.uint64)   # the pool hands this block out next
    del junk


def timed_gpu(fn, runs):
    """(the last result, median ms of ``runs`` calls), the device synchronised around each."""
    out = []
    t = repeat(lambda: out.append(fn()), runs, sync=synchronizer())
    return out[-1], t.median_s * 1e3


def timed_cpu(fn):
    """(the result, ms of one call) on the host."""
    out = []
    ms = clock(lambda: out.append(fn())) * 1e3
    return out[-1], ms


FAILS = 0


def report(name, n, detail, same, cpu_ms, gpu_ms):
    global FAILS
    FAILS += not same
    print(f"{name:<9}{n:>9}  {detail:<36}{'ok' if same else 'MISMATCH':<9}"
          f"numpy {cpu_ms:9.2f} ms   cupy {gpu_ms:8.3f} ms", flush=True)


def check_iota(n, k, runs):
    th = Tab(np.zeros((k, words(n)), dtype=np.uint64), n)
    td = Tab(cp.full((k, words(n)), M64, dtype=cp.uint64), n)       # every word must be written
    _, cpu = timed_cpu(lambda: rn.iota(th))
    _, gpu = timed_gpu(lambda: rc.iota(td), runs)
    report("IOTA", n, f"k={k}", np.array_equal(th.data, cp.asnumpy(td.data)), cpu, gpu)


def check_gather(rng, n, k, xmode, runs):
    m = max(1, n // 2)                                                # NROWS(T)
    c = max(1, m.bit_length())
    T = random_table(rng, m, k)
    IX = pack_values(rng.integers(1, m + 1, n, dtype=np.uint64), c)
    X = control(rng, n, xmode)
    R0 = random_table(rng, n, k)
    rh = Tab(R0.copy(), n)
    _, cpu = timed_cpu(lambda: rn.gather(Tab(T, m), Tab(IX, n), int.from_bytes(X.tobytes(), "little"), rh))
    rd = Tab(cp.asarray(R0), n)
    Td, IXd, Xd = Tab(cp.asarray(T), m), Tab(cp.asarray(IX), n), cp.asarray(X)
    _, gpu = timed_gpu(lambda: rc.gather(Td, IXd, Xd, rd), runs)     # idempotent: repeat on rd
    report("GATHER", n, f"k={k} idx={c} X={xmode}", np.array_equal(rh.data, cp.asnumpy(rd.data)), cpu, gpu)


def check_scatter(rng, n, k, xmode, runs):
    m = max(1, n // 4)                                                # NROWS(R): many duplicates
    c = max(1, m.bit_length())
    T = random_table(rng, n, k)
    IX = pack_values(rng.integers(1, m + 1, n, dtype=np.uint64), c)
    X = control(rng, n, xmode)
    R0 = random_table(rng, m, k)
    rh = Tab(R0.copy(), m)
    _, cpu = timed_cpu(lambda: rn.scatter(Tab(T, n), Tab(IX, n), int.from_bytes(X.tobytes(), "little"), rh))
    rd = Tab(cp.asarray(R0), m)
    Td, IXd, Xd = Tab(cp.asarray(T), n), Tab(cp.asarray(IX), n), cp.asarray(X)
    _, gpu = timed_gpu(lambda: rc.scatter(Td, IXd, Xd, rd), runs)
    report("SCATTER", n, f"k={k} idx={c} X={xmode}", np.array_equal(rh.data, cp.asnumpy(rd.data)), cpu, gpu)


def check_groupmin(rng, n, gk, kk, groups, xmode, runs):
    G = pack_values(rng.integers(0, min(groups, 1 << gk), n, dtype=np.uint64), gk)
    if kk <= 20:                                                      # few values: ties
        K = pack_values(rng.integers(0, 1 << min(kk, 4), n, dtype=np.uint64), kk)
    else:
        K = random_table(rng, n, kk)
    X = control(rng, n, xmode)
    zh, cpu = timed_cpu(lambda: rn.groupmin(Tab(G, n), Tab(K, n), int.from_bytes(X.tobytes(), "little")))
    Gd, Kd, Xd = Tab(cp.asarray(G), n), Tab(cp.asarray(K), n), cp.asarray(X)

    def run():
        poison(words(n))
        return rc.groupmin(Gd, Kd, Xd)
    zd, gpu = timed_gpu(run, runs)
    want = np.frombuffer(zh.to_bytes(words(n) * 8, "little"), dtype=np.uint64)
    report("GROUPMIN", n, f"G={gk} K={kk} groups={groups} X={xmode}",
           np.array_equal(want, cp.asnumpy(zd)), cpu, gpu)


def check_groupmin_same(rng, n, gk, xmode, runs):
    """GROUPMIN(G, G, X): K is G itself (BORUVKA's dedupe, one sort of G)."""
    G = pack_values(rng.integers(0, max(1, n // 3), n, dtype=np.uint64), gk)      # repeats
    X = control(rng, n, xmode)
    zh, cpu = timed_cpu(lambda: rn.groupmin(Tab(G, n), Tab(G, n), int.from_bytes(X.tobytes(), "little")))
    Gd, Xd = Tab(cp.asarray(G), n), cp.asarray(X)
    zd, gpu = timed_gpu(lambda: rc.groupmin(Gd, Gd, Xd), runs)
    want = np.frombuffer(zh.to_bytes(words(n) * 8, "little"), dtype=np.uint64)
    report("GROUPMIN", n, f"G=K={gk} X={xmode}", np.array_equal(want, cp.asnumpy(zd)), cpu, gpu)


def check_compaction(rng, n, k, xmode, runs):
    T, X = random_table(rng, n, k), control(rng, n, xmode)
    c = int(np.unpackbits(X.view(np.uint8)).sum())
    xi = int.from_bytes(X.tobytes(), "little")
    R0 = random_table(rng, n, k)
    rh = Tab(R0.copy(), n)
    _, cpu = timed_cpu(lambda: rn.compact(Tab(T, n), xi, rh))
    Td, Xd, rd = Tab(cp.asarray(T), n), cp.asarray(X), Tab(cp.asarray(R0), n)
    ok = rc.numb(Xd) == c
    _, gpu = timed_gpu(lambda: rc.compact(Td, Xd, rd, c), runs)
    report("COMPACT", n, f"k={k} X={xmode}", ok and np.array_equal(rh.data, cp.asnumpy(rd.data)), cpu, gpu)
    eh = Tab(R0.copy(), n)
    _, cpu = timed_cpu(lambda: rn.expand(Tab(T, n), xi, eh))
    ed = Tab(cp.asarray(R0), n)
    _, gpu = timed_gpu(lambda: rc.expand(Td, Xd, ed, c), runs)
    report("EXPAND", n, f"k={k} X={xmode}", np.array_equal(eh.data, cp.asnumpy(ed.data)), cpu, gpu)


def check_machine():
    """Through starvm.Machine on the cupy backend: the natives run (one call each) and agree
    with the Star bodies; an out-of-range row number gives the Star body's error."""
    global FAILS
    import starvm
    rng = np.random.default_rng(7)
    n, m, k, c = 130, 70, 9, 7

    def bits(vals, width):
        return np.array([[(int(x) >> (width - 1 - j)) & 1 for j in range(width)] for x in vals], bool)
    T, R0 = rng.random((m, k)) < 0.5, rng.random((n, k)) < 0.5
    IX = bits(rng.integers(1, m + 1, n), c)
    X = rng.random(n) < 0.6
    T2, R2 = rng.random((n, k)) < 0.5, rng.random((m, k)) < 0.5
    G, K = bits(rng.integers(0, 5, n), 3), bits(rng.integers(0, 4, n), 5)
    results, calls = [], []
    for native in (True, False):
        mc = starvm.Machine(backend="cupy", native=native)
        out = []
        t = mc.table(np.zeros((n, 12), bool))
        mc.call("IOTA", t)
        out.append(t.to_numpy())
        r = mc.table(R0)
        mc.call("GATHER", mc.table(T), mc.table(IX), mc.slice(X), r)
        out.append(r.to_numpy())
        r = mc.table(R2)
        mc.call("SCATTER", mc.table(T2), mc.table(IX), mc.slice(X), r)
        out.append(r.to_numpy())
        z = mc.slice(np.ones(n, bool))
        mc.call("GROUPMIN", mc.table(G), mc.table(K), mc.slice(X), z)
        out.append(z.to_numpy())
        bad = IX.copy()
        bad[int(np.flatnonzero(X)[-1])] = False          # row number 0 in a marked row
        try:
            mc.call("GATHER", mc.table(T), mc.table(bad), mc.slice(X), mc.table(R0))
            out.append("no error")
        except starvm.StarError as e:
            out.append(e.render())
        results.append(out)
        calls.append(mc.native_timing[0])
    same = all(np.array_equal(a, b) if not isinstance(a, str) else a == b for a, b in zip(*results))
    ok = same and calls == [4, 0] and results[0][-1] != "no error"
    FAILS += not ok
    print(f"Machine(cupy) native vs Star bodies: {'ok' if ok else 'MISMATCH'} (native calls {calls})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-rows", type=int, default=2 ** 23)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(2024)
    print(f"device: {device_label(device_info(gpu=True), machine_info())}")
    check_machine()
    sizes = sorted({n for n in (1, 63, 64, 65, 1000, 65_537, 1 << 20, args.max_rows) if n <= args.max_rows})
    xmodes = ["half", "ones", "sparse", "zeros"]
    for i, n in enumerate(sizes):
        big = n >= 1 << 20
        x = xmodes[i % len(xmodes)] if not big else "half"
        for k in ((24, 70) if not big else (24,)):
            check_iota(n, k, args.runs)
        for k in ((1, 32) if not big else (32,)):
            check_gather(rng, n, k, x, args.runs)
            check_scatter(rng, n, k, x, args.runs)
        if not big:
            check_gather(rng, n, 7, "ones", args.runs)
            check_scatter(rng, n, 7, "sparse", args.runs)
            check_gather(rng, n, 70, x, args.runs)                          # > 64 columns: by column
        for k in ((1, 53, 70) if not big else (53,)):
            check_compaction(rng, n, k, x, args.runs)
        gk = max(1, min(26, n.bit_length()))
        for kk in (19, 45):
            check_groupmin(rng, n, gk, kk, max(1, n // 8), x, args.runs)     # many groups
            check_groupmin(rng, n, gk, kk, 3, "ones", args.runs)            # few, large groups
        check_groupmin(rng, n, 40, 7, max(1, n // 8), x, args.runs)         # wide groups: sorted
        check_groupmin_same(rng, n, 53, "ones", args.runs)                 # BORUVKA's dedupe
        if not big:
            check_groupmin(rng, n, 26, 64, n, "half", args.runs)            # all distinct
            check_groupmin(rng, n, 1, 1, 2, "sparse", args.runs)
            check_groupmin(rng, n, 64, 64, max(1, n // 4), "sparse", args.runs)
            check_groupmin_same(rng, n, 30, "half", args.runs)
            check_groupmin_same(rng, n, 63, "sparse", args.runs)           # widest hashed
            check_groupmin_same(rng, n, 64, "half", args.runs)             # sorted
    print("FAILED" if FAILS else "all equal", f"({FAILS} mismatch(es))" if FAILS else "")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
