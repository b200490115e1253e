"""The compiled tier on MPI ranks: ``Tier.install``'s part for the distributed backend.

On ``mpi:numpy`` every rank compiles the same routines (targets/mpi/lower.py) and runs them as
Numba code over its own rows, the collectives inside the compiled code (targets/mpi/kernels.py).
Which routines run compiled is decided from the program alone (the same text on every
rank), the decision to compile from replicated values (auto's estimate reads global sizes),
and the ranks agree once that each compiled; so every rank runs the same tier for every
call and meets the others in the same collectives. What the tier does not take keeps the
interpreter, with its reason for --profile: the row-moving routines that have all-to-all
native kernels (GATHER, SCATTER, GROUPMIN, ...: distributed/rows.py), with --jit auto on
more than one rank a fused `parallel for` whose body crosses ranks, and what else
targets/mpi/lower.py refuses. On ``mpi:cupy`` the GPU tier's kernels run per rank, their
cross-rank steps posted to the host while they run (cuda_ranks.py; docs/scale.md, "Compiled
code on GPU ranks"); on ``mpi:auto`` every routine is interpreted. A world of one rank started
by `star run --distributed` never gets here: it runs the plain machine (distributed.machine_backend).
"""
from __future__ import annotations

from ..distributed import jit_comm
from ..distributed.vectors import Shard
from ..errors import StarRuntimeError
from ..types import T
from ..ir.walk import callees
from ..targets.common import Unsupported
from ..targets.mpi.lower import MpiModuleGen
from .call import JitRoutine, Unit


def install_mpi(tier, candidates: dict, main, closure, has_loop, parts: dict | None = None):
    """Put an MpiRoutine in the machine's namespace for each routine the tier takes
    (``closure``, ``has_loop``: tier.py's, passed in so that no import circle forms);
    returns the main block to run. On CuPy ranks the GPU tier's kernels for the ranks instead
    (cuda_ranks.py), for routines and the main block's ``parts``."""
    backend = tier.context.backend
    if backend.host is not backend and backend.L.gpu and not backend.L.mixed:
        from .cuda_ranks import agree_compiled_before, unavailable
        from .cuda_tier import install_gpu
        why_not = unavailable(backend)
        if why_not is None:
            before = set(tier.routines)
            main = install_gpu(tier, candidates, main, None, parts, ranks=True)
            agree_compiled_before(tier, before)
            return main
        for info, _ in candidates.values():
            tier.skipped[info.display if info else "main block"] = why_not
        return main
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
    unit = Unit(MpiModuleGen({p: bodies[p] for p in needed}, _keep_fused(tier)).render(sorted(needed)), _cache_tag())
    unit.main_body = candidates.get("main_", (None, None))[1]
    return tier.put(tier.make_routines(chosen, candidates, main, unit, MpiRoutine), main)


def _unavailable(backend) -> str | None:
    if backend.host is not backend:
        return (f"the {backend.name} backend: the compiled tier runs on MPI ranks over NumPy (Numba) and CuPy "
                f"(the GPU tier's kernels) only; here every routine is interpreted")
    try:
        jit_comm.load()
    except jit_comm.MpiUnavailable as e:
        return f"compiled code cannot call MPI here: {e}"
    return None


def _keep_fused(tier) -> bool:
    """--jit auto on several ranks leaves a fused `parallel for` whose body crosses ranks to
    the interpreter: one array all-reduction per reduction beats one collective per
    iteration (the same choice on every rank: the mode and the size are)."""
    return tier.mode == "auto" and tier.context.fuse and tier.context.backend.size > 1


def _cache_tag() -> str:
    """The backend part of the compiled modules' cache key: the MPI library and the kernels
    (cache.py keys kernels.py's text itself, not this file's)."""
    import hashlib
    from pathlib import Path
    text = (Path(__file__).parents[1] / "targets" / "mpi" / "kernels.py").read_text()
    return f"mpi:numpy|{jit_comm.load()}|{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _support(tier, bodies) -> set[str]:
    """The routines compiled on ranks: those the CPU tier takes (Tier.support: not mutually
    recursive, no native kernel in their place, ...) that targets/mpi/lower.py renders too, and
    whose callees are all compiled."""
    ok = set(tier.support(bodies))
    why = {}
    for pyname in sorted(ok):
        try:
            MpiModuleGen(bodies, _keep_fused(tier)).render([pyname])
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
    words whole (the interpreter's Shard and replicated forms, distributed/vectors.py).
    A call that needs more machine stack than the caller's thread gives runs again
    interpreted, not on a thread of its own: compiled code calls MPI from the thread that
    initialised it. Every rank restarts alike (a restart follows from replicated values)."""

    large_stack = False

    @property
    def backend(self):
        return self.tier.context.backend

    def compile(self, converted) -> bool:
        ok = super().compile(converted)
        # every rank must take the same tier for every call: agree that all compiled (and
        # every rank reports the first failing rank's reason)
        whys = self.backend.comm.allgather("" if ok else self.why)
        failed = [(r, why) for r, why in enumerate(whys) if why]
        if failed and ok:
            rank, why = failed[0]
            self.state, self.why = "failed", f"on rank {rank}: {why}"
        return not failed

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

    def table_backend(self):
        return self.backend

    def words_of(self, value, type_):
        """A slice: this rank's words of it; a word: the whole value."""
        B = self.backend
        n = value.n
        if type_ is T.SLICE:
            return B.L.to_words(B.local_part(value.v, n), B.layout(n).local_n)
        return B.L.to_words(B.whole(value.v, n), n)

    def vector_of(self, words, n: int, type_):
        B = self.backend
        if type_ is T.SLICE:
            return Shard(B.L.from_words(words, B.layout(n).local_n), n)
        return B.L.from_words(words, n)
