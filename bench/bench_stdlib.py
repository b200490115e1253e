"""Graph-algorithm benchmark of the Star standard library (stdlib/graphs.star) on any backend.

    python3 bench/bench_stdlib.py                        # NumPy backend -> bench/results/stdlib.{json,md}
    python3 bench/bench_stdlib.py --backend cupy         # GPU -> bench/results/stdlib_cupy_<device>.{json,md}
    python3 bench/bench_stdlib.py --backend auto --scales 14-18 --budget 420 --runs 3 --out /tmp/sb
    python3 bench/bench_stdlib.py --quick                # tiny scales, a few seconds: a smoke test
    python3 bench/bench_stdlib.py --backend auto --scales 24,25 --probes none --fallback none \
        --algorithms BORUVKA --gpu-generate --profile   # BORUVKA at scales 24-25 (scale 25: ~78 GiB, an H200)

Measures BORUVKA, PRIM and KRUSKAL (associative minimum spanning forest), DIJKSTRA, BELLMAN_FORD
and BELLMAN_FORD-adapt (single source, vertex 1), BFS and BFS-adapt (from vertex 1) through the
Python API on R-MAT graphs
(a, b, c, d = 0.57, 0.19, 0.19, 0.05, edge factor 16, fixed seed, undirected, weights 1..100)
of 2^scale vertices (--scales, default 14-18; --algorithms picks a subset). The tables are
filled as the programs of programs/ fill them (GRAPH_EDGES / GRAPH_ADJ widths); the graph and
its input tables are built once per scale, outside the timed region (each run gets a fresh
output); only ``Machine.call`` of the procedure is timed, the backend synchronised
(``backend.synchronize()``) before each clock read. Every procedure first runs once on a tiny
graph (library load, kernel compilation).

Time budget (--budget: the whole run's wall time from start-up, default 420 s, so that the run
fits 8 minutes). First every algorithm runs at two probe scales (--probes; s0-4, s0-3 below the
first requested scale s0 on the NumPy backend, s0-6, s0-5 elsewhere: on a GPU every step costs
a launch whatever the size), then at the requested scales in increasing order (every algorithm
at each scale, so the budget is shared), and last, with the budget left, the algorithms none of
whose requested scales ran get the fallback scales (--fallback; s0-2, s0-1 on NumPy, s0-4 ..
s0-1 elsewhere). The time of the next scale is predicted from the last two measured scales of
the same algorithm (t ~ n^p, p clamped to [1, 2], times a safety factor 1.25); a run predicted
above the per-run cap (--cap, default budget/4), above what is left of the budget, or above 1.5x
its fair share of it (what is left / algorithms still running) is skipped and recorded with the
reason, and so are that algorithm's larger scales. A watchdog (SIGALRM) stops a run that
overruns its estimate badly or the budget (status "skipped: timeout ..."). A row is the median
of up to --runs runs; a run longer than min(20 s, budget/100) (a quarter of that at probe and
fallback scales) is not repeated.

Beside each Star run, in the same process, SciPy: ``minimum_spanning_tree``, ``dijkstra`` /
``bellman_ford`` (indices=0) and ``breadth_first_order``. Every Star result is checked against
SciPy (MST total weight and edge count; distances; BFS levels); a mismatch fails loudly
("MISMATCH" printed at once, exit status 1; an error other than out-of-memory: exit status 2).
Progress lines are printed (flushed) as rows finish, and the JSON and Markdown are rewritten
after every row, so a run stopped from outside keeps what finished; the report is printed at
the end, its results table last. The report also holds a per-iteration cost model of every
procedure, measured with the machine's step counters on a small graph (--cost-scale, default
8; NumPy backend: step counts are the same on every backend), which explains GPU timings as
launch- or bandwidth-bound.

--gpu-generate makes the R-MAT graphs on the GPU (CuPy's random stream: graphs of the same
model and size, not NumPy's), seconds instead of minutes at scales 24-25; the generators'
graphs need no sort for SciPy's CSR (Graph.weight_matrix). BORUVKA is skipped, with the
reason, where its estimated device memory (boruvka_device_bytes) exceeds 90% of the free GPU
memory. --profile adds one profiled run per main row: time per operation kind and per routine.
"""
from __future__ import annotations

import argparse
import gc
import io
import math
import os
import statistics
import sys
import time
from pathlib import Path

T_PROCESS = time.perf_counter()     # the budget counts from here (imports included)

import numpy as np  # noqa: E402
from scipy.sparse.csgraph import bellman_ford, breadth_first_order, dijkstra, minimum_spanning_tree  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

import starvm  # noqa: E402
from starvm.api import steps_between  # noqa: E402
from starvm.graphs import rmat  # noqa: E402
from starvm.benchmarking import (Budget, caused_by_timeout, device_label, document,  # noqa: E402
                          header_markdown, machine_info as harness_machine_info, slug, synchronizer,
                          watchdog, write_json)
from starvm.benchmarking import device_info as harness_device_info  # noqa: E402
from starvm.benchmarking.environment import memory_available  # noqa: E402

SEED = 2015
RMAT = dict(edge_factor=16, a=0.57, b=0.19, c=0.19, d=0.05)
ALGORITHMS = ["BORUVKA", "PRIM", "KRUSKAL", "DIJKSTRA", "BELLMAN_FORD", "BELLMAN_FORD_ADAPT", "BFS", "BFS_ADAPT"]
BFS_LIKE = ("BFS", "BFS_ADAPT")
ROUND_BASED = ("BORUVKA", "BELLMAN_FORD_ADAPT", "BFS_ADAPT")    # O(rounds) whole-table steps
MST = ("BORUVKA", "PRIM", "KRUSKAL")
ARCS_PER_VERTEX = 30.6           # R-MAT arcs per vertex after dedupe (scale 22: 128.3 M arcs, 4.19 M vertices)
GPU_GOAL_MTEPS = 3000.0          # GraphHPC-2015: GPU-adapted Boruvka MST at R-MAT scale 22
GOAL_SCALE = 22
DEFAULT_BUDGET_S = 420.0         # 7 minutes: with start-up and overrun the run fits 8 minutes of wall time
SAFETY = 1.25                    # estimates are multiplied by this before comparing with limits
REPEAT_BELOW_S = 20.0            # a run longer than this (or than budget / 100) is not repeated
FAIR_SHARE = 1.5                 # a run may take this many times (budget left / algorithms still running)
RESERVE_S = 5.0                  # kept back from the budget for writing the report
WARMUP_SCALE = 5                 # every procedure runs once on this graph before any timing
SUBROUTINES = ["MATCH", "MIN", "MAX", "ADDV", "ADDT", "SETMIN", "WCOPY", "SETNUM", "NUMOF", "SETINF",
               "HIT", "IOTA", "GATHER", "SCATTER", "GROUPMIN"]
HOST_RESULT_OPS = {"FND", "STEP", "NUMB", "SOME", "BIT_GET", "EQ", "NOTEQ", "LESS", "LESSEQ", "GREAT", "GREATEQ"}


class Mismatch(Exception):
    pass


# ------------------------------------------------------------------ helpers
def nums(bits: np.ndarray) -> np.ndarray:
    """The rows of an (n, k) bool array as unsigned numbers, column 1 the most significant."""
    k = bits.shape[1]
    return (bits.astype(np.int64) << np.arange(k - 1, -1, -1, dtype=np.int64)).sum(axis=1)


def available_memory() -> int:
    return memory_available() or 8 << 30


def parse_scales(text: str | None) -> list[int]:
    """'14-18' | '14,16,18' | '8-9,12' | 'none' -> sorted list of scales."""
    if text is None or text.strip().lower() in ("", "none"):
        return []
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if lo > hi:
                raise ValueError(f"bad scale range '{part}'")
            out.update(range(lo, hi + 1))
        else:
            out.add(int(part))
    if any(s < 1 or s > 30 for s in out):
        raise ValueError("scales must lie in 1..30")
    return sorted(out)


def parse_algorithms(text: str | None) -> list[str]:
    if not text:
        return list(ALGORITHMS)
    names = [a.strip().upper().replace("-", "_") for a in text.split(",") if a.strip()]
    bad = [a for a in names if a not in ALGORITHMS]
    if bad:
        raise ValueError(f"unknown algorithm(s) {', '.join(bad)}; choose from {', '.join(ALGORITHMS)}")
    return [a for a in ALGORITHMS if a in names]       # canonical order


