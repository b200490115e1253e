"""Tiering: which routines run compiled, when they are compiled, and the report of it.

``Tier.install`` sees every unit a machine loads. It decides statically which routines the
compiled tier can take (``support``: no graph input, no native kernel in their place, only
compilable callees, nothing ``lower.py`` refuses; recursive ones, mutually too, compile),
renders those into one module and puts a ``JitRoutine`` in the machine's namespace for each
routine that has a loop (or, with ``--jit on``, for each one). With ``--jit auto`` a routine is
compiled only once the work of its calls, estimated at each call from its loop bounds and table
sizes (``estimate``), passes ``STARVM_JIT_THRESHOLD``: small runs never import Numba.
"""
from __future__ import annotations

import time

from ..config import jit_gpu_threshold, jit_threshold
from ..native.registry import native_for
from ..ir.ops import GroupOp, Op
from ..targets.numpy.forall import fusable
from .estimate import estimator
from ..ir.walk import callees, walk
from ..targets.common import Unsupported
from ..targets.numba.lower import ModuleGen, call_cycles, cow_tables
from .buffers import counter_array, output_holder, status_array
from .call import JitRoutine, Unit


class Tier:
    def __init__(self, context, mode: str):
        self.context = context          # the machine's ExecutionContext: all the tier sees of it
        self.mode = mode
        self.threshold = jit_threshold()
        self.gpu_threshold = jit_gpu_threshold()
        self.bodies: dict = {}                 # pyname -> (info, body) of every routine loaded
        self.routines: dict[str, JitRoutine] = {}
        self.skipped: dict[str, str] = {}      # display -> why it is never compiled
        self._buffers = None
        self._free = (0.0, 0)
        self.natives: set[str] = set()         # routines a native kernel runs for interpreted callers

    # ------------------------------------------------------------------ buffers shared by calls
    def buffers(self):
        """(step counter, status array, output holder) that every compiled call reuses."""
        if self._buffers is None:
            self._buffers = (counter_array(), status_array(self.context.max_depth), output_holder())
        return self._buffers

    def free_bytes(self) -> int:
        now = time.monotonic()
        if now - self._free[0] > 1.0:
            from ..execution.limits import free_bytes
            free = free_bytes(self.context.backend)
            self._free = (now, free if free is not None else 1 << 62)
        return self._free[1]

    # ------------------------------------------------------------------ loading
    def install(self, lowered, main, parts=None):
        """Called by Machine.compile after the unit's Python code is defined; returns the
        main block to run (compiled or not). ``parts``: the functions main_ calls for runs of
        its statements (ir/main_parts.py; the GPU tier compiles them, the others the whole
        main block)."""
        if self.mode == "off":
            return main
        new = {info.pyname: (info, body) for info, body in lowered.routines}
        self.bodies.update(new)
        candidates = dict(new)
        if main is not None and lowered.main is not None:
            candidates["main_"] = (None, lowered.main)
        if self.context.backend.distributed:
            # MPI ranks (starvm/distributed): Numba per rank over its rows, collectives inside
            from .mpi_tier import install_mpi
            return install_mpi(self, candidates, main, _closure, _has_loop, parts)
        if self.context.backend.mixed:
            # each call where its arguments are: Numba on the host, the GPU tier on the device
            from .auto_tier import install_auto
            return install_auto(self, candidates, main, _recursive)
        if self.context.backend.host is not self.context.backend:
            from .cuda_tier import install_gpu     # the GPU tier: one CUDA kernel per routine
            return install_gpu(self, candidates, main, _recursive, parts)
        return self.put(self.compile_host(candidates, main), main)

    def put(self, routines: dict, main):
        """Install compiled routines in place of the interpreted ones; returns the main block
        to run (the compiled one where it is among them)."""
        for pyname, routine in routines.items():
            self.routines[pyname] = routine
            if routine.compiled.info is None:
                main = routine
            else:
                self.context.ns[pyname] = routine
        return main

    def make_routines(self, chosen, candidates: dict, main, unit: Unit, cls=JitRoutine) -> dict:
        """A ``cls`` for each chosen routine of ``unit``, its interpreted form kept for the
        calls the tier declines; they leave ``skipped``."""
        out = {}
        for pyname in chosen:
            info, body = candidates[pyname]
            display = info.display if info else "main block"
            self.skipped.pop(display, None)
            interpreted = main if info is None else self.context.ns[pyname]
            out[pyname] = cls(self, pyname, display, interpreted, unit, estimator(info, body, self))
        return out

    @property
    def host_backend(self):
        """The NumPy backend whose tables compiled code takes (auto's host side on auto)."""
        return self.context.backend.host

    def compile_host(self, candidates: dict, main) -> dict[str, JitRoutine]:
        """A JitRoutine (Numba) for each candidate the CPU tier takes, not yet installed;
        the others get their reason in ``skipped``."""
        ok = self.support({**self.bodies, **candidates})
        chosen = [p for p in candidates if p in ok and p not in self.natives
                  and (self.mode == "on" or _has_loop(candidates[p][1]))]
        if not chosen:
            return {}
        needed = _closure(chosen, {**self.bodies, **candidates})
        gen = ModuleGen({p: ({**self.bodies, **candidates})[p] for p in needed}, frozenset(self.natives))
        unit = Unit(gen.render(sorted(needed)), self.host_backend.name)
        unit.main_body = candidates.get("main_", (None, None))[1]
        return self.make_routines(chosen, candidates, main, unit)

    def support(self, bodies) -> dict[str, None]:
        """The routines the tier can compile; the others get their reason in ``skipped``."""
        why: dict[str, str] = {}
        natives = {p for p, (info, _b) in bodies.items() if info is not None and self._native(info, "host")}
        if self.context.backend.mixed:     # auto: a native may move tables to the device, not under compiled code
            why.update({p: "a native kernel replaces it on this backend" for p in natives})
            natives = set()
        self.natives = natives
        cycles = call_cycles(bodies)    # once: each routine below is rendered alone from the same bodies
        for pyname, (info, body) in bodies.items():
            if pyname in why:
                continue
            if self.mode == "auto" and self.context.fuse and any(
                    n.op is Op.PFOR and fusable(n) and n.arg[2].tables and not cow_tables(n) for n in walk(body)):
                # a loop that writes rows, or two tables, runs compiled against a copy of its tables
                # (lower.cow_tables): slower than the fused whole-array form
                why[pyname] = ("its parallel for (writing rows or two tables) runs fused as whole-array operations, "
                               "faster than the compiled tier's loop over a copy of the tables (--jit on compiles it anyway)")
                continue
            try:
                ModuleGen(bodies, frozenset(self.natives), cycles).render([pyname])
            except Unsupported as e:
                why[pyname] = f"uses what the compiled tier does not compile: {e}"
            except (KeyError, AttributeError) as e:
                why[pyname] = f"uses what the compiled tier does not compile: {type(e).__name__} {e}"
        changed = True
        while changed:   # a routine compiles only if everything it calls does
            changed = False
            for pyname, (info, body) in bodies.items():
                if pyname in why:
                    continue
                for c in callees(body):
                    if c.pyname in why or c.pyname not in bodies:
                        why[pyname] = f"calls '{c.display}', which is not compiled"
                        changed = True
                        break
        for pyname, reason in why.items():
            info = bodies[pyname][0]
            self.skipped[info.display if info else "main block"] = reason
        for pyname in self.natives - set(why):
            # not a routine of its own: interpreted and compiled callers call the kernel
            self.skipped[bodies[pyname][0].display] = ("a native kernel runs its calls, from interpreted code "
                                                       "and from compiled code (through the host)")
        return {p: None for p in bodies if p not in why}

    def _native(self, info, side: str = "") -> bool:
        """Does a native kernel replace this library routine (native/registry.py decides, as
        for the machine)? On auto, ``side='host'`` asks about its NumPy side only: where that
        side has no kernel (COMPACT, WARSHALL-adapt) the CPU tier compiles the body, which
        auto's host calls then run."""
        origin = info.node.loc.filename if info.node.loc is not None else None
        return native_for(info.name, self.context.backend, origin=origin, enabled=self.context.native,
                          host_side=side == "host") is not None

    # ------------------------------------------------------------------ reporting
    def bodies_of(self, routine) -> dict:
        bodies = dict(self.bodies)
        if routine.compiled.info is None:
            bodies[routine.pyname] = (None, routine.unit.main_body)
        return bodies

    def display_of(self, pyname: str) -> str:
        return self.bodies[pyname][0].display

    def report(self) -> list[str]:
        """Lines for --profile: which routines ran compiled, which did not and why."""
        if self.mode == "off":
            return ["compiled tier: off (--jit off / STARVM_JIT=off)"]
        backend = self.context.backend
        how = ("Numba on each MPI rank's rows, " if backend.distributed and backend.host is backend else
               "" if backend.distributed else
               "Numba, " if backend.host is backend else
               "Numba where a call's arguments are on the host, one CUDA kernel per routine where they are on "
               "the device, " if backend.mixed else
               "one CUDA kernel per routine, " if backend.gpu else "")
        lines = [f"compiled tier ({how}--jit {self.mode}):"]
        for r in self.routines.values():
            if not r.calls:
                continue
            if hasattr(r, "report_lines"):      # auto_tier.PlacedRoutine: per tier
                lines += r.report_lines()
                continue
            if r.state == "compiled":
                inner = sorted(_closure([r.pyname], self.bodies_of(r)) - {r.pyname} - self.natives)
                calls = f" (with {', '.join(self.display_of(p) for p in inner)})" if inner else ""
                how = r.background.report() if getattr(r, "background", None) else ""
                lines.append(f"  {r.display}{calls}: compiled{'; ' + how if how else ''}; {r.compiled_calls} call(s) "
                             f"ran compiled in {r.seconds:.4f} s (compiling or loading it from the cache: "
                             f"{r.compile_seconds:.3f} s)")
            else:
                lines.append(f"  {r.display}: interpreted, {r.calls} call(s): {r.why}")
        for display, why in self.skipped.items():
            lines.append(f"  {display}: interpreted: {why}")
        if len(lines) == 1:
            lines.append("  no routine with a loop was called")
        elif any(r.compiled_calls for r in self.routines.values()):
            lines.append("  (steps of compiled code are counted above but timed only here)")
        return lines


def _has_loop(body) -> bool:
    return any(n.op in GroupOp.Loops for n in walk(body))


def _closure(roots, bodies) -> set[str]:
    out, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.add(p)
        todo.extend(c.pyname for c in callees(bodies[p][1]))
    return out


def _recursive(bodies) -> set[str]:
    """Routines on a cycle of the call graph, direct recursion included (cuda_tier.py)."""
    return _on_cycle({p: [c.pyname for c in callees(b)] for p, (_i, b) in bodies.items()})


def _on_cycle(graph) -> set[str]:
    """Routines on a cycle of the call graph."""
    out = set()
    for start in graph:
        stack, seen = list(graph.get(start, ())), set()
        while stack:
            p = stack.pop()
            if p == start:
                out.add(start)
                break
            if p in seen:
                continue
            seen.add(p)
            stack.extend(graph.get(p, ()))
    return out


# ------------------------------------------------------------------ auto: how much work is a call
