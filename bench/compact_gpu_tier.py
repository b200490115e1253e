"""COMPACT and EXPAND on the GPU: the CUDA kernels (starvm/native/compact/, expand/) against the GPU
tier's compiled Star body (starvm/jit, one cooperative kernel per call) of the same routine.

    python3 bench/compact_gpu_tier.py [--rows 16384,65536,262144] [--runs 3] [--out PREFIX]

Issue 10 item 4 deletes a native kernel once the compiled body of its routine is within 2x of
it. The bodies run under user names (MY_COMPACT, MY_EXPAND: stdlib/rows.star renamed), so no
kernel replaces them, on the cupy backend with ``jit="on"``; the kernels run on a second
machine. Same inputs (23 columns, the width of BORUVKA's vertex codes at R-MAT scale 22, every
other row marked at random), warm, medians; results and step counts must be equal. Needs CuPy
and a GPU. Writes PREFIX.json and PREFIX.md (default bench/results/compact_gpu_tier_<device>).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import starvm  # noqa: E402
from starvm.benchmarking import device_info, device_label, document, machine_info, repeat, slug, synchronizer, write_results  # noqa: E402

COLS = 23


def user_copy() -> str:
    text = (ROOT / "stdlib" / "rows.star").read_text()
    return text.replace("proc COMPACT(", "proc MY_COMPACT(").replace("proc EXPAND(", "proc MY_EXPAND(")


def inputs(m, name: str, rows: int, rng):
    T = rng.random((rows, COLS)) < 0.5
    X = rng.random(rows) < 0.5
    c = int(X.sum())
    if name == "COMPACT":
        return lambda: (m.table(T), m.slice(X), m.table(rows=c, cols=COLS))
    return lambda: (m.table(T[:c]), m.slice(X), m.table(rows=rows, cols=COLS))


def measure(name: str, rows: int, runs: int, backend: str) -> dict:
    out, times = {}, {}
    for how in ("kernel", "compiled body"):
        kernel = how == "kernel"
        m = starvm.Machine(backend=backend, jit="off" if kernel else "on", native=kernel)
        m.load(user_copy(), "my_rows.star")
        routine = name if kernel else f"MY_{name}"
        build = inputs(m, name, rows, np.random.default_rng([rows, len(name)]))
        args = build()
        m.call(routine, *args)                               # warm-up: library load, compilation
        state = {}
        t = repeat(lambda: m.call(routine, *state["args"]), runs, sync=synchronizer(m),
                   setup=lambda: state.update(args=build()))
        out[how] = (state["args"][-1].to_numpy().tobytes(), m.last_call_stats)
        if kernel:
            assert m.native_timing[0] > 0, "the kernel did not run"
        times[how] = t.median_s
    if out["kernel"] != out["compiled body"]:
        raise SystemExit(f"{name} at {rows} rows: the kernel and the compiled body differ (result or steps)")
    return {"routine": name, "rows": rows, "cols": COLS, "kernel_s": times["kernel"],
            "compiled_s": times["compiled body"], "ratio": times["compiled body"] / times["kernel"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="16384,65536,262144")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--backend", default="cupy", help="cupy (the measurement); auto with an emulated device: a smoke test")
    args = ap.parse_args(argv)
    results = [measure(name, int(r), args.runs, args.backend) for r in args.rows.split(",")
               for name in ("COMPACT", "EXPAND")]
    mi, dev = machine_info(), device_info(starvm.Machine(backend=args.backend))
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / f"compact_gpu_tier_{slug(device_label(dev, mi))}"
    doc = document("compact_gpu_tier", "COMPACT and EXPAND on the GPU: CUDA kernels against the GPU tier's body",
                   machine=mi, device=dev, results=results)
    lines = ["Kernel: starvm/native/compact/cuda.py, expand/cuda.py (cupy backend, `jit=\"off\"`). Compiled body: the GPU tier's "
             "kernel of the Star body under a user's name (`jit=\"on\"`). Warm medians of "
             f"{args.runs} runs, device synchronised, {COLS} columns, about half the rows marked; results "
             "and step counts equal.", "",
             "| routine | rows | kernel, s | compiled body, s | ratio |", "| --- | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['routine']} | {r['rows']} | {r['kernel_s']:.6f} | {r['compiled_s']:.4f} | {r['ratio']:.0f} |")
    write_results(doc, out.with_suffix(".json"), lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
