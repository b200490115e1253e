"""--jit auto on the CPU tier: a routine runs from the disk cache at its first call where its
compiled code is there, and is compiled in a background process (``compile_worker``) while
the interpreter keeps running it where its work pays for compiling; the calls after the
compile switch to the compiled code. No call waits for a compile.

``JitRoutine.__call__`` hands each call of an auto routine that Numba compiles (the CPU tier:
not the GPU or MPI tiers, whose compile is theirs) to ``Background.call``, which answers with
the compiled code's arguments (run it compiled) or None (run it interpreted). Results, output
and steps do not depend on which calls ran compiled: every tier reports the interpreter's.

What the disk cache holds is known without importing Numba: the worker leaves a marker per
routine and argument types (``cache.ready_marker``) once Numba's cache has it, and one with
the reason where Numba could not compile it (``cache.failed_marker``: not tried again). The
worker outlives the run that started it (its compile then serves the next run), and
processes compiling one entry take turns (a lock per entry: the second finds it compiled).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from time import perf_counter

import numpy as np

from ..config import debug, jit_background, jit_max_compile_s
from . import cache
from .estimate import compile_seconds

# seconds of compile that STARVM_JIT_THRESHOLD's work pays for (its default, 2e6 units, is
# about two seconds of interpreted work)
_THRESHOLD_PAYS_S = 2.0


def signature_spec(values):
    """The argument types of a compiled call as plain tuples (what ``numba.typeof`` gives,
    rebuilt in the worker by ``compile_worker.numba_type``), or None for a value it does not
    describe (that routine is compiled in the foreground as before)."""
    out = []
    for v in values:
        s = _spec(v)
        if s is None:
            return None
        out.append(s)
    return tuple(out)


def _spec(v):
    t = type(v)
    if t is np.ndarray:
        flags = v.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return ("a", v.dtype.str, v.ndim, layout, not flags.writeable)
    if t is tuple:
        inner = tuple(_spec(x) for x in v)
        return None if None in inner else ("t", *inner)
    if t is bool:
        return ("b",)
    if t is int:
        return ("i",) if -(1 << 63) <= v < (1 << 63) else None
    if t is float:
        return ("f",)
    return None


class Job:
    """One background compile: the worker process and the markers it leaves. Its process
    starts when one of this run's worker slots is free (``_Workers``)."""

    def __init__(self, source_path: Path, backend: str, func: str, spec):
        self.ready = cache.ready_marker(source_path, func, spec)
        self.failed = cache.failed_marker(source_path, func, spec)
        self.source_path, self.backend, self.func, self.spec = source_path, backend, func, spec
        self.started = time.monotonic()
        self.ended = None
        self.proc = None
        WORKERS.submit(self)

    def start(self, jobs=None, after=()) -> None:
        """The worker process, for this job (and ``jobs``: more functions of its entry),
        compiling once the processes ``after`` (pids) have ended."""
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        # the worker finds the folder this process uses (a read-only one replaced already)
        env["STARVM_JIT_CACHE"] = str(self.source_path.parent)
        quiet = None if debug() else subprocess.DEVNULL
        jobs = jobs or [self]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "starvm.jit.compile_worker", "--background",
             *([f"--after={','.join(map(str, after))}"] if after else []), self.backend, str(self.source_path),
             json.dumps([[j.func, j.spec] for j in jobs])],
            stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet, env=env,
            start_new_session=True)     # not stopped by the run's Ctrl-C or end: it fills the cache

    def poll(self) -> str:
        """'running' (or waiting for a worker slot), 'ready', 'failed' (Numba could not
        compile it) or 'lost' (the worker ended without a result)."""
        WORKERS.advance()
        if self.proc is None or self.proc.poll() is None:
            return "running"
        if self.ended is None:
            self.ended = time.monotonic()
        if self.ready.exists():
            return "ready"
        return "failed" if self.failed.exists() else "lost"

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started


class _Workers:
    """This run's background compiles, at most ``slots`` worker processes at once (a core
    left to the interpreter; at least one), the others waiting in the order they came.
    Compiles side by side duplicate work: a caller's compile compiles (or loads) its callees
    and starvm's kernels, so two workers starting on an empty cache compiled both twice (bfs:
    the main block's and BFS's workers). One after another, the second finds them in Numba's
    cache. Jobs still waiting when the run ends are compiled by one worker per entry, which
    outlives the run as the others do."""

    def __init__(self):
        self.running: list[Job] = []
        self.waiting: list[Job] = []
        self.exit_hook = False

    @property
    def slots(self) -> int:
        return max(1, (os.cpu_count() or 1) - 1)

    def submit(self, job: Job) -> None:
        self.waiting.append(job)
        if not self.exit_hook:
            import atexit
            atexit.register(self.start_waiting)
            self.exit_hook = True
        self.advance()

    def advance(self) -> None:
        self.running = [j for j in self.running if j.proc.poll() is None]
        while self.waiting and len(self.running) < self.slots:
            job = self.waiting.pop(0)
            try:
                job.start()
            except OSError:
                job.proc = _Ended()        # polls as 'lost': the routine stays interpreted
                continue
            self.running.append(job)

    def start_waiting(self) -> None:
        """At the run's end: the waiting jobs, one worker per entry, which starts compiling
        once the running workers have ended."""
        entries: dict[Path, list[Job]] = {}
        for job in self.waiting:
            entries.setdefault(job.source_path, []).append(job)
        self.waiting = []
        after = [j.proc.pid for j in self.running if j.proc.poll() is None]
        for jobs in entries.values():
            try:
                jobs[0].start(jobs, after)
            except OSError:
                pass


