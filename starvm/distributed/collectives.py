"""Collectives on array buffers of a rank's local backend, by one of these paths, chosen in one
place (``choose``, when the distributed backend is made) and reported
(``DistributedBackend.collective_path``, ``star run --profile``, bench/bench_scale.py):

  host            NumPy ranks (and the emulated device): mpi4py on host buffers (comm.py);
  nccl            CuPy ranks on distinct GPUs: NCCL through ``cupy.cuda.nccl``, its unique id
                  made on rank 0 and broadcast over MPI; device buffers, no host copies;
  cuda-aware-mpi  CuPy ranks over an MPI library built with CUDA (MPIX_Query_cuda_support()
                  answers 1 at run time): mpi4py hands the device buffers to MPI;
  host-staging    otherwise: device -> host copy, mpi4py, host -> device;
  one-rank        a GPU rank alone: nothing to exchange, the arrays stay where they are.

NCCL refuses two ranks on one GPU ("Duplicate GPU detected"), so ranks sharing a device (one
GPU, two ranks) never try it: the choice says which ranks share which GPU and falls back.
``STARVM_MPI_DEVICE_PATH`` (config.mpi_device_path) asks for a path; where it cannot run the
next one runs and the reason says why. All ranks take the same decision: it is computed from
one all-gather of every rank's facts, and a failed NCCL start on any rank is agreed by an
all-gather of the errors before any NCCL collective runs.

Scalar reductions (SOME, NUMB, FND, ...) stay on host MPI on every path: their operand is a
Python int already (reading it synchronised the device); NCCL would add a copy and a launch.
Only array collectives (the per-iteration reductions of a fused loop, the all-gather of a
partitioned slice, the row moves' all-to-alls) travel this way; a row of ROW(i, T), a few words, is broadcast on the host.

Ranks that share a GPU (``gpu_peers``, from the same all-gather) run their kernels at once
where CUDA's Multi-Process Service runs (``mps_running``); without it the GPU time-slices
between their processes (docs/scale.md), which --profile says.

``DeviceAccess`` gathers what the paths need of a device (array module, NCCL module, the GPU's
id, the current stream, what counts as a device array), so that tests run every path on the
CPU with a stand-in (tests/distributed/nccl_standin.py) in place of CuPy and NCCL.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

PATHS = ("host", "nccl", "cuda-aware-mpi", "host-staging", "one-rank")


@dataclass
class DeviceAccess:
    """What the device paths need of one rank's GPU."""
    xp: object                                   # the array module (cupy)
    gpu: str                                     # the GPU's id, unique on its host (PCI bus id)
    nccl: object | None = None                   # cupy.cuda.nccl, None when unusable
    cuda_aware: bool = False                     # the MPI library takes device buffers
    stream: Callable[[], int] = lambda: 0        # the current stream's handle (NCCL runs on it)
    sync: Callable[[], None] = lambda: None      # wait for the current stream (before MPI reads)
    on_device: Callable[[object], bool] = lambda a: not isinstance(a, np.ndarray)
    host: str = field(default_factory=lambda: __import__("socket").gethostname())

    def to_host(self, a) -> np.ndarray:
        return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)

    def to_device(self, a):
        return self.xp.asarray(a)


def cupy_access() -> DeviceAccess | None:
    """The current CUDA device as CuPy sees it; None without CuPy or a device."""
    try:
        import cupy
        if not cupy.cuda.runtime.getDeviceCount():
            return None
        dev = cupy.cuda.Device()
    except Exception:           # no CuPy, no driver: the host path
        return None
    try:
        gpu = dev.pci_bus_id    # unique on the host, whatever CUDA_VISIBLE_DEVICES numbers it
    except Exception:           # an older CuPy: the device number
        gpu = f"device {dev.id}"
    try:
        from cupy.cuda import nccl
        if not getattr(nccl, "available", True):
            nccl = None
    except Exception:           # CuPy built without NCCL, or libnccl not found
        nccl = None
    return DeviceAccess(xp=cupy, gpu=str(gpu), nccl=nccl, cuda_aware=mpi_cuda_aware(),
                        stream=lambda: cupy.cuda.get_current_stream().ptr,
                        sync=lambda: cupy.cuda.get_current_stream().synchronize(),
                        on_device=lambda a: isinstance(a, cupy.ndarray))


