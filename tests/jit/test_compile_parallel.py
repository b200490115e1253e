"""A foreground compile spread over processes (starvm/jit/compile_parallel.py): the callees a
routine's typing meets are typed here and compiled by a helper process, their cells filled
from Numba's cache before the routine runs; what no helper compiled is compiled here; a
callee compiled returning another type than its callers were typed with fails the compile
(the routine runs interpreted). Results, output and steps are the interpreter's each way.

One small program (TOP -> MID -> LEAF, LEAF recursive), a variant per test (a module of its
own), each in a cache folder of its own."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm.jit import cache, compile_parallel

PROGRAM = """
proc LEAF(k: integer; var X: slice; var P: table);
begin
  if k > 0 then begin X := X or COL(k, P); LEAF(k - 1, X, P) end
end;

function MID(var P: table; n: integer): integer;
var i, s: integer; V: slice;
begin
  s := {variant}; V := COL(1, P);
  for i := 1 to n do begin LEAF(2, V, P); s := s + NUMB(V); writeln('mid ', i, ' ', s) end;
  MID := s
end;

proc TOP(var P: table; n: integer; var r: integer);
var i: integer;
begin
  for i := 1 to n do r := r + MID(P, i)
end;
"""


def _run(jit: str, variant: int, cache_folder=None, monkeypatch=None):
    if cache_folder is not None:
        monkeypatch.setenv("STARVM_JIT_CACHE", str(cache_folder))
        monkeypatch.setenv("STARVM_JIT_BACKGROUND", "0")
    out = io.StringIO()
    m = starvm.Machine(backend="numpy", jit=jit, out=out, native=False)
    m.load(PROGRAM.replace("{variant}", str(variant)), "parallel.star")
    P = m.table(np.random.default_rng(variant).random((70, 3)) < 0.4)
    r = m.call("TOP", P, 3, 0)
    routines = {r.display: r for r in m.jit.routines.values()} if m.jit else {}
    return (r, P.to_numpy().astype(int).tolist(), m.last_call_stats, out.getvalue()), routines


@pytest.fixture
def one_helper(monkeypatch):
    monkeypatch.setattr(compile_parallel, "helpers", 1)


def test_a_helper_compiles_the_callees_and_the_routine_runs_as_interpreted(one_helper, monkeypatch, tmp_path):
    monkeypatch.setattr(compile_parallel, "drains", False)     # every callee the helper's
    compiled, routines = _run("on", 1, tmp_path, monkeypatch)
    assert compiled == _run("off", 1)[0]
    assert routines["TOP"].state == "compiled"
    ready = {p.name.split(".")[1] for p in tmp_path.glob("star_*.ready")}
    # left by the helper: on an idle host both callees (f_r_mid, f_r_leaf); a callee whose job
    # the helper has not taken when the routine needs it this process compiles (linking fills
    # the cell), which on a loaded host (CI's suite on 2 cores) may be every one
    assert ready <= {"f_r_mid", "f_r_leaf"}, ready


def test_without_a_helper_this_process_compiles_them(one_helper, monkeypatch, tmp_path):
    monkeypatch.setattr(compile_parallel.Farm, "_start", lambda self: None)
    compiled, routines = _run("on", 2, tmp_path, monkeypatch)
    assert compiled == _run("off", 2)[0]
    assert routines["TOP"].state == "compiled"
    assert not list(tmp_path.glob("star_*.ready"))


def test_a_callee_compiled_to_another_type_than_typed_fails_the_compile(one_helper, monkeypatch, tmp_path):
    from numba.core import types
    monkeypatch.setattr(compile_parallel.Farm, "_start", lambda self: None)
    typed = compile_parallel._typed_return

    def any_layout(t):        # a type callers still type with (an array of layout "A"), not the one compiled
        if isinstance(t, types.Array):
            return t.copy(layout="A")
        return types.BaseTuple.from_types([any_layout(x) for x in t.types]) if isinstance(t, types.BaseTuple) else t
    monkeypatch.setattr(compile_parallel, "_typed_return", lambda dispatcher, argtypes: any_layout(typed(dispatcher, argtypes)))
    compiled, routines = _run("on", 3, tmp_path, monkeypatch)
    assert compiled == _run("off", 3)[0]
    assert routines["TOP"].state == "failed"
    assert "typed returning" in routines["TOP"].why


def test_helpers_start_only_on_idle_cores_and_for_the_plain_cpu_tier(monkeypatch, tmp_path):
    monkeypatch.setattr(compile_parallel, "usable_cores", lambda: 4)
    monkeypatch.setattr(compile_parallel.os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert compile_parallel.idle_cores() == 3
    monkeypatch.setattr(compile_parallel.os, "getloadavg", lambda: (2.6, 0.0, 0.0))
    assert compile_parallel.idle_cores() == 0
    monkeypatch.setattr(compile_parallel.os, "getloadavg", lambda: (1.4, 0.0, 0.0))
    assert compile_parallel.idle_cores() == 2
    module = type("Module", (), {"__file__": str(tmp_path / "star_x.py")})
    monkeypatch.setattr(compile_parallel, "helpers", 1)
    with compile_parallel.farm_for(module, "mpi:numpy|libmpi", cache) as farm:
        assert farm is None
    with compile_parallel.farm_for(module, "numpy", cache) as farm:
        assert farm is compile_parallel.current() and farm.procs == []     # none started before a second callee
    assert compile_parallel.current() is None