class _Ended:
    """A worker that never started."""
    returncode = -1

    def poll(self):
        return self.returncode


WORKERS = _Workers()


class Background:
    """What --jit auto does with one CPU-tier routine: its cache probe, its work so far, its
    background compile."""

    def __init__(self, routine):
        self.r = routine
        self.spec = None
        self.path: Path | None = None
        self.probed = False
        self.job: Job | None = None
        self.loader: threading.Thread | None = None
        self.loaded = None           # what the loading thread gives _take
        self.started_at = 0          # the call that started the background compile
        self.switched_at = 0         # the first call that ran compiled
        self.from_cache = False      # compiled code found in the disk cache at the first call
        self.cost = None             # estimate.compile_seconds

    def call(self, args):
        """The compiled code's arguments for this call, or None: run it interpreted."""
        r = self.r
        if not self.probed:
            converted = r.convert_args(args)
            if converted is None:
                return None
            self.probed = True
            if self._probe(converted):
                self.from_cache = True
                self.switched_at = r.calls
                return converted
            if r.state == "failed":
                return None
        if self.job is not None:
            return self._poll(args)
        if self.cost is None:
            self.cost = compile_seconds(r.unit.lowered.source, r.compiled.func)
        limit = jit_max_compile_s()
        if self.cost > limit:
            r.why = (f"too big to compile quickly: Numba's compile of its generated code is estimated at "
                     f"{self.cost:.0f} s, over STARVM_JIT_MAX_COMPILE_S = {limit:g} s (--jit on compiles it)")
            return None
        r.work += r.estimate(args)
        # the threshold pays for a compile of _THRESHOLD_PAYS_S; a longer one needs more work
        need = int(r.threshold * max(1.0, self.cost / _THRESHOLD_PAYS_S))
        if r.work < need:
            scaled = f"; {need} for its compile of about {self.cost:.0f} s" if need > r.threshold else ""
            r.why = (f"too little work to pay for compiling: about {r.work} units estimated "
                     f"(threshold {r.threshold}, {r.threshold_variable}{scaled})")
            return None
        converted = r.convert_args(args)
        if converted is None:
            return None
        if self.path is None or not jit_background():
            if r.compile(converted):      # in the foreground (STARVM_JIT_BACKGROUND=0, or types not described)
                self.switched_at = r.calls
                return converted
            return None
        try:
            cache.write_entry(r.unit.lowered.source, r.unit.backend_name)
            self.job = Job(self.path, r.unit.backend_name, r.compiled.func, self.spec)
        except OSError as e:
            r.state, r.why = "failed", f"the background compile did not start: {e}"
            return None
        self.started_at = r.calls
        r.why = "being compiled in the background"
        return None

    def _probe(self, converted) -> bool:
        """Compiled code in the disk cache for these argument types: load it (True). Where
        Numba could not compile it before, the routine is marked failed with that reason."""
        r = self.r
        self.spec = signature_spec(converted)
        if self.spec is None:
            return False
        try:
            self.path = cache.entry_path(r.unit.lowered.source, r.unit.backend_name)
        except OSError as e:       # no cache folder can be written: compiled in the foreground
            r.why = f"no cache folder: {e}"
            return False
        if cache.ready_marker(self.path, r.compiled.func, self.spec).exists():
            return self.load(converted)
        failed = cache.failed_marker(self.path, r.compiled.func, self.spec)
        if failed.exists():
            try:
                why = failed.read_text().strip()
            except OSError:
                why = "Numba could not compile it"
            r.state, r.why = "failed", f"{why} (cache: {failed.name})"
        return False

    def _poll(self, args):
        r, job = self.r, self.job
        if self.loader is not None:
            return self._loaded(args)
        status = job.poll()
        if status == "running":
            # one text for every call meanwhile: auto_tier's report counts calls by reason
            r.why = f"being compiled in the background (since call {self.started_at})"
            return None
        if status == "ready":
            # Numba's import and the load on a thread of their own, while this call and the
            # next ones run interpreted (a fresh process: about a second)
            self.loader = threading.Thread(target=self._load_on_thread, name="starvm-jit-load", daemon=True)
            self.loader.start()
            r.why = "compiled in the background; being loaded"
            return None
        self.job = None
        if status == "failed":
            try:
                why = job.failed.read_text().strip()
            except OSError:
                why = "Numba could not compile it"
        else:
            why = f"the background compile ended without a result (exit status {job.proc.returncode})"
        r.state, r.why = "failed", why
        return None

    def _load_on_thread(self) -> None:
        try:
            from .compile_worker import numba_type
            from .buffers import counter_array, output_holder, status_array
            import numba
            buffers = tuple(numba.typeof(b) for b in (counter_array(), status_array(), output_holder()))
            sig = (*(numba_type(s) for s in self.spec), *buffers)
        except Exception as e:  # noqa: BLE001 - reported by the call that finds it
            self.loaded = e
            return
        self.loaded = self._load(sig)

    def _loaded(self, args):
        """The call after the loading thread ended: run compiled where it loaded."""
        r = self.r
        if self.loader.is_alive():
            return None
        self.loader.join()
        self.job = None
        outcome, self.loader = self.loaded, None
        if isinstance(outcome, Exception):
            r.state, r.why = "failed", f"Numba could not load it: {type(outcome).__name__}: {outcome}"
            return None
        if not self._take(outcome):
            return None
        converted = r.convert_args(args)
        if converted is None:
            return None
        self.switched_at = r.calls
        return converted

    def load(self, converted) -> bool:
        """The routine's overload from Numba's disk cache for these arguments, in this call."""
        import numba
        r = self.r
        try:
            cnt, st, ob = r.tier.buffers()
            sig = tuple(cache.argument_type(a) or numba.typeof(a) for a in (*converted, cnt, st, ob))
        except Exception as e:  # noqa: BLE001 - any failure to load means: interpret this routine
            r.state, r.why = "failed", f"Numba could not load it: {type(e).__name__}: {e}"
            return False
        return self._take(self._load(sig))

    def _load(self, sig):
        """(dispatcher, how it loaded, seconds) from Numba's disk cache, never compiled in this
        process (except through Numba's own load on a Numba version the direct load was not
        checked on, which compiles only where the entry went missing); (None, why, seconds)
        where the entry did not load (then it is compiled again in the background), or the
        exception. Runs on the loading thread too: it touches the routine only through
        its unit (loaded once, under Numba's compiler lock)."""
        r = self.r
        t0 = perf_counter()
        try:
            fn = r.unit.function(r.pyname)
            found = cache.load_overload(fn, sig)
            if found == "loaded":
                return fn, "direct", perf_counter() - t0
            if found == "not loaded" and not cache.direct_loads_possible():
                return fn, cache.compile_overload(fn, sig), perf_counter() - t0
            # the marker said it was there: it was not (deleted, stale or corrupt)
            if found == "unreadable":
                cache.discard_numba_entry(fn)
            cache.ready_marker(self.path, r.compiled.func, self.spec).unlink(missing_ok=True)
            return None, "its entry in the disk cache did not load", perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - any failure to load means: interpret this routine
            return e

    def _take(self, outcome) -> bool:
        r = self.r
        if isinstance(outcome, Exception):
            r.state, r.why = "failed", f"Numba could not load it: {type(outcome).__name__}: {outcome}"
            return False
        fn, how, seconds = outcome
        r.compile_seconds += seconds
        if fn is None:
            r.why = how           # stays waiting: its work decides again, and a compile starts anew
            return False
        r.dispatcher, r.loaded_by = fn, how
        r.state, r.why = "compiled", ""
        return True

    def report(self) -> str:
        """What --profile adds about how the routine came to run compiled (or not yet)."""
        if self.from_cache:
            return "from the disk cache at its first call"
        if self.switched_at and self.started_at:
            return f"compiled in the background from call {self.started_at}, compiled from call {self.switched_at}"
        if self.job is not None:
            return f"being compiled in the background since call {self.started_at}"
        return ""


