"""python -m bench.programs_reference PROGRAM --generate SPEC [--param source=N]: the job of
programs/PROGRAM.star done with SciPy/NumPy, printed as the program prints it; on stderr one
line of JSON with the seconds of its phases (import, generate, compute, print)."""
from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

from .graphs import generate  # noqa: E402
from .programs import LINES  # noqa: E402


def main(argv=None) -> int:
    imported = time.perf_counter()
    ap = argparse.ArgumentParser(prog="python -m bench.programs_reference", description=__doc__.splitlines()[0])
    ap.add_argument("program", choices=sorted(LINES))
    ap.add_argument("--generate", required=True, metavar="SPEC", help="rmat:scale=N,ef=16,seed=S or gnp:n=N,p=P,seed=S")
    ap.add_argument("-D", "--param", action="append", default=[], metavar="source=N",
                    help="the start vertex, as `star run --param source=N` gives it (default 1)")
    args = ap.parse_args(argv)
    source = 1
    for item in args.param:
        name, _, value = item.partition("=")
        if name.strip().lower() != "source" or not value.strip().isdigit():
            ap.error(f"--param takes source=N, not {item!r}")
        source = int(value)
    try:
        graph = generate(args.generate)
    except ValueError as e:
        ap.error(str(e))
    if not 1 <= source <= graph.n:
        ap.error(f"the source vertex must be one of the graph's vertices 1 .. {graph.n}")
    generated = time.perf_counter()
    lines = LINES[args.program](graph, source)
    computed = time.perf_counter()
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    done = time.perf_counter()
    sys.stderr.write(json.dumps({"import_s": imported - T0, "generate_s": generated - imported,
                                 "compute_s": computed - generated, "print_s": done - computed}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
