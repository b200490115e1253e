"""python -m bench.programs_floor PROGRAM --generate SPEC [--param source=N]: the associative
algorithm of programs/PROGRAM.star's stdlib routine, hand-written in Numba on the bit-sliced
layout (the floor of what the compiler could reach), on the graph of the spec, printed as the
program prints it; on stderr one line of JSON with the seconds of its phases (import, generate,
compute: packing the tables, the routine, reading the answer out; print). Numba's cache
(cache=True, next to the sources or in NUMBA_CACHE_DIR) makes a warm run load the machine code."""
from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

from bench.programs_reference.graphs import generate  # noqa: E402

from .programs import FLOORS  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.programs_floor", description=__doc__.splitlines()[0])
    ap.add_argument("program", choices=sorted(FLOORS))
    ap.add_argument("--generate", required=True, metavar="SPEC", help="rmat:scale=N,ef=16,seed=S or gnp:n=N,p=P,seed=S")
    ap.add_argument("-D", "--param", action="append", default=[], metavar="source=N",
                    help="the start vertex, as `star run --param source=N` gives it (default 1)")
    args = ap.parse_args(argv)
    imported = time.perf_counter()
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
    lines = FLOORS[args.program](graph, source)
    computed = time.perf_counter()
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    done = time.perf_counter()
    sys.stderr.write(json.dumps({"import_s": imported - T0, "generate_s": generated - imported,
                                 "compute_s": computed - generated, "print_s": done - computed}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
