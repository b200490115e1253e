"""What compiling a routine costs beyond the routine itself (issue 10: compile <= 1 s cold).

A fresh process (empty module cache, the kernels already in Numba's cache) compiles each
routine and nothing else: no Numba overload compiled again per process (np.zeros/np.empty/
.copy() in generated code or in an inline kernel did: 0.2-0.9 s, kernels.new_words etc.),
and Numba's start-up does not import scipy.linalg (its BLAS probe: 0.4 s,
kernels._without_blas_probe) while np.dot still compiles. The CPU tier runs on the NumPy
backend only, so these run there.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import subprocess_env

# loops with a STEP hint (zero_ints), a parallel for writing a column (new_words2,
# zero_flags, new_words), a fused COL read into an unassigned slice (copy_words), `or`
# into a new slice (logic_asg's new_words) and its counter (LOGIC_COUNTERS)
PROGRAM = """
proc WC(n: integer; var P: table);
var X: word; V, W: slice; i, j: integer;
begin
  for i := 1 to n do
  begin
    X := ROW(i, P);
    W := COL(i, P);
    j := STEP(X);
    while j > 0 do
    begin
      V := COL(j, P); V := V or W; COL(j, P) := V;
      j := STEP(X);
    end;
  end;
end;

proc WA(n: integer; var P: table);
var U, V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin
      V := COL(i, P);
      U := COL(k, P);
      if V(k) = 1 then V := V or U;
      COL(i, P) := V;
    end;
  W := COL(1, P);
  V := W or W;
end;
"""

PROBE = r"""
import json, sys
import numpy as np
import starvm
from numba.core import event
from numba.core.inline_closurecall import InlineWorker
had_scipy = "scipy.linalg" in sys.modules
inlined = []            # Numba's inline="always" at work: the kernels it copied into a routine
numba_inline = InlineWorker.inline_function
def recorded(self, caller_ir, block, i, function, *args, **kw):
    inlined.append(function.__name__)
    return numba_inline(self, caller_ir, block, i, function, *args, **kw)
InlineWorker.inline_function = recorded
m = starvm.Machine(backend="numpy", jit="on")
m.load(sys.argv[1], "cost.star")
compiled, numba_inlined, llvm = [], {}, {}
for name in ("WC", "WA"):
    inlined.clear()
    with event.install_recorder("numba:compile") as rec:
        m.call(name, 5, m.table(rows=5, cols=5))
    compiled += [ev.data["dispatcher"].py_func.__module__ + "." + ev.data["dispatcher"].py_func.__qualname__
                 for ts, ev in rec.buffer if ev.is_start]
    numba_inlined[name] = sorted(inlined)
    module = next(v for k, v in sys.modules.items() if k.startswith("starvm_jit_") and hasattr(v, "f_r_" + name.lower()))
    llvm[name] = "".join(getattr(module, "f_r_" + name.lower()).inspect_llvm().values())
states = {r.display: r.state for r in m.jit.routines.values()}
scipy_after_compile = "scipy.linalg" in sys.modules
import numba
dot = numba.njit(lambda a, b: np.dot(a, b))(np.ones(3), np.arange(3.0))
print(json.dumps({"compiled": compiled, "states": states, "had_scipy": had_scipy,
                  "scipy_after_compile": scipy_after_compile, "dot": float(dot), "numba_inlined": numba_inlined,
                  "slice_assignment_error_path": {k: "unicode_concat" in v for k, v in llvm.items()}}))
"""


def probe(cache_dir) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, PROGRAM], capture_output=True, text=True, timeout=600,
                         env=subprocess_env(STARVM_JIT_CACHE=str(cache_dir)))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def fresh_process(tmp_path_factory) -> dict:
    """The probe in a fresh process with an empty module cache, after a first run that put
    every kernel it calls in Numba's cache (as they are in any process after the first)."""
    probe(tmp_path_factory.mktemp("kernels"))
    return probe(tmp_path_factory.mktemp("cold"))


