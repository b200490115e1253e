"""The collectives the distributed machine needs, over mpi4py (host memory), and a fake
communicator of one rank with the same interface (``SelfComm``: no MPI needed).

Scalars travel as one-element NumPy buffers (the buffer interface of mpi4py: no pickling);
arrays as NumPy buffers; only rare, small things (an error message, a program digest) are
pickled. Device arrays (CuPy) are staged through the host by the caller: the NCCL /
CUDA-aware path is not written yet (docs/scale.md).
"""
from __future__ import annotations

import numpy as np

_OPS = ("sum", "min", "max")


class SelfComm:
    """One rank alone: every collective returns its input."""
    rank, size = 0, 1

    def allreduce(self, x: int, op: str) -> int:
        return x

    def allreduce_array(self, a: np.ndarray, op: str) -> np.ndarray:
        return a

    def bcast(self, obj, root: int = 0):
        return obj

    def bcast_array(self, a: np.ndarray, root: int) -> np.ndarray:
        return a

    def allgather(self, obj) -> list:
        return [obj]

    def allgatherv(self, a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a)

    def alltoallv(self, parts: list[np.ndarray]) -> list[np.ndarray]:
        return [np.ascontiguousarray(parts[0])]

    def agree_on_failure(self, failed: bool, timeout: float) -> bool | None:
        return True

    def abort(self, code: int) -> None:
        raise SystemExit(code)


class MpiComm:
    """A thin layer over an mpi4py communicator."""

    def __init__(self, comm):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        # errors travel on their own communicator, so that a rank reporting one can never be
        # matched with a collective of the program that another rank is waiting in
        self.errors = comm.Dup()
        self._ops = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}
        self._one = np.zeros(1, dtype=np.int64)
        self._out = np.zeros(1, dtype=np.int64)

    def allreduce(self, x: int, op: str) -> int:
        self._one[0] = x
        self.comm.Allreduce(self._one, self._out, op=self._ops[op])
        return int(self._out[0])

    def allreduce_array(self, a: np.ndarray, op: str) -> np.ndarray:
        a = np.ascontiguousarray(a)
        out = np.empty_like(a)
        self.comm.Allreduce(a, out, op=self._ops[op])
        return out

    def bcast(self, obj, root: int = 0):
        return self.comm.bcast(obj, root=root)

    def bcast_array(self, a: np.ndarray, root: int) -> np.ndarray:
        """``a`` has the same shape and dtype on every rank; root's contents win."""
        a = np.ascontiguousarray(a)
        self.comm.Bcast(a, root=root)
        return a

    def allgather(self, obj) -> list:
        return self.comm.allgather(obj)

    def allgatherv(self, a: np.ndarray) -> np.ndarray:
        """The 1-D arrays of all ranks (same dtype), concatenated in rank order."""
        a = np.ascontiguousarray(a).ravel()
        counts = np.array(self.comm.allgather(a.size), dtype=np.int64)
        out = np.empty(int(counts.sum()), dtype=a.dtype)
        displs = np.concatenate(([0], np.cumsum(counts)[:-1]))
        self.comm.Allgatherv(a, [out, counts, displs, self._mpi_type(a.dtype)])
        return out

    def alltoallv(self, parts: list[np.ndarray]) -> list[np.ndarray]:
        """parts[r] goes to rank r (1-D arrays of one dtype); returns what each rank sent here."""
        dtype = parts[0].dtype
        send = np.concatenate([np.ascontiguousarray(p, dtype=dtype).ravel() for p in parts])
        scounts = np.array([p.size for p in parts], dtype=np.int64)
        rcounts = np.empty_like(scounts)
        self.comm.Alltoall(scounts, rcounts)
        sdispl = np.concatenate(([0], np.cumsum(scounts)[:-1]))
        rdispl = np.concatenate(([0], np.cumsum(rcounts)[:-1]))
        recv = np.empty(int(rcounts.sum()), dtype=dtype)
        t = self._mpi_type(dtype)
        self.comm.Alltoallv([send, scounts, sdispl, t], [recv, rcounts, rdispl, t])
        return [recv[d:d + c] for d, c in zip(rdispl, rcounts)]

    def _mpi_type(self, dtype):
        return self.MPI._typedict[np.dtype(dtype).char]

    def agree_on_failure(self, failed: bool, timeout: float) -> bool | None:
        """After an error on this rank: did every rank fail too (the error is the program's,
        raised alike everywhere)? None when the others did not answer within ``timeout``
        seconds (they are busy or waiting elsewhere: the error is this rank's alone)."""
        import time
        req = self.errors.Ibarrier()
        deadline = time.monotonic() + timeout
        while not req.Test():
            if time.monotonic() > deadline:
                return None
            time.sleep(0.005)
        return True

    def abort(self, code: int) -> None:
        self.comm.Abort(code)


def wrap(comm):
    """Our communicator for an mpi4py communicator, one of ours, or None (one rank alone)."""
    if comm is None:
        return SelfComm()
    if isinstance(comm, (SelfComm, MpiComm)):
        return comm
    return MpiComm(comm)


def world():
    """MPI.COMM_WORLD, wrapped (needs mpi4py: pip install 'starvm[mpi]')."""
    from mpi4py import MPI
    return MpiComm(MPI.COMM_WORLD)
