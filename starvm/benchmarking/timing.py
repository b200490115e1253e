"""Clocks for benchmarks: the device synchronised before and after the timed call, a series of
runs after warm-ups, and its median / min / max; a fresh process timed whole."""
from __future__ import annotations

import gc
import statistics
import subprocess
import time
from dataclasses import dataclass, field


def synchronizer(target=None):
    """A function that waits for the queued device work of ``target`` (a Machine, a Backend, or
    None: the current CUDA device when CuPy is imported, else nothing to wait for)."""
    backend = getattr(target, "backend", target)
    sync = getattr(backend, "synchronize", None)
    if callable(sync):
        return sync
    if target is None:
        import sys
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            return lambda: cupy.cuda.Device().synchronize()
    return _nothing


def _nothing() -> None:
    pass


def clock(fn, sync=_nothing, *, collect: bool = False) -> float:
    """Seconds ``fn()`` takes, the device synchronised before and after (``collect``: a garbage
    collection first, outside the timed region)."""
    if collect:
        gc.collect()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - t0


@dataclass
class Timing:
    """The seconds of a series of runs."""
    runs_s: list[float] = field(default_factory=list)

    @property
    def median_s(self) -> float:
        return statistics.median(self.runs_s)

    @property
    def min_s(self) -> float:
        return min(self.runs_s)

    @property
    def max_s(self) -> float:
        return max(self.runs_s)

    def as_dict(self) -> dict:
        return {"median_s": self.median_s, "min_s": self.min_s, "max_s": self.max_s,
                "runs_s": list(self.runs_s), "n_runs": len(self.runs_s)}


def repeat(fn, runs: int, *, warmup: int = 0, sync=_nothing, setup=None, collect: bool = False,
           stop_after_s: float | None = None) -> Timing:
    """``warmup`` untimed calls, then up to ``runs`` timed ones; ``setup()`` runs untimed before
    every call (a fresh input); a call longer than ``stop_after_s`` ends the series early."""
    for _ in range(warmup):
        if setup is not None:
            setup()
        fn()
    sync()
    timing = Timing()
    for _ in range(runs):
        if setup is not None:
            setup()
        timing.runs_s.append(clock(fn, sync, collect=collect))
        if stop_after_s is not None and timing.runs_s[-1] > stop_after_s:
            break
    return timing


@dataclass
class ProcessRun:
    """One fresh process timed from its start to its exit (what a user waits for)."""
    seconds: float | None       # None: it ran past its timeout and was killed
    returncode: int | None
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.seconds is not None and self.returncode == 0


def run_process(cmd: list[str], *, env: dict | None = None, timeout: float | None = None,
                keep_stdout: bool = True) -> ProcessRun:
    """Run ``cmd`` in a new process and time it whole (``clock``); past ``timeout`` seconds it
    is killed and the run has no time. ``keep_stdout=False`` discards what it prints."""
    done = []

    def call():
        done.append(subprocess.run(cmd, stdout=subprocess.PIPE if keep_stdout else subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, env=env, timeout=timeout))
    try:
        seconds = clock(call)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return ProcessRun(None, None, "", err + f"\ntimed out after {timeout:g} s")
    return ProcessRun(seconds, done[0].returncode, done[0].stdout or "", done[0].stderr or "")
