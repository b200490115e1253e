"""What crosses ranks in the row moves of distributed/rows.py, on any local backend: the
all-to-alls, all-gathers and all-reductions of the arrays the ranks exchange (asked row
numbers, answered rows, candidates, counts), and the registry entries of the row moves on
device ranks (CuPy, the emulated device).

Before, device ranks ran the row moves by staging whole tables through the host (each table
argument copied to the host, NumPy's kernel, the written table copied back: k·n/8 bytes each
way per table and NumPy-on-one-core speed). Now only these exchanged arrays leave the device:

  all-to-all,     device buffers through the rank's array collectives (NCCL: a group of sends
  all-gather,     and receives; CUDA-aware MPI; or host staging, collectives.py) on device
  all-reduction   paths; host MPI on the host path;
  one rank        nothing moves: its arrays stay where they are.
"""
from __future__ import annotations

import numpy as np

# the row moves of stdlib/rows.star that distributed/rows.py does (native/registry.py names them)
ROUTINES = ("iota", "gather", "scatter", "groupmin", "compact", "expand")


def exchange(B, ops, send, counts):
    """An all-to-all: the first ``counts[r]`` items (along axis 0) of ``send`` go to rank r,
    the next to rank r+1, ...; returns (what every rank sent here, concatenated in rank
    order, on the local side; how many items came from each rank). Device arrays go through
    the rank's array collectives (the path as for allreduce); one rank alone keeps its array
    where it is."""
    if B.size == 1:
        return send, [int(send.shape[0])]
    tail = tuple(send.shape[1:])
    width = int(np.prod(tail)) if tail else 1
    flat = (send if B.device_arrays else ops.host(send)).reshape(-1)
    recv, came = B.coll.alltoallv(flat, [int(c) * width for c in counts])
    return ops.local(recv.reshape(-1, *tail)), [c // width if width else 0 for c in came]


def allreduce(B, ops, a, op: str):
    """The element-wise reduction of an array over the ranks: device buffers through the
    rank's array collectives (NCCL, CUDA-aware MPI or staging) on device paths, host MPI else."""
    if B.size == 1:
        return a
    if B.device_arrays:
        return B.coll.allreduce(a, op)
    return ops.local(B.comm.allreduce_array(ops.host(a), op))


def allgatherv(B, ops, a):
    """The 1-D arrays of all ranks, concatenated in rank order (the path as for allreduce)."""
    if B.size == 1:
        return a
    if B.device_arrays:
        return B.coll.allgatherv(a)
    return ops.local(B.comm.allgatherv(ops.host(a)))


def counts_by_rank(ops, keys, size: int) -> list[int]:
    """How many of ``keys`` (ints 0..size-1) are each value, on the host."""
    return [int(c) for c in ops.host(ops.xp.bincount(keys, minlength=size))] if keys.size else [0] * size

