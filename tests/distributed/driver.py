"""Run under mpiexec by tests/distributed: many Star programs in one MPI start.

    mpiexec -n P python driver.py OUT.json ALIGN FILE...

Every rank runs every program on a distributed machine (rows split into blocks of ALIGN);
rank 0 writes {file: {"out", "err", "steps", "same_on_all_ranks"}} to OUT.json.
"""
import io
import json
import sys

from mpi4py import MPI

import starvm
from starvm.backends import get_backend
from starvm.distributed import distribute
from starvm.errors import StarError


def run_one(path: str, align: int, comm) -> dict:
    out = io.StringIO()
    backend = distribute(get_backend("numpy"), comm, align)
    m = starvm.Machine(backend=backend, out=out)
    err = ""
    try:
        m.run_file(path)
    except StarError as e:
        err = e.render()
    return {"out": out.getvalue(), "err": err, "steps": m.stats}


def main() -> None:
    dest, align, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    comm = MPI.COMM_WORLD
    results = {}
    for f in files:
        r = run_one(f, align, comm)
        everyone = comm.allgather(r)
        r["same_on_all_ranks"] = all(x == everyone[0] for x in everyone)
        results[f] = r
    if comm.rank == 0:
        with open(dest, "w") as fh:
            json.dump(results, fh)


if __name__ == "__main__":
    main()
