"""A routine compiled in one process loads in the next from the disk cache without Numba's
start-up (starvm/jit/cache.py, load_overload: Numba's own cache load first refreshes its
typing and target registries, 0.4 s), and runs exactly as the interpreter runs it: results,
`var` values, steps by kind, output and errors. When the direct load is refused (a switch,
or an internal of Numba that moved and raises), Numba's load takes over with the same
results. Which path ran is read from the runtime (``JitRoutine.loaded_by``, ``cache.LOADS``),
not from a time; the times are bench/bench_compiled.py's (--cache-only).

The CPU tier runs on the NumPy backend and on auto's host side, so these run there (the GPU
tier, cupy, uses CuPy's cache of CUDA modules, not Numba's).
"""
from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

from conftest import subprocess_env, usable

# writes output, returns `var` results (a table in place, an integer), counts each kind of
# step; the second call of FILL fails (column 7 of 6) after writing lines
PROGRAM = """
proc WC(n: integer; var P: table; var hops: integer);
var X: word; V, W: slice; i, j: integer;
begin
  hops := 0;
  for i := 1 to n do
  begin
    X := ROW(i, P);
    W := COL(i, P);
    j := STEP(X);
    while j > 0 do
    begin
      V := COL(j, P); V := V or W; COL(j, P) := V;
      hops := hops + 1;
      j := STEP(X);
    end;
  end;
  writeln('hops ', hops, ' last ', COL(n, P));
end;

proc FILL(n: integer; var P: table);
var i: integer; X: slice;
begin
  for i := 1 to n do
  begin
    X := COL(i, P);
    X(i) := 1;
    COL(i, P) := X;
    writeln(i, ' ', X);
  end;
end;
"""

PROBE = r"""
import io, json, sys
import numpy as np
import starvm
from starvm.jit import cache
source, jit, mode, backend = sys.argv[1:5]
if mode == "refused":
    cache.direct_loads_allowed = False
elif mode == "broken":           # a Numba internal the direct load uses is gone: it raises inside
    def moved(ctx):
        raise AttributeError("moved")
    cache._start_nrt = moved
out = io.StringIO()
m = starvm.Machine(backend=backend, jit=jit, out=out, native=False)
m.load(source, "load.star")
rng = np.random.default_rng(5)
P = m.table(rng.random((6, 6)) < 0.3)
hops = m.call("WC", 6, P, 0)
masked_arrays_imported = "numpy.ma" in sys.modules    # by Numba's typeof of an array (cache.argument_type)
arrayobj_imported = "numba.np.arrayobj" in sys.modules    # for its functions' environments (cache.py)
runs = [{"value": hops, "table": P.to_numpy().astype(int).tolist(), "steps": m.last_call_stats}]
Q = m.table(rows=6, cols=6)
m.call("FILL", 6, Q)
runs.append({"table": Q.to_numpy().astype(int).tolist(), "steps": m.last_call_stats})
try:
    m.call("FILL", 7, Q)
    error = None
except starvm.StarError as e:
    error = str(e)
runs.append({"error": error, "table": Q.to_numpy().astype(int).tolist(), "steps": m.last_call_stats})
routines = {} if m.jit is None else m.jit.routines
print(json.dumps({"runs": runs, "output": out.getvalue(), "loads": cache.LOADS,
                  "loaded_by": {r.display: getattr(r, "loaded_by", None) for r in routines.values()},
                  "registries_refreshed": "numba.np.arraymath" in sys.modules,
                  "masked_arrays_imported": masked_arrays_imported, "arrayobj_imported": arrayobj_imported}))
"""


def probe(cache_dir, jit: str, backend: str, mode: str = "direct") -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, PROGRAM, jit, mode, backend], capture_output=True, text=True,
                         timeout=600, env=subprocess_env(STARVM_JIT_CACHE=str(cache_dir)))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=["numpy", "auto"])
def warm_cache(request, tmp_path_factory):
    """(backend, cache folder, the interpreter's run): the folder holds the routines
    compiled by a first process."""
    usable(request.param)
    folder = tmp_path_factory.mktemp(f"cache_{request.param}")
    first = probe(folder, "on", request.param)
    assert first["loads"]["numba"] >= 2, first        # compiled there: WC and FILL
    return request.param, folder, probe(folder, "off", request.param)


def same_as_interpreter(run: dict, interpreted: dict) -> None:
    assert run["runs"] == interpreted["runs"]
    assert run["output"] == interpreted["output"]


def test_the_interpreter_run_is_what_the_routines_should_do(warm_cache):
    _backend, _folder, interpreted = warm_cache
    wc, fill, failing = interpreted["runs"]
    assert wc["value"][0] > 0 and wc["steps"]["STEP"] > 6
    assert failing["error"] and "column index 7" in failing["error"], failing
    assert interpreted["output"].count("\n") == 1 + 6 + 6        # the failing call's lines are printed


def test_a_second_process_loads_the_routines_directly(warm_cache):
    backend, folder, interpreted = warm_cache
    run = probe(folder, "on", backend)
    same_as_interpreter(run, interpreted)
    assert run["loads"]["numba"] == 0 and run["loads"]["direct"] >= 2, run["loads"]
    assert not run["registries_refreshed"]          # Numba's start-up never ran
    if backend == "numpy":
        assert run["loaded_by"] == {"WC": "direct", "FILL": "direct"}
        assert not run["masked_arrays_imported"]
        assert not run["arrayobj_imported"]