def machine_info() -> dict:
    return harness_machine_info(("scipy",))


def device_info(m, requested: str) -> dict:
    """What runs the Star code: the backend, and for a GPU backend the device and versions."""
    return {"backend_requested": requested, **harness_device_info(m)}


def gpu_free_memory() -> int | None:
    try:
        import cupy
        return int(cupy.cuda.runtime.memGetInfo()[0])
    except Exception:
        return None


def release_device_memory() -> None:
    """Give CuPy's cached blocks back to the device between scales (no-op without CuPy)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            cupy.get_default_memory_pool().free_all_blocks()
            cupy.get_default_pinned_memory_pool().free_all_blocks()
        except Exception:
            pass


GPU_GENERATE = {"on": False}      # --gpu-generate: R-MAT on the device (CuPy's random stream)
WARMUP_BIG_MAX = 20              # the device warm-up graph: scale first-main - 2, at most this


def make_graph(scale: int):
    if GPU_GENERATE["on"]:
        import cupy
        g = rmat(scale, seed=SEED, xp=cupy, **RMAT)
        release_device_memory()          # the generator's temporaries, before the tables
        return g
    return rmat(scale, seed=SEED, **RMAT)


PROFILE = {"on": False}           # --profile: one more run per main row with the machine's profiler


def profiled_run(m, alg: str, g, inputs, limit_s) -> str:
    """One more (untimed) run with ``Machine.profile`` on: every base operation and native
    kernel synchronised and timed, per kind and per routine (the --profile report, without
    the compiled tier's notes). Slower than the timed runs: it says where the time goes."""
    args = star_args(m, alg, g, inputs)
    m.reset_stats()              # before profiling starts: a reset forgets the routines' counters
    m.profile = True
    try:
        with watchdog(limit_s):
            m.call(alg, *args)
            synchronizer(m)()
        text = m.profile_report()
    finally:
        m.profile = False
    return text.split("\ncompiled tier")[0].rstrip()


def boruvka_device_bytes(n: int, arcs: int, wbits: int) -> int:
    """BORUVKA's peak device memory, estimated from its tables (stdlib/graphs.star) and the
    row kernels' scratch (starvm/native/<routine>/cuda.py), per arc, v = vertex code bits, w =
    weight bits, c = CODEBITS(arcs): the larger of the dedupe (the input tables 2v + w, the
    key table w + 2v, G's values, the order and the sort's buffers: 256 bits) and the rounds
    (the input and key tables; the symmetric list L2, R2, K2, the compacted keys, O2; CL, CR,
    PP; the contracted levels, about as much again as one; SCATTER's 32-bit winners)."""
    v = max(1, int(n).bit_length())
    c = max(1, int(arcs).bit_length())
    dedupe = 3 * v + 2 * wbits + 256
    rounds = 18 * v + 5 * wbits + 2 * c + 32
    return int(arcs * max(dedupe, rounds) / 8 * 1.1)


def graph_summary(g) -> dict:
    return {"n": g.n, "arcs": g.m, "undirected_edges": g.m // 2, "vbits": g.vbits, "wbits": g.wbits}


def teps_edges(alg: str, g) -> int:
    return g.m // 2 if alg in MST else g.m


# ------------------------------------------------------------------ tables (built once per scale)
def packed_adjacency(g) -> np.ndarray:
    """The n x n adjacency table in the backends' storage layout (base.py): an n x ceil(n/64)
    uint64 array, column j (0-based) = data[j], row i = bit i % 64 of word i // 64; P(i, j) = 1
    for an arc i -> j. Built from the arcs, never through a dense n x n bool array."""
    n = g.n
    words = (n + 63) // 64
    host = np.zeros((n, words), dtype=np.uint64)
    if g.m:
        row, col = g.src - 1, g.dst - 1
        key = col * words + (row >> 6)
        bit = np.left_shift(np.uint64(1), (row & 63).astype(np.uint64))
        order = np.argsort(key, kind="stable")
        key, bit = key[order], bit[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        host.reshape(-1)[key[starts]] = np.bitwise_or.reduceat(bit, starts)
    return host


def adjacency_table(m, g):
    """GRAPH_ADJ's table P (n x n) on the machine, filled from the packed words."""
    t = m.table(rows=g.n, cols=g.n)
    host = packed_adjacency(g)
    data = t.data
    if isinstance(data, np.ndarray):
        data[...] = host
    elif hasattr(data, "set"):                     # CuPy: one host-to-device copy, no temporary
        data.set(host)
    else:
        data[...] = t.backend.xp.asarray(host)
    return t


class Inputs:
    """The input tables of one scale, made on first use and shared by the algorithms (the
    procedures never write them: they are value parameters)."""

    def __init__(self, m, g):
        self.m, self.g = m, g
        self.cache = {}

    def get(self, kind: str):
        if kind not in self.cache:
            m, g = self.m, self.g
            # the codes go straight into the packed columns (Machine.table_from_ints), as
            # GRAPH_EDGES writes them: no m x k bool arrays (issue 13)
            if kind == "mst":                          # mst_prim.star / mst_kruskal.star
                self.cache[kind] = (m.table_from_ints(g.src, g.vbits), m.table_from_ints(g.dst, g.vbits),
                                    m.table_from_ints(g.weight, g.wbits))
            elif kind == "sp":                         # dijkstra.star / bellman_ford.star
                self.cache[kind] = (m.table_from_ints(g.src, g.vbits), m.table_from_ints(g.dst, g.vbits),
                                    m.table_from_ints(g.weight, g.vbits + g.wbits))
            else:                                      # bfs.star: GRAPH_ADJ
                self.cache[kind] = adjacency_table(m, g)
        return self.cache[kind]

    def drop(self, kind: str) -> None:
        self.cache.pop(kind, None)


def input_kind(alg: str) -> str:
    return {"BORUVKA": "mst", "PRIM": "mst", "KRUSKAL": "mst", "DIJKSTRA": "sp", "BELLMAN_FORD": "sp",
            "BELLMAN_FORD_ADAPT": "sp", "BFS_ADAPT": "sp"}.get(alg, "adj")


def star_args(m, alg: str, g, inputs: Inputs):
    """The call's arguments: the shared input tables and a fresh output (untimed)."""
    if alg in MST:
        L, R, W = inputs.get("mst")
        return (g.n, L, R, W, m.slice(np.zeros(g.m, bool)))
    if alg in ("DIJKSTRA", "BELLMAN_FORD", "BELLMAN_FORD_ADAPT"):
        L, R, W = inputs.get("sp")
        return (g.n, 1, L, R, W, m.table(rows=g.n, cols=g.vbits + g.wbits))
    if alg == "BFS_ADAPT":
        L, R, _ = inputs.get("sp")
        return (g.n, 1, L, R, m.table(rows=g.n, cols=g.vbits + 1))
    return (g.n, inputs.get("adj"), 1, m.table(rows=g.n, cols=g.vbits + 1))   # L is VBITS + 1 wide


def star_result(alg: str, g, args):
    if alg in MST:
        tree = np.asarray(args[-1].to_numpy(), dtype=bool)
        w = g.weight[tree]
        return (int(w.sum()), int(tree.sum()))
    out = np.asarray(args[-1].to_numpy(), dtype=bool)
    v = nums(out)
    inf = (1 << out.shape[1]) - 1
    if alg in BFS_LIKE:
        return np.where(v == inf, -1, v)
    return np.where(v == inf, np.inf, v.astype(float))


def check(alg: str, star, ref) -> str | None:
    """None when equal, else a description of the mismatch."""
    if alg in MST:
        if star != ref:
            return f"MST (total weight, edges) starvm {star} != SciPy {ref}"
        return None
    if alg in BFS_LIKE:
        bad = np.flatnonzero(star != ref)
    else:
        bad = np.flatnonzero(~((star == ref) | (np.isinf(star) & np.isinf(ref))))
    if bad.size:
        i = bad[0]
        return f"{bad.size} of {ref.size} vertices differ, e.g. vertex {i + 1}: starvm {star[i]} != SciPy {ref[i]}"
    return None


# ------------------------------------------------------------------ SciPy references
def _scipy_call(fn: str, g, csr):
    if fn == "mst":
        t = minimum_spanning_tree(csr)
        return (int(round(t.sum())), int(t.nnz))
    if fn == "dijkstra":
        return dijkstra(csr, directed=True, indices=0)
    if fn == "bellman_ford":
        return bellman_ford(csr, directed=True, indices=0)
    order, pred = breadth_first_order(csr, 0, directed=True, return_predecessors=True)
    level = np.full(g.n, -1, np.int64)
    level[0] = 0
    for v in order[1:]:                      # BFS order: a predecessor comes first
        level[v] = level[pred[v]] + 1
    return level


SCIPY_FN = {"BORUVKA": "mst", "PRIM": "mst", "KRUSKAL": "mst", "DIJKSTRA": "dijkstra", "BELLMAN_FORD": "bellman_ford",
            "BELLMAN_FORD_ADAPT": "dijkstra", "BFS": "bfs", "BFS_ADAPT": "bfs"}
SCIPY_NAME = {"mst": "minimum_spanning_tree", "dijkstra": "dijkstra", "bellman_ford": "bellman_ford",
              "bfs": "breadth_first_order"}


def scipy_run(fn: str, g, csr, runs: int):
    """(times, result) of `runs` timed calls (the level computation of BFS is not timed)."""
    times, res = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        if fn == "bfs":
            out = breadth_first_order(csr, 0, directed=True, return_predecessors=True)
            times.append(time.perf_counter() - t0)
            del out
            res = _scipy_call(fn, g, csr)
        else:
            res = _scipy_call(fn, g, csr)
            times.append(time.perf_counter() - t0)
    return times, res


# ------------------------------------------------------------------ Star runs
def star_run(m, alg: str, g, inputs: Inputs, runs: int, limit_s: float | None, deadline: float | None,
             repeat_below: float = REPEAT_BELOW_S):
    """Up to `runs` timed calls (a call over `repeat_below` seconds is not repeated), each
    stopped by a watchdog after `limit_s`. Returns (times, result, steps, native_calls, status)."""
    sync = synchronizer(m)
    times, res, steps, natives = [], None, None, 0
    for r in range(runs):
        args = star_args(m, alg, g, inputs)         # not timed
        m.reset_stats()
        gc.collect()
        sync()
        t0 = time.perf_counter()
        try:
            with watchdog(limit_s):
                m.call(alg, *args)
                sync()
            t = time.perf_counter() - t0
        except Exception as exc:
            if not caused_by_timeout(exc):
                raise
            t = time.perf_counter() - t0
            try:
                sync()
            except Exception:
                pass
            return times, res, steps, natives, f"timeout after {t:.1f} s (watchdog limit {max(0.05, limit_s):.1f} s)"
        times.append(t)
        if steps is None:
            steps = {k: int(v) for k, v in m.stats.items()}
            natives = int(getattr(m, "native_timing", [0])[0])
        res = star_result(alg, g, args)
        del args
        if r + 1 < runs:
            if t > repeat_below:
                break
            if deadline is not None and time.perf_counter() + t * SAFETY > deadline:
                break
    return times, res, steps, natives, "ran"


class Model:
    """Run time against n from the measured scales: t ~ n^p through the last two points, p
    clamped to [1, 2] (linear: steps ~ n and each step launch-bound; quadratic: steps ~ n and
    each step a pass over m ~ n rows); one point: quadratic."""

    def __init__(self):
        self.pts: list[tuple[int, float]] = []

    def add(self, n: int, t: float) -> None:
        self.pts = sorted([p for p in self.pts if p[0] != n] + [(n, t)])

    def exponent(self) -> float:
        if len(self.pts) < 2:
            return 2.0
        (n1, t1), (n2, t2) = self.pts[-2], self.pts[-1]
        if t1 <= 0 or t2 <= 0:
            return 2.0
        return min(2.0, max(1.0, math.log(t2 / t1) / math.log(n2 / n1)))

    def predict(self, n: int) -> float | None:
        if not self.pts:
            return None
        below = [p for p in self.pts if p[0] <= n]
        n0, t0 = below[-1] if below else self.pts[0]
        return float(t0 * (n / n0) ** self.exponent())


# ------------------------------------------------------------------ cost model (step counters)
def cost_model(scale: int, backend_name: str, algorithms: list[str]) -> dict:
    """Run every procedure on a small R-MAT graph (NumPy backend: step counts are the same on
    every backend) with each base operation and each library subroutine wrapped, and return per
    algorithm: the steps by kind (Machine.stats), by operand length (m arc rows, n vertex rows,
    short words, row gathers/scatters), the library calls and the steps inside them, and the
    outer-iteration count they are divided by."""
    from starvm.frontend.parser import fold
    g = make_graph(scale)
    natives = native_routines(backend_name)
    out = {"scale": scale, "graph": graph_summary(g), "backend_natives": sorted(natives),
           "backend": backend_name, "algorithms": {}}
    # interpreted: the model wraps routines and counts loop iterations through the interpreter's
    # hooks, which compiled code does not pass (the steps themselves are the same in both tiers)
    m = starvm.Machine(backend="numpy", native=False, jit="off")
    m.call("SETNUM", 0, m.word(np.zeros(1, bool)))     # load the library (all of graphs.star and the
    by_len: dict[str, dict[str, int]] = {}               # routines it calls) before wrapping
    subs: dict[str, dict] = {}
    depth = [0]
    ns = m.ns

    def length_class(a0) -> str:
        n = getattr(a0, "n", -1)
        return "E" if n == g.m else "V" if n == g.n else "w"

    for key in [k for k in ns if k.startswith("_op_")]:
        def wrapped(*a, _f=ns[key], _kind=key[4:].upper()):
            if _kind in ("ROW_GET", "ROW_SET"):
                cls = "row"
            elif _kind in ("COL_GET", "COL_SET"):
                cls = length_class(a[1])
            elif _kind in ("TRIM", "REP"):
                cls = "w"
            else:
                cls = length_class(a[0])
            d = by_len.setdefault(_kind, {})
            d[cls] = d.get(cls, 0) + 1
            return _f(*a)
        ns[key] = wrapped
    for sub in SUBROUTINES:
        py = "r_" + fold(sub)
        if py not in ns:
            continue

        def wrapped_sub(*a, _f=ns[py], _s=sub):
            if depth[0]:
                return _f(*a)
            before = list(m.counts)
            depth[0] += 1
            try:
                return _f(*a)
            finally:
                depth[0] -= 1
                rec = subs[_s]
                rec["calls"] += 1
                for k, v in steps_between(before, m.counts).items():
                    rec["steps"] += v
                    rec["by_kind"][k] = rec["by_kind"].get(k, 0) + v
        ns[py] = wrapped_sub
    inputs = Inputs(m, g)
    for alg in algorithms:
        args = star_args(m, alg, g, inputs)
        by_len.clear()
        subs.clear()
        subs.update({sub: {"calls": 0, "steps": 0, "by_kind": {}} for sub in SUBROUTINES})
        m.reset_stats()
        m.call(alg, *args)
        stats = dict(m.stats)
        total = sum(stats.values())
        calls = {sub: dict(r) for sub, r in subs.items() if r["calls"]}
        iters = outer_iterations(alg, g, stats, calls)
        lengths = {"E": 0, "V": 0, "w": 0, "row": 0}
        for d in by_len.values():
            for c, v in d.items():
                lengths[c] += v
        in_native = sum(r["steps"] for sub, r in calls.items() if sub in natives)
        native_calls = sum(r["calls"] for sub, r in calls.items() if sub in natives)
        host_results = sum(v for k, v in stats.items() if k in HOST_RESULT_OPS)
        out["algorithms"][alg] = {
            "steps": stats, "steps_total": total, "by_length": lengths,
            "by_kind_length": {k: dict(v) for k, v in by_len.items()},
            "subroutines": calls, "iterations": iters,
            "steps_in_native_subroutines": in_native, "native_calls": native_calls,
            "host_result_steps": host_results,
            "ops_on_backend": total - in_native + native_calls,
        }
    return out


def native_routines(backend_name: str) -> set[str]:
    """The SUBROUTINES a backend replaces with native kernels (starvm/native registry)."""
    try:
        from starvm.native.registry import kernels_of
    except Exception:
        return set()
    sides = ("numpy", "cupy") if backend_name == "auto" else (backend_name,)
    return {s for s in SUBROUTINES if any(b in kernels_of(s.lower()) for b in sides)}


def _ratio(r) -> str:
    """starvm / SciPy as written in the table: whole numbers when starvm is slower, two
    significant digits when it is faster (0.016×, not 0×)."""
    if not r:
        return "—"
    return f"{r:,.0f}×" if r >= 10 else f"{r:.2g}×"


def outer_iterations(alg: str, g, stats: dict, calls: dict) -> dict:
    """What one outer iteration is, and how many there were (from the counters)."""
    c = lambda s: calls.get(s, {}).get("calls", 0)   # noqa: E731
    if alg == "BORUVKA":
        return {"unit": "round (GROUPMIN)", "count": c("GROUPMIN"),
                "inner": {"GATHERs": c("GATHER"), "SCATTERs": c("SCATTER")}}
    if alg == "PRIM":
        return {"unit": "vertex joining the tree", "count": c("SETNUM"),
                "inner": {"tree edges chosen (MIN)": c("MIN")}}
    if alg == "KRUSKAL":
        return {"unit": "edge examined (STEP)", "count": stats.get("STEP", 0),
                "inner": {"weight classes (MIN)": c("MIN"), "merges (MATCH + WCOPY)": c("MATCH"),
                          "initial labels (SETNUM)": c("SETNUM")}}
    if alg == "DIJKSTRA":
        return {"unit": "vertex settled (MIN)", "count": c("MIN"),
                "inner": {"arcs relaxed (STEP)": stats.get("STEP", 0)}}
    if alg == "BELLMAN_FORD":
        rounds = c("ADDT")
        return {"unit": "vertex visit (n per round)", "count": rounds * g.n,
                "inner": {"rounds (ADDT)": rounds, "changed vertices (STEP)": stats.get("STEP", 0),
                          "vertices with incoming active arcs (MIN)": c("MIN")}}
    if alg == "BELLMAN_FORD_ADAPT":
        return {"unit": "round (GROUPMIN)", "count": c("GROUPMIN"),
                "inner": {"GATHERs": c("GATHER"), "SCATTERs": c("SCATTER")}}
    if alg == "BFS_ADAPT":
        return {"unit": "level (SCATTER)", "count": c("SCATTER"), "inner": {"GATHERs": c("GATHER")}}
    return {"unit": "vertex (transpose + frontier)", "count": g.n,
            "inner": {"reached vertices (STEP)": stats.get("STEP", 0), "levels (ADD)": stats.get("ADD", 0)}}


# ------------------------------------------------------------------ the benchmark
def plan(args, backend: str = "numpy") -> dict:
    """The scales, budget and limits of a run. ``backend`` is the resolved backend's name: on the
    NumPy backend the probes are s0-4, s0-3 and the fallback scales s0-2, s0-1 (s0 = the first
    main scale); elsewhere (a GPU, where every step costs a launch of 20-60 us whatever the size,
    so scales 10-11 already take tens of seconds for KRUSKAL and DIJKSTRA) the probes are s0-6,
    s0-5 and the fallback scales s0-4 .. s0-1."""
    quick = args.quick
    mains = parse_scales(args.scales) if args.scales else ([6, 7] if quick else [14, 15, 16, 17, 18])
    if not mains:
        raise ValueError("--scales names no scale")
    s0 = mains[0]
    if args.probes is not None:
        probes = parse_scales(args.probes)
    else:
        lo = 4 if backend == "numpy" else 6
        probes = [4, 5] if quick and not args.scales else [s for s in (s0 - lo, s0 - lo + 1) if s >= 2]
    if args.fallback is not None:
        fallback = parse_scales(args.fallback)
    else:
        lo = 2 if backend == "numpy" else 4
        fallback = [] if quick and not args.scales else [s for s in range(s0 - lo, s0) if s >= 2]
    probes = [s for s in probes if s < s0]
    fallback = [s for s in fallback if s < s0 and s not in probes]
    budget = args.budget if args.budget is not None else (60.0 if quick else DEFAULT_BUDGET_S)
    cap = args.cap if args.cap is not None else (5.0 if quick else budget / 4)
    return {"mains": mains, "probes": probes, "fallback": fallback, "budget": float(budget), "cap": float(cap),
            "repeat_below": min(REPEAT_BELOW_S, budget / 100),
            "runs": max(1, args.runs), "algorithms": parse_algorithms(args.algorithms),
            "cost_scale": args.cost_scale if args.cost_scale is not None else (5 if quick else 8)}


def run(args, out_paths=None, m=None, dev=None, t_start: float | None = None) -> dict:
    if m is None:
        m = starvm.Machine(backend=args.backend)
    if dev is None:
        dev = device_info(m, args.backend)
    P = plan(args, dev["backend"])
    t_start = T_PROCESS if t_start is None else t_start
    budget = Budget(P["budget"], start=t_start, reserve_s=RESERVE_S)
    deadline, left = budget.deadline, budget.left

    info = machine_info()
    print(f"starvm stdlib benchmark: backend {args.backend} -> {dev['backend']} on {device_label(dev, info)}; "
          f"scales {P['mains']} (probes {P['probes']}, fallback {P['fallback']}); algorithms {P['algorithms']}; "
          f"budget {P['budget']:.0f} s, per-run cap {P['cap']:.0f} s, runs {P['runs']}", flush=True)

    results, notes, mismatches, errors = [], [], [], []
    title = (f"starvm stdlib graph benchmark ({args.backend} backend"
             + (f" → {dev['backend']}" if dev["backend"] != args.backend else "") + f", {device_label(dev, info)})")
    data = {
        **document("stdlib graphs", title, machine=info, device=dev),
        "quick": args.quick,
        "complete": False,
        "backend": args.backend,
        "backend_resolved": dev["backend"],
        "graph": {"model": "R-MAT (starvm.graphs.rmat), undirected, no self-loops or repeated edges, "
                           "weights uniform 1..100", "seed": SEED, **RMAT, "sizes": {},
                  "generated_on": "GPU (CuPy's RandomState: not NumPy's graphs)" if GPU_GENERATE["on"]
                  else "host (NumPy)"},
        "scales": {"probe": P["probes"], "main": P["mains"], "fallback": P["fallback"]},
        "algorithms": P["algorithms"],
        "budget": {"total_wall_s": P["budget"], "per_run_cap_s": P["cap"], "safety_factor": SAFETY,
                   "runs": P["runs"], "repeat_below_s": P["repeat_below"], "fair_share": FAIR_SHARE,
                   "model": "t ~ n^p through the last two measured scales of the algorithm, p in [1, 2]; "
                            "the first probe is always run"},
        "method": "Star: median of up to `runs` calls (a call over repeat_below_s is not repeated); only "
                  "Machine.call is "
                  "timed, the backend synchronised before each clock read; the graph and its input tables are "
                  "built once per scale (untimed), each run gets a fresh output table. Every procedure ran once "
                  f"on R-MAT scale {WARMUP_SCALE} before any timing (library load, kernel compilation). SciPy: "
                  "median of up to 5 runs of minimum_spanning_tree / dijkstra(indices=0) / bellman_ford(indices=0) "
                  "/ breadth_first_order(0) on Graph.weight_matrix() (CSR; building it is untimed). MTEPS = edges / "
                  "time / 1e6 with edges = undirected edges for MST, arcs (= GRAPH_M, both directions of every "
                  "edge) for DIJKSTRA, BELLMAN_FORD, BFS. Source vertex 1. us_per_op = Star time / (counted steps "
                  "+ native kernel calls).",
        "gpu_goal": {"mteps": GPU_GOAL_MTEPS, "scale": GOAL_SCALE,
                     "what": "GPU-adapted Boruvka MST, R-MAT scale 22 (GraphHPC-2015)"},
        "results": results, "all_correct": True, "mismatches": mismatches, "errors": errors, "notes": notes,
        "cost_model": None, "total_wall_s": None,
    }

    def save():
        data["total_wall_s"] = time.perf_counter() - t_start
        measured = [e for e in results if e["status"] == "ran"]
        data["all_correct"] = all(e["correct"] is not False for e in measured) and not mismatches
        data["unchecked"] = sum(e["correct"] is None for e in measured)
        if out_paths is not None:
            write_outputs(data, out_paths)

    # ---- warm-up: load the library, compile the kernels, check the table builders
    tw = time.perf_counter()
    gw = make_graph(WARMUP_SCALE)
    iw = Inputs(m, gw)
    adj = np.asarray(iw.get("adj").to_numpy(), dtype=bool)
    if not np.array_equal(adj, gw.adjacency()):
        raise SystemExit("internal error: the packed adjacency table differs from Graph.adjacency()")
    csr_w = gw.weight_matrix()
    for alg in P["algorithms"]:
        _, res, _, _, _ = star_run(m, alg, gw, iw, 1, None, None)
        err = check(alg, res, _scipy_call("dijkstra" if alg == "BELLMAN_FORD" else SCIPY_FN[alg], gw, csr_w))
        if err:
            mismatches.append(f"{alg} warm-up scale {WARMUP_SCALE}: {err}")
            print(f"MISMATCH {alg} warm-up scale {WARMUP_SCALE}: {err}", flush=True)
    del iw, adj
    if dev["backend"] in ("auto", "cupy"):
        # Compile the device's kernels before any timing: CuPy builds some kernels per array
        # size class (reductions), so the round-based algorithms (a few whole-table steps a
        # round: quick at any scale) run once more at two scales below the first main one,
        # every table on the device; the small graph above stayed on the CPU under auto.
        m_dev = m
        if dev["backend"] == "auto":
            from starvm.backends.auto_backend import AutoBackend
            b = m.backend
            m_dev = starvm.Machine(backend=AutoBackend(b.host, b.dev, gpu_rows=1, gpu_bits=1), out=io.StringIO())
            iw = Inputs(m_dev, gw)
            for alg in P["algorithms"]:
                star_run(m_dev, alg, gw, iw, 1, None, None)
        g_big = make_graph(max(WARMUP_SCALE, min(WARMUP_BIG_MAX, P["mains"][0] - 2)))
        iw = Inputs(m_dev, g_big)
        for alg in (a for a in P["algorithms"] if a in ROUND_BASED):
            star_run(m_dev, alg, g_big, iw, 1, None, None)
        del iw, m_dev, g_big
    print(f"warm-up (scale {WARMUP_SCALE}, every procedure once): {time.perf_counter() - tw:.1f} s", flush=True)

    # ---- cost model on a small graph (NumPy step counters)
    tc = time.perf_counter()
    try:
        data["cost_model"] = cost_model(P["cost_scale"], dev["backend"], P["algorithms"])
        print(f"cost model (scale {P['cost_scale']}, NumPy counters): {time.perf_counter() - tc:.1f} s", flush=True)
    except Exception as e:          # the report is still worth having
        notes.append(f"cost model failed: {type(e).__name__}: {e}")
        print(f"cost model failed: {e}", flush=True)
    save()

    models = {alg: Model() for alg in P["algorithms"]}
    setup_times: dict[int, float] = {}    # scale -> seconds to build graph + CSR
    is_gpu = dev.get("gpu") is not None

    def setup_estimate(s: int) -> float:
        done = sorted(setup_times.items())
        if not done:
            return 0.0
        below = [p for p in done if p[0] <= s]
        s1, t1 = below[-1] if below else done[0]
        return t1 * 2.2 ** (s - s1)

    scipy_cache: dict[tuple[int, str], tuple[list, object]] = {}

    def scipy_for(fn: str, s: int, g, csr, budget_s: float):
        """(times or None, result) from the cache or fresh; bellman_ford only when its
        estimated time fits budget_s (else None: the check uses dijkstra's distances)."""
        key = (s, fn)
        if key in scipy_cache:
            return scipy_cache[key]
        prev = [ts for (s2, f2), (ts, _) in scipy_cache.items() if f2 == fn and s2 < s and ts]
        est = None
        if prev:
            s_prev = max(s2 for (s2, f2), (ts, _) in scipy_cache.items() if f2 == fn and s2 < s and ts)
            t_prev = statistics.median(scipy_cache[(s_prev, fn)][0])
            est = t_prev * (2.2 if fn != "bellman_ford" else 4.5) ** (s - s_prev)
        if est is not None and est > budget_s:
            scipy_cache[key] = (None, None)
            return None, None
        times, res = scipy_run(fn, g, csr, 1)
        while len(times) < 5 and sum(times) + times[-1] <= min(10.0, budget_s):
            more, res = scipy_run(fn, g, csr, 1)
            times += more
        scipy_cache[key] = (times, res)
        return times, res

    def skipped(alg, s, role, g, est, why, csr=None):
        e = {"algorithm": alg, "scale": s, "role": role, "status": f"skipped: {why}",
             "star_estimate_s": est, "correct": None}
        if g is not None:
            e.update(graph_summary(g))
            e["edges"] = e["teps_edges"] = teps_edges(alg, g)
            fn = SCIPY_FN[alg]
            if csr is not None and left() > 20:
                ts, _ = scipy_for(fn, s, g, csr, min(5.0, left() / 20))
                if ts:
                    t_sp = statistics.median(ts)
                    e.update(scipy_median_s=t_sp, scipy_runs_s=ts, scipy_mteps=e["teps_edges"] / t_sp / 1e6)
        else:
            n = 1 << s
            e.update(n=n)
        results.append(e)
        print(f"{alg:12s} scale {s:2d} [{role}]: skipped: {why}", flush=True)
        save()

    def run_scale(s: int, role: str, algs: list[str], stopped: dict[str, str], quiet: set[str]) -> None:
        """Every algorithm of `algs` at scale s: run, or skip with the reason. `stopped` holds the
        algorithms whose smaller scale of this phase was out of reach (their rows: skipped, or no
        row at all for those in `quiet`, the fallback phase's second and later skips)."""
        n = 1 << s
        todo, skip = [], []

        def stop(alg, why):
            stopped[alg] = why
            if role == "fallback":
                quiet.add(alg)

        for alg in algs:
            est = models[alg].predict(n)
            est_s = est * SAFETY if est is not None else None
            if alg in stopped:                     # a smaller scale was out of reach: so is this one
                if alg not in quiet:
                    skip.append((alg, est_s, stopped[alg]))
                continue
            if est_s is not None and est_s > P["cap"]:
                skip.append((alg, est_s, f"estimated {est_s:.0f} s > per-run cap {P['cap']:.0f} s"))
                stop(alg, f"estimated {est_s:.0f} s or more (scale {s} was out of reach)")
                continue
            if alg == "BFS":
                bytes_adj = n * n // 8
                host_need = bytes_adj * (1 if is_gpu else 3)
                if host_need > 0.7 * available_memory():
                    skip.append((alg, est_s, f"the n x n adjacency needs ~{host_need / 2**30:.1f} GiB of host memory"))
                    stop(alg, "the n x n adjacency does not fit")
                    continue
                free = gpu_free_memory() if is_gpu else None
                if free is not None and 2 * bytes_adj > 0.85 * free:
                    skip.append((alg, est_s, f"the n x n adjacency and its transpose need ~{2 * bytes_adj / 2**30:.1f} "
                                             f"GiB of GPU memory, {free / 2**30:.1f} GiB free"))
                    stop(alg, "the n x n adjacency does not fit on the GPU")
                    continue
            if alg == "BORUVKA" and is_gpu:
                free = gpu_free_memory()
                arcs = int(ARCS_PER_VERTEX * n)
                need = boruvka_device_bytes(n, arcs, 7)
                if free is not None and need > 0.9 * free:
                    skip.append((alg, est_s, f"BORUVKA needs ~{need / 2**30:.0f} GiB of GPU memory at this scale "
                                             f"(~{arcs / 1e6:.0f} M arcs), {free / 2**30:.0f} GiB free"))
                    stop(alg, "BORUVKA did not fit the GPU's memory")
                    continue
            todo.append((alg, est_s))
        need_setup = setup_estimate(s)
        if todo and need_setup + (min(e for _, e in todo if e is not None) if any(e for _, e in todo) else 0) > left():
            for alg, est_s in todo:
                skip.append((alg, est_s, f"the budget is spent ({max(0, left()):.0f} s left, building the graph "
                                         f"takes ~{need_setup:.0f} s)"))
                stop(alg, "the budget is spent")
            todo = []
        if not todo and not skip:
            return
        # ---- the graph (also for SciPy's figures of skipped rows, when there is time)
        g = csr = None
        if todo or (skip and need_setup < 0.15 * max(0.0, left())):
            ts = time.perf_counter()
            g = make_graph(s)
            csr = g.weight_matrix()
            setup_times[s] = time.perf_counter() - ts
            data["graph"]["sizes"][str(s)] = graph_summary(g)
            print(f"scale {s} [{role}]: R-MAT n = {g.n}, {g.m} arcs, built in {setup_times[s]:.1f} s "
                  f"({max(0, left()):.0f} s of the budget left)", flush=True)
        for alg, est_s, why in skip:
            skipped(alg, s, role, g, est_s, why, csr)
        inputs = Inputs(m, g) if g is not None else None
        for idx, (alg, est_s) in enumerate(todo):
            kind = input_kind(alg)
            remaining = left()
            alive = sum(1 for a in algs if a not in stopped)
            share = FAIR_SHARE * remaining / max(1, alive)
            if est_s is not None and est_s > min(remaining, share):
                why = (f"estimated {est_s:.0f} s, {max(0, remaining):.0f} s of the budget left"
                       + (f" (fair share {share:.0f} s: {alive} algorithms still running)" if share < remaining else ""))
                stop(alg, f"estimated {est_s:.0f} s or more at scale {s}, which did not fit the budget")
                skipped(alg, s, role, g, est_s, why, csr)
                continue
            if est_s is None and remaining < 1:
                stop(alg, "the budget is spent")
                skipped(alg, s, role, g, None, "the budget is spent", csr)
                continue
            try:
                tb = time.perf_counter()
                inputs.get(kind)
                t_tables = time.perf_counter() - tb
                remaining = left()              # the watchdog stops the run at the deadline at the latest
                limit = min(max(0.5, remaining), max(1.5 * P["cap"], 3 * (est_s or 0)))
                repeat = P["repeat_below"] if role == "main" else P["repeat_below"] / 4
                if is_gpu and alg in ROUND_BASED:
                    # one untimed run at this scale first: CuPy compiles some kernels per size
                    # class, and a round-based run is short next to a compilation
                    star_run(m, alg, g, inputs, 1, limit, deadline, repeat)
                st, sres, steps, natives, status = star_run(m, alg, g, inputs, P["runs"], limit, deadline, repeat)
            except Exception as exc:      # a StarError (e.g. out of memory), a CuPy error ...
                msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                errors.append(f"{alg} scale {s}: {msg}")
                failed.add(alg)
                stop(alg, "an error at a smaller scale")
                results.append({"algorithm": alg, "scale": s, "role": role, "status": f"error: {msg}",
                                **graph_summary(g), "edges": teps_edges(alg, g), "teps_edges": teps_edges(alg, g),
                                "star_estimate_s": est_s, "correct": None})
                print(f"{alg:12s} scale {s:2d} [{role}]: ERROR {msg}", flush=True)
                save()
                inputs.drop(kind)
                gc.collect()
                continue
            if not st:
                stop(alg, f"stopped at scale {s}")
                skipped(alg, s, role, g, est_s, status + (f"; estimated {est_s:.0f} s" if est_s else ""), csr)
                continue
            t = statistics.median(st)
            models[alg].add(n, t)
            fn = SCIPY_FN[alg]
            sp_t, sp_res = scipy_for(fn, s, g, csr, max(1.0, min(60.0, left() / 4)))
            ref = sp_res
            ref_note = None
            if fn == "bellman_ford" and sp_res is None:        # too slow here: check against dijkstra
                _, ref = scipy_for("dijkstra", s, g, csr, left())
                ref_note = "checked against SciPy dijkstra (bellman_ford too slow for the budget)"
            err = check(alg, sres, ref) if ref is not None else None
            if ref is None:        # the reference did not fit the budget: say so, claim nothing
                ref_note = "not checked: the SciPy reference did not fit the time budget"
            edges = teps_edges(alg, g)
            total_steps = sum(steps.values()) if steps else 0
            e = {"algorithm": alg, "scale": s, "role": role, "status": "ran", **graph_summary(g),
                 "edges": edges, "teps_edges": edges, "star_median_s": t, "star_runs_s": st, "star_estimate_s": est_s,
                 "tables_build_s": t_tables,
                 "scipy_function": SCIPY_NAME[fn], "scipy_median_s": statistics.median(sp_t) if sp_t else None,
                 "scipy_runs_s": sp_t,
                 "star_mteps": edges / t / 1e6,
                 "steps": steps, "steps_total": total_steps, "native_calls": natives,
                 "us_per_op": t / (total_steps + natives) * 1e6 if total_steps + natives else None,
                 "correct": (err is None) if ref is not None else None, "mismatch": err}
            if ref_note:
                e["reference_note"] = ref_note
            if e["scipy_median_s"]:
                e["ratio_star_vs_scipy"] = t / e["scipy_median_s"]
                e["scipy_mteps"] = edges / e["scipy_median_s"] / 1e6
            if PROFILE["on"] and role == "main" and left() > 3 * t + 10:
                e["profile"] = profiled_run(m, alg, g, inputs, limit)
            if alg in MST:
                e["mst_weight"], e["mst_edges"] = sres
            elif alg in BFS_LIKE:
                e["reached"], e["levels"] = int((sres >= 0).sum()), int(sres.max()) + 1
            else:
                e["reached"] = int(np.isfinite(sres).sum())
            results.append(e)
            est = f" (est. {est_s:.1f} s)" if est_s is not None else ""
            sp_txt = f"SciPy {_g(e['scipy_median_s'])} s, {t / e['scipy_median_s']:,.0f}x" if e["scipy_median_s"] \
                else "SciPy not timed"
            print(f"{alg:12s} scale {s:2d} [{role}]: starvm {t:8.3f} s{est} x{len(st)}, {sp_txt}, "
                  f"{_g(e['star_mteps'])} MTEPS, {total_steps:,} steps + {natives:,} native calls"
                  f"{', %.1f us/op' % e['us_per_op'] if e['us_per_op'] else ''}, "
                  f"{('ok' if ref is not None else 'unchecked') if err is None else 'MISMATCH: ' + err}", flush=True)
            if err is not None:
                mismatches.append(f"{alg} scale {s}: {err}")
            save()
            # free a table kind no later algorithm of this scale uses
            if all(input_kind(a) != kind for a, _ in todo[idx + 1:]):
                inputs.drop(kind)
        del inputs, g, csr
        gc.collect()
        release_device_memory()

    # probes, then the main scales, then (with the budget left) the fallback scales for the
    # algorithms none of whose main scales ran
    failed: set[str] = set()
    stopped: dict[str, str] = {}
    quiet: set[str] = set()
    for s in P["probes"]:
        run_scale(s, "probe", P["algorithms"], stopped, quiet)
    for s in P["mains"]:
        run_scale(s, "main", P["algorithms"], stopped, quiet)
    ran_main = {e["algorithm"] for e in results if e["status"] == "ran" and e["role"] == "main"}
    need = [a for a in P["algorithms"] if a not in ran_main and a not in failed]
    if need and P["fallback"]:
        for a in need:
            first = next((e for e in results if e["algorithm"] == a and e.get("role") == "main"), None)
            why = first["status"] if first else "no main scale ran"
            notes.append(f"{a}: no main scale ran (scale {P['mains'][0]}: {why}), so the fallback scales "
                         f"{', '.join(map(str, P['fallback']))} were tried with the budget left.")
        stopped_fb: dict[str, str] = {}
        for s in P["fallback"]:
            run_scale(s, "fallback", need, stopped_fb, quiet)

    for alg in P["algorithms"]:
        pred = models[alg].predict(1 << GOAL_SCALE)
        results.append({"algorithm": alg, "role": "model", "status": "model", "scale": GOAL_SCALE,
                        "star_estimate_s": pred, "model_exponent": models[alg].exponent(),
                        "model_points": [[nn, tt] for nn, tt in models[alg].pts]})
    data["complete"] = True
    save()
    return data


# ------------------------------------------------------------------ report
def _f(x, d=3):
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:.0f}"
    return f"{x:.{d}f}" if x >= 0.01 else f"{x:.2g}"


def _g(x) -> str:
    """Three significant digits (rates that span 0.001 .. 1000)."""
    if x is None:
        return "—"
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def gpu_paragraph(data: dict) -> str:
    """The distance of the measured MSTs from the GPU goal (3000 MTEPS at R-MAT scale 22)."""
    rs = data["results"]
    mst = [e for e in rs if e["algorithm"] in MST and e["status"] == "ran" and e.get("scale", 0) >= 12]
    if not mst:
        return "No MST run at scale 12 or more was measured."
    best = max(mst, key=lambda e: e["star_mteps"])
    where = f"{data.get('device', 'this machine')} ({data['backend_resolved']} backend)"
    gap = GPU_GOAL_MTEPS / best["star_mteps"]
    txt = (f"**Distance to the GPU goal.** The fastest associative MST measured here is {best['algorithm']} at "
           f"scale {best['scale']} on {where}: {_g(best['star_mteps'])} MTEPS, {gap:,.0f}× below the "
           f"{GPU_GOAL_MTEPS:.0f} MTEPS of a GPU-adapted Borůvka at R-MAT scale {GOAL_SCALE} (GraphHPC-2015). ")
    bor = sorted((e for e in mst if e["algorithm"] == "BORUVKA"), key=lambda e: e["scale"])
    if len(bor) >= 2:
        a, b = bor[0], bor[-1]
        grow = (b["star_median_s"] / a["star_median_s"]) ** (1 / max(1, b["scale"] - a["scale"]))
        est22 = b["star_median_s"] * grow ** (GOAL_SCALE - b["scale"])
        m22 = b["undirected_edges"] / b["n"] * (1 << GOAL_SCALE)
        txt += (f"BORUVKA does O(log n) rounds of whole-table steps (GATHER, SCATTER, GROUPMIN: native kernels; "
                f"HIT, SETMIN and slice logic), so its time grows {grow:.2f}× per scale from {a['scale']} to "
                f"{b['scale']} ({_g(a['star_mteps'])} → {_g(b['star_mteps'])} MTEPS), where PRIM and KRUSKAL, "
                f"with a step per vertex or per edge, grow 2-4× per scale. Extrapolated at that rate, scale "
                f"{GOAL_SCALE} (≈{m22 / 1e6:.0f} M edges) would take ≈{est22:.2f} s, i.e. "
                f"≈{m22 / est22 / 1e6:,.0f} MTEPS; the goal needs ≈{m22 / GPU_GOAL_MTEPS / 1e3:.0f} ms. ")
    txt += ("What is left between the two: each round still runs its steps one launch (GPU) or one NumPy call "
            "(CPU) at a time from the interpreter, with a host read per SOME and a wait for the device at the "
            "end of every native routine; on the GPU the dedupe's hash table (one random DRAM access a row) "
            "and the rounds' GROUPMIN passes are the largest kernels "
            "(bench/results/stdlib_auto_h100_boruvka_kernels.md). A round as one fused kernel sequence (or a "
            "CUDA graph) is the next step.")
    return txt


def cost_model_markdown(data: dict) -> list[str]:
    cm = data.get("cost_model")
    if not cm:
        return []
    g = cm["graph"]
    natives = set(cm["backend_natives"])
    res = data["results"]
    lines = [
        f"## Cost model: base operations per outer iteration",
        "",
        f"Measured with the machine's step counters (`Machine.stats`; every base operation and every library "
        f"subroutine wrapped to see its operand length) on R-MAT scale {cm['scale']}: n = {g['n']}, "
        f"m = {g['arcs']} arcs, vertex codes c = {g['vbits']} bits, weights b = {g['wbits']} bits "
        f"(shortest paths: b = c + {g['wbits']} = {g['vbits'] + g['wbits']}). Step counts are the same on every "
        f"backend; a library routine with a native kernel on the {cm['backend']} backend"
        + (" (on its GPU side)" if cm["backend"] == "auto" else "") + " "
        f"({', '.join(sorted(natives)) or 'none'}) runs there as 1-2 kernels and reports the steps of its Star body "
        "(starvm/native/steps.py), so the counts do not depend on natives either. Columns: "
        "base operations per outer iteration (all steps / iterations, amortised over the whole call), split by "
        "operand: **E** = a slice or column of m arc rows, **V** = n vertex rows, **w** = a short word "
        "(a code or a weight, ≤ 64 bits), **row** = ROW read/write (gather/scatter of one bit per column); "
        "**host** = operations whose result the control unit reads (SOME, FND, STEP, NUMB, word bit reads, "
        "word comparisons: a device-to-host round trip on a GPU); **on backend** = operations left when "
        "native routines count as one launch each.",
        "",
        "| algorithm | outer iteration | iterations | ops / iter | E | V | w | row | host "
        "| library calls / iter (steps per call) | on backend / iter |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for alg, a in cm["algorithms"].items():
        it = a["iterations"]
        k = max(1, it["count"])
        L = a["by_length"]
        subs = "; ".join(
            f"{s}{'*' if s in natives else ''} {r['calls'] / k:.2g} ({r['steps'] / r['calls']:.0f})"
            for s, r in sorted(a["subroutines"].items(), key=lambda kv: -kv[1]["steps"]))
        lines.append(f"| {alg} | {it['unit']} | {it['count']} | {a['steps_total'] / k:.1f} | {L['E'] / k:.1f} | "
                     f"{L['V'] / k:.1f} | {L['w'] / k:.1f} | {L['row'] / k:.2f} | {a['host_result_steps'] / k:.1f} | "
                     f"{subs} | {a['ops_on_backend'] / k:.1f} |")
    lines += ["", "`*` = native kernel on this backend. Steps by kind per outer iteration, and the inner loops:", ""]
    for alg, a in cm["algorithms"].items():
        it = a["iterations"]
        k = max(1, it["count"])
        kinds = ", ".join(f"{kd} {v / k:.2g}" for kd, v in sorted(a["steps"].items(), key=lambda kv: -kv[1]))
        inner = ", ".join(f"{name} {cnt}" for name, cnt in it["inner"].items())
        lines.append(f"- **{alg}** ({a['steps_total']:,} steps; {inner}): {kinds}.")
    # launch- or bandwidth-bound, from the measured rows
    meas = [e for e in res if e["status"] == "ran" and e.get("us_per_op")]
    if meas:
        lines += ["", "Time per operation in the runs above (Star time / (counted steps + native calls)), by scale:", ""]
        by_alg = {}
        for e in meas:
            by_alg.setdefault(e["algorithm"], []).append(f"{e['scale']}: {e['us_per_op']:.1f} µs")
        for alg, xs in by_alg.items():
            lines.append(f"- {alg}: " + ", ".join(xs))
        lines += ["",
                  "Reading it: an operation on an E column moves m/8 bytes per operand (scale 18: ≈0.95 MB, "
                  "about a microsecond of HBM bandwidth), while on a GPU every operation costs one or a few kernel "
                  "launches and a **host** one also a device-to-host copy: 10-60 µs whatever the size. So when µs "
                  "per operation stays flat as the scale grows, the run is launch-bound (time ≈ operations per "
                  "iteration × iterations × per-operation latency, from the table above); when it grows with m, "
                  "the column passes are bandwidth-bound — as on the NumPy backend, where each operation is a pass "
                  "over m/64 words in host memory."]
    return lines


def results_table(data: dict) -> list[str]:
    lines = [
        "| algorithm | scale | n | edges | starvm, s | SciPy, s | starvm / SciPy | starvm MTEPS | SciPy MTEPS "
        "| steps | µs / op | status |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    order = {a: i for i, a in enumerate(ALGORITHMS)}
    for e in sorted(data["results"], key=lambda e: (order.get(e["algorithm"], 99), e["scale"])):
        if e["status"] == "model":
            continue
        if e["status"] == "ran":
            ratio = _ratio(e.get("ratio_star_vs_scipy"))
            steps = f"{e['steps_total']:,}" + (f" + {e['native_calls']:,} native" if e.get("native_calls") else "")
            status = "ran" + (f" ({e['role']})" if e["role"] != "main" else "") + \
                ("" if e["correct"] else " unchecked" if e["correct"] is None else " **WRONG**") + (f"; {e['reference_note']}" if e.get("reference_note") else "")
            lines.append(f"| {e['algorithm']} | {e['scale']} | {e['n']} | {e['teps_edges']} | {_f(e['star_median_s'])}"
                         f" | {_f(e.get('scipy_median_s'), 4)} | {ratio} | {_g(e['star_mteps'])} | "
                         f"{_g(e.get('scipy_mteps'))} | {steps} | {_f(e.get('us_per_op'), 1)} | {status} |")
        else:
            lines.append(f"| {e['algorithm']} | {e['scale']} | {e.get('n', '—')} | {e.get('teps_edges', '—')} | — | "
                         f"{_f(e.get('scipy_median_s'), 4)} | — | — | {_g(e.get('scipy_mteps'))} | — | — | "
                         f"{e['status']}{' (' + e['role'] + ')' if e['role'] != 'main' else ''} |")
    return lines


def header_lines(data: dict) -> list[str]:
    """The harness's header (title, date, machine, device, git), then what was measured how."""
    head = header_markdown(data)
    b = data["budget"]
    head += [
        f"R-MAT a,b,c,d = {RMAT['a']}, {RMAT['b']}, {RMAT['c']}, {RMAT['d']}, edge factor {RMAT['edge_factor']}, "
        f"seed {data['graph']['seed']}, undirected, weights 1..100"
        + (f", generated on the {data['graph']['generated_on']}" if data["graph"].get("generated_on", "").startswith("GPU")
           else "") + ". Times are medians in seconds; only "
        "`Machine.call` is timed (device synchronised). MTEPS: undirected edges for MST, arcs for the others. "
        f"Budget {b['total_wall_s']:.0f} s wall, per-run cap {_f(b['per_run_cap_s'], 1)} s, runs per row: up to "
        f"{b['runs']} (none repeated above {_f(b['repeat_below_s'], 1)} s). "
        + ("Every Star result equals SciPy's (MST weight and edge count, distances, BFS levels)."
           if data["all_correct"] else "**MISMATCH — " + "; ".join(data["mismatches"]) + "**")
        + ("" if data.get("complete") else " **(partial: the run did not finish)**"),
        "",
    ]
    return head


def markdown(data: dict) -> str:
    lines = header_lines(data) + results_table(data)
    for note in data["notes"]:
        lines += ["", f"Note: {note}"]
    if data.get("errors"):
        lines += ["", "**Errors:** " + "; ".join(data["errors"])]
    profiled = [e for e in data["results"] if e.get("profile")]
    if profiled:
        lines += ["", "## Profiles", "",
                  "One more run per row with the machine's profiler (`Machine.profile`; every base operation "
                  "and native kernel synchronised and timed, so slower than the timed runs):"]
        for e in profiled:
            lines += ["", f"{e['algorithm']}, scale {e['scale']}:", "", "```", e["profile"], "```"]
    lines += [""] + cost_model_markdown(data)
    lines += ["", gpu_paragraph(data), "",
              f"Total wall time: {data['total_wall_s']:.0f} s. Reproduce: `python bench/bench_stdlib.py "
              f"--backend {data['backend']} --scales {','.join(map(str, data['scales']['main']))} "
              f"--budget {data['budget']['total_wall_s']:.0f}`.", ""]
    return "\n".join(lines)


def console_report(data: dict) -> str:
    """What the end of the output shows: the cost model first, the results table last."""
    lines = cost_model_markdown(data) + [""] + header_lines(data) + results_table(data)
    for note in data["notes"]:
        lines += [f"Note: {note}"]
    if data.get("errors"):
        lines += ["Errors: " + "; ".join(data["errors"])]
    return "\n".join(lines)


def write_outputs(data: dict, paths: tuple[Path, Path]) -> None:
    js, md = paths
    write_json(data, js)
    md.write_text(markdown(data))


def output_paths(args, backend_resolved: str | None = None, device: str | None = None) -> tuple[Path, Path]:
    """--out PREFIX -> PREFIX.json, PREFIX.md; --out DIR (existing) -> DIR/<default name>;
    default bench/results/stdlib[-quick] (numpy) or stdlib_<backend>_<device-slug>[-quick]."""
    if args.backend.lower() == "numpy":
        stem = "stdlib"
    else:
        stem = f"stdlib_{args.backend.lower()}_{slug(device or 'unknown')}"
    if args.quick:
        stem += "-quick"
    out = None if args.out is None else Path(args.out)
    if out is None:
        base = ROOT / "bench" / "results" / stem
    elif out.is_dir() or str(args.out).endswith(("/", os.sep)):
        base = out / stem
    else:
        base = out
        if base.suffix in (".json", ".md"):
            base = base.with_suffix("")
    base.parent.mkdir(parents=True, exist_ok=True)
    return base.with_name(base.name + ".json"), base.with_name(base.name + ".md")


def main(argv=None) -> int:
    """The command line; ``main([...])`` from Python starts the budget's clock at the call."""
    t_start = T_PROCESS if argv is None else time.perf_counter()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="numpy", help="starvm backend: numpy (default), cupy, auto, ...")
    ap.add_argument("--scales", default=None, help="main R-MAT scales, e.g. 14-18 or 14,16 (default 14-18)")
    ap.add_argument("--probes", default=None, help="probe scales run first (default: first scale - 4, - 3; 'none')")
    ap.add_argument("--fallback", default=None,
                    help="scales tried when the first main scale is out of reach (default: first - 2, - 1; 'none')")
    ap.add_argument("--algorithms", default=None, help=f"comma-separated subset of {','.join(ALGORITHMS)}")
    ap.add_argument("--budget", type=float, default=None, help="total wall-time budget in seconds (default 420)")
    ap.add_argument("--cap", type=float, default=None, help="largest estimated time of one run (default budget/4)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per row, median reported (default 3)")
    ap.add_argument("--cost-scale", type=int, default=None, help="R-MAT scale of the cost-model run (default 8)")
    ap.add_argument("--quick", action="store_true", help="tiny scales: a smoke test of this script")
    ap.add_argument("--profile", action="store_true",
                    help="one more run per main row with the machine's profiler: time per operation kind and per "
                         "routine (Markdown section 'Profiles', JSON key 'profile')")
    ap.add_argument("--gpu-generate", action="store_true",
                    help="generate the R-MAT graphs on the GPU (CuPy's random stream: other graphs of the same "
                         "model and size than NumPy's; seconds instead of minutes at scales 24-25)")
    ap.add_argument("--out", default=None,
                    help="output PATH-PREFIX (.json and .md are added) or an existing folder "
                         "(default bench/results/stdlib for numpy, stdlib_<backend>_<device> otherwise)")
    args = ap.parse_args(argv)
    GPU_GENERATE["on"] = args.gpu_generate
    PROFILE["on"] = args.profile
    try:
        plan(args)
    except ValueError as e:
        ap.error(str(e))
    # the device name is needed for the default file name: resolve it before running
    try:
        m = starvm.Machine(backend=args.backend)
    except Exception as e:                 # an unknown backend, CuPy without a GPU, ...
        print(f"error: cannot make a machine with backend '{args.backend}': {e}", file=sys.stderr)
        return 2
    dev = device_info(m, args.backend)
    paths = output_paths(args, dev["backend"], dev["gpu"]["name"] if dev.get("gpu") else "cpu")
    print(f"results go to {paths[0]} and {paths[1]}", flush=True)
    data = run(args, paths, m, dev, t_start)
    print("\n" + console_report(data), flush=True)
    print(f"\nwrote {paths[0]} and {paths[1]} in {data['total_wall_s']:.0f} s", flush=True)
    if not data["all_correct"]:
        print("MISMATCH: " + "; ".join(data["mismatches"]), file=sys.stderr, flush=True)
        return 1
    if data["errors"]:
        print("ERRORS: " + "; ".join(data["errors"]), file=sys.stderr, flush=True)
        if any("memory" not in e.lower() for e in data["errors"]):
            return 2          # an out-of-memory row is a result (recorded, reported); anything else is a bug

    return 0


if __name__ == "__main__":
    sys.exit(main())
