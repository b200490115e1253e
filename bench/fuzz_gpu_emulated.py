"""Differential fuzz of the GPU tier without a GPU: whole generated programs on the emulated device.

    nice python bench/fuzz_gpu_emulated.py --programs N --seed S --budget SECONDS

Each program of tests/reference/gen.py (seed S, S+1, ...: local tables, functions used in
expressions, `var` parameters, recursion, `parallel for`, library bodies, a runtime error in
some) runs under `--jit on` on `Machine(backend="cupy")` over the stand-in for CuPy whose
GPU-tier launches run on CPU threads (tests/gpu_sources/emulate.py ``emulated_device``: the
generated CUDA compiled as C++), and on the interpreter (NumPy backend, `--jit off`); output,
steps by kind and the error (message, position, Star call stack) must be equal. The main
block runs in parts (ir/main_parts.py), each a kernel. What ran compiled is counted: the
parts, and the routines, with the reasons of those that did not.

This checks the kernels' logic and the host side of whole runs (the GPU's memory model and
speed are the device's: bench/fuzz_compiled.py --backend cupy runs the same programs on one).
The stand-in runs only the GPU tier's kernels: the CuPy backend's own (an interpreted fused
`parallel for`, its reductions) compute nothing there, so a program where a routine or a
part ran interpreted is not judged (counted apart, with why it ran interpreted).
Results: bench/results/fuzz_gpu_emulated_cpu<cores>.json and .md; a mismatching program is
saved beside them under fuzz_gpu_emulated_mismatches/.
"""
from __future__ import annotations

import argparse
import collections
import io
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from starvm.benchmarking import RunTimeout, document, machine_info, watchdog, write_results

OPTIONS = dict(recursion_pct=20, fn_output_pct=20, error_pct=30, mutual_pct=50)


def run(text: str, name: str, backend: str, jit: str, limit_s: float | None):
    """((output, steps, error) or None, machine): None where the GPU tier refused something at
    load (it would run interpreted on the stand-in, which computes nothing of the CuPy
    backend's own kernels) or the run passed ``limit_s`` (interpreted code on such values)."""
    import starvm
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit=jit, out=out, native=False)
    err = None
    try:
        m.load(text, name)
        if backend == "cupy" and m.jit.skipped:
            return None, m
        with watchdog(limit_s):
            m.run_main()
    except RunTimeout:
        return None, m
    except starvm.StarError as e:
        err = e.render()
    return (out.getvalue(), list(m.counts), err), m


def outside_parts_computes(m) -> bool:
    """Do the main block's statements outside its parts (procedure calls, graph input), which
    run interpreted, compute a base operation (a call's argument FRST(Y), say)?"""
    from starvm.ir.main_parts import main_parts
    from starvm.ir.ops import BASE_OPS
    from starvm.ir.walk import walk
    for lowered in m.lowered.values():
        main = lowered.main
        if main is None:
            continue
        inside = {i for a, b in main_parts(main) for i in range(a, b)}
        for i, stmt in enumerate(main.src):
            if i not in inside and any(n.op in BASE_OPS for a in stmt.src for n in walk(a)):
                return True
    return False


def check(seed: int, max_stmts: int, limit_s: float) -> dict:
    from tests.reference.gen import Gen, RandomSource, render
    text = render(Gen(RandomSource(seed), max_stmts, **OPTIONS).program())
    name = f"gen{seed}.star"
    t0 = time.perf_counter()
    device, m = run(text, name, "cupy", "on", limit_s)
    want, _ = run(text, name, "numpy", "off", None)
    routines = list(m.jit.routines.values())
    parts = [r for r in routines if getattr(r, "part", False)]
    interpreted = {r.display: r.why for r in routines if r.calls and not r.compiled_calls}
    interpreted.update(m.jit.skipped)        # refused at load: a part, or a routine it may call
    if device is None and not interpreted:
        interpreted["(the run)"] = f"passed {limit_s} s on the stand-in"
    if outside_parts_computes(m):
        interpreted["(main block)"] = "a top-level call's arguments compute base operations (interpreted)"
    rec = dict(seed=seed, same=device == want, judged=device is not None and not interpreted, seconds=round(time.perf_counter() - t0, 2),
               parts=len(parts), parts_compiled=sum(1 for r in parts if r.compiled_calls),
               routines=sum(1 for r in routines if not getattr(r, "part", False) and r.calls),
               routines_compiled=sum(1 for r in routines if not getattr(r, "part", False) and r.compiled_calls),
               interpreted=interpreted,
               error=(want[2] or "").splitlines()[0] if want[2] else None)
    if not rec["same"]:
        rec["source"] = text
        rec["device"], rec["interpreter"] = device, want
    return rec


