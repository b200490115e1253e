"""Run under mpiexec by tests/distributed/test_gpu_ranks.py: the GPU tier's kernels on CuPy ranks.

    mpiexec -n P python gpu_ranks_driver.py OUT.json PROGRAM.star MODE... [--grid | --gpu]

Every rank runs PROGRAM on one machine (a global ``mode`` set to each MODE in turn) with ``--jit on`` on the
distributed backend over the emulated device (tests/gpu_sources/emulate.py: CuPy's stand-in, the
kernels' CUDA C on CPU threads, the mailbox in shared memory), rows in blocks of 64; ``--grid``:
the kernels on the grid path (grid barriers), not one block's, with room for 16 words of output
records at first (more granted, alike on every rank, and the call launched again); ``--gpu``: CuPy on the ranks'
GPUs (one each), not the emulated device. Rank 0 writes, per mode, every
rank's output, steps (counted so far) and error of each run, and its tiers (which routines and
parts ran compiled, the posts served).
"""
import io
import json
import sys
from pathlib import Path

import pytest
from mpi4py import MPI

import starvm  # noqa: E402
from starvm.distributed import distribute  # noqa: E402
from tests.gpu_sources.emulate import emulated_device  # noqa: E402


def run(backend, text: str, modes: list) -> dict:
    """The program in each mode in turn on one machine (its tables kept from run to run)."""
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit="on", out=out)
    m.load(text, "ranks.star")
    runs = []
    for mode in modes:
        m.globals["mode"] = mode
        err = ""
        try:
            m.run_main()
        except starvm.StarError as e:
            err = e.render()
        runs.append({"out": out.getvalue(), "err": err, "steps": list(m.counts)})
        out.seek(0)
        out.truncate()
    routines = [r for r in m.jit.routines.values() if r.calls]
    return {"runs": runs, "compiled": sorted(r.display for r in routines if r.compiled_calls),
            "kinds": sorted({type(r).__name__ for r in routines}),
            "posts": sum(getattr(r, "served", 0) for r in routines),
            "ob_launches": sum(getattr(r, "ob_launches", 0) for r in routines)}


def main() -> None:
    dest, program, *rest = sys.argv[1:]
    modes = [int(x) for x in rest if not x.startswith("--")]
    comm = MPI.COMM_WORLD
    text = Path(program).read_text()
    if "--gpu" in rest:          # real GPUs, one a rank (rank modulo the visible devices)
        from starvm.distributed import local_backend
        backend = distribute(local_backend("cupy", comm.rank), comm)
        got = run(backend, text, modes)
    else:
        with pytest.MonkeyPatch.context() as mp, emulated_device(mp):
            mp.setenv("STARVM_GPU_PFOR_THREADS", "32")     # a block of one warp: 32 CPU threads, not 512
            if "--grid" in rest:
                from starvm.jit import cuda_runtime
                mp.setattr(cuda_runtime, "ONE_BLOCK_WORDS", 0)
                mp.setenv("STARVM_GPU_THREADS", "32")
                # room for 16 words of output records: WORK's first launch runs out, and every
                # rank grows it alike and launches again
                mp.setattr(cuda_runtime, "OB_WORDS", 16)
            from starvm.backends import get_backend
            from starvm.jit import cuda_ranks
            # the stand-in is one 'GPU' for all ranks, but each rank's kernels run as processes of
            # their own on the CPU, never waiting for another's to end: as on one GPU per rank
            mp.setattr(cuda_ranks, "shared_gpu", lambda backend: ())
            backend = distribute(get_backend("cupy"), comm)
            got = run(backend, text, modes)
    every = comm.gather(got, root=0)
    if comm.rank == 0:
        Path(dest).write_text(json.dumps({"ranks": comm.size, "runs": every}))


if __name__ == "__main__":
    main()