def mpi_cuda_aware() -> bool:
    """MPIX_Query_cuda_support() of the MPI library mpi4py runs on (MPICH and Open MPI have
    it): 1 when device buffers may be handed to MPI. The PyPI MPICH wheel answers 0."""
    try:
        import ctypes

        from mpi4py import MPI
        query = ctypes.CDLL(MPI.__file__).MPIX_Query_cuda_support
        query.restype = ctypes.c_int
        return bool(query())
    except Exception:           # no such symbol, no mpi4py: not CUDA-aware
        return False


# ------------------------------------------------------------------ the paths
class HostCollectives:
    """``host``: NumPy buffers over mpi4py (comm.py). Device arrays do not come here."""
    path = "host"
    gpu_peers: tuple = ()      # the ranks (this one among them) on this rank's GPU, if it shares one

    def __init__(self, comm, reason: str = ""):
        self.comm = comm
        self.reason = reason
        self.calls = 0

    def describe(self) -> str:
        return self.path + (f" ({self.reason})" if self.reason else "")

    def allreduce(self, a, op: str):
        """The element-wise reduction (sum, min, max) of ``a`` over the ranks."""
        self.calls += 1
        a = np.ascontiguousarray(a)
        if a.dtype == bool:             # MPI has no MIN / MAX of C bools: as bytes
            return self.comm.allreduce_array(a.view(np.uint8), op).view(bool)
        return self.comm.allreduce_array(a, op)

    def bcast(self, a, root: int):
        """``a`` (same shape and dtype everywhere) with root's contents."""
        self.calls += 1
        return self.comm.bcast_array(np.ascontiguousarray(a), root)

    def allgatherv(self, a):
        """The 1-D arrays of all ranks, concatenated in rank order."""
        self.calls += 1
        return self.comm.allgatherv(np.ascontiguousarray(a))

    def alltoallv(self, a, counts):
        """An all-to-all of a 1-D array: its first ``counts[0]`` items go to rank 0, the next
        ``counts[1]`` to rank 1, ...; returns (what every rank sent here, concatenated in rank
        order; how many items came from each rank)."""
        self.calls += 1
        a = np.ascontiguousarray(a)
        got = self.comm.alltoallv(np.split(a, np.cumsum(counts)[:-1]))
        return (np.concatenate(got) if got else a[:0]), [int(g.size) for g in got]

    def _counts_here(self, counts) -> tuple:
        """(send counts, receive counts, send offsets, receive offsets) of an all-to-all: the
        receive counts by one host all-to-all of the send counts."""
        scounts = np.asarray(counts, dtype=np.int64)
        rcounts = np.empty_like(scounts)
        self.comm.comm.Alltoall(scounts, rcounts)
        return (scounts, rcounts, np.concatenate(([0], np.cumsum(scounts)[:-1])),
                np.concatenate(([0], np.cumsum(rcounts)[:-1])))


class StagingCollectives(HostCollectives):
    """``host-staging``: a device array is copied to the host, reduced or exchanged there by
    mpi4py, and copied back; a host array goes straight to MPI."""
    path = "host-staging"

    def __init__(self, comm, dev: DeviceAccess, reason: str = ""):
        super().__init__(comm, reason)
        self.dev = dev

    def _via_host(self, fn, a, *args):
        if not self.dev.on_device(a):
            return fn(a, *args)
        return self.dev.to_device(fn(self.dev.to_host(a), *args))

    def allreduce(self, a, op):
        return self._via_host(super().allreduce, a, op)

    def bcast(self, a, root):
        return self._via_host(super().bcast, a, root)

    def allgatherv(self, a):
        return self._via_host(super().allgatherv, a)

    def alltoallv(self, a, counts):
        if not self.dev.on_device(a):
            return super().alltoallv(a, counts)
        recv, came = super().alltoallv(self.dev.to_host(a), counts)
        return self.dev.to_device(recv), came

    def _device_alltoallv(self, a, counts, move):
        """The all-to-all of a device array on a device path (bools as bytes): the counts by
        one host all-to-all, then ``move(a, out, scounts, rcounts, sdispl, rdispl)`` carries
        the parts into ``out``."""
        self.calls += 1
        xp = self.dev.xp
        truth = a.dtype == bool
        a = xp.ascontiguousarray(a.view(xp.uint8) if truth else a).ravel()
        scounts, rcounts, sdispl, rdispl = self._counts_here(counts)
        out = xp.empty(int(rcounts.sum()), dtype=a.dtype)
        move(a, out, scounts, rcounts, sdispl, rdispl)
        return (out.view(bool) if truth else out), [int(c) for c in rcounts]


