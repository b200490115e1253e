"""Calls between generated functions are linked, not copied (jit/linking.py): a
routine's machine code calls its callees' through a pointer cell instead of holding a copy of
each (Numba's linking made a call tree of routines cost the sum of its callees' closures),
and results, output, steps and errors stay the interpreter's; the disk cache loads a caller
in a fresh process, its callees loaded and their cells filled before it runs.

One program (a function two calls deep, a procedure writing output and a table, an error
raised in the deepest callee) compiled in one process, loaded in a second; the source
transform itself is checked without compiling.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import subprocess_env
from starvm.jit import linking

PROGRAM = """
function SQ(x: integer): integer;
begin
  SQ := x * x + 100 div (9 - x)
end;

proc BUMP(i: integer; var P: table; var k: integer);
var V: slice;
begin
  V := COL(i, P);
  V(i) := 1;
  COL(i, P) := V;
  k := k + SQ(i);
  writeln('bump ', i, ' ', k, ' ', NUMB(V));
end;

proc TOP(n: integer; var P: table; var k: integer);
var i: integer;
begin
  k := 0;
  for i := 1 to n do BUMP(i, P, k);
  writeln('top ', k);
end;
"""

PROBE = r"""
import io, json, sys
import numpy as np
import starvm
from starvm.jit import cache
source, jit = sys.argv[1:3]
out = io.StringIO()
m = starvm.Machine(backend="numpy", jit=jit, out=out, native=False)
m.load(source, "linked.star")
runs = []
for n in (5, 9, 11):               # 9: SQ divides by zero at its ninth call, two calls deep
    P = m.table(rows=11, cols=11)
    try:
        k, error = m.call("TOP", n, P, 0), None
    except starvm.StarError as e:
        k, error = None, str(e)
    runs.append({"k": k, "error": error, "table": P.to_numpy().astype(int).tolist(), "steps": m.last_call_stats})
defined = {}
if jit == "on":
    module = next(v for k, v in sys.modules.items() if k.startswith("starvm_jit_") and hasattr(v, "f_r_top"))
    for func in ("f_r_top", "f_r_bump", "f_r_sq"):
        llvm = "".join(getattr(module, func).inspect_llvm().values()) if jit == "on" and cache.LOADS["numba"] else ""
        # the generated functions whose bodies this function's own module defines
        defined[func] = sorted(f for f in ("f_r_top", "f_r_bump", "f_r_sq")
                               if any(line.startswith("define") and f"{len(f)}{f}" in line for line in llvm.splitlines()))
print(json.dumps({"runs": runs, "output": out.getvalue(), "loads": cache.LOADS, "defined": defined,
                  "states": {r.display: r.state for r in (m.jit.routines.values() if jit == "on" else [])}}))
"""


def probe(cache_dir, jit: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, PROGRAM, jit], capture_output=True, text=True, timeout=600,
                         env=subprocess_env(STARVM_JIT_CACHE=str(cache_dir)))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("linked")
    return {"interpreted": probe(folder, "off"), "compiled": probe(folder, "on"), "loaded": probe(folder, "on"),
            "folder": folder}


def test_the_interpreter_run_fails_two_calls_deep(runs):
    first, failing, _third = runs["interpreted"]["runs"]
    assert first["error"] is None and first["k"][0] > 0
    assert "division by zero" in failing["error"] and "SQ" in failing["error"] and "BUMP" in failing["error"]


def test_compiled_callers_equal_the_interpreter(runs):
    assert runs["compiled"]["states"]["TOP"] == "compiled"
    assert runs["compiled"]["runs"] == runs["interpreted"]["runs"]
    assert runs["compiled"]["output"] == runs["interpreted"]["output"]


def test_each_function_holds_only_its_own_code(runs):
    """Numba's linking put BUMP's and SQ's code into TOP's module (and SQ's into BUMP's)."""
    assert runs["compiled"]["defined"] == {"f_r_top": ["f_r_top"], "f_r_bump": ["f_r_bump"], "f_r_sq": ["f_r_sq"]}


def test_a_second_process_loads_callers_and_callees_from_the_cache(runs):
    loaded = runs["loaded"]
    assert loaded["loads"]["numba"] == 0 and loaded["loads"]["direct"] >= 3, loaded["loads"]
    assert loaded["runs"] == runs["interpreted"]["runs"]
    assert loaded["output"] == runs["interpreted"]["output"]


def test_calls_are_rewritten_except_recursion():
    source = ("@njit(cache=True)\ndef f_a(x, cnt):\n    return f_b(x, cnt) + f_a(x - 1, cnt) + kernel_f_b(x)\n\n"
              "@njit(cache=True)\ndef f_b(x, cnt):\n    return o0_f_b(x) + 1\n\n"
              "@njit(cache=True)\ndef o0_f_b(x):\n    return x\n")
    linked = linking.link_source(source)
    lines = linked.splitlines()
    assert "    return L_f_b(x, cnt) + f_a(x - 1, cnt) + kernel_f_b(x)" in lines
    assert "    return L_o0_f_b(x) + 1" in lines
    assert "L_f_b = _starvm_linked(f_b, __name__, 'f_b', 2)" in lines
    assert "L_o0_f_b = _starvm_linked(o0_f_b, __name__, 'o0_f_b', 1)" in lines
    assert "_starvm_calls = {'f_a': ('f_b',), 'f_b': ('o0_f_b',)}" in lines
    # the functions keep their lines (Numba's cache names a function by its first line)
    assert [i for i, x in enumerate(lines) if x.startswith("def ")] == \
        [i for i, x in enumerate(source.splitlines()) if x.startswith("def ")]


def test_linking_off_leaves_the_source_alone(monkeypatch):
    monkeypatch.setattr(linking, "enabled", False)
    source = "@njit(cache=True)\ndef f_a(x):\n    return f_b(x)\n"
    assert linking.link_source(source) == source


def test_the_cells_are_recorded_beside_numbas_index(runs):
    """Where Numba keeps the callers' machine code (its index, .nbi), there and only there are
    the records of the cells it calls through: with the records beside the entry, a cache
    folder emptied while NUMBA_CACHE_DIR kept the machine code ran callers through empty cells
    (a segmentation fault)."""
    import os
    from pathlib import Path
    places = [runs["folder"], *([Path(os.environ["NUMBA_CACHE_DIR"])] if os.environ.get("NUMBA_CACHE_DIR") else [])]
    index = [p for place in places for p in place.rglob("star_*.f_r_top-*.nbi")]
    assert len(index) == 1, index
    records = [p for place in places for p in place.rglob("star_*.link.*")]
    assert records and {p.parent for p in records} == {index[0].parent}, records

