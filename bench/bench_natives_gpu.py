"""Every CUDA native kernel against the compiled Star body of its routine under a user's name.

    python3 bench/bench_natives_gpu.py [--quick] [--only MATCH,MIN,...] [--runs 7] [--out PREFIX]
                                       [--backend cupy|auto]

The team rule (issue 10 item 4): a native kernel whose routine's compiled Star body is within
2x of it is deleted. On the CuPy backend this times, for each routine that has (or had) a
CUDA kernel — MATCH, MIN, MAX, HIT, SETMIN, IOTA, GATHER, SCATTER, GROUPMIN, COMPACT, EXPAND
and WARSHALL-adapt (starvm/native/<routine>/cuda.py) —

  library  the call by its library name (`native=True`): the native kernel where one is
           registered, else whatever runs it (the GPU tier's compiled body, once a kernel is
           gone), the route recorded;
  compiled the same Star text under a user's name (MY_MATCH, ...: no kernel applies) on the
           GPU tier (`jit="on"`, one CUDA kernel per call),

on the same inputs, warm (a first call compiles; medians of the later calls, the device
synchronised), and checks that both give the same results and step counts. The ratio is
compiled / library; the verdict: "goes" when the compiled body is within 2x at every size
measured, else "stays". The rows kernels and WARSHALL-adapt are measured, not deleted here
(another file's owners decide). Sizes: search routines over 2^20 and 2^27 rows x 32 bits
(--quick: 2^20); rows routines at BORUVKA's shapes (23 columns of vertex codes, half the rows
marked, rows / 16 groups) over 16384 and 65536 rows, where the compiled bodies still finish
(they take grid barriers per marked row: the ratio only grows with the rows); WARSHALL-adapt
at n = 5000 (--quick: 1000).

Writes PREFIX.json and PREFIX.md (default bench/results/natives_gpu_<device>: one file per machine,
a rerun replaces it, git keeps the one before; the H100's: bench/results/natives_gpu_h100.{json,md},
a profile of its calls in bench/results/natives_gpu_h100_profile.txt). With
``--backend auto`` on a machine without a GPU (the emulated device) it is a smoke test of the
script: the user-named bodies then run interpreted.
"""
from __future__ import annotations

import argparse
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import starvm  # noqa: E402
from starvm.benchmarking import device_info, device_label, document, machine_info, repeat, slug, \
    synchronizer, write_results  # noqa: E402
from starvm.distributed.user_named import warshall_adapt  # noqa: E402
from starvm.frontend.parser import fold  # noqa: E402
from starvm.native import native_for  # noqa: E402

SEARCH = ("MATCH", "MIN", "MAX", "HIT", "SETMIN")
ROWS = ("IOTA", "GATHER", "SCATTER", "GROUPMIN", "COMPACT", "EXPAND")
ADAPT = "WARSHALL-adapt"
OWNED_ELSEWHERE = set(ROWS) | {ADAPT}     # measured here; deleted (or not) by their files' owners
BOUND = 2.0                               # the rule: within 2x, the kernel goes
VERTEX_COLS = 23                          # BORUVKA's vertex codes at R-MAT scale 22


def user_library() -> str:
    """stdlib/search.star and stdlib/rows.star with the routines that have (or had) kernels under
    user names (MY_MATCH, ...; GROUPMIN's calls of MATCH and MIN too), and WARSHALL-adapt as
    MY_WARSHALL_ADAPT."""
    text = (ROOT / "stdlib" / "search.star").read_text() + (ROOT / "stdlib" / "rows.star").read_text()
    for name in SEARCH + ROWS:
        text = re.sub(rf"(?i)\b{name}\b(?![-\w])", f"MY_{name}", text)
    return text + warshall_adapt("MY_WARSHALL_ADAPT")


# ------------------------------------------------------------------ inputs
def _xp(m):
    """The array module of the machine's tables (CuPy on the GPU: large inputs are made there)."""
    probe = m.table(rows=1, cols=1)
    return sys.modules["cupy"] if type(probe.data).__module__.startswith("cupy") else np


def _ints(m, rows: int, width: int, seed: int):
    """rows random integers of ``width`` bits, on the device where m's tables are."""
    xp = _xp(m)
    return xp.random.default_rng(seed).integers(0, 1 << width, size=rows, dtype=xp.uint64)


def _row_bits(vals, r: int, width: int) -> np.ndarray:
    v = int(vals[r])
    return np.array([(v >> (width - 1 - j)) & 1 for j in range(width)], dtype=bool)


@dataclass
class Case:
    routine: str                 # the library name
    n: int                       # rows (n for WARSHALL-adapt)
    cols: int
    make: Callable               # machine -> (args, indices of the results to compare)
    fresh: bool = False          # the call changes its inputs: new arguments before every run
    runs: int = 7


