"""A foreground compile of a routine spread over processes: its callees compiled by helper
processes while this one compiles the routine itself.

Generated functions call each other through linked calls (linking.py): a caller's machine
code holds no callee's code, only the callee's cell, and its typing needs only the callee's
return type. So while one compile (``--jit on``'s first call, ``star compile``) types its
routine, each generated callee it meets is *typed* here (Numba's untyped passes and type
inference, no lowering or LLVM: ``return_type``), given to a helper process to compile
(``python -m starvm.jit.compile_worker --serve``) and linked through its cell; before the
routine runs, the cells are filled from Numba's disk cache where a helper compiled the
callee, or by compiling here what no helper started (``drain``: the callers first, the
helpers working from the leaves). Processes compiling one function take turns
(``cache.entry_lock``, held by whoever compiles it: the other then loads it). A callee's
return type as compiled is checked against the one typed here (``check``).

One helper per idle core but one (none on one core, or where the load average leaves no core
idle: ``idle_cores``); it costs a Python and Numba start (about a
second of CPU), so it starts at the second callee met (one callee is compiled here). ``enabled = False`` compiles everything
in this process, as before (bench/bench_compile_size.py measures both).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

enabled = True
helpers = None          # helper processes (None: one per usable core but one)
drains = True           # False: the helpers compile every callee (tests)

_FARM = threading.local()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def idle_cores() -> int:
    """Cores free for helpers: the usable ones but this process's, less the load average (a
    helper on a busy core only adds its start and its duplicated typing: the test suite's
    workers, other users' work)."""
    cores = usable_cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return max(0, min(cores - 1, int(cores - 1 - load + 0.5)))


def current():
    """The farm of the compile this thread is running, or None."""
    return getattr(_FARM, "farm", None)


@contextmanager
def farm_for(module, backend: str, cache):
    """Held around the outermost compile of a generated function of ``module``; ``cache``:
    the module cache.py (passed by it: importing it here would close a circle of imports)."""
    wanted = idle_cores() if helpers is None else helpers
    # a tier whose modules need set-up of their own (mpi_tier's: the MPI library made visible
    # to LLVM, its backend tagged "mpi:...") compiles in one process, as before
    if (not enabled or wanted < 1 or current() is not None or not getattr(module, "__file__", None)
            or ":" in backend):
        yield None
        return
    farm = _FARM.farm = Farm(module, backend, wanted, cache)
    try:
        yield farm
    finally:
        _FARM.farm = None
        farm.close()


class Farm:
    def __init__(self, module, backend: str, wanted: int, cache):
        self.module, self.backend, self.wanted, self.cache = module, backend, wanted, cache
        self.typed: dict[tuple, object] = {}        # (function, argument types) -> return type
        self.jobs: list[tuple[str, tuple]] = []     # given to the helpers, in the order met
        self.procs: list[subprocess.Popen] = []
        self.next = 0                               # the helper the next job goes to
        self.cells: list[tuple[str, str, tuple]] = []   # (cell, callee, argument types) to fill
        self.draining = False

    # ------------------------------------------------------------------ typing a callee
    def return_type(self, dispatcher, argtypes: tuple):
        """The callee's return type for these argument types (typed here, once), its
        compile given to a helper; None where it is compiled here as before (its argument
        types have no spec, or its typing failed: the compile here says why)."""
        func = dispatcher.py_func.__name__
        key = (func, argtypes)
        if key in self.typed:
            return self.typed[key]
        code = dispatcher.py_func.__code__
        buffers = code.co_varnames[code.co_argcount - 3:code.co_argcount] == ("cnt", "st", "ob")
        spec = signature_spec_of_types(argtypes[:-3]) if buffers else None   # not an outline helper
        found = None
        if spec is not None:
            try:
                found = _typed_return(dispatcher, argtypes)
            except Exception:  # noqa: BLE001 - compiled here instead, which reports the error
                found = None
        self.typed[key] = found
        if found is not None:
            self.jobs.append((func, spec))
            self._give(func, spec)
        return found

    def check(self, func: str, argtypes: tuple, cres) -> None:
        """The compiled callee returns the type its callers were typed with."""
        expected = self.typed.get((func, tuple(argtypes)))
        if expected is not None and cres.signature.return_type != expected:
            raise RuntimeError(f"{func} was typed returning {expected} for its callers and compiled "
                               f"returning {cres.signature.return_type}")

    # ------------------------------------------------------------------ the helpers
    def _give(self, func: str, spec) -> None:
        if len(self.jobs) < 2:
            return                # one callee: compiled here after the routine (a helper's start costs as much)
        if not self.procs:
            self._start()
            jobs = self.jobs      # the first one too
        else:
            jobs = [(func, spec)]
        live = [p for p in self.procs if p.poll() is None]
        for job in jobs if live else ():
            proc = live[self.next % len(live)]
            self.next += 1
            try:
                proc.stdin.write(json.dumps(list(job)) + "\n")
                proc.stdin.flush()
            except OSError:
                pass

    def _start(self) -> None:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        env["STARVM_JIT_CACHE"] = str(Path(self.module.__file__).parent)
        from ..config import debug
        quiet = None if debug() else subprocess.DEVNULL
        for _ in range(self.wanted):
            try:
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-m", "starvm.jit.compile_worker", "--serve", self.backend, self.module.__file__],
                    stdin=subprocess.PIPE, stdout=quiet, stderr=quiet, env=env, text=True))
            except OSError:
                break

    def drain(self) -> None:
        """The jobs no helper has started, compiled here: the last met first (callers: a
        helper takes them from the first, the leaves)."""
        if self.draining or not drains:
            return
        self.draining = True
        cache = self.cache
        path = Path(self.module.__file__)
        for func, spec in reversed(self.jobs):
            dispatcher = getattr(self.module, func)
            argtypes = next((a for (f, a) in self.typed if f == func and _spec_matches(a, spec)), None)
            if argtypes is None or argtypes in dispatcher.overloads:
                continue
            if cache.lock_taken_elsewhere(path, func):
                continue                  # a helper compiles it: loaded when its cell is filled
            cache.compile_overload(dispatcher, argtypes)

    def close(self) -> None:
        for proc in self.procs:
            try:
                proc.stdin.close()
            except OSError:
                pass
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()          # every job it had is compiled or loaded by now
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


