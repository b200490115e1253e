"""Front-end fuzzing (long run): mutated/truncated shipped programs and random bytes.

    python bench/fuzz_frontend.py --count 10000 [--seed 0] [--subprocess 20]

Every input goes through Machine.run (like `star run`, with a step limit and a timeout) and
through the CLI's main(['check', FILE]) in-process; --subprocess inputs also through
`python -m starvm run --max-steps`. Acceptable: success, or a StarError with a position
(exit 1); non-UTF-8 bytes may also give the CLI's I/O error (exit 2, "cannot read").
Figures: bench/results/fuzz_frontend.json; failing inputs: bench/results/fuzz_failures/.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tests.reference.mutate import classify_cli, classify_run, inputs  # noqa: E402

GOOD = {"ok", "star_error", "unreadable"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--subprocess", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fuzz_frontend.json"))
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    counts = collections.Counter()
    failures = []
    bad_dir = Path(args.out).parent / "fuzz_failures"
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fuzz.star")
        for i, (name, text) in enumerate(inputs(rnd, args.count)):
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            results = {"run": classify_run(text), "check": classify_cli(path, "check")}
            if i < args.subprocess:
                p = subprocess.run([sys.executable, "-m", "starvm", "run", "--max-steps", "20000", path],
                                   capture_output=True, text=True, timeout=60, cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
                ok = p.returncode in (0, 1) or (p.returncode == 2 and "cannot read" in p.stderr)
                if not ok:
                    results["subprocess"] = "crash", f"exit {p.returncode}: {p.stderr[-500:]}"
                else:
                    results["subprocess"] = ("ok" if p.returncode == 0 else "star_error"), ""
            for how, (outcome, detail) in results.items():
                counts[f"{how}:{outcome}"] += 1
                if outcome not in GOOD:
                    bad_dir.mkdir(parents=True, exist_ok=True)
                    (bad_dir / f"input{args.seed}_{i}.star").write_text(text, errors="surrogateescape")
                    failures.append({"input": i, "from": name, "how": how, "outcome": outcome, "detail": detail[:1000]})
                    print(f"input {i} ({name}) {how}: {outcome}: {detail[:200]}", flush=True)
            if (i + 1) % 1000 == 0:
                print(f"{i + 1} inputs, {len(failures)} failures, {time.perf_counter() - t0:.0f} s", flush=True)
                save(i + 1, counts, failures, time.perf_counter() - t0, args)
    secs = time.perf_counter() - t0
    save(args.count, counts, failures, secs, args)
    print(f"{args.count} inputs, {len(failures)} failures, {secs:.0f} s: {dict(counts)}")
    return 1 if failures else 0


def save(done: int, counts, failures, secs: float, args) -> None:
    """The results so far (every 1000 inputs, and at the end: a stopped run keeps them), with
    the git state they were measured at."""
    from starvm.benchmarking.environment import git_state
    result = {"harness": "fuzz_frontend", "inputs": done, "inputs_asked": args.count, "complete": done == args.count,
              "seed": args.seed, "git": git_state(ROOT),
              "subprocess_runs": min(args.subprocess, done), "outcomes": dict(sorted(counts.items())),
              "failures": failures, "seconds": round(secs, 1)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
