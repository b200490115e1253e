"""The compiled tier: Star routines lowered to Numba-compiled machine code (CPU).

``starvm/targets/numba`` renders checked IR to the source of a module of ``@njit`` functions
(its ``lower.py``) written against its ``kernels.py`` (the base operations over packed bit
columns; ``targets/mpi`` the same for MPI ranks); ``cache.py`` keeps
compiled modules on disk; ``call.py`` is the host side of a call; ``errors.py`` maps a
failure back to the interpreter's error; ``tier.py`` decides what runs compiled and reports
it. Importing this package does not import Numba: that happens at the first compile.
"""
from __future__ import annotations


def make_tier(context, mode: str):
    """The compiled tier of the machine whose ExecutionContext (execution/context.py) is
    ``context``; ``mode``: auto | on | off."""
    from .tier import Tier
    return Tier(context, mode)
