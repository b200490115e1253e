"""Random-program differential testing of starvm against the reference model (long run).

    python bench/fuzz_differential.py --count 10000 [--seed 0] [--routes numpy,auto,...] [--jobs 2]

Generates --count valid, terminating Star programs (tests/reference/gen.py: procedures and
functions with var and value parameters, a local table, recursion, `parallel for`, and calls
of the standard-library routines that have native kernels), runs each on the reference model
(tests/reference/model.py, which also counts the steps by kind) and on every route
(tests/reference/harness.py ROUTES: a backend with `parallel for` fused or not, natives on
or off, ...), and compares the printed output (which ends with the final tables and every
variable) and the step counts by kind. Mismatching programs are saved under
bench/results/fuzz_mismatches/; the figures go to bench/results/fuzz_differential.json, summed up
with the front-end fuzzer's in bench/results/reliability.md.
Exit status 1 if any program mismatched.
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tests.reference.gen import LIBRARY, RandomSource  # noqa: E402
from tests.reference.harness import DEFAULT_ROUTES, differential, run_route, usable_routes  # noqa: E402
from starvm.benchmarking.results import document, write_json  # noqa: E402

# The campaign's routes (each costs a compile of the program and of the library files it
# calls, most of a run's time): `parallel for` not fused on the NumPy backend, fused on auto
# (tables under 64 rows on its host side, the NumPy backend's array evaluator; the others on
# its device, emulated without a GPU), and the GPU where there is one; natives are on in each,
# so the model (the Star bodies, ported) checks them. The CI test (tests/test_differential.py)
# runs every route of the harness, natives off too.
CAMPAIGN_ROUTES = ("numpy-unfused", "auto", "cupy")


def _one(job):
    seed, routes = job
    before = run_route.native_calls
    src, problems = differential(RandomSource(seed), routes)
    called = sorted({name for name in LIBRARY if re.search(rf"\b{re.escape(name)}\(", src)})
    return seed, src, problems, called, run_route.native_calls - before


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--routes", default=",".join(CAMPAIGN_ROUTES),
                    help=f"routes of tests/reference/harness.py (all: {','.join(DEFAULT_ROUTES)}); "
                         "those whose backend cannot run here are left out")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fuzz_differential.json"))
    args = ap.parse_args(argv)
    routes = usable_routes(tuple(args.routes.split(",")))
    bad_dir = Path(args.out).parent / "fuzz_mismatches"
    t0 = time.perf_counter()
    mismatches, library, natives = [], collections.Counter(), 0
    jobs = [(args.seed + i, routes) for i in range(args.count)]
    pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
    results = pool.imap(_one, jobs, chunksize=8) if pool else map(_one, jobs)
    def save(done: int) -> None:
        """The results so far (every 500 programs, and at the end: a stopped run keeps them)."""
        secs = time.perf_counter() - t0
        write_json(document("fuzz_differential", "Differential fuzzing: starvm's routes against the reference model",
                            harness="fuzz_differential", programs=done, programs_asked=args.count,
                            complete=done == args.count, first_seed=args.seed, routes=list(routes),
                            runs_per_program=len(routes),
                            compared="printed output and steps by kind, each route against the model",
                            programs_calling_library=dict(sorted(library.items())), native_kernel_calls=natives,
                            mismatching_programs=len(mismatches), seconds=round(secs, 1), jobs=args.jobs,
                            mismatches=mismatches), Path(args.out))

    for i, (seed, src, problems, called, native_calls) in enumerate(results):
        library.update(called)
        library["(any)"] += bool(called)
        natives += native_calls
        if problems:
            bad_dir.mkdir(parents=True, exist_ok=True)
            (bad_dir / f"seed{seed}.star").write_text(src)
            mismatches.append({"seed": seed, "problems": [p[:2000] for p in problems]})
            print(f"seed {seed}: {problems[0][:300]}", flush=True)
        if (i + 1) % 500 == 0:
            print(f"{i + 1} programs, {len(mismatches)} mismatching, {time.perf_counter() - t0:.0f} s", flush=True)
            save(i + 1)
    if pool:
        pool.close()
    secs = time.perf_counter() - t0
    save(args.count)
    print(f"{args.count} programs on {','.join(routes)}, {len(mismatches)} mismatching, "
          f"{natives} native kernel calls, {secs:.0f} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
