"""Strong scaling of one Star program over MPI ranks (starvm/distributed, docs/scale.md).

    python3 bench/bench_scale.py --ranks 1,2 --name cpu2                      # small sizes, this host
    # the 16-core device host, one workload per command (each well under its 10-minute limit;
    # estimated wall times), then here:
    # python3 bench/bench_scale.py --name cpu16 --combine cpu16_min cpu16_warshall cpu16_bfs12 cpu16_bfs48 cpu16_boruvka19
    python3 bench/bench_scale.py --ranks 1,2,4,8 --workloads comm,min --min-log2 28 --name cpu16_min --timeout 280
    python3 bench/bench_scale.py --ranks 1,2 --workloads bfs --scale 20 --runs 2 --no-serial --jit on --name cpu16_bfs12     # ~5 min
    python3 bench/bench_scale.py --ranks 4,8 --workloads bfs --scale 20 --runs 2 --no-serial --jit on --name cpu16_bfs48     # ~2.5 min
    python3 bench/bench_scale.py --ranks 1,2,4,8 --workloads warshall --warshall-n 8192 --runs 2 --jit on --name cpu16_warshall  # ~4 min
    python3 bench/bench_scale.py --ranks 1 --workloads boruvka --scale 20 --runs 1 --no-serial --jit on --name cpu16_boruvka1  # ~8 min
    python3 bench/bench_scale.py --ranks 2,4,8 --workloads boruvka --scale 20 --runs 1 --jit on --name cpu16_boruvka248     # ~7.5 min
    python3 bench/bench_scale.py --ranks 8,4,2,1 --workloads boruvka --scale 19 --runs 1 --no-serial --jit on --name cpu16_boruvka19  # the one that ran
    python3 bench/bench_scale.py --ranks 1,2,4,8 --workloads jit --jit-n 2500 --min-log2 26 --runs 2 --no-serial --name cpu16_jit --timeout 580

On the GPU machine (nvidia-h100-x1: one GPU, so 2 ranks share it and the array collectives
stage through the host; NCCL needs 2 GPUs: nvidia-h200-x2). The image has CuPy, NCCL and
mpi4py but no MPI library and no lark: carry them as wheels. Once, here, in the checkout:

    echo /.whl/ >> .git/info/exclude
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl mpich==5.0.2 mpi4py==4.1.2 lark==1.3.1          # about 15 MB

Every device command carries [".whl"] and starts with

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit; export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH LD_LIBRARY_PATH=/tmp/site/lib:$LD_LIBRARY_PATH NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1;

then one of these (each well inside the 10-minute limit; the estimates are wall times):

    # the real device paths' tests (2 ranks on one GPU: host staging, the choice says why): ~1 min
    STARVM_REQUIRE_GPU=1 python3 -m pytest tests/distributed/test_collectives.py -q -rs -k "gpus or cupy_ranks" 2>&1 | tee $OUT/collectives_gpu.log
    # MIN at 2^28 rows and the array collectives' alpha/beta, 1 vs 2 ranks sharing the GPU: ~3 min
    python3 bench/bench_scale.py --backend cupy --ranks 1,2 --workloads comm,min --min-log2 28 --name h100_min --results-dir $OUT --timeout 280
    # MIN alone, 40 timed calls, and where each call's time goes on each rank (40 more per variant): ~40 s
    python3 bench/bench_scale.py --backend cupy --ranks 1,2 --workloads min --min-log2 28 --runs 40 --min-phases 40 --name h100_min_SHA --results-dir $OUT --timeout 75
    # the same with CUDA's Multi-Process Service (a private daemon for these runs): the ranks' kernels run at once
    python3 bench/bench_scale.py --backend cupy --ranks 1,2 --workloads min --min-log2 28 --runs 200 --min-phases 40 --mps --name h100_min_mps_SHA --results-dir $OUT --timeout 120
    # BFS-adapt at R-MAT scale 18, 1 vs 2 ranks sharing the GPU (row moves staged through the host): ~4 min
    python3 bench/bench_scale.py --backend cupy --ranks 1,2 --workloads bfs --scale 18 --runs 2 --name h100_bfs --results-dir $OUT --timeout 280
    # CPU strong scaling of BFS-adapt beyond 2 ranks, per-rank graphs, no plain-machine reference: ~4 min
    python3 bench/bench_scale.py --ranks 4,8 --workloads bfs --scale 20 --runs 2 --no-serial --name cpu16_bfs48 --results-dir $OUT --timeout 280
    # NCCL's alpha/beta on two GPUs (nvidia-h200-x2, when status lends it): ~1 min
    python3 bench/bench_scale.py --backend cupy --ranks 2 --workloads comm --name h200x2_comm --results-dir $OUT --timeout 280

For every rank count P of --ranks it starts ``mpiexec -n P`` on this script (``--worker``),
one rank per core, and measures, on the distributed machine (rows in 64-row blocks):

  min       MIN (stdlib/search.star) over 2^--min-log2 rows x 32 bits, X all ones (a slice made
            once, as on the plain machine); one untimed call first; --min-phases RUNS: the
            call's phases on each rank (min_phases); --mps: every mpiexec runs under a
            private CUDA MPS control daemon (ranks sharing a GPU then run their kernels at
            once instead of taking turns);
  bfs       BFS-adapt from vertex 1 on an R-MAT graph of 2^--scale vertices (edge factor 16,
            a, b, c = 0.57, 0.19, 0.19, undirected, seed 2015: bench_stdlib's graphs);
  boruvka   BORUVKA on the same graph (weights 1..100);
  warshall  WARSHALL-adapt (a fused `parallel for` per pivot) on n = --warshall-n vertices,
            G(n, p) with 4n arcs;
  comm      the collectives' cost: a barrier-separated loop of Allreduce of one integer (alpha)
            and of Bcast / Allgatherv / Alltoallv of 8 B .. 16 MB (alpha + beta * bytes, fitted).
  jit       the compiled tier per rank (starvm/jit/mpi_*.py) against the interpreter, on two
            machines over the same ranks (--jit off, --jit on): WARSHALL-C as printed under a
            user's name on n = --jit-n vertices (G(n, p), 4n arcs) and the MIN body under a
            user's name over 2^--min-log2 rows x 32 bits; warm (compiled on a small instance
            first); results and step counts of both tiers equal, the closure checked against
            a NumPy machine.

--jit picks the compiled tier of the workloads' machines (auto, on, off); each result records,
from the counts --profile prints, which routines ran compiled and how often, which ran
interpreted and why (BFS-adapt and BORUVKA call the all-to-all row kernels, which keep them
interpreted; their Star callees compile), and the native kernels' calls.

Each workload's time is the slowest rank's, the ranks started together by a barrier; the
median of --runs runs is kept. Every result is checked: MIN's count and first row against
NumPy, BFS levels and the MST weight against SciPy, the closure against a NumPy machine's
native kernel (rank 0). The graph is generated on every rank and each keeps its own rows
(item 2 of docs/scale.md); the MIN table is made by each rank for its own rows only. With
P = 1 the script also times the same calls on a plain (non-distributed) NumPy machine with its
native kernels ("serial"), the reference for speed-ups. A workload whose mpiexec exceeds
--timeout is recorded as such. Results: bench/results/scale_<name>.{json,md} (--results-dir:
another folder), written by the harness (starvm/benchmarking/) with its common header.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEED = 2015
RMAT = dict(edge_factor=16, a=0.57, b=0.19, c=0.19, d=0.05)
WORKLOADS = ("comm", "min", "bfs", "boruvka", "warshall", "jit")

from starvm.benchmarking import Timing, clock, device_info, document, machine_info, write_results  # noqa: E402
from starvm.execution.values import Bits  # noqa: E402


# ------------------------------------------------------------------ the worker (one rank)
def splitmix(x: np.ndarray) -> np.ndarray:
    """A counter-based hash: the same value of row i whatever the rank that makes it."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class Rank:
    def __init__(self, backend: str, distributed: bool, jit: str = "auto"):
        from mpi4py import MPI

        import starvm
        from starvm.backends import get_backend
        self.MPI, self.comm = MPI, MPI.COMM_WORLD
        if backend == "emulated":           # the emulated device: a CPU check of a GPU rank's paths
            from starvm.backends.emulated_device import EmulatedDevice
            backend = EmulatedDevice()
        if distributed:
            from starvm.distributed import distribute
            self.B = distribute(backend, self.comm)
        else:
            self.B = backend if not isinstance(backend, str) else get_backend(backend)
        self.m = starvm.Machine(backend=self.B, out=open(os.devnull, "w"), jit=jit)
        self.distributed = distributed

    def timed(self, fn, runs: int) -> tuple[list[float], object]:
        out, times = None, []
        box = [out]
        for _ in range(runs):
            self.comm.Barrier()
            t = clock(lambda: box.__setitem__(0, fn()), self.B.synchronize)
            times.append(self.comm.allreduce(t, op=self.MPI.MAX))
        return times, box[0]