def _spec_matches(argtypes: tuple, spec) -> bool:
    return signature_spec_of_types(argtypes[:-3]) == spec


def _typed_return(dispatcher, argtypes: tuple):
    """The return type Numba's typing gives the function for these argument types: its
    nopython pipeline up to type inference (no lowering, no LLVM)."""
    from numba.core import compiler

    flags = compiler.Flags()
    comp = dispatcher._compiler
    comp.targetdescr.options.parse_as_flags(flags, comp.targetoptions)
    flags = comp._customize_flags(flags)
    with dispatcher._compiling_counter:     # its calls of itself typed as recursion, as in its compile
        return compiler.compile_extra(comp.targetdescr.typing_context, comp.targetdescr.target_context,
                                      dispatcher.py_func, args=tuple(argtypes), return_type=None, flags=flags,
                                      locals=comp.locals, pipeline_class=_typing_only_pipeline())


_PIPELINE = None


def _typing_only_pipeline():
    global _PIPELINE
    if _PIPELINE is not None:
        return _PIPELINE
    from numba.core import compiler, typed_passes
    from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass

    @register_pass(mutates_CFG=False, analysis_only=True)
    class StarvmReturnType(FunctionPass):
        _name = "starvm_return_type"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            from numba.core import types
            raise compiler._EarlyPipelineCompletion(types.unliteral(state.return_type))

    class TypingOnly(compiler.CompilerBase):
        def define_pipelines(self):
            full = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm = PassManager("starvm typing only")
            for cls, what in full.passes:
                pm.add_pass(cls, what)
                if cls is typed_passes.NopythonTypeInference:
                    break
            pm.add_pass(StarvmReturnType, "the return type")
            pm.finalize()
            return [pm]

    _PIPELINE = TypingOnly
    return _PIPELINE


def signature_spec_of_types(argtypes):
    """signature_spec of values of these Numba types (a linked callee's: background.signature_spec's form), or
    None where one is not described."""
    from numba.core import types
    out = []
    for t in argtypes:
        if isinstance(t, types.Array):
            if not isinstance(t.dtype, types.Number) or not t.aligned:
                return None
            out.append(("a", np.dtype(str(t.dtype)).str, t.ndim, t.layout, not t.mutable))
        elif isinstance(t, types.BaseTuple):
            inner = signature_spec_of_types(t.types)
            if inner is None:
                return None
            out.append(("t", *inner))
        elif t == types.boolean:
            out.append(("b",))
        elif t == types.int64:
            out.append(("i",))
        elif t == types.float64:
            out.append(("f",))
        else:
            return None
    return tuple(out)