class CudaAwareCollectives(StagingCollectives):
    """``cuda-aware-mpi``: mpi4py hands device buffers (``__cuda_array_interface__``) to a
    CUDA-aware MPI; the stream is waited for first (MPI does not know CuPy's stream)."""
    path = "cuda-aware-mpi"

    def _via_host(self, fn, a, *args):
        if self.dev.on_device(a):
            self.dev.sync()
        return fn(a, *args)

    def allreduce(self, a, op):
        if not self.dev.on_device(a):
            return super().allreduce(a, op)
        self.calls += 1
        self.dev.sync()
        truth = a.dtype == bool
        a = self.dev.xp.ascontiguousarray(a.view(self.dev.xp.uint8) if truth else a)
        out = self.dev.xp.empty_like(a)
        self.comm.comm.Allreduce(a, out, op=self.comm._ops[op])
        return out.view(bool) if truth else out

    def bcast(self, a, root):
        if not self.dev.on_device(a):
            return super().bcast(a, root)
        self.calls += 1
        self.dev.sync()
        a = self.dev.xp.ascontiguousarray(a)
        self.comm.comm.Bcast(a, root=root)
        return a

    def allgatherv(self, a):
        if not self.dev.on_device(a):
            return super().allgatherv(a)
        self.calls += 1
        self.dev.sync()
        a = self.dev.xp.ascontiguousarray(a).ravel()
        counts = np.array(self.comm.allgather(int(a.size)), dtype=np.int64)
        out = self.dev.xp.empty(int(counts.sum()), dtype=a.dtype)
        displs = np.concatenate(([0], np.cumsum(counts)[:-1]))
        self.comm.comm.Allgatherv(a, [out, counts, displs, self.comm._mpi_type(a.dtype)])
        return out

    def alltoallv(self, a, counts):
        if not self.dev.on_device(a):
            return HostCollectives.alltoallv(self, a, counts)

        def move(a, out, scounts, rcounts, sdispl, rdispl):
            self.dev.sync()                  # MPI reads the device buffer once the stream has written it
            t = self.comm._mpi_type(a.dtype)
            self.comm.comm.Alltoallv([a, scounts, sdispl, t], [out, rcounts, rdispl, t])
        return self._device_alltoallv(a, counts, move)


class OneRankCollectives(HostCollectives):
    """``one-rank``: a device rank alone; every collective is its input (no host copy)."""
    path = "one-rank"

    def allreduce(self, a, op):
        self.calls += 1
        return a.copy()

    def bcast(self, a, root):
        self.calls += 1
        return a

    def allgatherv(self, a):
        self.calls += 1
        return a.ravel().copy()

    def alltoallv(self, a, counts):
        self.calls += 1
        return a.ravel(), [int(a.size)]


# NCCL's data types and reductions (cupy.cuda.nccl's constants, by NumPy dtype / op name)
_NCCL_TYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "bool": "NCCL_UINT8", "int32": "NCCL_INT32",
               "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64",
               "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64"}
_NCCL_OPS = {"sum": "NCCL_SUM", "min": "NCCL_MIN", "max": "NCCL_MAX"}


def _pointer(a) -> int:
    """The address of an array's first element (CuPy: data.ptr; the stand-in's NumPy arrays: ctypes)."""
    data = getattr(a, "data", None)
    ptr = getattr(data, "ptr", None)
    return int(ptr) if ptr is not None else int(a.ctypes.data)