def bits(B, n: int, ones: bool):
    return Bits(B.ones(n) if ones else B.zeros(n), n)


def min_table(r: Rank, log2: int):
    """MIN's 2^log2 x 32 table of splitmix values, X all ones, and the answer (count, first row)."""
    n = 1 << log2
    B, m = r.B, r.m
    T = m.table(rows=n, cols=32)
    if r.distributed:       # each rank makes its own rows only
        lay = B.layout(n)
        local = splitmix(np.arange(lay.start, lay.stop)) >> np.uint64(32)
        B.L.table_set_ints(T.aux, local)
        lo = int(local.min()) if local.size else 1 << 40
        gmin = r.comm.allreduce(lo, op=r.MPI.MIN)
        cnt = r.comm.allreduce(int((local == gmin).sum()), op=r.MPI.SUM)
        first = r.comm.allreduce(int(lay.start + np.argmax(local == gmin)) if (local == gmin).any() else n,
                                 op=r.MPI.MIN)
    else:
        vals = splitmix(np.arange(n)) >> np.uint64(32)
        B.table_set_ints(T, vals)
        gmin = int(vals.min())
        cnt, first = int((vals == gmin).sum()), int(np.argmax(vals == gmin))
    # X a slice made once, as the serial machine's is (a Fill would be made anew by every call)
    X = bits(B, n, True)
    return T, Bits(B.materialize(X.v, n), n) if r.distributed else X, cnt, first


def work_min(r: Rank, log2: int, runs: int, phase_runs: int = 0) -> dict:
    n = 1 << log2
    B, m = r.B, r.m
    T, X, cnt, first = min_table(r, log2)

    def run():
        Z = bits(B, n, False)
        m.call("MIN", T, X, Z)
        return Z
    run()                   # one untimed call at full size (the memory pool's blocks), on every P alike
    times, Z = r.timed(run, runs)
    ok = B.numb(Z.v) == cnt and B.fnd(Z.v) == first + 1
    out = {"rows": n, "bits": 32, "times_s": times, "ok": bool(ok), "steps": m.last_call_stats,
           "native_calls": m.native_timing[0], **collectives(r)}
    if r.distributed:
        from starvm.distributed.collectives import mps_running
        out["gpu_peers"] = list(getattr(B.coll, "gpu_peers", ()))
        out["mps"] = mps_running()
    from starvm.distributed.search import LOCALS
    if phase_runs and r.distributed and B.L.name in LOCALS:     # MIN's kernel runs on device ranks only
        out["phases"] = min_phases(r, T, X, cnt, first, phase_runs)
    return out


