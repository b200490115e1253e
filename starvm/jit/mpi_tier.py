"""The compiled tier on MPI ranks: ``Tier.install``'s part for the distributed backend.

On ``mpi:numpy`` every rank compiles the same routines (mpi_lower.py) and runs them as
Numba code over its own rows, the collectives inside the compiled code (mpi_kernels.py).
Which routines run compiled is decided from the program alone (the same text on every
rank), the decision to compile from replicated values (auto's estimate reads global sizes),
and the ranks agree once that each compiled; so every rank runs the same tier for every
call and meets the others in the same collectives. What the tier does not take keeps the
interpreter, with its reason for --profile: the row-moving routines that have all-to-all
native kernels (GATHER, SCATTER, GROUPMIN, ...: distributed/rows.py), `parallel for`, and
what else mpi_lower.py refuses. On ``mpi:cupy`` and ``mpi:auto`` every routine is interpreted.
"""
from __future__ import annotations

import numpy as np

from ..distributed import jit_comm
from ..distributed.vectors import Shard
from ..errors import StarRuntimeError
from ..runtime.values import Bits, Table, Unassigned
from ..types import T
from .lower import Unsupported, callees
from .mpi_lower import MpiModuleGen
from .runtime import JitRoutine, Unit, _Decline


def install_mpi(tier, candidates: dict, main, estimator, closure, has_loop):
    """Put an MpiRoutine in the machine's namespace for each routine the tier takes
    (``estimator``, ``closure``, ``has_loop``: tier.py's, passed in so that no import circle
    forms); returns the main block to run."""
    backend = tier.machine.backend
    why_not = _unavailable(backend)
    if why_not is not None:
        for info, _ in candidates.values():
            tier.skipped[info.display if info else "main block"] = why_not
        return main
    bodies = {**tier.bodies, **candidates}
    ok = _support(tier, bodies)
    chosen = [p for p in candidates if p in ok and (tier.mode == "on" or has_loop(candidates[p][1]))]
    if not chosen:
        return main
    needed = closure(chosen, bodies)
    unit = Unit(MpiModuleGen({p: bodies[p] for p in needed}).render(sorted(needed)), _cache_tag())
    unit.main_body = candidates.get("main_", (None, None))[1]
    for pyname in chosen:
        info, body = candidates[pyname]
        display = info.display if info else "main block"
        tier.skipped.pop(display, None)
        interpreted = main if info is None else tier.machine.ns[pyname]
        routine = MpiRoutine(tier, pyname, display, interpreted, unit, estimator(info, body, tier))
        tier.routines[pyname] = routine
        if info is None:
            main = routine
        else:
            tier.machine.ns[pyname] = routine
    return main


def _unavailable(backend) -> str | None:
    if backend.L.name != "numpy":
        return (f"the {backend.name} backend: the compiled tier runs on MPI ranks over NumPy only "
                f"(mpi:numpy); here every routine is interpreted")
    try:
        jit_comm.load()
    except jit_comm.MpiUnavailable as e:
        return f"compiled code cannot call MPI here: {e}"
    return None


def _cache_tag() -> str:
    """The backend part of the compiled modules' cache key: the MPI library and the kernels
    (cache.py keys kernels.py's text itself, not this file's)."""
    import hashlib
    from pathlib import Path
    text = (Path(__file__).parent / "mpi_kernels.py").read_text()
    return f"mpi:numpy|{jit_comm.load()}|{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _support(tier, bodies) -> set[str]:
    """The routines compiled on ranks: those the CPU tier takes (Tier.support: not mutually
    recursive, no native kernel in their place, ...) that mpi_lower.py renders too, and
    whose callees are all compiled."""
    ok = set(tier.support(bodies))
    why = {}
    for pyname in sorted(ok):
        try:
            MpiModuleGen(bodies).render([pyname])
        except Unsupported as e:
            why[pyname] = f"uses what the compiled tier does not compile on MPI ranks: {e}"
        except (KeyError, AttributeError) as e:
            why[pyname] = f"uses what the compiled tier does not compile on MPI ranks: {type(e).__name__} {e}"
    changed = True
    while changed:
        changed = False
        for pyname in sorted(ok - set(why)):
            for c in callees(bodies[pyname][1]):
                if c.pyname in why or c.pyname not in ok:
                    why[pyname] = f"calls '{c.display}', which is not compiled on MPI ranks"
                    changed = True
                    break
    for pyname, reason in why.items():
        info = bodies[pyname][0]
        tier.skipped[info.display if info else "main block"] = reason
    return ok - set(why)


class MpiRoutine(JitRoutine):
    """A routine run compiled on every rank over its own rows: slices as this rank's words,
    words whole (the interpreter's Shard and replicated forms, distributed/vectors.py)."""

    @property
    def backend(self):
        return self.tier.machine.backend

    def compile(self, converted) -> bool:
        ok = super().compile(converted)
        # every rank must take the same tier for every call: agree that all compiled
        agreed = bool(self.backend.comm.allreduce(int(ok), "min"))
        if ok and not agreed:
            self.state, self.why = "failed", "Numba could not compile it on another rank"
        return agreed

    def run(self, args, converted=None):
        jit_comm.prepare(self.backend)
        try:
            return super().run(args, converted)
        except StarRuntimeError as e:
            short = int(jit_comm.CTX[jit_comm.X_SHORT])
            if short >= 0:     # a local table refused: name the rank, as DistributedBackend.check_table does
                e.message = e.message.replace(" bytes but only ", f" bytes on rank {short} of {self.backend.size} "
                                              "(its block of rows) but only ") + " there"
                e.args = (e.message,)
            raise
        finally:
            jit_comm.account(self.backend)

    def to_native(self, value, type_, memo):
        B = self.backend
        if type_ is T.TABLE:
            if not isinstance(value, Table) or value.backend is not B:
                raise _Decline
            return (value.data, value.n)
        if type_.is_vector:
            key = id(value)
            if key not in memo:
                if isinstance(value, Unassigned):
                    memo[key] = (np.empty(0, np.uint64), -1 - self.unit.name_id(value.name))
                elif type_ is T.SLICE:
                    n = value.n
                    local_n = B.layout(n).local_n
                    memo[key] = (B.L.to_words(B.local_part(value.v, n), local_n), n)
                else:
                    memo[key] = (B.L.to_words(B.whole(value.v, value.n), value.n), value.n)
            return memo[key]
        return super().to_native(value, type_, memo)

    def to_python(self, value, type_, old=None):
        if not type_.is_vector:
            return super().to_python(value, type_, old)
        words, n = value
        n = int(n)
        if n < 0:
            return old if isinstance(old, Unassigned) else Unassigned(self.unit.lowered.names[-1 - n])
        B = self.backend
        if type_ is T.SLICE:
            v = Shard(B.L.from_words(words, B.layout(n).local_n), n)
        else:
            v = B.L.from_words(words, n)
        if isinstance(old, Bits):
            old.v, old.n = v, n
            return old
        return Bits(v, n)