# ------------------------------------------------------------------ the GPU tier on auto
# Its compile (NVRTC) is short and CuPy keeps the binary on disk; what kept a routine that an
# earlier run compiled interpreted was its work estimate, weighed anew in every process. A
# marker per kernel plan, left when the tier compiled it, lets a later run compile (load) it
# at its first call.
def _gpu_marker(routine) -> Path | None:
    plan = getattr(routine, "plan", None)
    source = getattr(plan, "source", None)
    if not isinstance(source, str):
        return None
    try:
        folder = cache.folder()
    except OSError:
        return None
    import hashlib
    stamp = repr((source, plan.root, cache._version(), cache.machine_id()))
    return folder / f"gpu_{hashlib.sha256(stamp.encode()).hexdigest()[:32]}.ready"


def compiled_before(routine) -> bool:
    """Did an earlier run compile this GPU-tier routine (asked once per routine)?"""
    found = routine.__dict__.get("_compiled_before")
    if found is None:
        marker = _gpu_marker(routine)
        found = routine._compiled_before = marker is not None and marker.exists()
    return found


def note_compiled(routine) -> None:
    """After a GPU-tier routine compiled (any mode): later runs on auto compile it at once."""
    marker = _gpu_marker(routine)
    if marker is not None and not marker.exists():
        cache.write_marker(marker, "")