def test_a_cold_compile_compiles_only_the_routines(fresh_process):
    assert fresh_process["states"] == {"WC": "compiled", "WA": "compiled"}
    modules = {c.rsplit(".", 1)[0] for c in fresh_process["compiled"]}
    # each routine once, from the generated module; nothing of Numba's (an overload) or kernels.py
    assert sorted(c.rsplit(".", 1)[1] for c in fresh_process["compiled"]) == ["f_r_wa", "f_r_wc"]
    assert all(mod.startswith("starvm_jit_") for mod in modules), fresh_process["compiled"]


def test_numba_start_up_leaves_scipy_linalg_alone(fresh_process):
    pytest.importorskip("scipy.linalg")
    assert not fresh_process["had_scipy"]
    assert not fresh_process["scipy_after_compile"]
    assert fresh_process["dot"] == 3.0        # np.dot in Numba still finds BLAS (SciPy's) when compiled


def test_numba_inlines_no_kernel(fresh_process):
    """kernels.py's kernels reach a routine through LLVM (forceinline: no Numba work per call
    site); Numba's inline="always" would copy a kernel's IR into every call site."""
    assert fresh_process["numba_inlined"] == {"WC": [], "WA": []}


def test_routines_link_no_slice_assignment_error_path(fresh_process):
    # NumPy's slice assignment (asg's old[:] = new) brings its broadcasting error message
    # (unicode_concat: about a third of WARSHALL-C's module) into every routine
    assert fresh_process["slice_assignment_error_path"] == {"WC": False, "WA": False}


def test_every_kernel_says_how_it_is_inlined():
    """Numba compiles a kernel first called from a forceinline one with forceinline too (it
    inherits the flag) unless the kernel sets it: each kernel says forceinline."""
    from numba.core.registry import CPUDispatcher
    from starvm.targets.numba import kernels
    mine = [d for d in vars(kernels).values() if isinstance(d, CPUDispatcher) and d.py_func.__module__ == kernels.__name__]
    assert len(mine) > 50
    assert [d.py_func.__name__ for d in mine if "forceinline" not in d.targetoptions] == []


def test_generated_code_borrows_the_counters_and_tables():
    """An inlined kernel increments and decrements the reference count of each array argument
    per call; generated code hands it the step counter, the status array and its tables
    borrowed (no count), mutual recursion's shared function too."""
    import starvm
    m = starvm.Machine(backend="numpy", jit="on")
    m.load(PROGRAM + """
proc RP(n: integer; var P: table); begin if n > 0 then RQ(n - 1, P); end;
proc RQ(n: integer; var P: table); begin if n > 0 then RP(n - 1, P); end;
""", "cost.star")
    source = next(iter(m.jit.routines.values())).unit.lowered.source
    # every function that runs a routine's body: WC, WA and RP and RQ's cycle function (f_r_rp
    # and f_r_rq only call that one)
    functions = [f for f in source.split("@njit")[1:] if "tick(st" in f]
    assert len(functions) == 3
    for f in functions:
        lines = [x.strip() for x in f.splitlines()]
        assert "cnt = borrow(cnt)" in lines and "st = borrow(st)" in lines, f
        header = lines[1]
        # the table parameter: p1 in WC, WA, RP and RQ, m0p1 and m1p1 in the cycle's function
        tables = [p for p in ("p1", "m0p1", "m1p1") if f" {p}," in header or f"({p}," in header]
        assert tables, header
        assert all(f"{p} = (borrow({p}[0]), {p}[1])" in lines for p in tables), f


def test_a_kernel_compiles_once_whatever_constants_it_is_called_with():
    """Numba types a constant argument as a literal and would compile a kernel once per
    combination of constants (fail: 24 times for bfs); kernels are typed with plain types."""
    import numpy as np
    from numba import njit, types
    from starvm.targets.numba import kernels

    @njit
    def two_failures(st, k):
        if k == 1:
            kernels.fail(st, 1, 5, 0, 0, 0, 0)
        kernels.fail(st, 2, 6, k, 0, 0, 0)

    st = np.zeros(40, np.int64)
    with pytest.raises(kernels.JitFault):
        two_failures(st, 1)
    assert st[:2].tolist() == [1, 5]        # S_NODE, S_CODE of the first failure
    assert not [sig for sig in kernels.fail.overloads if any(isinstance(t, types.Literal) for t in sig)]

