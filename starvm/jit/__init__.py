"""The compiled tiers: when and how Star routines run as compiled code instead of interpreted.

The code itself is rendered by ``starvm/targets`` (numba: CPU, cuda: GPU, mpi: ranks); this
package decides and runs. ``tier.py`` (``Tier.install``: which routines a tier can take, when
they compile (``estimate.py``: the expected cost of interpreted calls), and the --profile
report), ``auto_tier.py`` (on --backend auto, each call where its arguments are),
``cuda_tier.py`` and ``cuda_runtime.py`` (the GPU tier's part and the host side of a kernel
call), ``cuda_output.py`` (a kernel's output written by the host while it runs), ``mpi_tier.py`` (the tier on MPI ranks; on CuPy ranks the GPU tier's kernels per rank,
``cuda_ranks.py``), ``call.py`` (``JitRoutine``: the host side of
a compiled call), ``buffers.py`` (the arrays a call is handed), ``errors.py`` (a failure
back to the interpreter's error), ``interrupts.py`` (Ctrl-C on a call's own thread),
``cache.py`` (compiled modules on disk), ``linking.py`` (calls between generated functions linked,
not copied), ``compile_cost.py`` (what a Numba compile may skip: a recursive function typed
once), ``compile_parallel.py`` (a compile's callees compiled by helper processes on idle
cores), ``background.py`` and ``compile_worker.py``
(compiling in another process while the interpreter runs). Tiers see the machine only
through its ``ExecutionContext`` (starvm/execution). Importing this package does not import
Numba: that happens at the first compile.
"""
from __future__ import annotations


def make_tier(context, mode: str):
    """The compiled tier of the machine whose ExecutionContext (execution/context.py) is
    ``context``; ``mode``: auto | on | off."""
    from .tier import Tier
    return Tier(context, mode)
