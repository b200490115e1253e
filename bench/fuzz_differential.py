"""Random-program differential testing of starvm against the reference model (long run).

    python bench/fuzz_differential.py --count 10000 [--seed 0] [--backends numpy,cupy]

Generates --count valid, terminating Star programs (tests/reference/gen.py), runs each on the
reference model (tests/reference/model.py) and on every backend with `parallel for` fused and
not fused, and compares the printed output (which ends with the final table and every
variable) and the step counts. Mismatching programs are saved under
bench/results/fuzz_mismatches/; the figures go to bench/results/fuzz_differential.json.
Exit status 1 if any program mismatched.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from reference.gen import RandomSource  # noqa: E402
from reference.harness import differential  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backends", default="numpy")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fuzz_differential.json"))
    args = ap.parse_args(argv)
    backends = tuple(args.backends.split(","))
    bad_dir = Path(args.out).parent / "fuzz_mismatches"
    t0 = time.perf_counter()
    mismatches = []
    for i in range(args.count):
        seed = args.seed + i
        src, problems = differential(RandomSource(seed), backends)
        if problems:
            bad_dir.mkdir(parents=True, exist_ok=True)
            (bad_dir / f"seed{seed}.star").write_text(src)
            mismatches.append({"seed": seed, "problems": [p[:2000] for p in problems]})
            print(f"seed {seed}: {problems[0][:300]}", flush=True)
        if (i + 1) % 500 == 0:
            print(f"{i + 1} programs, {len(mismatches)} mismatching, {time.perf_counter() - t0:.0f} s", flush=True)
    secs = time.perf_counter() - t0
    result = {"harness": "fuzz_differential", "programs": args.count, "first_seed": args.seed,
              "backends": list(backends), "runs_per_program": 2 * len(backends),
              "mismatching_programs": len(mismatches), "seconds": round(secs, 1), "mismatches": mismatches}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{args.count} programs on {','.join(backends)} (fused and not), "
          f"{len(mismatches)} mismatching, {secs:.0f} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
