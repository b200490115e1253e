"""A stand-in for ``cupy.cuda.nccl`` over mpi4py, so that the NCCL path of
starvm/distributed/collectives.py (pointers, counts, NCCL data types and reductions, the unique
id broadcast over MPI, padding of unequal all-gathers) runs on the CPU under mpiexec.

The "device" arrays are NumPy arrays: a call receives their addresses, as NCCL receives device
pointers, and reads and writes the memory there through ctypes. The constants have NCCL's
values (nccl.h). ``standin_access(rank, ...)`` is the DeviceAccess of a stand-in GPU.
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np
from mpi4py import MPI

# nccl.h: ncclDataType_t and ncclRedOp_t
NCCL_INT8, NCCL_UINT8, NCCL_INT32, NCCL_UINT32, NCCL_INT64, NCCL_UINT64, NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64 = range(9)
NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN = range(4)
_DTYPES = {NCCL_INT8: np.int8, NCCL_UINT8: np.uint8, NCCL_INT32: np.int32, NCCL_UINT32: np.uint32,
           NCCL_INT64: np.int64, NCCL_UINT64: np.uint64, NCCL_FLOAT16: np.float16, NCCL_FLOAT32: np.float32,
           NCCL_FLOAT64: np.float64}
_OPS = {NCCL_SUM: MPI.SUM, NCCL_PROD: MPI.PROD, NCCL_MAX: MPI.MAX, NCCL_MIN: MPI.MIN}

CALLS: list = []            # (method, count, datatype) of every collective run
_GROUP: list | None = None  # the point-to-point calls of an open group (groupStart .. groupEnd)
REFUSE_ON_RANK = None       # a rank whose communicator refuses to start (after the others' exchange)


def get_unique_id() -> tuple:
    return tuple(int(x) for x in np.random.default_rng().integers(-128, 128, 128))


def _memory(ptr: int, count: int, datatype: int) -> np.ndarray:
    """The ``count`` elements of type ``datatype`` at address ``ptr``, writable."""
    dt = np.dtype(_DTYPES[datatype])
    if count == 0:
        return np.zeros(0, dtype=dt)
    return np.frombuffer((ctypes.c_char * (count * dt.itemsize)).from_address(ptr), dtype=dt, count=count)


class NcclCommunicator:
    def __init__(self, ndev: int, commId: tuple, rank: int):
        world = MPI.COMM_WORLD
        ids = world.allgather(tuple(commId))
        if len(set(ids)) != 1 or len(ids) != ndev or world.rank != rank:
            raise RuntimeError("ncclInvalidArgument: the ranks hold different unique ids")
        self.comm = world.Dup()         # collective: every rank, the refusing one too
        self.size = ndev
        if REFUSE_ON_RANK == rank:
            raise RuntimeError("ncclInvalidUsage: Duplicate GPU detected")

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
        CALLS.append(("allReduce", count, datatype))
        send = _memory(sendbuf, count, datatype).copy()
        self.comm.Allreduce(send, _memory(recvbuf, count, datatype), op=_OPS[op])

    def bcast(self, buff, count, datatype, root, stream):
        CALLS.append(("bcast", count, datatype))
        self.comm.Bcast(_memory(buff, count, datatype), root=root)

    def allGather(self, sendbuf, recvbuf, count, datatype, stream):
        CALLS.append(("allGather", count, datatype))
        send = _memory(sendbuf, count, datatype).copy()
        self.comm.Allgather(send, _memory(recvbuf, count * self.size, datatype))

    def send(self, sendbuf, count, datatype, peer, stream):
        CALLS.append(("send", count, datatype))
        if peer == self.comm.rank:
            raise RuntimeError("the stand-in expects no send to the rank itself")
        _in_group(lambda: self.comm.Isend(_memory(sendbuf, count, datatype), dest=peer, tag=77))

    def recv(self, recvbuf, count, datatype, peer, stream):
        CALLS.append(("recv", count, datatype))
        _in_group(lambda: self.comm.Irecv(_memory(recvbuf, count, datatype), source=peer, tag=77))


def groupStart():
    global _GROUP
    if _GROUP is not None:
        raise RuntimeError("ncclInvalidUsage: groupStart inside a group")
    _GROUP = []


def groupEnd():
    """Runs the group's sends and receives at once (as NCCL does), so that no order of them
    between ranks can deadlock."""
    global _GROUP
    calls, _GROUP = _GROUP, None
    if calls is None:
        raise RuntimeError("ncclInvalidUsage: groupEnd without groupStart")
    MPI.Request.Waitall([call() for call in calls])


def _in_group(call):
    if _GROUP is None:          # NCCL would run it alone; the stand-in only groups point-to-point
        raise RuntimeError("the stand-in runs send/recv inside groupStart/groupEnd only")
    _GROUP.append(call)


def standin_access(rank: int, gpu: str | None = None, nccl: bool = True, cuda_aware: bool = False):
    """The DeviceAccess of a stand-in GPU (NumPy arrays, every one 'on the device')."""
    from starvm.distributed.collectives import DeviceAccess
    return DeviceAccess(xp=np, gpu=gpu or f"standin-gpu-{rank}", nccl=sys.modules[__name__] if nccl else None,
                        cuda_aware=cuda_aware, on_device=lambda a: True, host="standin-host")
