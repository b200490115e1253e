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

--edge-pct P draws a program to the machine's edges one time in P (Gen.edges: integers near
and past 2^63, the minimum div and mod -1, recursion thousands of calls deep under a raised
limit, a `parallel for` one index past what it writes; results as --name says). --cases
deep,output,interrupt runs the cases of tests/reference/jit_edges.py instead (issue 36, item
8), one kind after another from seed S, --jit on on the emulated device against the
interpreter on NumPy: recursion near and past a recursion limit drawn in 200-2000, loops in
compiled routines writing 10^4-10^5 lines (some stopped by a failing statement), and `star run`
on the emulated device (this script's --star) sent SIGINT a random 0-2 s after its first line:
exit 130, `star: interrupted at FILE:LINE:COL` at a statement, no traceback, the output a
prefix of the interpreter's uninterrupted run. Results in fuzz_gpu_emulated_cases_cpu<cores>:

    nice python bench/fuzz_gpu_emulated.py --cases deep,output,interrupt --programs 300 --budget 900
    nice python bench/fuzz_gpu_emulated.py --edge-pct 100 --programs 100 --budget 900 --name fuzz_gpu_emulated_edges_cpu2
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

from starvm.benchmarking import document, machine_info, write_results
from starvm.benchmarking.watchdog import RunTimeout, watchdog

OPTIONS = dict(recursion_pct=20, fn_output_pct=20, error_pct=30, mutual_pct=50)

# `star` on the emulated device (jit_edges.interrupted_run's command): this script's --star
STAR_EMULATED = [sys.executable, "-m", "bench.fuzz_gpu_emulated", "--star"]


def run(text: str, name: str, backend: str, jit: str, limit_s: float | None, max_depth: int | None = None):
    """((output, steps, error) or None, machine): None where the GPU tier refused something at
    load (it would run interpreted on the stand-in, which computes nothing of the CuPy
    backend's own kernels) or the run passed ``limit_s`` (interpreted code on such values)."""
    import starvm
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit=jit, out=out, native=False, max_depth=max_depth)
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


def check(seed: int, max_stmts: int, limit_s: float, edge_pct: int = 0) -> dict:
    from tests.reference.gen import Gen, RandomSource, render
    prog = Gen(RandomSource(seed), max_stmts, **OPTIONS, edge_pct=edge_pct).program()
    text = render(prog)
    name = f"gen{seed}.star"
    t0 = time.perf_counter()
    device, m = run(text, name, "cupy", "on", limit_s, prog.max_depth)
    want, _ = run(text, name, "numpy", "off", None, prog.max_depth)
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
               interpreted=interpreted, edges=prog.edges,
               error=(want[2] or "").splitlines()[0] if want[2] else None)
    if not rec["same"]:
        rec["source"] = text
        rec["device"], rec["interpreter"] = device, want
    return rec


# ---------------------------------------------------------------------- the edge cases (--cases)
def check_case(seed: int, kind: str, shapes: int | None, limit_s: float) -> dict:
    """One case of tests/reference/jit_edges.py: --jit on on the emulated device against the
    interpreter on NumPy (jit_edges's own check compares two tiers on one backend, and the
    stand-in computes nothing of the CuPy backend's interpreted code; these programs compute
    integers only, which it does compute, so every case is judged)."""
    import tempfile
    from tests.reference import jit_edges
    case = jit_edges.EdgeGen(seed, shapes).case(kind)
    t0 = time.perf_counter()
    rec = dict(seed=seed, kind=kind, note=case.note, params=case.params, max_depth=case.max_depth,
               delay=round(case.delay, 3), problems=[])
    if kind == "interrupt":
        with tempfile.TemporaryDirectory(prefix="starvm-edge-") as tmp:
            path = Path(tmp) / jit_edges.FILENAME
            path.write_text(case.source)
            got = jit_edges.interrupted_run(case, "on", "cupy", path, STAR_EMULATED)
            rec.update(interrupt_problems(case, got, path))
    else:
        want = jit_edges.run(case, "off", "numpy")
        try:
            with watchdog(limit_s):
                got = jit_edges.run(case, "on", "cupy")
        except RunTimeout:
            rec.update(timeout=True, seconds=limit_s)
            return rec
        problems = rec["problems"]
        if want[0] != got[0]:
            problems.append("output differs: " + jit_edges.first_difference(want[0], got[0], ("interpreter", "device")))
        if want[1] != got[1]:
            problems.append(f"step counts differ: {want[1]} vs {got[1]}")
        if want[2] != got[2]:
            problems.append(f"errors differ:\n--- interpreter\n{want[2]}\n--- device\n{got[2]}")
        routines = list(got[3].jit.routines.values())
        rec.update(compiled=sorted(r.display for r in routines if r.compiled_calls),
                   interpreted={**{r.display: r.why for r in routines if r.calls and not r.compiled_calls},
                                **got[3].jit.skipped},
                   error=None if want[2] is None else want[2].split(": error: ", 1)[-1].splitlines()[0],
                   lines=want[0].count("\n"))
    rec["seconds"] = round(time.perf_counter() - t0, 2)
    if rec["problems"]:
        rec["source"] = case.source
    return rec