class NcclCollectives(StagingCollectives):
    """``nccl``: device buffers through an NCCL communicator on the current stream; host
    arrays through MPI. NCCL has no all-gather of unequal parts: each rank's part is padded
    to the largest (sizes by one host all-gather of an integer) and the padding dropped."""
    path = "nccl"

    def __init__(self, comm, dev: DeviceAccess, nccl_comm, reason: str = ""):
        super().__init__(comm, dev, reason)
        self.nc = nccl_comm
        self.nccl = dev.nccl

    def _type(self, a) -> int:
        name = _NCCL_TYPES.get(np.dtype(a.dtype).name)
        if name is None:
            raise TypeError(f"NCCL carries no {a.dtype} arrays")
        return getattr(self.nccl, name)

    def allreduce(self, a, op):
        if not self.dev.on_device(a):
            return HostCollectives.allreduce(self, a, op)
        self.calls += 1
        xp = self.dev.xp
        truth = a.dtype == bool
        a = xp.ascontiguousarray(a.view(xp.uint8) if truth else a)
        out = xp.empty_like(a)
        self.nc.allReduce(_pointer(a), _pointer(out), a.size, self._type(a), getattr(self.nccl, _NCCL_OPS[op]),
                          self.dev.stream())
        return out.view(bool) if truth else out

    def bcast(self, a, root):
        if not self.dev.on_device(a):
            return HostCollectives.bcast(self, a, root)
        self.calls += 1
        a = self.dev.xp.ascontiguousarray(a)
        self.nc.bcast(_pointer(a), a.size, self._type(a), root, self.dev.stream())
        return a

    def allgatherv(self, a):
        if not self.dev.on_device(a):
            return HostCollectives.allgatherv(self, a)
        self.calls += 1
        xp = self.dev.xp
        a = xp.ascontiguousarray(a).ravel()
        counts = self.comm.allgather(int(a.size))
        most = max(counts)
        if most == 0:
            return a[:0].copy()
        send = a if a.size == most else xp.concatenate([a, xp.zeros(most - a.size, dtype=a.dtype)])
        out = xp.empty(most * len(counts), dtype=a.dtype)
        self.nc.allGather(_pointer(send), _pointer(out), most, self._type(send), self.dev.stream())
        if all(c == most for c in counts):
            return out
        return xp.concatenate([out[r * most: r * most + c] for r, c in enumerate(counts)])

    def alltoallv(self, a, counts):
        """NCCL has no all-to-all of unequal parts: a group of a send and a receive per other
        rank (NCCL 2.7+), this rank's own part copied on the device."""
        if not self.dev.on_device(a):
            return HostCollectives.alltoallv(self, a, counts)
        return self._device_alltoallv(a, counts, self._send_and_receive)

    def _send_and_receive(self, a, out, scounts, rcounts, sdispl, rdispl):
        me, size, item = self.comm.rank, len(scounts), a.itemsize
        out[rdispl[me]: rdispl[me] + rcounts[me]] = a[sdispl[me]: sdispl[me] + scounts[me]]
        kind, stream, send, recv = self._type(a), self.dev.stream(), _pointer(a), _pointer(out)
        self.nccl.groupStart()
        try:
            for r in range(size):
                if r != me and scounts[r]:
                    self.nc.send(send + int(sdispl[r]) * item, int(scounts[r]), kind, r, stream)
                if r != me and rcounts[r]:
                    self.nc.recv(recv + int(rdispl[r]) * item, int(rcounts[r]), kind, r, stream)
        finally:
            self.nccl.groupEnd()


