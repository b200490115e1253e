"""One Star program over several ranks (MPI): row-partitioned tables (docs/scale.md).

    mpiexec -n 4 star run PROGRAM.star --distributed
    Machine(comm=mpi4py.MPI.COMM_WORLD)

``partition.py`` says which rows a rank holds, ``comm.py`` wraps mpi4py (and fakes one
rank), ``backend.py`` implements the Backend protocol over a local backend plus collectives
(its fused `parallel for`, the numpy target's loop over this rank's words: ``forall.py``), ``vectors.py`` its vector forms,
``rows.py`` the row-moving kernels of stdlib/rows.star as all-to-all exchanges (each rank's
own part on device ranks: ``device_rows.py``; what crosses ranks: ``staging.py``),
``search.py`` the GPU's search kernels on each rank's rows, ``warshall.py`` WARSHALL-adapt
over ranks, ``collectives.py`` the path of array collectives (NCCL, CUDA-aware MPI, host
staging), ``graph_input.py`` each rank's share of a generated or read graph, ``jit_comm.py``
the MPI library as compiled code calls it, ``launch.py`` and ``supervise.py`` the CLI under
mpiexec (one message for an error, a rank that dies named), ``user_named.py`` library bodies
under a user's name (no native stands in) for measurements and tests.
"""
from __future__ import annotations

from .. import config
from ..backends import Backend, get_backend
from .backend import DistributedBackend, Fill, Shard
from .comm import MpiComm, SelfComm, world, wrap

__all__ = ["DistributedBackend", "Shard", "Fill", "MpiComm", "SelfComm", "world", "wrap", "distribute",
           "machine_backend"]


def distribute(local, comm, align: int = 64, collectives=None) -> DistributedBackend:
    """The distributed backend over ``local`` (a Backend or a backend name) and ``comm`` (an
    mpi4py communicator, one of comm.py's, or None for one rank alone); ``collectives``: the
    array collectives (collectives.py; default: the path collectives.choose picks)."""
    comm = wrap(comm)
    if not isinstance(local, Backend):
        local = local_backend(local, comm.rank)
    return DistributedBackend(local, comm, align, collectives)


def machine_backend(local, comm):
    """The backend of ``Machine(comm=...)`` (and so of `star run --distributed`), and the lines
    --profile adds for the ranks (None: the backend's own). Over several ranks: the distributed
    backend over ``local``. A world of one rank runs the plain machine on the rank's local
    backend (its GPU chosen as a rank's): nothing to split and nobody to exchange with, so the
    tiers, native kernels and graph input of one process, at its speed (issue 33, "one rank
    costs nothing"). ``distribute`` and ``mpi:<name>`` still give the distributed code on one
    rank, which is how the tests run it without MPI."""
    comm = wrap(comm)
    if comm.size > 1:
        return distribute(local, comm), None
    from .collectives import choose
    choose(comm, None, config.mpi_device_path())      # a misspelt STARVM_MPI_DEVICE_PATH is refused alike
    if not isinstance(local, Backend):
        local = local_backend(local, comm.rank)
    if getattr(local, "distributed", False):
        return local, None

    def lines() -> list[str]:
        return [f"1 rank: the plain {local.name} machine (no rows split, no collectives: the tiers, native "
                "kernels and graph input of one process)"]
    return local, lines


def named_backend(name: str) -> Backend:
    """'mpi:<name>': the distributed backend over backend <name> on one rank (Machine(comm=...)
    for more); any other name as get_backend gives it. (Resolved here, not in backends/, so
    that backends never imports distributed: imports run one way.)"""
    if name.startswith("mpi:"):
        return distribute(get_backend(name[4:]), None)
    return get_backend(name)


def local_backend(name: str | None, rank: int) -> Backend:
    """Backend ``name`` for this rank; on a GPU backend, first the rank's GPU: rank modulo the
    visible devices (CUDA_VISIBLE_DEVICES narrows them)."""
    name = config.backend_name(name)
    if name in ("cupy", "auto"):
        try:
            import cupy
            count = cupy.cuda.runtime.getDeviceCount()
            if count:
                cupy.cuda.Device(rank % count).use()
        except Exception:       # no CuPy or no device: get_backend says so (or auto runs on the CPU)
            pass
    return get_backend(name)
