"""The MPI library as compiled code sees it (starvm/targets/mpi/kernels.py).

Compiled routines on MPI ranks call MPI_Allreduce and MPI_Bcast from nopython mode, by
symbol name: the libmpi that mpi4py loaded is made visible to LLVM's linker
(``load_library_permanently``), so Numba resolves the names when it links a module, also a
module loaded from its disk cache in a later process. What compiled code cannot be handed
as an argument (the generated functions' signatures are the CPU tier's) sits in one small
int64 array, ``CTX``, whose address LLVM knows as the symbol ``starvm_mpi_ctx``: this rank,
the number of ranks, the row alignment of the blocks, the C handles of the machine's
communicator, of MPI_INT64_T and of MPI_SUM / MPI_MIN / MPI_MAX / MPI_BOR (``MPI._handleof``), and two
counters the kernels raise (collectives run, bytes sent) for ``--profile``, and the rank
short of memory for a local table (-1: none; the refusal names it). ``prepare``
fills it before every compiled call, so several machines (communicators) in one process
share it safely: calls do not overlap.
"""
from __future__ import annotations

import numpy as np

# CTX slots
X_RANK, X_SIZE, X_ALIGN, X_COMM, X_INT64, X_SUM, X_MIN, X_MAX, X_NCOLL, X_NBYTES, X_SHORT, X_BOR = range(12)
CTX_LEN = 16
CTX = np.zeros(CTX_LEN, np.int64)
SYMBOL = "starvm_mpi_ctx"

_loaded: str | None = None


class MpiUnavailable(Exception):
    """Compiled code cannot call MPI here; str(e) says why."""


def mpi_library() -> str:
    """The path of the MPI shared library mpi4py loaded into this process."""
    from mpi4py import MPI  # noqa: F401 - importing it loads (and initialises) the library
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/libmpi" in line and ".so" in line}
    # MPICH: libmpi.so.12; Open MPI: libmpi.so.40 (its helpers libmpi_* are not the API)
    api = sorted(p for p in paths if p.rsplit("/", 1)[-1].startswith("libmpi.so"))
    if not api:
        raise MpiUnavailable("the MPI library mpi4py uses was not found among the loaded shared objects")
    return api[0]


def load() -> str:
    """Make libmpi and CTX visible to LLVM (once per process); returns a text naming the MPI
    library and its handle size, part of the compiled modules' cache key."""
    global _loaded
    if _loaded is None:
        try:
            import llvmlite.binding as llb
            from mpi4py import MPI
        except ImportError as e:
            raise MpiUnavailable(f"needs mpi4py and Numba ({e})") from None
        path = mpi_library()
        llb.load_library_permanently(path)
        llb.add_symbol(SYMBOL, CTX.ctypes.data)
        _loaded = f"{MPI.Get_library_version().splitlines()[0].strip()}|handle {handle_size()} B"
    return _loaded


def kernel_cache_dir() -> str:
    """Where Numba caches targets/mpi/kernels.py's kernels: a folder per MPI library (load()'s
    text), since the compiled kernels hold its handle type."""
    import hashlib
    import os
    from ..config import jit_cache_dir
    return os.path.join(jit_cache_dir(), "mpi-kernels", hashlib.sha256(load().encode()).hexdigest()[:16])


def handle_size() -> int:
    """Bytes of an MPI handle: 4 for MPICH (int), 8 for Open MPI (a pointer)."""
    from mpi4py import MPI
    return MPI._sizeof(MPI.Comm)


def prepare(backend) -> None:
    """CTX for a call on ``backend`` (a DistributedBackend)."""
    comm = backend.comm
    CTX[X_RANK], CTX[X_SIZE], CTX[X_ALIGN] = backend.rank, backend.size, backend.align
    CTX[X_NCOLL] = CTX[X_NBYTES] = 0
    CTX[X_SHORT] = -1
    if backend.size == 1:
        return            # the kernels call no MPI function on one rank
    from mpi4py import MPI
    CTX[X_COMM] = MPI._handleof(comm.comm)
    CTX[X_INT64] = MPI._handleof(MPI.INT64_T)
    CTX[X_SUM], CTX[X_MIN], CTX[X_MAX], CTX[X_BOR] = (MPI._handleof(o) for o in (MPI.SUM, MPI.MIN, MPI.MAX, MPI.BOR))


def account(backend) -> None:
    """Add the collectives compiled code ran to the backend's count (--profile)."""
    backend.bytes_moved[0] += int(CTX[X_NCOLL])
    backend.bytes_moved[1] += int(CTX[X_NBYTES])
    CTX[X_NCOLL] = CTX[X_NBYTES] = 0