def search_case(name: str, rows: int, cols: int, runs: int) -> Case:
    def make(m):
        vals = _ints(m, rows, cols, 11)
        T = m.table_from_ints(vals, cols)
        X = m.slice(np.ones(rows, bool))
        Z = m.slice(np.zeros(rows, bool))
        if name == "MATCH":
            return (T, X, m.word(_row_bits(vals, rows // 3, cols)), Z), (3,)
        if name in ("MIN", "MAX"):
            return (T, X, Z), (2,)
        if name == "HIT":            # F differs from T in about 1 bit in 8: a few rows equal
            flip = _ints(m, rows, cols, 12) & _ints(m, rows, cols, 13) & _ints(m, rows, cols, 14)
            F = m.table_from_ints(vals ^ flip, cols)
        else:                        # SETMIN: independent values, half the rows below F's
            F = m.table_from_ints(_ints(m, rows, cols, 15), cols)
        return (T, F, X, Z), (3,)
    return Case(name, rows, cols, make, runs=runs)


def rows_case(name: str, rows: int, runs: int) -> Case:
    width = max(1, rows.bit_length())

    def make(m):
        rng = np.random.default_rng([rows, len(name)])
        data = rng.random((rows, VERTEX_COLS)) < 0.5
        marks = rng.random(rows) < 0.5
        if name == "IOTA":
            return (m.table(rows=rows, cols=width),), (0,)
        if name in ("GATHER", "SCATTER"):   # a permutation: one writer per row of R
            perm = rng.permutation(rows) + 1
            return (m.table(data), m.table_from_ints(perm, width), m.slice(marks),
                    m.table(rows=rows, cols=VERTEX_COLS)), (3,)
        if name == "GROUPMIN":              # rows / 16 groups, as BORUVKA's components
            groups = rng.integers(0, max(1, rows // 16), rows)
            keys = rng.integers(0, 1 << 16, rows)
            return (m.table_from_ints(groups, width), m.table_from_ints(keys, 16), m.slice(marks),
                    m.slice(np.zeros(rows, bool))), (3,)
        c = int(marks.sum())
        if name == "COMPACT":
            return (m.table(data), m.slice(marks), m.table(rows=c, cols=VERTEX_COLS)), (2,)
        return (m.table(data[:c]), m.slice(marks), m.table(rows=rows, cols=VERTEX_COLS)), (2,)   # EXPAND
    return Case(name, rows, VERTEX_COLS, make, runs=runs)


def adapt_case(n: int, runs: int) -> Case:
    def make(m):
        rng = np.random.default_rng(n)
        return (n, m.table(rng.random((n, n)) < 3.0 / n)), (1,)
    return Case(ADAPT, n, n, make, fresh=True, runs=runs)


def cases(quick: bool, only: set[str] | None, runs: int) -> list[Case]:
    big = (1 << 20,) if quick else (1 << 20, 1 << 27)
    rows_sizes = (4096,) if quick else (16384, 65536)
    out = [search_case(name, r, 32, runs) for name in SEARCH for r in big]
    out += [rows_case(name, r, max(3, runs // 2)) for name in ROWS for r in rows_sizes]
    out.append(adapt_case(1000 if quick else 5000, max(3, runs // 2)))
    return [c for c in out if only is None or c.routine.upper() in only]


# ------------------------------------------------------------------ measuring
def _route(m, name: str, before: int) -> str:
    """What ran the library call: its native kernel, the compiled tier, or the interpreter."""
    if m.native_timing[0] > before:
        return "native kernel"
    r = next((r for r in m.jit.routines.values() if fold(r.display) == fold(name)), None)
    gpu = getattr(r, "gpu", r)              # auto: a PlacedRoutine, its GPU tier's routine
    if gpu is not None and type(gpu).__name__ == "GpuRoutine" and gpu.compiled_calls:
        return "compiled (GPU tier)"
    if r is not None and r.compiled_calls:
        return "compiled (CPU tier)"
    return "interpreted"


def _results(args, which) -> list:
    return [args[i].to_numpy().tobytes() if hasattr(args[i], "to_numpy") else args[i] for i in which]


def measure(case: Case, backend: str, library_jit: str = "on") -> dict:
    lib = starvm.Machine(backend=backend, jit=library_jit, native=True, out=io.StringIO())
    own = starvm.Machine(backend=backend, jit="on", native=True, out=io.StringIO())
    own.load(user_library(), "my_library.star")
    mine = "MY_" + case.routine.upper().replace("-", "_")
    had_kernel = native_for(case.routine.lower().replace("-", "_"), backend, enabled=True) is not None
    row = {"routine": case.routine, "n": case.n, "cols": case.cols, "kernel_registered": had_kernel,
           "library_jit": library_jit}
    outs = {}
    for how, m, name in (("library", lib, case.routine), ("compiled", own, mine)):
        args, which = case.make(m)
        before = m.native_timing[0]
        m.call(name, *args)                        # the first call: compiles, loads, warms the pools
        route = _route(m, name, before) if how == "library" else _route(m, mine, 0)
        box = {"args": args}
        setup = (lambda: box.update(args=case.make(m)[0])) if case.fresh else None
        t = repeat(lambda: m.call(name, *box["args"]), case.runs, sync=synchronizer(m), setup=setup)
        outs[how] = (_results(box["args"], which), m.last_call_stats)
        row[f"{how}_s"] = t.median_s
        row[f"{how}_runs_s"] = t.runs_s
        row[f"{how}_route"] = route
    row["equal"] = outs["library"] == outs["compiled"]
    row["ratio"] = row["compiled_s"] / row["library_s"]
    _free()
    return row


def _free():
    cp = sys.modules.get("cupy")
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()


def verdicts(results: list[dict]) -> dict:
    """routine -> (verdict, the largest ratio): "goes" if the compiled body is within BOUND of the
    library call at every size where the library call ran a native kernel."""
    out = {}
    for name in dict.fromkeys(r["routine"] for r in results):
        rs = [r for r in results if r["routine"] == name]
        native = [r for r in rs if r["library_route"] == "native kernel"]
        if not native:
            out[name] = ("no kernel (the library call ran " + rs[0]["library_route"] + ")", None)
            continue
        worst = max(r["ratio"] for r in native)
        goes = worst <= BOUND
        uncompiled = [r for r in native if not r["compiled_route"].startswith("compiled")]
        if uncompiled:          # no compiled body to compare with (no GPU tier here, or it declined)
            out[name] = (f"stays (the body ran {uncompiled[0]['compiled_route']}, not compiled)", worst)
            continue
        if name in OWNED_ELSEWHERE:
            verdict = "would go (reported: not this bench's file)" if goes else "stays"
        else:
            verdict = "goes" if goes else "stays"
        out[name] = (verdict, worst)
    return out


def markdown(results, verdict, library_jit: str) -> list[str]:
    lines = ["`python bench/bench_natives_gpu.py`: each routine by its library name (`native=True`: its CUDA "
             f"kernel where one is registered; `jit=\"{library_jit}\"`) against the same Star body under a user's name compiled by the "
             "GPU tier (`jit=\"on\"`), same inputs, warm medians (a first call compiles), device synchronised; "
             f"results and step counts compared. Ratio = compiled / library; the rule deletes a kernel within "
             f"{BOUND:g}x at every size.", "",
             "| routine | rows (n) | cols | library, ms | route | compiled body, ms | ratio | equal |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: | --- |"]
    for r in results:
        lines.append(f"| {r['routine']} | {r['n']} | {r['cols']} | {r['library_s'] * 1e3:.4f} | {r['library_route']} | "
                     f"{r['compiled_s'] * 1e3:.4f} | {r['ratio']:.2f} | {'yes' if r['equal'] else 'NO'} |")
    lines += ["", "| routine | largest ratio | verdict |", "| --- | ---: | --- |"]
    for name, (v, worst) in verdict.items():
        lines.append(f"| {name} | {'-' if worst is None else f'{worst:.2f}'} | {v} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (2^20 rows, 4096, n = 1000)")
    ap.add_argument("--only", default=None, help="comma-separated routine names")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", default=None)
    ap.add_argument("--backend", default="cupy", help="cupy (the measurement); auto without a GPU: a smoke test")
    ap.add_argument("--library-jit", default="on", choices=("on", "auto", "off"),
                    help="--jit of the library calls (on: a routine without a kernel runs compiled from its first call)")
    args = ap.parse_args(argv)
    only = {s.strip().upper() for s in args.only.split(",")} if args.only else None
    results = []
    for case in cases(args.quick, only, args.runs):
        row = measure(case, args.backend, args.library_jit)
        results.append(row)
        print(f"{row['routine']:>15} n={row['n']:<10} library {row['library_s'] * 1e3:9.4f} ms ({row['library_route']}),"
              f" compiled {row['compiled_s'] * 1e3:9.4f} ms ({row['compiled_route']}), ratio {row['ratio']:6.2f}"
              f"{'' if row['equal'] else '  RESULTS DIFFER'}", flush=True)
    verdict = verdicts(results)
    mi = machine_info()
    dev = device_info(starvm.Machine(backend=args.backend))
    out = Path(args.out) if args.out else \
        ROOT / "bench" / "results" / f"natives_gpu_{slug(device_label(dev, mi)).split('-')[0]}"
    doc = document("natives_gpu", "CUDA native kernels against the GPU tier's compiled Star bodies",
                   machine=mi, device=dev, backend=args.backend, quick=args.quick, runs=args.runs, bound=BOUND,
                   library_jit=args.library_jit,
                   results=results, verdicts={k: {"verdict": v, "largest_ratio": w} for k, (v, w) in verdict.items()})
    lines = markdown(results, verdict, args.library_jit)
    write_results(doc, out.with_suffix(".json"), lines)
    print("\n".join(lines))
    bad = [r for r in results if not r["equal"]]
    for r in bad:
        print(f"WRONG: {r['routine']} n={r['n']}: the library call and the compiled body differ (result or steps)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
