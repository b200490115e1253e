"""One Star program over several ranks (MPI): row-partitioned tables (docs/scale.md).

    mpiexec -n 4 star run PROGRAM.star --distributed
    Machine(comm=mpi4py.MPI.COMM_WORLD)

``partition.py`` says which rows a rank holds, ``comm.py`` wraps mpi4py (and fakes one
rank), ``backend.py`` implements the Backend protocol over a local backend plus collectives,
``forall.py`` the fused `parallel for` on it, ``rows.py`` the row-moving kernels of
stdlib/rows.star as all-to-all exchanges.
"""
from __future__ import annotations

from .backend import DistributedBackend, Fill, Shard
from .comm import MpiComm, SelfComm, world, wrap
from .rows import register as _register_rows

_register_rows()

__all__ = ["DistributedBackend", "Shard", "Fill", "MpiComm", "SelfComm", "world", "wrap", "distribute"]


def distribute(local, comm, align: int = 64) -> DistributedBackend:
    """The distributed backend over backend ``local`` (a Backend) and ``comm`` (an mpi4py
    communicator, one of comm.py's, or None for one rank alone)."""
    return DistributedBackend(local, wrap(comm), align)
