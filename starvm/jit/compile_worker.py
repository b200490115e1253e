"""Compiles routines of one cache entry into Numba's disk cache, in a process of its own:
``python -m starvm.jit.compile_worker [--background] [--after=PID,...] BACKEND ENTRY.py JOBS`` (JOBS:
JSON list of [function, argument types as background.signature_spec gives them]; ``--after``:
start once those processes have ended).

Started by --jit auto (background.py) while the interpreter keeps running the routine, and
by ``star compile`` (precompile.py). For each job it leaves a ready marker once Numba's cache
holds the compiled function, or a failed marker with the reason where Numba cannot compile
it. Exit status: 0 done (each job's marker written), 2 usage, 3 an entry whose code does not
match its hash.
"""
from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from time import perf_counter

from . import cache

# how much lower the priority of a compile a run started is (os.nice): on a machine with
# fewer free cores than processes, the run's interpreter is not slowed by the compile
BACKGROUND_NICE = 10


def numba_type(spec):
    """The Numba type a signature_spec entry describes (numba.typeof of such a value)."""
    import numpy as np
    from numba.core import types
    from numba.np.numpy_support import from_dtype
    kind = spec[0]
    if kind == "a":
        return types.Array(from_dtype(np.dtype(spec[1])), spec[2], spec[3], readonly=spec[4])
    if kind == "t":
        return types.BaseTuple.from_types([numba_type(s) for s in spec[1:]], tuple)
    return {"b": types.boolean, "i": types.int64, "f": types.float64}[kind]


def _tuples(spec):
    return tuple(_tuples(s) for s in spec) if isinstance(spec, list) else spec


def compile_jobs(source_path: Path, backend: str, jobs, report=None) -> list[tuple[str, str, float]]:
    """(function, 'compiled' | 'cached' | 'failed: why', seconds) for each job; ``report`` is
    called with each as it is done."""
    report = report or (lambda *done: None)
    source = cache.checked_source(source_path)
    if source is None:
        raise ValueError(f"{source_path} does not hold the code its hash names")
    out = []
    module = buffers = None
    for func, spec in jobs:
        with cache.entry_lock(source_path, func):
            if cache.ready_marker(source_path, func, spec).exists():
                out.append((func, "cached", 0.0))
                report(*out[-1])
                continue
            if module is None:
                import numba
                from .buffers import (counter_array, output_holder, records_kernel, records_text_kernel,
                                      request_tables_kernel, status_array)
                module = cache.load(source, backend)
                buffers = tuple(numba.typeof(b) for b in (counter_array(), status_array(), output_holder()))
                # what the host of a compiled call loads: the records written, their text (a
                # first compile of 2-4 s of CPU, which the run that loaded the routine from
                # the cache paid in the foreground), the tables of a host request
                records_kernel()
                records_text_kernel()
                request_tables_kernel()
            out.append(_compile_one(source_path, module, func, spec, buffers))
            report(*out[-1])
    return out


def serve(source_path: Path, backend: str, lines) -> None:
    """A helper of a compile spread over processes (compile_parallel): jobs ([function, spec],
    one JSON line each) from ``lines`` as the compile meets them, compiled in the order they
    came, one another process is compiling left for later (it is then loaded, not compiled
    again), until ``lines`` ends."""
    import queue
    import time
    source = cache.checked_source(source_path)
    if source is None:
        raise ValueError(f"{source_path} does not hold the code its hash names")
    came: queue.Queue = queue.Queue()

    def read():
        for line in lines:
            if line.strip():
                func, spec = json.loads(line)
                came.put((func, _tuples(spec)))
        came.put(None)
    threading.Thread(target=read, daemon=True).start()
    module = buffers = None
    todo: list = []
    ended = False
    while True:
        while True:
            try:
                job = came.get(block=not todo and not ended)
            except queue.Empty:
                break
            if job is None:
                ended = True
                break
            todo.append(job)
        if not todo:
            if ended:
                return
            continue
        free = next((j for j in todo if not cache.lock_taken_elsewhere(source_path, j[0])), None)
        if free is None:
            time.sleep(0.05)
            continue
        todo.remove(free)
        func, spec = free
        if module is None:
            import numba
            from .buffers import counter_array, output_holder, status_array
            module = cache.load(source, backend)
            buffers = tuple(numba.typeof(b) for b in (counter_array(), status_array(), output_holder()))
        with cache.entry_lock(source_path, func):
            if not cache.ready_marker(source_path, func, spec).exists():
                # no failed marker: the compiling process compiles what a helper could not, and says why
                _compile_one(source_path, module, func, spec, buffers, mark_failed=False)


def _compile_one(source_path: Path, module, func: str, spec, buffers, mark_failed: bool = True) -> tuple[str, str, float]:
    from .buffers import room_to_compile
    t0 = perf_counter()
    try:
        sig = (*(numba_type(s) for s in spec), *buffers)
        with room_to_compile():
            cache.compile_overload(getattr(module, func), sig)
    except Exception as e:  # noqa: BLE001 - Numba's refusal is this routine's answer
        first = (str(e).strip().splitlines() or [""])[0][:200]
        if mark_failed:
            cache.write_marker(cache.failed_marker(source_path, func, spec),
                               f"Numba could not compile it: {type(e).__name__}: {first}")
        return func, f"failed: {type(e).__name__}: {first}", perf_counter() - t0
    seconds = perf_counter() - t0
    cache.write_marker(cache.ready_marker(source_path, func, spec), f"{seconds:.3f}\n")
    return func, "compiled", seconds


def _wait_for(pids, limit_s: float = 3600.0) -> None:
    """Until none of these processes is running (or ``limit_s`` has passed)."""
    import time
    deadline = time.monotonic() + limit_s
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if _running(pid)]
        if pids:
            time.sleep(0.2)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:            # another user's process: it exists
        return True
    try:                       # a zombie (ended, not yet reaped) has ended
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--background"]:
        # started by a run on --jit auto: the run's interpreter comes first where cores are few
        argv = argv[1:]
        from . import compile_parallel
        compile_parallel.enabled = False        # one process: the run's interpreter keeps a core
        try:
            os.nice(BACKGROUND_NICE)
        except (AttributeError, OSError):
            pass
    if argv[:1] and argv[0].startswith("--after="):
        # a run's waiting compiles, left at its end: after its running workers (the kernels
        # and callees they compile are then in Numba's cache, not compiled twice at once)
        try:
            _wait_for([int(pid) for pid in argv[0].partition("=")[2].split(",") if pid])
        except ValueError:
            pass
        argv = argv[1:]
    if argv[:1] == ["--serve"] and len(argv) == 3:
        # a helper of a foreground compile (compile_parallel): jobs on stdin
        from . import compile_parallel
        compile_parallel.enabled = False        # its callees compiled here, under their locks
        try:
            serve(Path(argv[2]), argv[1], sys.stdin)
        except ValueError as e:
            print(f"starvm compile worker: {e}", file=sys.stderr)
            return 3
        return 0
    if len(argv) != 3:
        print("usage: python -m starvm.jit.compile_worker [--background] [--after=PID,...] BACKEND ENTRY.py JOBS",
              file=sys.stderr)
        return 2
    backend, path, jobs = argv
    def report(func, status, seconds):
        print(f"{func}: {status} ({seconds:.2f} s)", flush=True)
    try:
        compile_jobs(Path(path), backend, [(f, _tuples(s)) for f, s in json.loads(jobs)], report)
    except ValueError as e:
        print(f"starvm compile worker: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