# the phases of a distributed MIN call (starvm/distributed/search.py's marks), in call order
PHASES = ("enter", "kernel", "read", "allreduce", "clear", "leave")
# (kernel, X) of each variant --min-phases times
PHASE_VARIANTS = (("async", "slice"), ("split", "slice"), ("async", "fill"))


def min_phases(r: Rank, T, X, cnt: int, first: int, runs: int) -> list[dict]:
    """Where a distributed MIN call's time goes on each rank: host timestamps (perf_counter,
    one clock for every process of the host) at the call, at search.extreme_here's marks and
    after the last wait. Variants (PHASE_VARIANTS): the kernel launched only (async) or also
    waited for (split: its own time, which shows how the ranks' kernels share the GPU); X a
    slice made once or all ones made anew each call (a Fill). Per variant and rank: the
    medians of each phase (us), the call's median from the first rank's start to the last
    rank's end, and the wait in the all-reduction for the slowest rank."""
    from starvm.distributed import search
    B, m, comm = r.B, r.m, r.comm
    n = T.n
    out = []
    try:
        for kernel, xform in PHASE_VARIANTS:
            search.PHASE_SYNC = kernel == "split"
            Xv = X if xform == "slice" else bits(B, n, True)
            for _ in range(3):
                m.call("MIN", T, Xv, bits(B, n, False))
            recs = []
            for _ in range(runs):
                Z = bits(B, n, False)
                search.PHASES = marks = []
                B.synchronize()
                comm.Barrier()
                t0 = time.perf_counter()
                m.call("MIN", T, Xv, Z)
                B.synchronize()
                t1 = time.perf_counter()
                search.PHASES = None
                at = dict(marks)
                recs.append([t0, at["start"], at["kernel"], at["read"], at["allreduce"], at["end"], t1])
            ok = B.numb(Z.v) == cnt and B.fnd(Z.v) == first + 1
            every = np.array(comm.allgather(recs))       # ranks x runs x 7 timestamps
            steps = np.diff(every, axis=2) * 1e6
            wall = (every[:, :, -1].max(axis=0) - every[:, :, 0].min(axis=0)) * 1e6
            read_at = every[:, :, 1 + PHASES.index("read")]
            wait = (read_at.max(axis=0)[None, :] - read_at) * 1e6     # the last rank's read done - mine
            out.append({"kernel": kernel, "x": xform,
                        "ok": bool(comm.allreduce(bool(ok), op=r.MPI.LAND)), "call_us": float(np.median(wall)),
                        "call_min_us": float(wall.min()),
                        "ranks": [{**{p: float(np.median(steps[k, :, i])) for i, p in enumerate(PHASES)},
                                   "wait_us": float(np.median(wait[k])),
                                   "start_skew_us": float(np.median((every[k, :, 0] - every[:, :, 0].min(axis=0)) * 1e6))}
                                  for k in range(len(every))]})
    finally:
        search.PHASE_SYNC, search.PHASES = False, None
    return out


def graph(scale: int):
    from starvm.graphs import rmat
    return rmat(scale, seed=SEED, **RMAT)


def rank_graph(r: Rank, scale: int):
    """The graph, and the arc tables of the machine: on a distributed rank each rank generates
    its share (distributed/graph_input.py: the same graph as rmat()), and its tables get their
    rows by one all-to-all; the whole graph is gathered afterwards for the check only."""
    if not r.distributed:
        g = graph(scale)
        return g, lambda codes, bits: r.m.table_from_ints(codes, bits)
    from starvm.distributed.comm import MpiComm
    from starvm.distributed.graph_input import rank_rmat
    g = rank_rmat(MpiComm(r.comm), scale, seed=SEED, **RMAT)

    def table(codes, bits):
        t = r.m.table(rows=g.m, cols=bits)
        r.B.table_set_ints(t, codes)
        return t
    return g, table


def whole(g):
    """A graph's arcs on this rank (a collective for a per-rank graph)."""
    return g.whole() if hasattr(g, "whole") else g


def work_bfs(r: Rank, scale: int, runs: int) -> dict:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order
    t0 = time.perf_counter()
    g, table = rank_graph(r, scale)
    m = r.m
    left, right = table(g.src, g.vbits), table(g.dst, g.vbits)
    setup = r.comm.allreduce(time.perf_counter() - t0, op=r.MPI.MAX)

    def run():
        L = m.table(rows=g.n, cols=g.vbits + 1)
        m.call("BFS_adapt", g.n, 1, left, right, L)
        return L
    times, L = r.timed(run, runs)
    levels = np.asarray(L.to_ints(), dtype=np.int64)            # a collective: every rank
    g = whole(g)
    ok = True
    if r.comm.rank == 0:
        A = csr_matrix((np.ones(g.m), (g.src - 1, g.dst - 1)), shape=(g.n, g.n))
        order, pred = breadth_first_order(A, 0, directed=True, return_predecessors=True)
        ref = np.full(g.n, (1 << (g.vbits + 1)) - 1, dtype=np.int64)
        ref[0] = 0
        for v in order[1:]:
            ref[v] = ref[pred[v]] + 1
        ok = bool((levels == ref).all())
    return {"n": g.n, "arcs": g.m, "times_s": times, "ok": r.comm.bcast(ok), "steps": m.last_call_stats,
            "graph_setup_s": setup, **collectives(r)}


# the routine each workload calls (jit: work_jit reports its two machines itself)
ROUTINE = {"min": "MIN", "bfs": "BFS-adapt", "boruvka": "BORUVKA", "warshall": "WARSHALL-adapt"}


def tier_of(m, routine: str) -> dict:
    """Which tier ran a workload on this rank, from the counts --profile prints (cumulative
    over the warm-up and the timed runs): the routines that ran compiled and their calls,
    those that ran interpreted and why, and the native kernels' calls."""
    t = m.jit
    key = routine.replace("_", "-").lower()
    top = next((why for display, why in t.skipped.items() if display.lower() == key), None)
    return {"mode": t.mode,
            "compiled_calls": {r.display: r.compiled_calls for r in t.routines.values() if r.compiled_calls},
            "interpreted_calls": {r.display: {"calls": r.calls - r.compiled_calls, "why": r.why}
                                  for r in t.routines.values() if r.calls > r.compiled_calls},
            "routine": routine, "routine_interpreted_because": top, "native_calls": m.native_timing[0]}