def markdown(doc: dict) -> list[str]:
    t = doc["totals"]
    lines = [doc["method"], "",
             f"{t['programs']} programs (seeds {doc['first_seed']}-{doc['first_seed'] + t['programs'] - 1}, "
             f"{doc['max_stmts']} top-level statements at most); {t['judged']} judged (everything they called "
             f"ran compiled), **{t['mismatching']} of them mismatching**; the others ran something interpreted, "
             f"whose CuPy code the stand-in does not compute (the table below: why); "
             f"{t['with_error']} stopped by a runtime error (equal on both); main-block parts "
             f"{t['parts_compiled']} of {t['parts']} ran compiled, routines called {t['routines_compiled']} of "
             f"{t['routines']}; {doc['wall_s']} s.", ""]
    if doc["why_interpreted"]:
        lines += ["| routine or part | calls that ran interpreted | why (first seen) |", "|---|---|---|"]
        for who, (n, why) in sorted(doc["why_interpreted"].items()):
            lines.append(f"| {who} | {n} | {why[:160]} |")
        lines.append("")
    if doc["mismatches"]:
        lines += ["Mismatching seeds: " + ", ".join(str(s) for s in doc["mismatches"]), ""]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-stmts", type=int, default=6)
    ap.add_argument("--budget", type=float, default=None, help="start no program after this many seconds")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--time-limit", type=float, default=120, help="seconds a program's device run may take")
    args = ap.parse_args(argv)
    from _pytest.monkeypatch import MonkeyPatch
    from tests.gpu_sources.emulate import emulated_device
    out = Path(args.out)
    name = f"fuzz_gpu_emulated_cpu{os.cpu_count()}"
    bad = out / "fuzz_gpu_emulated_mismatches"
    records, t0 = [], time.perf_counter()
    why = collections.OrderedDict()

    def save():
        totals = dict(programs=len(records), judged=sum(1 for r in records if r["judged"]),
                      mismatching=sum(1 for r in records if not r["same"] and r["judged"]),
                      with_error=sum(1 for r in records if r["error"]),
                      parts=sum(r["parts"] for r in records), parts_compiled=sum(r["parts_compiled"] for r in records),
                      routines=sum(r["routines"] for r in records),
                      routines_compiled=sum(r["routines_compiled"] for r in records))
        doc = document("fuzz gpu emulated", "Differential fuzz of the GPU tier on the emulated device (no GPU)",
                       machine=machine_info(), first_seed=args.seed, max_stmts=args.max_stmts,
                       method="Each generated program (tests/reference/gen.py) under `--jit on` on the CuPy backend over "
                              "the stand-in for CuPy, its GPU-tier kernels run on CPU threads (the generated CUDA compiled "
                              "as C++), against the interpreter on NumPy: output, steps by kind and errors compared; natives "
                              "off on both, so library bodies compile too.",
                       totals=totals, wall_s=round(time.perf_counter() - t0, 1), mismatches=[r["seed"] for r in records
                                                                                             if not r["same"] and r["judged"]],
                       why_interpreted={k: list(v) for k, v in why.items()},
                       records=[{k: v for k, v in r.items() if k not in ("source", "device", "interpreter")}
                                for r in records])
        write_results(doc, out / f"{name}.json", markdown(doc))
        return totals

    with emulated_device(MonkeyPatch()):
        for seed in range(args.seed, args.seed + args.programs):
            if args.budget is not None and time.perf_counter() - t0 > args.budget:
                break
            rec = check(seed, args.max_stmts, args.time_limit)
            records.append(rec)
            for who, reason in rec["interpreted"].items():
                n, first = why.get(who, (0, reason))
                why[who] = (n + 1, first)
            if not rec["same"] and rec["judged"]:
                bad.mkdir(parents=True, exist_ok=True)
                (bad / f"seed{seed}.star").write_text(rec["source"])
                (bad / f"seed{seed}.txt").write_text(f"device: {rec['device']!r}\ninterpreter: {rec['interpreter']!r}\n")
            what = ("same" if rec["same"] else "MISMATCH") if rec["judged"] else "not judged"
            print(f"seed {seed}: {what} ({rec['seconds']} s)", flush=True)
            if len(records) % 10 == 0:
                save()
    totals = save()
    print(f"{totals['programs']} programs, {totals['mismatching']} mismatching -> {out / name}.md")
    return 1 if totals["mismatching"] else 0


if __name__ == "__main__":
    sys.exit(main())