# ------------------------------------------------------------------ the one choice
def choose(comm, dev: DeviceAccess | None, prefer: str = "auto") -> HostCollectives:
    """The collectives of one rank, the same path on every rank. ``dev``: this rank's GPU
    (cupy_access()), None on a host backend; ``prefer``: auto, nccl, cuda-aware-mpi or
    host-staging (STARVM_MPI_DEVICE_PATH)."""
    if prefer not in ("auto", "nccl", "cuda-aware-mpi", "host-staging"):
        from ..backends import BackendUnavailable     # a usage error (exit 2), not a bug
        raise BackendUnavailable(f"STARVM_MPI_DEVICE_PATH is auto, nccl, cuda-aware-mpi or host-staging, not '{prefer}'")
    facts = comm.allgather(None if dev is None else
                           (dev.host, dev.gpu, dev.nccl is not None, bool(dev.cuda_aware)))
    if any(f is None for f in facts):
        if any(f is not None for f in facts):
            raise RuntimeError("some ranks have a GPU backend and some a host one: every rank must use the same backend")
        return HostCollectives(comm)
    if comm.size == 1:
        return OneRankCollectives(comm)
    coll = _device_path(comm, dev, prefer, facts)
    coll.gpu_peers = gpu_peers(facts, comm.rank)
    return coll


def mps_running(environ=None) -> bool:
    """Whether CUDA's Multi-Process Service serves this process: its control daemon's socket
    is in the pipe directory (config.mps_pipe_directory; ``environ``: another environment to
    ask). Ranks sharing a GPU without it take turns at the GPU, each switch costing about a
    short kernel's time."""
    from .. import config
    return os.path.exists(os.path.join(config.mps_pipe_directory(environ), "control"))


def gpu_peers(facts, rank: int) -> tuple:
    """The ranks whose GPU (host and device id, facts[r][:2]) is rank's, rank among them,
    when there are two or more; () when rank has its GPU alone."""
    peers = tuple(r for r, f in enumerate(facts) if f[:2] == facts[rank][:2])
    return peers if len(peers) > 1 else ()


def _device_path(comm, dev: DeviceAccess, prefer: str, facts) -> HostCollectives:
    """NCCL, CUDA-aware MPI or host staging, as choose() says."""
    why_not = []
    if prefer in ("auto", "nccl"):
        shared = _shared_gpus(facts)
        no_nccl = [r for r, f in enumerate(facts) if not f[2]]
        if shared:
            why_not.append(f"NCCL: ranks {shared} share a GPU, and NCCL refuses two ranks on one device")
        elif no_nccl:
            why_not.append(f"NCCL: cupy.cuda.nccl is not usable on rank {no_nccl[0]}")
        else:
            nc, err = _start_nccl(comm, dev)
            if nc is not None:
                return NcclCollectives(comm, dev, nc)
            why_not.append(f"NCCL did not start: {err}")
    if prefer in ("auto", "nccl", "cuda-aware-mpi"):
        if all(f[3] for f in facts):
            return CudaAwareCollectives(comm, dev, reason="; ".join(why_not))
        why_not.append("the MPI library is not CUDA-aware (MPIX_Query_cuda_support() is 0)")
    else:
        why_not.append("STARVM_MPI_DEVICE_PATH=host-staging")
    return StagingCollectives(comm, dev, reason="; ".join(why_not))


def _shared_gpus(facts) -> str:
    """'0 and 1 (GPU x on host h)' for the first GPU that two ranks hold, '' if none."""
    seen: dict = {}
    for r, f in enumerate(facts):
        key = (f[0], f[1])
        if key in seen:
            return f"{seen[key]} and {r} (GPU {f[1]} on {f[0]})"
        seen[key] = r
    return ""


def _start_nccl(comm, dev: DeviceAccess):
    """An NCCL communicator over the ranks (rank 0's unique id broadcast over MPI), or
    (None, the first rank's error) on every rank when it failed anywhere."""
    nc, err = None, ""
    uid = None
    if comm.rank == 0:
        try:
            uid = dev.nccl.get_unique_id()
        except Exception as e:  # every rank hears of it through the broadcast, none waits in NCCL
            uid = f"rank 0: {type(e).__name__}: {e}"
    uid = comm.bcast(uid, 0)
    if isinstance(uid, str):
        err = uid
    else:
        try:
            nc = dev.nccl.NcclCommunicator(comm.size, uid, comm.rank)
        except Exception as e:  # NCCL refused: host staging on every rank alike (agreed below)
            err = f"rank {comm.rank}: {type(e).__name__}: {e}"
    errors = comm.allgather(err)
    if any(errors):
        return None, next(e for e in errors if e)
    return nc, ""