def tier_summary(tier: dict) -> str:
    """One cell of the results' table: how the workload's routine and its callees ran."""
    if tier["mode"] == "off":
        return "interpreted (--jit off)"
    parts = []
    if tier["routine_interpreted_because"]:
        parts.append(f"{tier['routine']} interpreted ({tier['routine_interpreted_because']})")
    if tier["compiled_calls"]:
        parts.append("compiled: " + ", ".join(f"{d} x{c}" for d, c in sorted(tier["compiled_calls"].items())))
    if tier["interpreted_calls"]:
        parts.append("interpreted: " + ", ".join(f"{d} x{v['calls']}" for d, v in sorted(tier["interpreted_calls"].items())))
    if tier["native_calls"]:
        parts.append(f"native kernels x{tier['native_calls']}")
    return f"--jit {tier['mode']}: " + ("; ".join(parts) if parts else "no routine with a loop called")


def collectives(r: Rank) -> dict:
    """The collectives a distributed rank ran (the last call's and before) and their path."""
    if not r.distributed:
        return {}
    return {"collective_path": r.B.collective_path, "collectives": r.B.bytes_moved[0],
            "collective_bytes_rank0": r.B.bytes_moved[1]}


def work_boruvka(r: Rank, scale: int, runs: int) -> dict:
    from scipy.sparse.csgraph import minimum_spanning_tree
    t0 = time.perf_counter()
    g, table = rank_graph(r, scale)
    m, B = r.m, r.B
    left, right = table(g.src, g.vbits), table(g.dst, g.vbits)
    weight = table(g.weight, g.wbits)
    setup = r.comm.allreduce(time.perf_counter() - t0, op=r.MPI.MAX)

    def run():
        Tr = bits(B, g.m, False)
        m.call("BORUVKA", g.n, left, right, weight, Tr)
        return Tr
    times, Tr = r.timed(run, runs)
    tree = np.asarray(B.to_bools(Tr.v, g.m), dtype=bool)          # a collective
    g = whole(g)
    ok = True
    if r.comm.rank == 0:
        ref = minimum_spanning_tree(g.weight_matrix())
        ok = int(g.weight[tree].sum()) == int(round(ref.sum()))
    return {"n": g.n, "arcs": g.m, "times_s": times, "ok": r.comm.bcast(ok), "steps": m.last_call_stats,
            "graph_setup_s": setup, **collectives(r)}


def work_warshall(r: Rank, n: int, runs: int) -> dict:
    import starvm
    rng = np.random.default_rng(SEED)
    arcs = rng.integers(0, n, (4 * n, 2))
    adj = np.zeros((n, n), dtype=bool)
    adj[arcs[:, 0], arcs[:, 1]] = True
    m = r.m

    def run():
        P = m.table(adj)
        m.call("WARSHALL_adapt", n, P)
        return P
    times, P = r.timed(run, runs)
    got = P.to_numpy()                                               # a collective
    ok = True
    if r.comm.rank == 0:
        ref = starvm.Machine(backend="numpy", out=open(os.devnull, "w"))
        Q = ref.table(adj)
        ref.call("WARSHALL_adapt", n, Q)
        ok = bool((Q.to_numpy() == got).all())
    return {"n": n, "times_s": times, "ok": r.comm.bcast(ok), "steps": m.last_call_stats}


def jit_program() -> str:
    from starvm.distributed.user_named import closure_and_min
    return closure_and_min("MY_WARSHALL_C", "MY_MIN")


def work_jit(r: Rank, n: int, log2: int, runs: int) -> dict:
    """User-named WARSHALL-C and MIN bodies, interpreted and compiled, on r's backend."""
    import starvm
    machines = {jit: starvm.Machine(backend=r.B, out=open(os.devnull, "w"), jit=jit) for jit in ("off", "on")}
    for m in machines.values():
        m.compile(jit_program(), "jit_bench.star")
    rng = np.random.default_rng(SEED)
    arcs = rng.integers(0, n, (4 * n, 2))
    adj = np.zeros((n, n), dtype=bool)
    adj[arcs[:, 0], arcs[:, 1]] = True
    small = np.eye(8, k=1, dtype=bool)
    out = {"n": n, "rows": 1 << log2}
    closures, mins = {}, {}
    rows = 1 << log2
    for jit, m in machines.items():
        m.call("MY_WARSHALL_C", 8, m.table(small))                 # compiles (jit on) or loads
        fresh = iter([m.table(adj) for _ in range(runs)])           # made before the clock starts
        times, P = r.timed(lambda m=m, fresh=fresh: (lambda P: (m.call("MY_WARSHALL_C", n, P), P)[1])(next(fresh)), runs)
        closures[jit] = (P.to_numpy(), m.last_call_stats)          # to_numpy: a collective
        out[f"warshallc_{jit}_s"] = Timing(times).median_s
        T = m.table(rows=rows, cols=32)
        r.B.table_set_ints(T, splitmix(np.arange(rows)) >> np.uint64(32))
        X = bits(r.B, rows, True)
        m.call("MY_MIN", T, X, bits(r.B, rows, False))
        times, Z = r.timed(lambda m=m, T=T, X=X: (lambda Z: (m.call("MY_MIN", T, X, Z), Z)[1])(bits(r.B, rows, False)), runs)
        mins[jit] = (r.B.numb(Z.v), r.B.fnd(Z.v), m.last_call_stats)
        out[f"minbody_{jit}_s"] = Timing(times).median_s
    tier = machines["on"].jit
    out["compiled_calls"] = {rt.display: rt.compiled_calls for rt in tier.routines.values()}
    out["compile_s"] = {rt.display: rt.compile_seconds for rt in tier.routines.values()}
    vals = splitmix(np.arange(rows)) >> np.uint64(32)
    ok = (np.array_equal(closures["off"][0], closures["on"][0]) and closures["off"][1] == closures["on"][1]
          and mins["off"] == mins["on"] and mins["on"][:2] == (int((vals == vals.min()).sum()), int(np.argmax(vals == vals.min())) + 1)
          and all(c >= runs for c in out["compiled_calls"].values()))
    if r.comm.rank == 0:
        ref = starvm.Machine(backend="numpy", out=open(os.devnull, "w"))
        Q = ref.table(adj)
        ref.call("WARSHALL_adapt", n, Q)
        ok = ok and bool((Q.to_numpy() == closures["on"][0]).all())
    out.update({"ok": r.comm.bcast(bool(ok)), "times_s": [out["warshallc_on_s"]],
                "steps": closures["on"][1], **collectives(r)})
    return out