def interrupt_problems(case, got: dict, path: Path) -> dict:
    """A `star run` on the emulated device sent SIGINT: exit 130, the position a statement's
    (or an expression's in one), no traceback, what it printed a prefix of the interpreter's
    uninterrupted run (on NumPy) of as many iterations."""
    from tests.reference import jit_edges
    problems, where = [], None
    if got["rc"] != 130:
        problems.append(f"exit {got['rc']}, not 130; stderr:\n{got['err'][-2000:]}")
    else:
        found = jit_edges._INTERRUPTED.search(got["err"])
        if not found or found.group(1) != str(path):
            problems.append(f"no 'star: interrupted at {path}:LINE:COL' line; stderr:\n{got['err'][-2000:]}")
        else:
            where = (int(found.group(2)), int(found.group(3)))
            if where not in jit_edges.statement_positions(case.source):
                problems.append(f"interrupted at {where}, not a statement (or an expression in one) of the program")
    if "Traceback" in got["err"]:
        problems.append(f"a traceback:\n{got['err'][-2000:]}")
    printed = got["out"]
    k = case.params["K"]
    done = printed.count("\n") - 1 + (not printed.endswith("\n"))       # the loop's lines, a cut one too
    full = jit_edges.run(case, "off", "numpy", params={**case.params, "N": k * max(done, 0)})[0]
    if not full.startswith(printed):
        problems.append("the output before the interrupt is not a prefix of the interpreter's uninterrupted run: "
                        + jit_edges.first_difference(full, printed, ("uninterrupted", "interrupted")))
    return dict(problems=problems, where=where, lines=printed.count("\n"), compiled=["(subprocess)"],
                error="interrupted")