@pytest.mark.parametrize("mode", ["refused", "broken"])
def test_numba_loads_them_when_the_direct_load_is_refused(warm_cache, mode):
    backend, folder, interpreted = warm_cache
    run = probe(folder, "on", backend, mode)
    same_as_interpreter(run, interpreted)
    assert run["loads"]["direct"] == 0 and run["loads"]["numba"] >= 2, run["loads"]
    assert run["registries_refreshed"]
    if backend == "numpy":
        assert run["loaded_by"] == {"WC": "numba", "FILL": "numba"}


def test_a_stale_or_corrupt_runtime_module_is_compiled_again(warm_cache):
    """The NRT module's machine code (cache.py _start_nrt): a file of another stamp or of no
    pickle at all is compiled again and rewritten; the routines still load directly."""
    backend, folder, interpreted = warm_cache
    saved = list(folder.glob("nrt_*.pickle"))
    assert len(saved) == 1
    stale = pickle.dumps(("another Numba", pickle.loads(saved[0].read_bytes())[1]))
    for bad in (b"not a pickle", stale):
        saved[0].write_bytes(bad)
        run = probe(folder, "on", backend)
        same_as_interpreter(run, interpreted)
        assert run["loads"]["numba"] == 0, run["loads"]
        assert saved[0].read_bytes() != bad


def test_argument_types_are_numbas():
    """cache.argument_type gives Numba's typeof for the arguments compiled code takes (plain
    arrays of any layout and writability, in tuples with integers and booleans) and leaves
    everything else to Numba."""
    import numba
    import numpy as np
    from starvm.jit.cache import argument_type
    frozen = np.zeros((3, 4), np.uint64)
    frozen.flags.writeable = False
    values = [np.zeros(5, np.uint64), np.zeros((3, 4), np.uint64), np.zeros((3, 4), np.uint64)[:, ::2],
              np.asfortranarray(np.zeros((3, 4), np.int64)), frozen, np.zeros(0, np.int64), np.zeros(3, np.bool_),
              (np.zeros(2, np.uint64), 70), (np.zeros((2, 2), np.uint64), -(1 << 40)), (np.zeros(1, np.uint64), True),
              ((np.zeros(1, np.uint64), 3), np.zeros(2, np.int64))]
    for v in values:
        assert argument_type(v) == numba.typeof(v), v
    for other in (3, True, "text", [1, 2], np.ma.zeros(3), (np.ma.zeros(3), 1), (1 << 70, np.zeros(1)), None):
        assert argument_type(other) is None, other


def test_a_corrupt_routine_entry_is_compiled_again(warm_cache, tmp_path):
    """A routine's machine code that does not unpickle (a truncated file): Numba compiles the
    routine again and writes it over the entry, so the next process loads it directly."""
    import shutil
    backend, folder, interpreted = warm_cache
    copy = tmp_path / "cache"
    shutil.copytree(folder, copy)
    entries = list(copy.glob("__pycache__/star_*.f_r_wc-*.nbc"))
    assert entries
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:100])
    run = probe(copy, "on", backend)
    same_as_interpreter(run, interpreted)
    assert run["loads"]["numba"] == 1, run["loads"]           # WC compiled, FILL loaded directly
    if backend == "numpy":
        assert run["loaded_by"] == {"WC": "numba", "FILL": "direct"}
    again = probe(copy, "on", backend)
    same_as_interpreter(again, interpreted)
    assert again["loads"]["numba"] == 0, again["loads"]


# a routine no process compiled before: allocates slices (np.empty's overload, whose cached
# copies the direct load linked without importing numba.np.arrayobj), writes them, fails
FRESH = """
proc SPREAD(n: integer; var P: table);
var i: integer; X, Y: slice;
begin
  for i := 1 to n do
  begin
    X := COL(i, P);
    Y := X or COL(1, P);
    X(i) := 1;
    COL(i, P) := X or Y;
    writeln(i, ' ', COL(i, P));
  end;
end;
"""

AFTER_A_DIRECT_LOAD = r"""
import io, json, sys
import starvm
from starvm.jit import cache
program, fresh, backend = sys.argv[1:4]
runs = []
for jit in ("on", "off"):
    out = io.StringIO()
    m = starvm.Machine(backend=backend, jit=jit, out=out, native=False)
    m.load(program, "load.star")
    m.call("WC", 4, m.table(rows=4, cols=4), 0)       # loaded directly (jit on)
    m.load(fresh, "fresh.star")
    P = m.table(rows=6, cols=6)
    steps = []
    for n in (6, 7):
        try:
            m.call("SPREAD", n, P)
            error = None
        except starvm.StarError as e:
            error = str(e)
        steps.append((m.last_call_stats, error))
    runs.append({"table": P.to_numpy().astype(int).tolist(), "steps": steps, "output": out.getvalue(),
                 "loads": dict(cache.LOADS)})
print(json.dumps(runs))
"""


def test_a_routine_compiled_after_a_direct_load_runs_as_interpreted(warm_cache):
    """Numba's compiler starts (its registries refreshed, numba.np.arrayobj imported) after a
    direct load put Numba's array functions' environments in place without that module."""
    backend, folder, _interpreted = warm_cache
    out = subprocess.run([sys.executable, "-c", AFTER_A_DIRECT_LOAD, PROGRAM, FRESH, backend], capture_output=True,
                         text=True, timeout=600, env=subprocess_env(STARVM_JIT_CACHE=str(folder)))
    assert out.returncode == 0, out.stderr[-3000:]
    on, off = json.loads(out.stdout.strip().splitlines()[-1])
    assert on["loads"]["direct"] >= 1 and on["loads"]["numba"] >= 1, on["loads"]
    assert {k: v for k, v in on.items() if k != "loads"} == {k: v for k, v in off.items() if k != "loads"}
    assert "column index 7 out of range" in on["steps"][1][1]