def work_comm(r: Rank, runs: int) -> dict:
    """alpha and beta of the collectives on this rank count."""
    MPI, c = r.MPI, r.comm
    P = c.Get_size()
    one, out = np.zeros(1, np.int64), np.zeros(1, np.int64)
    reps = 2000
    def allreduces():
        for _ in range(reps):
            c.Allreduce(one, out, op=MPI.MIN)
    c.Barrier()
    alpha = c.allreduce(clock(allreduces) / reps, op=MPI.MAX)
    rows = {}
    for kind in ("bcast", "allgather", "alltoall"):
        pts = []
        for log in (3, 10, 14, 17, 20, 22, 24):
            nbytes = 1 << log
            per = max(1, nbytes // 8 // P)
            send = np.ones(per * P if kind != "allgather" else per, np.uint64)
            recv = np.empty(per * P, np.uint64)
            k = max(3, min(200, (1 << 24) // nbytes))
            def collectives(kind=kind, send=send, recv=recv, k=k):
                for _ in range(k):
                    if kind == "bcast":
                        c.Bcast(send, root=0)
                    elif kind == "allgather":
                        c.Allgather(send, recv)
                    else:
                        c.Alltoall(send, recv)
            c.Barrier()
            t = c.allreduce(clock(collectives) / k, op=MPI.MAX)
            pts.append((per * P * 8, t))
        # alpha: the smallest message; beta: the slope between the two largest (1 MB .. 16 MB)
        a = pts[0][1] if P > 1 else 0.0
        beta = (pts[-1][1] - pts[-3][1]) / (pts[-1][0] - pts[-3][0]) if P > 1 else 0.0
        rows[kind] = {"points": pts, "alpha_s": float(max(a, 0.0)), "beta_s_per_byte": float(max(beta, 0.0))}
    out = {"allreduce_int_s": alpha, **rows, "ok": True, "times_s": [alpha]}
    if r.distributed and r.B.device_arrays:
        out["device"] = device_comm(r)
    return out


def device_comm(r: Rank) -> dict:
    """alpha and beta of the array collectives on device buffers (CuPy ranks), by the path the
    distributed backend chose (NCCL, CUDA-aware MPI or host staging: collectives.py)."""
    MPI, c, B = r.MPI, r.comm, r.B
    xp, coll, P = B.xp, B.coll, c.Get_size()
    rows = {"path": B.collective_path}
    for kind in ("allreduce", "bcast", "allgather"):
        pts = []
        for log in (3, 10, 14, 17, 20, 22, 24):
            nbytes = 1 << log
            count = max(1, nbytes // 8 // (P if kind == "allgather" else 1))
            a = xp.ones(count, dtype=xp.uint64)
            k = max(3, min(200, (1 << 24) // nbytes))

            def collectives(kind=kind, a=a, k=k):
                for _ in range(k):
                    if kind == "allreduce":
                        coll.allreduce(a, "sum")
                    elif kind == "bcast":
                        coll.bcast(a, 0)
                    else:
                        coll.allgatherv(a)
            collectives(k=1)                                 # NCCL's first call sets up its channels
            c.Barrier()
            t = c.allreduce(clock(collectives, B.synchronize) / k, op=MPI.MAX)
            pts.append((count * 8 * (P if kind == "allgather" else 1), t))
        beta = (pts[-1][1] - pts[-3][1]) / (pts[-1][0] - pts[-3][0])
        rows[kind] = {"points": pts, "alpha_s": float(pts[0][1]), "beta_s_per_byte": float(max(beta, 0.0))}
    return rows


def worker(args) -> None:
    from mpi4py import MPI
    results = {}
    dist = Rank(args.backend, True, args.jit)
    serial = Rank(args.backend, False, args.jit) if MPI.COMM_WORLD.Get_size() == 1 and not args.no_serial else None
    for w in args.workloads.split(","):
        for label, r in (("distributed", dist), ("serial", serial)):
            if r is None or (label == "serial" and w == "comm"):
                continue
            # a tiny untimed instance first: the library routine is loaded and compiled there
            if w == "min":
                work_min(r, 8, 1)
                res = work_min(r, args.min_log2, args.runs, args.min_phases)
            elif w == "bfs":
                work_bfs(r, 5, 1)
                res = work_bfs(r, args.scale, args.runs)
            elif w == "boruvka":
                work_boruvka(r, 5, 1)
                res = work_boruvka(r, args.scale, args.runs)
            elif w == "warshall":
                work_warshall(r, 16, 1)
                res = work_warshall(r, args.warshall_n, args.runs)
            elif w == "comm":
                res = work_comm(r, args.runs)
            elif w == "jit":
                res = work_jit(r, args.jit_n, args.min_log2, args.runs)
            else:
                raise SystemExit(f"unknown workload {w}")
            res["median_s"] = Timing(res["times_s"]).median_s
            if w in ROUTINE:
                res["tier"] = tier_of(r.m, ROUTINE[w])
            results[f"{w}/{label}"] = res
            if MPI.COMM_WORLD.rank == 0:
                print(f"  P={MPI.COMM_WORLD.Get_size()} {w:9s} {label:11s} {res['median_s']:.4f} s "
                      f"{'ok' if res['ok'] else 'MISMATCH'}", flush=True)
    if MPI.COMM_WORLD.rank == 0:    # the message to the driver (not a result file): as it always was
        with open(args.out, "w") as f:
            json.dump(results, f, default=lambda o: o.item() if hasattr(o, "item") else str(o))


# ------------------------------------------------------------------ the driver (no MPI itself)
def mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else (shutil.which("mpiexec") or "mpiexec")


def header(args) -> dict:
    """The harness's header of this host (the driver: no backend made here, so no GPU held)."""
    machine = machine_info(("mpi4py", "scipy"))
    device = {**device_info(gpu=args.backend != "numpy"), "backend": args.backend}
    title = f"Strong scaling over MPI ranks ({args.backend} backend, {platform.node()}, {machine['cpu_count']} CPUs)"
    return document(f"scale_{args.name}", title, machine=machine, device=device)


def run_all(args) -> int:
    out = Path(args.results_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"scale_{args.name}"
    if args.merge and stem.with_suffix(".json").exists():    # add to an earlier run (one workload per command)
        report = json.loads(stem.with_suffix(".json").read_text())
        if "machine" not in report:     # written before the harness: this host's header (a merge runs there)
            report = {**header(args), **report}
        run_ranks(args, report, stem)
        return 0 if all(v.get("ok", True) and "error" not in v for e in report["ranks"].values()
                        for v in e.values()) else 1
    report = header(args)
    report.update({"host": platform.node(), "cpus": report["machine"]["cpu_count"],
                   "python": report["machine"]["python"],
                   "backend": args.backend, "params": {"min_log2": args.min_log2, "scale": args.scale,
                                                        "warshall_n": args.warshall_n, "runs": args.runs,
                                                        "min_phases": args.min_phases, "mps": args.mps,
                                                        "jit": args.jit},
                   "mpi": mpi_version(), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                   "load_average_at_start": report["machine"]["load_average_1min"],
                   "ranks": {}})
    return run_ranks(args, report, stem)


def run_ranks(args, report: dict, stem: Path) -> int:
    if args.mps:
        with mps_daemon() as env:
            return _run_ranks(args, report, stem, env)
    return _run_ranks(args, report, stem, None)


@contextlib.contextmanager
def mps_daemon():
    """A private CUDA MPS control daemon (``nvidia-cuda-mps-control -d``) for the runs: its pipe
    and log folders in a new temporary folder, passed to the ranks in the environment this
    yields; told to quit afterwards (it stops its server). The GPU's settings are untouched."""
    exe = shutil.which("nvidia-cuda-mps-control")
    if exe is None:
        raise SystemExit("bench_scale: --mps needs nvidia-cuda-mps-control (CUDA's MPS), not found on PATH")
    folder = Path(tempfile.mkdtemp(prefix="mps", dir="/tmp"))      # short: the pipe path is a socket's
    env = {**os.environ, "CUDA_MPS_PIPE_DIRECTORY": str(folder / "pipe"), "CUDA_MPS_LOG_DIRECTORY": str(folder / "log")}
    for sub in ("pipe", "log"):
        (folder / sub).mkdir()
    subprocess.run([exe, "-d"], env=env, check=True)
    try:
        yield env
    finally:
        subprocess.run([exe], input="quit\n", text=True, env=env, timeout=60, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _run_ranks(args, report: dict, stem: Path, env) -> int:
    out = stem.parent
    status = 0
    for P in [int(x) for x in args.ranks.split(",")]:
        for w in args.workloads.split(","):
            tmp = out / f".scale_{args.name}_{P}_{w}.json"
            cmd = [mpiexec(), *args.mpiexec_args.split(), "-n", str(P), sys.executable, __file__, "--worker",
                   "--workloads", w, "--out", str(tmp), "--backend", args.backend, "--runs", str(args.runs),
                   "--min-log2", str(args.min_log2), "--scale", str(args.scale), "--warshall-n", str(args.warshall_n),
                   "--jit-n", str(args.jit_n), "--jit", args.jit]
            if args.no_serial:
                cmd.append("--no-serial")
            if args.min_phases:
                cmd += ["--min-phases", str(args.min_phases)]
            print(" ".join(cmd[:4]), w, flush=True)
            proc = subprocess.Popen(cmd, start_new_session=True, env=env)
            try:
                rc = proc.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                rc = None
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, 9)
                    proc.wait()
            entry = report["ranks"].setdefault(str(P), {})
            if rc == 0 and tmp.exists():
                entry.update(json.loads(tmp.read_text()))
                tmp.unlink()
            else:
                entry[w] = {"error": "timeout" if rc is None else f"exit status {rc}"}
                status = 1
            if any(not v.get("ok", True) for v in entry.values()):
                status = 1
            save(report, stem)
    return status


def combine(name: str, parts: list[str], out: Path) -> int:
    """One report of several runs (one workload per device command): the header is the first
    part's that has the harness's header (a part written before the harness adds its ranks);
    a later part's entry for the same workload and rank count replaces an earlier one's."""
    reps = {part: json.loads((out / f"scale_{part}.json").read_text()) for part in parts}
    base = next((p for p in parts if "machine" in reps[p]), None)
    if base is None:
        print("no part has the harness header (all written before it): rerun one", file=sys.stderr)
        return 2
    report = {**reps[base], "ranks": {}, "combined_from": [], "benchmark": f"scale_{name}"}
    for part in parts:
        rep = reps[part]
        for P, entry in rep["ranks"].items():
            mine = report["ranks"].setdefault(P, {})
            for w in {key.partition("/")[0] for key in entry}:    # a workload's serial figure goes with it
                for key in [k for k in mine if k.partition("/")[0] == w]:
                    del mine[key]
            mine.update(entry)
        report["combined_from"].append({"name": part, "started": rep["started"], "harness_header": "machine" in rep,
                                        "params": rep.get("params"),
                                        "load_average_at_start": rep.get("load_average_at_start")})
    save(report, out / f"scale_{name}")
    return 0


def mpi_version() -> str:
    try:
        from mpi4py import MPI
        return MPI.Get_library_version().splitlines()[0].strip()
    except Exception as e:  # noqa: BLE001
        return f"unknown ({e})"


def save(report: dict, stem: Path) -> None:
    write_results(report, stem.with_suffix(".json"), markdown(report))


def markdown(rep: dict) -> str:
    """The Markdown body under the harness's header (title and machine line)."""
    lines = [f"{rep['mpi']}; Python {rep['python']}; started {rep['started']} (load average "
             f"{rep.get('load_average_at_start', 0):.1f}). bench/bench_scale.py: MIN over the rows x 32 bits, "
             "BFS-adapt and BORUVKA on R-MAT graphs (n vertices, arcs), WARSHALL-adapt on n vertices; the median "
             "of the runs (--runs of each command), the slowest rank's time; every result checked.", "",
             *(["Combined from: " + "; ".join(
                 f"scale_{c['name']} (started {c['started']}, load {c.get('load_average_at_start') or 0:.1f}"
                 f"{', --jit ' + c['params']['jit'] if (c.get('params') or {}).get('jit') else ''})"
                 for c in rep["combined_from"]), ""] if rep.get("combined_from") else []),
             "| workload | size | P | time, s | speed-up vs P=1 | serial (not distributed), s | steps | check |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    base = {}
    for P, entry in sorted(rep["ranks"].items(), key=lambda kv: int(kv[0])):
        for key, res in entry.items():
            w, _, label = key.partition("/")
            if label == "serial" or w in ("comm", "jit"):
                continue
            if "error" in res:
                lines.append(f"| {w} | | {P} | {res['error']} | | | | |")
                continue
            t = res["median_s"]
            serial = entry.get(f"{w}/serial", {}).get("median_s")
            size = f"{res['rows']} rows" if "rows" in res else f"n={res['n']}" + (f", {res['arcs']} arcs" if "arcs" in res else "")
            if P == "1":
                base[w, size] = t
            up = base.get((w, size))
            lines.append(f"| {w} | {size} | {P} | {t:.4g} | {'' if up is None else f'{up / t:.2f}'} | {'' if serial is None else f'{serial:.4g}'} "
                         f"| {sum(res.get('steps', {}).values()):,} | {'ok' if res['ok'] else 'MISMATCH'} |")
    shared = [(P, res["gpu_peers"], res.get("mps")) for P, e in sorted(rep["ranks"].items(), key=lambda kv: int(kv[0]))
              if isinstance(res := e.get("min/distributed"), dict) and res.get("gpu_peers")]
    if shared or rep.get("params", {}).get("mps"):
        lines += ["", "Ranks sharing a GPU: " + ("; ".join(
            f"P={P}: ranks {', '.join(map(str, peers))} on one GPU, CUDA MPS {'running' if mps else 'not running'}"
            for P, peers, mps in shared) or "none") + (" (--mps: a private MPS control daemon for every mpiexec)"
                                                        if rep.get("params", {}).get("mps") else "")]
    tiers = [(P, key, res["tier"]) for P, e in sorted(rep["ranks"].items(), key=lambda kv: int(kv[0]))
             for key, res in e.items() if isinstance(res, dict) and "tier" in res]
    if tiers:
        lines += ["", "How each workload ran on rank 0 (the compiled tier's and the native kernels' calls, "
                  "warm-up included, as --profile counts them):", ""]
        lines += [f"- {key}, P={P}: {tier_summary(t)}" for P, key, t in tiers]
    lines += ["", "Collectives (mpi4py, host buffers), time = alpha + beta * bytes: alpha of Allreduce = one "
              "int64; the others' alpha = their 16-byte time, beta = the slope from 1 MB to 16 MB.", "",
              "| P | Allreduce(int), us | Bcast alpha, us | Bcast beta, ns/B | Allgather beta, ns/B | Alltoall beta, ns/B |",
              "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for P, entry in sorted(rep["ranks"].items(), key=lambda kv: int(kv[0])):
        c = entry.get("comm/distributed")
        if not c or "error" in c:
            continue
        lines.append(f"| {P} | {c['allreduce_int_s'] * 1e6:.2f} | {c['bcast']['alpha_s'] * 1e6:.1f} | "
                     f"{c['bcast']['beta_s_per_byte'] * 1e9:.3f} | {c['allgather']['beta_s_per_byte'] * 1e9:.3f} | "
                     f"{c['alltoall']['beta_s_per_byte'] * 1e9:.3f} |")
    device = [(P, e["comm/distributed"]["device"]) for P, e in sorted(rep["ranks"].items(), key=lambda kv: int(kv[0]))
              if "device" in e.get("comm/distributed", {})]
    if device:
        lines += ["", "Array collectives on device buffers (the path the ranks chose), alpha = the 8-byte time, "
                  "beta = the slope from 1 MB to 16 MB.", "",
                  "| P | path | Allreduce alpha, us | Allreduce beta, ns/B | Bcast alpha, us | Bcast beta, ns/B | "
                  "Allgather beta, ns/B |", "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
        for P, d in device:
            lines.append(f"| {P} | {d['path']} | {d['allreduce']['alpha_s'] * 1e6:.1f} | "
                         f"{d['allreduce']['beta_s_per_byte'] * 1e9:.3f} | {d['bcast']['alpha_s'] * 1e6:.1f} | "
                         f"{d['bcast']['beta_s_per_byte'] * 1e9:.3f} | {d['allgather']['beta_s_per_byte'] * 1e9:.3f} |")
    jit = [(P, label, res) for P, e in sorted(rep["ranks"].items(), key=lambda kv: int(kv[0]))
           for label in ("distributed", "serial") if isinstance(res := e.get(f"jit/{label}"), dict) and "error" not in res]
    if jit:
        lines += ["", "The compiled tier per rank (--jit on) against the interpreter (--jit off), warm, the median "
                  "of the runs, the slowest rank's time: WARSHALL-C as printed under a user's name and the MIN "
                  "body under a user's name (work_jit).", "",
                  "| P | machine | WARSHALL-C n | interpreted, s | compiled, s | speed-up | MIN body rows | "
                  "interpreted, s | compiled, s | speed-up | check |",
                  "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for P, label, res in jit:
            wo, wc, mo, mc = (res["warshallc_off_s"], res["warshallc_on_s"], res["minbody_off_s"], res["minbody_on_s"])
            lines.append(f"| {P} | {label} | {res['n']} | {wo:.4f} | {wc:.4f} | {wo / wc:.1f} | {res['rows']} | "
                         f"{mo:.4f} | {mc:.4f} | {mo / mc:.1f} | {'ok' if res['ok'] else 'MISMATCH'} |")
    phases = [(P, res["phases"]) for P, e in sorted(rep["ranks"].items(), key=lambda kv: int(kv[0]))
              if isinstance(res := e.get("min/distributed"), dict) and res.get("phases")]
    if phases:
        lines += ["", "Where a distributed MIN call's time goes (--min-phases): medians per rank, us, of host "
                  "timestamps: enter = the call to search.extreme_here; kernel = MIN's kernels launched (async) or "
                  "launched and waited for (split); read = (found, value) on the host (the kernels' 16-byte copy and "
                  "its wait); allreduce = the MPI all-reduction, of which wait = for the last rank's read; clear = "
                  "a losing rank's zeros; leave = the return and the last wait for the device. call = the median "
                  "(and the least) from the first rank's start to the last rank's end; start skew = how much later "
                  "than the first this rank left the barrier; X: a slice made once, or a Fill of ones made by each "
                  "call. (Files from before the kernels gave their extreme also show a turn phase and other reads.)", "",
                  "| P | kernel | X | call, us | least, us | rank | start skew | enter | kernel "
                  "| read | allreduce | wait | clear | leave | check |",
                  "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                  "| ---: | ---: | --- |"]
        for P, variants in phases:
            for v in variants:
                least = f"{v['call_min_us']:.0f}" if "call_min_us" in v else ""     # not kept before 36bddd4
                for k, rk in enumerate(v["ranks"]):
                    cells = [P, v["kernel"], v.get("x", "fill"), f"{v['call_us']:.0f}", least, k,
                             f"{rk['start_skew_us']:.0f}",
                             *(f"{rk[p]:.0f}" if p in rk else "" for p in ("enter", "kernel", "read", "allreduce")),
                             f"{rk['wait_us']:.0f}", f"{rk['clear']:.0f}", f"{rk['leave']:.0f}",
                             "ok" if v["ok"] else "MISMATCH"]
                    lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    paths = sorted({res["collective_path"] for e in rep["ranks"].values() for res in e.values()
                    if isinstance(res, dict) and res.get("collective_path")})
    if paths:
        lines += ["", "Array collectives' path: " + "; ".join(paths)]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="1,2", help="rank counts, e.g. 1,2,4,8")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--min-log2", type=int, default=20, help="MIN over 2^this rows (default 20)")
    ap.add_argument("--scale", type=int, default=12, help="R-MAT scale of BFS-adapt and BORUVKA (default 12)")
    ap.add_argument("--warshall-n", type=int, default=256, help="WARSHALL-adapt's n (default 256)")
    ap.add_argument("--jit-n", type=int, default=400, help="WARSHALL-C's n in the jit workload (default 400)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--min-phases", type=int, default=0, metavar="RUNS",
                    help="min: also time RUNS calls phase by phase on each rank (search.extreme_here's marks), "
                         "the kernel launched only and waited for, X made once and made by each call")
    ap.add_argument("--mps", action="store_true",
                    help="run every mpiexec under a private CUDA MPS control daemon (ranks sharing a GPU)")
    ap.add_argument("--jit", default="auto", choices=("auto", "on", "off"),
                    help="the compiled tier of the workloads' machines (default auto; the jit workload runs both)")
    ap.add_argument("--backend", default="numpy",
                    help="the local backend of every rank (numpy, cupy, auto; emulated: the emulated device, "
                         "a CPU check of the GPU ranks' paths)")
    ap.add_argument("--name", default="cpu", help="results go to bench/results/scale_<name>.{json,md}")
    ap.add_argument("--results-dir", default=str(ROOT / "bench" / "results"),
                    help="the folder of the results (default bench/results)")
    ap.add_argument("--timeout", type=float, default=580, help="seconds per mpiexec run (default 580)")
    ap.add_argument("--mpiexec-args", default="", help="extra mpiexec arguments (Open MPI as root: --allow-run-as-root)")
    ap.add_argument("--no-serial", action="store_true", help="do not time the plain NumPy machine at P = 1")
    ap.add_argument("--merge", action="store_true",
                    help="add to bench/results/scale_<name>.json if it exists (one workload per command)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--combine", nargs="+", metavar="NAME",
                    help="only merge bench/results/scale_NAME.json files (runs made one workload per command, "
                         "e.g. on a device host) into scale_<--name>.{json,md}")
    args = ap.parse_args()
    if args.combine:
        return combine(args.name, args.combine, Path(args.results_dir))
    if args.worker:
        worker(args)
        return 0
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
