"""Random-program differential testing of the compiled tier (starvm/jit) (long run).

    python bench/fuzz_compiled.py --count 10000 [--seed 0] [--jobs 2]

The campaign of bench/fuzz_differential.py on the harness route ``jit`` (the NumPy backend
with every routine the compiled tier can take compiled, natives off so that the library
bodies the programs call are compiled too): each generated program's printed output and its
steps by kind must equal the reference model's. Results: bench/results/fuzz_compiled.json,
mismatching programs under bench/results/fuzz_mismatches/.

Each program is a new module for Numba to compile (about a second a routine on an idle
core), so a run of 10 000 programs takes hours; the test suite runs a dozen
(tests/jit/test_compiled.py).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import fuzz_differential  # noqa: E402


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a.startswith("--out") for a in argv):
        argv += ["--out", str(ROOT / "bench" / "results" / "fuzz_compiled.json")]
    return fuzz_differential.main(["--routes", "jit", *argv])


if __name__ == "__main__":
    sys.exit(main())
