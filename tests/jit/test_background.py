"""--jit auto on the CPU tier (starvm/jit/background.py): a routine worth compiling is compiled
in a background process while the interpreter keeps running it, and its calls switch to the
compiled code when that is ready, with the interpreter's results, steps and output; a routine
whose compiled code is in the disk cache runs compiled from its first call.

One program (tests/jit/test_cache_load.py's), one compiled module for the file: the first
test compiles it in the background, the others find it in the same cache folder.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import time

import numpy as np
import pytest

import starvm
from conftest import subprocess_env
from test_cache_load import PROGRAM

# calls until the background compile is ready: Numba compiles the module in 5-20 s on 2 cores
_WAIT_S = 300


def _run_wc(machine, out):
    """One call of WC on the same table: (hops, table after, steps, output of the call)."""
    rng = np.random.default_rng(5)
    P = machine.table(rng.random((6, 6)) < 0.3)
    start = len(out.getvalue())
    hops = machine.call("WC", 6, P, 0)
    return hops, P.to_numpy().astype(int).tolist(), machine.last_call_stats, out.getvalue()[start:]


@pytest.fixture(scope="module")
def cache_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("background_cache")


@pytest.fixture(scope="module")
def interpreted():
    out = io.StringIO()
    m = starvm.Machine(backend="numpy", jit="off", out=out, native=False)
    m.load(PROGRAM, "background.star")
    return _run_wc(m, out)


@pytest.fixture(scope="module")
def switched(cache_folder, interpreted):
    """Calls of WC on --jit auto with a threshold its first call passes, one every 0.2 s,
    until one runs compiled: (machine, routine, every call's result, seconds of each call)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("STARVM_JIT_CACHE", str(cache_folder))
    mp.setenv("STARVM_JIT_THRESHOLD", "1")
    mp.setenv("STARVM_JIT_BACKGROUND", "1")
    try:
        out = io.StringIO()
        m = starvm.Machine(backend="numpy", jit="auto", out=out, native=False)
        m.load(PROGRAM, "background.star")
        runs, seconds = [], []
        deadline = time.monotonic() + _WAIT_S
        routine = None
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            runs.append(_run_wc(m, out))
            seconds.append(time.perf_counter() - t0)
            routine = next(r for r in m.jit.routines.values() if r.display == "WC")
            if routine.compiled_calls:
                break
            time.sleep(0.2)
        return m, routine, runs, seconds
    finally:
        mp.undo()


def test_calls_switch_to_the_background_compile_with_the_interpreters_results(switched, interpreted):
    m, routine, runs, _seconds = switched
    assert routine.compiled_calls == 1, (routine.state, routine.why)
    assert len(runs) >= 2                       # the first call (at least) ran interpreted
    assert routine.background.started_at == 1   # its work passed the threshold at once
    assert routine.background.switched_at == len(runs)
    for run in runs:                            # interpreted and compiled calls alike
        assert run == interpreted
    report = "\n".join(m.jit.report())
    assert f"compiled in the background from call 1, compiled from call {len(runs)}" in report


def test_no_call_waits_for_the_compile(switched):
    """Every interpreted call took interpreter time only: the compile (seconds) ran elsewhere,
    and loading it happened beside the calls (the switching call only runs it)."""
    _m, routine, runs, seconds = switched
    assert max(seconds[:-1]) < 1.0, seconds
    assert seconds[-1] < 1.0, seconds
    assert routine.loaded_by == "direct"


PROBE = r"""
import io, json, sys
import numpy as np
import starvm
out = io.StringIO()
m = starvm.Machine(backend="numpy", jit="auto", out=out, native=False)
m.load(sys.argv[1], "background.star")
rng = np.random.default_rng(5)
P = m.table(rng.random((6, 6)) < 0.3)
hops = m.call("WC", 6, P, 0)
r = next(r for r in m.jit.routines.values() if r.display == "WC")
print(json.dumps({"hops": list(hops), "table": P.to_numpy().astype(int).tolist(), "steps": m.last_call_stats,
                  "output": out.getvalue(), "compiled_calls": r.compiled_calls, "calls": r.calls,
                  "loaded_by": r.loaded_by, "report": m.jit.report(), "numba_loads": __import__("starvm.jit.cache").jit.cache.LOADS["numba"]}))
"""


def _fresh_process(cache_folder, **env):
    env = {"STARVM_JIT_CACHE": str(cache_folder), "STARVM_JIT_BACKGROUND": "1", **env}
    done = subprocess.run([sys.executable, "-c", PROBE, PROGRAM], capture_output=True, text=True, timeout=600,
                          env=subprocess_env(**env))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_a_fresh_process_runs_it_from_the_cache_at_its_first_call(switched, cache_folder, interpreted):
    """Its one call's work is far below the threshold (10**18): the cache decides, not the work."""
    run, stderr = _fresh_process(cache_folder, STARVM_JIT_THRESHOLD=str(10**18))
    assert run["calls"] == run["compiled_calls"] == 1, run["report"]
    assert run["loaded_by"] == "direct"
    # the kernels the host of a compiled call uses (its output's text) came with the background
    # compile: nothing compiled, nothing through Numba's own load (its registries' start-up)
    assert run["numba_loads"] == 0
    assert (tuple(run["hops"]), run["table"], run["steps"], run["output"]) == interpreted
    assert "from the disk cache at its first call" in "\n".join(run["report"])
    assert "warning" not in stderr


def test_a_routine_numba_cannot_compile_is_not_tried_again(switched, cache_folder):
    """A failed marker (what the worker leaves where Numba refuses a routine) keeps it
    interpreted, with the reason, without a compile."""
    ready = list(cache_folder.glob("star_*.ready"))
    assert len(ready) == 1
    failed = ready[0].with_suffix(".failed")
    ready[0].rename(ready[0].with_suffix(".kept"))
    failed.write_text("Numba could not compile it: TypingError: made up for the test")
    try:
        run, _stderr = _fresh_process(cache_folder, STARVM_JIT_THRESHOLD="1")
    finally:
        failed.unlink()
        ready[0].with_suffix(".kept").rename(ready[0])
    assert run["compiled_calls"] == 0
    assert "TypingError: made up for the test" in "\n".join(run["report"])


def _numba_index(cache_folder, func: str):
    import os
    from pathlib import Path
    places = [cache_folder] + ([Path(os.environ["NUMBA_CACHE_DIR"])] if os.environ.get("NUMBA_CACHE_DIR") else [])
    found = [p for place in places for p in place.rglob(f"star_*.{func}-*.nbi")]
    assert len(found) == 1, found
    return found[0]


def test_a_corrupt_numba_entry_is_deleted_with_one_warning_and_compiled_again(switched, cache_folder, interpreted):
    """Last in the file: it breaks the entry the others load. The process that finds it
    corrupt runs the routine interpreted and says so once; a later one compiles it again in
    the background; the next loads it at its first call."""
    index = _numba_index(cache_folder, "f_r_wc")
    index.write_bytes(b"\x80\x04 not a pickle")
    run, stderr = _fresh_process(cache_folder, STARVM_JIT_THRESHOLD=str(10**18))
    assert (tuple(run["hops"]), run["table"], run["steps"], run["output"]) == interpreted
    assert run["compiled_calls"] == 0
    assert stderr.count("starvm: warning:") == 1 and "does not load" in stderr, stderr
    assert not index.exists() and not list(cache_folder.glob("star_*.f_r_wc.*.ready"))
    _fresh_process(cache_folder, STARVM_JIT_THRESHOLD="1")       # its worker compiles WC again
    deadline = time.monotonic() + _WAIT_S
    while not list(cache_folder.glob("star_*.f_r_wc.*.ready")) and time.monotonic() < deadline:
        time.sleep(0.5)
    run, stderr = _fresh_process(cache_folder, STARVM_JIT_THRESHOLD=str(10**18))
    assert run["calls"] == run["compiled_calls"] == 1, run["report"]
    assert (tuple(run["hops"]), run["table"], run["steps"], run["output"]) == interpreted
    assert "warning" not in stderr
