"""Run under mpiexec by tests/distributed/test_collectives.py: the choice of the array
collectives' path (starvm/distributed/collectives.py) and every path's results, with the NCCL
stand-in (nccl_standin.py) for cupy.cuda.nccl.

    mpiexec -n P python collectives_driver.py OUT.json
    mpiexec -n P python collectives_driver.py OUT.json --gpu    # real CuPy arrays, real paths

Rank 0 writes {"choices": {case: [path, reason]}, "results": {path: [mismatches]},
"nccl_calls": n, "same_on_all_ranks": bool}.
"""
import json
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

import nccl_standin  # noqa: E402  (beside this script, which is run as a file: its folder is on sys.path)

from starvm.distributed.collectives import choose  # noqa: E402
from starvm.distributed.comm import MpiComm  # noqa: E402


def choices(comm: MpiComm) -> dict:
    r = comm.rank
    cases = {
        "distinct GPUs": (nccl_standin.standin_access(r), "auto"),
        "two ranks share GPU 0": (nccl_standin.standin_access(r, gpu="standin-gpu-0" if r < 2 else None), "auto"),
        "shared GPU, CUDA-aware MPI": (nccl_standin.standin_access(r, gpu="one-gpu", cuda_aware=True), "auto"),
        "asked for host staging": (nccl_standin.standin_access(r), "host-staging"),
        "asked for CUDA-aware MPI": (nccl_standin.standin_access(r, cuda_aware=True), "cuda-aware-mpi"),
        "no NCCL on the last rank": (nccl_standin.standin_access(r, nccl=r != comm.size - 1), "nccl"),
        "NCCL refuses on rank 1": (nccl_standin.standin_access(r), "auto"),
        "host backend": (None, "auto"),
    }
    out = {}
    for name, (dev, prefer) in cases.items():
        nccl_standin.REFUSE_ON_RANK = 1 if name == "NCCL refuses on rank 1" else None
        c = choose(comm, dev, prefer)
        out[name] = [c.path, c.reason]
    nccl_standin.REFUSE_ON_RANK = None
    return out


def results(comm: MpiComm, coll, xp=np) -> list:
    """Every collective on random arrays of several dtypes and sizes (some empty, unequal
    between ranks) against a reference made from a pickled all-gather; ``xp``: the array
    module the collectives get (cupy with --gpu)."""
    bad = []
    host = (lambda a: a.get()) if xp is not np else np.asarray
    rng = np.random.default_rng(100 + comm.rank)
    for dtype in (np.uint64, np.int64, np.uint8, bool):
        for size in (0, 1, 7, 1000):
            a = (rng.integers(0, 2, size).astype(bool) if dtype is bool else
                 rng.integers(0, 200, size).astype(dtype))
            every = comm.allgather(a)
            for op, f in (("sum", np.sum), ("min", np.min), ("max", np.max)):
                if dtype is bool and op == "sum":
                    continue
                got = host(coll.allreduce(xp.array(a), op))
                want = f(np.stack(every), axis=0).astype(a.dtype) if size else a
                if got.shape != want.shape or not (got.astype(np.int64) == want.astype(np.int64)).all():
                    bad.append(f"allreduce {op} {np.dtype(dtype).name} x{size}")
            for root in range(comm.size):
                got = host(coll.bcast(xp.array(a), root))
                if not (got == every[root]).all():
                    bad.append(f"bcast from {root} {np.dtype(dtype).name} x{size}")
            mine = a[:max(0, size - 3 * comm.rank)] if dtype is not bool else a   # unequal parts
            parts = comm.allgather(mine)
            got = host(coll.allgatherv(xp.array(mine)))
            if got.dtype != mine.dtype or not np.array_equal(got, np.concatenate(parts)):
                bad.append(f"allgatherv {np.dtype(dtype).name} x{size}")
            # all-to-all of unequal parts (some empty): rank s sends rank d its d-th part
            cuts = np.sort(rng.integers(0, size + 1, comm.size - 1))
            counts = np.diff(np.concatenate(([0], cuts, [size]))).astype(int).tolist()
            sent = comm.allgather(np.split(a, np.cumsum(counts)[:-1]))
            want = np.concatenate([sent[s][comm.rank] for s in range(comm.size)])
            got, came = coll.alltoallv(xp.array(a), counts)
            got = host(got)
            if (got.dtype != a.dtype or not np.array_equal(got, want)
                    or came != [int(sent[s][comm.rank].size) for s in range(comm.size)]):
                bad.append(f"alltoallv {np.dtype(dtype).name} x{size}")
    return bad


def on_gpus(comm: MpiComm) -> dict:
    """--gpu: each rank on GPU rank mod count; every path these GPUs allow, on CuPy arrays."""
    import cupy
    from starvm.distributed.collectives import cupy_access
    cupy.cuda.Device(comm.rank % cupy.cuda.runtime.getDeviceCount()).use()
    dev = cupy_access()
    report = {"choices": {}, "results": {}}
    for prefer in ("auto", "host-staging") + (("cuda-aware-mpi",) if dev.cuda_aware else ()):
        coll = choose(comm, dev, prefer)
        report["choices"][prefer] = [coll.path, coll.reason]
        report["results"][coll.path] = results(comm, coll, cupy)
    return report


def main() -> None:
    comm = MpiComm(MPI.COMM_WORLD)
    if sys.argv[2:] == ["--gpu"]:
        report = on_gpus(comm)
        everyone = comm.allgather(report)
        if comm.rank == 0:
            report["same_on_all_ranks"] = all(x == everyone[0] for x in everyone)
            Path(sys.argv[1]).write_text(json.dumps(report))
        return
    report = {"choices": choices(comm), "results": {}}
    r = comm.rank
    paths = {"nccl": (nccl_standin.standin_access(r), "nccl"),
             "host-staging": (nccl_standin.standin_access(r), "host-staging"),
             "cuda-aware-mpi": (nccl_standin.standin_access(r, cuda_aware=True), "cuda-aware-mpi"),
             "host": (None, "auto")}
    for want, (dev, prefer) in paths.items():
        coll = choose(comm, dev, prefer)
        assert coll.path == want, (coll.path, want)
        before = len(nccl_standin.CALLS)
        report["results"][want] = results(comm, coll)
        if want == "nccl":
            calls = nccl_standin.CALLS[before:]
            p2p = sum(c[0] in ("send", "recv") for c in calls)      # differs by rank: summed
            report["nccl_calls"] = len(calls) - p2p
            report["nccl_point_to_point"] = sum(comm.allgather(p2p))
    everyone = comm.allgather(report)
    if r == 0:
        report["same_on_all_ranks"] = all(x == everyone[0] for x in everyone)
        Path(sys.argv[1]).write_text(json.dumps(report))


if __name__ == "__main__":
    main()