def cases_markdown(doc: dict) -> list[str]:
    lines = [doc["method"], "",
             f"{doc['programs']} cases (seeds {doc['first_seed']}-{doc['first_seed'] + doc['programs'] - 1}), "
             f"{doc['wall_s']} s: **{doc['mismatching']} mismatching**; {doc['lines']} output lines compared.", "",
             "| kind | cases | mismatching | over the time limit | ran compiled (some routine) | outcomes | seconds (sum) |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    for name, k in doc["kinds"].items():
        outcomes = ", ".join(f"{o} {n}" for o, n in sorted(k["outcomes"].items(), key=lambda x: -x[1]))
        lines.append(f"| {name} | {k['cases']} | {k['mismatching']} | {k['timeouts']} | {k['ran_compiled']} | "
                     f"{outcomes} | {k['seconds']} |")
    if doc["why_interpreted"]:
        lines += ["", "| routine | cases where it ran interpreted | why (first seen) |", "|---|---|---|"]
        for who, (n, why) in sorted(doc["why_interpreted"].items()):
            lines.append(f"| {who} | {n} | {why[:160]} |")
    if doc["mismatches"]:
        lines += ["", "Mismatching: " + ", ".join(f"{m['kind']} seed {m['seed']}" for m in doc["mismatches"])]
    return lines


def cases_main(args, out: Path) -> int:
    from tests.reference.jit_edges import KINDS
    kinds = [k.strip() for k in args.cases.split(",") if k.strip()]
    if not kinds or any(k not in KINDS for k in kinds):
        print(f"fuzz_gpu_emulated: --cases takes {', '.join(KINDS)}", file=sys.stderr)
        return 2
    from _pytest.monkeypatch import MonkeyPatch
    from tests.gpu_sources.emulate import emulated_device
    name = args.name or f"fuzz_gpu_emulated_cases_cpu{os.cpu_count()}"
    bad = out / "fuzz_gpu_emulated_mismatches"
    tally = {k: dict(cases=0, mismatching=0, timeouts=0, seconds=0.0, ran_compiled=0, outcomes={}) for k in kinds}
    records, why, t0 = [], collections.OrderedDict(), time.perf_counter()

    def save():
        doc = document("fuzz gpu emulated cases", "Differential fuzz of the GPU tier at its edges on the emulated "
                       "device: deep recursion, big output, interrupts", machine=machine_info(),
                       first_seed=args.seed, programs=len(records), kinds=tally,
                       mismatching=sum(k["mismatching"] for k in tally.values()),
                       lines=sum(r.get("lines") or 0 for r in records), wall_s=round(time.perf_counter() - t0, 1),
                       method="Each case of tests/reference/jit_edges.py (kinds in turn) under `--jit on` on the CuPy "
                              "backend over the stand-in for CuPy, its GPU-tier kernels run on CPU threads, against the "
                              "interpreter on NumPy: deep and output in process (output line for line, steps by kind, "
                              "the error with its position and call stack); interrupt as a `star run` subprocess on the "
                              "emulated device sent SIGINT a random 0-2 s after its first line (exit 130, 'star: "
                              "interrupted at FILE:LINE:COL' at a statement, no traceback, the output a prefix of the "
                              "interpreter's uninterrupted run).",
                       why_interpreted={k: list(v) for k, v in why.items()},
                       mismatches=[{k: r[k] for k in ("kind", "seed", "note", "params", "problems")}
                                   for r in records if r["problems"]],
                       records=[{k: v for k, v in r.items() if k != "source"} for r in records])
        write_results(doc, out / f"{name}.json", cases_markdown(doc))

    with emulated_device(MonkeyPatch()):
        for i in range(args.programs):
            if args.budget is not None and time.perf_counter() - t0 > args.budget:
                break
            seed, kind = args.seed + i, kinds[i % len(kinds)]
            try:
                rec = check_case(seed, kind, args.shapes, args.time_limit)
            except Exception as e:  # noqa: BLE001 - a valid program must not crash the tier or the harness
                rec = dict(seed=seed, kind=kind, note="", params={}, problems=[f"crash: {type(e).__name__}: {e}"],
                           seconds=0.0, source="")
            records.append(rec)
            k = tally[kind]
            k["cases"] += 1
            k["seconds"] = round(k["seconds"] + rec["seconds"], 1)
            if rec.get("timeout"):
                k["timeouts"] += 1
            else:
                k["ran_compiled"] += bool(rec.get("compiled"))
                outcome = ("stopped at a position" if rec.get("where") else "stopped without a position") \
                    if kind == "interrupt" else "ran to the end" if rec.get("error") is None else rec["error"].split(" (")[0]
                k["outcomes"][outcome] = k["outcomes"].get(outcome, 0) + 1
            for who, reason in (rec.get("interpreted") or {}).items():
                n, first = why.get(who, (0, reason))
                why[who] = (n + 1, first)
            if rec["problems"]:
                k["mismatching"] += 1
                bad.mkdir(parents=True, exist_ok=True)
                (bad / f"{kind}_seed{seed}.star").write_text(rec["source"])
                (bad / f"{kind}_seed{seed}.txt").write_text(f"params {rec['params']}\n\n" + "\n\n".join(rec["problems"]) + "\n")
            print(f"{kind} seed {seed}: {'MISMATCH ' + rec['problems'][0][:300] if rec['problems'] else 'same'} "
                  f"({rec['seconds']} s; {rec['note']})", flush=True)
            if len(records) % 5 == 0:
                save()
    save()
    bad_n = sum(k["mismatching"] for k in tally.values())
    print(f"{len(records)} cases, {bad_n} mismatching -> {out / name}.md")
    return 1 if bad_n else 0


def star_main(argv: list[str]) -> int:
    """`star ARGS` with Machine(backend="cupy") on the emulated device (the interrupt cases'
    subprocess)."""
    from _pytest.monkeypatch import MonkeyPatch
    from tests.gpu_sources.emulate import emulated_device
    from starvm.ui.cli import main
    with emulated_device(MonkeyPatch()):
        return main(argv)


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
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--star"]:
        return star_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-stmts", type=int, default=6)
    ap.add_argument("--budget", type=float, default=None, help="start no program after this many seconds")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--time-limit", type=float, default=120, help="seconds a program's device run may take")
    ap.add_argument("--edge-pct", type=int, default=0, help="draw a program to the machine's edges one time in this many (Gen.edges)")
    ap.add_argument("--cases", default=None, metavar="KINDS",
                    help="run the edge cases of tests/reference/jit_edges.py instead (comma-separated: deep,output,interrupt)")
    ap.add_argument("--shapes", type=int, default=None, help="with --cases: draw the texts from this many shapes a kind")
    ap.add_argument("--name", default=None, help="the results file's name (default fuzz_gpu_emulated[_cases]_cpu<cores>)")
    args = ap.parse_args(argv)
    if args.cases:
        return cases_main(args, Path(args.out))
    from _pytest.monkeypatch import MonkeyPatch
    from tests.gpu_sources.emulate import emulated_device
    out = Path(args.out)
    name = args.name or f"fuzz_gpu_emulated_cpu{os.cpu_count()}"
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
                       machine=machine_info(), first_seed=args.seed, max_stmts=args.max_stmts, edge_pct=args.edge_pct,
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
            rec = check(seed, args.max_stmts, args.time_limit, args.edge_pct)
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
