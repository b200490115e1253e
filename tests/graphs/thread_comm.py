"""P ranks as P threads of one process, with the collectives graph input uses (allgather,
allgatherv, allreduce, alltoallv): enough to run distributed/graph_input.py's per-rank
readers without MPI (tests/graphs/test_input_limits.py, bench/fuzz_graph_input.py)."""
from __future__ import annotations

import threading

import numpy as np

from starvm.distributed.comm import SelfComm


class _Shared:
    def __init__(self, size: int):
        self.size = size
        self.barrier = threading.Barrier(size)
        self.slots: list = [None] * size


class ThreadComm(SelfComm):
    """One rank (comm.wrap takes it as one of its own: a SelfComm with every collective real)."""

    def __init__(self, shared: _Shared, rank: int):
        self.shared, self.rank, self.size = shared, rank, shared.size

    def allgather(self, obj) -> list:
        s = self.shared
        s.barrier.wait()
        s.slots[self.rank] = obj
        s.barrier.wait()
        out = list(s.slots)
        s.barrier.wait()
        return out

    def allgatherv(self, a: np.ndarray) -> np.ndarray:
        return np.concatenate([np.asarray(x).ravel() for x in self.allgather(np.ascontiguousarray(a))])

    def allreduce(self, x: int, op: str) -> int:
        return {"sum": sum, "min": min, "max": max}[op](self.allgather(x))

    def alltoallv(self, parts: list) -> list:
        every = self.allgather(parts)
        return [np.ascontiguousarray(every[r][self.rank]) for r in range(self.size)]


def run_ranks(size: int, work):
    """``work(comm)`` on ``size`` ranks at once; their results in rank order (the first
    exception raised on any rank is raised again here)."""
    shared = _Shared(size)
    results: list = [None] * size
    errors: list = [None] * size

    def one(r):
        try:
            results[r] = work(ThreadComm(shared, r))
        except BaseException as e:       # noqa: BLE001 - handed to the caller
            errors[r] = e
            shared.barrier.abort()       # the other ranks stop waiting for this one

    threads = [threading.Thread(target=one, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    first = next((e for e in errors if e is not None and not isinstance(e, threading.BrokenBarrierError)), None)
    if first is None:
        first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return results
