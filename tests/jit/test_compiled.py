"""The compiled tier (starvm/jit) against the interpreter: output, step counts by kind, errors
with their positions and Star call stacks, on the listings, tests/star programs, standard-
library routines under user names and random programs; plus tiering, caching, fallbacks.

Numba compiles each program's module once (seconds) and keeps it in the compiled-code cache
(tests/reference/jit_differential.py), so the programs here are few and each does a lot.
"""
from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import starvm
from starvm.frontend.parser import fold
from reference.jit_differential import compiled_routines, differences, run

from reference.jit_differential import jit_cache  # noqa: E402,F401 - the module's fixture: the compiled-code cache (jit_differential.py)

ROOT = Path(__file__).resolve().parents[2]
# every base operation (base_ops), parameters and globals, parallel for, and errors of each
# kind of check; each program is a module Numba compiles (seconds), so not every file is here
STAR_FILES = ["base_ops", "params", "globals", "parallel_forall", "divmod", "err_length_mismatch",
              "err_unassigned", "err_rep_length", "err_trim_range", "err_bit_value", "err_mod_zero"]


@pytest.mark.parametrize("name", STAR_FILES)
def test_star_programs_compiled_equal_interpreted(name):
    path = ROOT / "tests" / "star" / f"{name}.star"
    src = path.read_text()
    assert differences(src, str(path)) == []
    assert compiled_routines(run(src, str(path), "on")[3]), "nothing ran compiled"


@pytest.mark.parametrize("name", ["warshall", "warshall_c"])
def test_listings_compiled_equal_interpreted(name):
    path = ROOT / "programs" / f"{name}.star"
    src = path.read_text()
    assert differences(src, str(path), native=False) == []
    m = run(src, str(path), "on", native=False)[3]
    assert compiled_routines(m)


# ------------------------------------------------------------------ standard library bodies under user names
def _renamed(text: str) -> tuple[str, dict[str, str]]:
    names = re.findall(r"(?im)^\s*(?:proc|procedure|function)\s+([A-Za-z_][\w-]*)", text)
    mapping = {n: f"U_{n.replace('-', '_')}" for n in names}
    for old, new in mapping.items():
        text = re.sub(rf"(?i)\b{re.escape(old)}\b(?![-\w])", new, text)
    return text, mapping


def _random_args(m, info, rng, n, k):
    """Arguments by parameter type: tables n x k (or k x k where a word must fit), slices of
    n bits, words of k bits, small integers (sometimes out of range, to reach the errors)."""
    from starvm.types import T
    args = []
    for p in info.params:
        if p.type is T.TABLE:
            args.append(m.table(rng.random((n, k)) < 0.5))
        elif p.type is T.SLICE:
            args.append(m.slice(rng.random(n) < 0.5))
        elif p.type is T.WORD:
            args.append(m.word(rng.random(k) < 0.5))
        elif p.type is T.BOOL:
            args.append(bool(rng.integers(2)))
        else:
            args.append(int(rng.integers(-1, k + 2)))
    return args


def _call_both(text, filename, mapping, seed):
    results = {}
    for jit in ("off", "on"):
        rng = np.random.default_rng(seed)
        m = starvm.Machine(jit=jit, native=False)
        m.load(text, filename)
        got = []
        for old, new in mapping.items():
            info = m.env.routines[fold(new)]
            for n, k in ((1, 1), (63, 8), (64, 16), (130, 33)):
                args = _random_args(m, info, rng, n, k)
                try:
                    r = m.call(new, *args)
                    err = None
                except starvm.StarError as e:
                    r, err = None, e.render()
                state = [a.to_numpy().tolist() if hasattr(a, "to_numpy") else a for a in args]
                got.append((new, n, k, repr(r) if not hasattr(r, "to_numpy") else r.to_numpy().tolist(),
                            state, err, m.last_call_stats))
        results[jit] = (got, m)
    return results


# a few routines of each file (each one called is a Numba compile), every kind of loop among them
@pytest.mark.parametrize("library, names", [("search.star", ["MATCH", "LESS", "MIN", "SETMIN"]),
                                            ("arith.star", ["ADDV", "ADDT", "WCOPY"])])
def test_stdlib_bodies_under_user_names(library, names):
    text, mapping = _renamed((ROOT / "stdlib" / library).read_text())
    mapping = {old: new for old, new in mapping.items() if old.upper() in names}
    results = _call_both(text, f"user_{library}", mapping, seed=7)
    off, on = results["off"][0], results["on"][0]
    assert len(off) == len(on)
    for a, b in zip(off, on):
        assert a == b, f"{a[0]} n={a[1]} k={a[2]}"
    assert compiled_routines(results["on"][1])


# ------------------------------------------------------------------ errors, limits, fallbacks
NESTED_ERROR = """
proc inner(var P: table; i: integer);
var V: slice(P);
begin
  V := COL(i, P);
  COL(i + 1, P) := V;
end;
proc outer(var P: table);
var j: integer;
begin
  for j := 1 to NCOLS(P) do inner(P, j);
end;
var T: table(5, 3);
begin
  writeln('before');
  outer(T);
end.
"""


def test_runtime_error_inside_compiled_callee_has_the_same_position_and_call_stack():
    assert differences(NESTED_ERROR, "nested.star") == []
    out, counts, err, m = run(NESTED_ERROR, "nested.star", "on")
    assert compiled_routines(m) == ["main block"]   # calling outer and inner compiled
    assert "nested.star:6:3: error: column index 4 out of range 1..3" in err
    assert "main block at nested.star:16:3" in err
    assert "outer at nested.star:11:29" in err and "inner at nested.star:6:3" in err
    assert out == "before\n"


def test_step_limit_holds_inside_compiled_code():
    src = (ROOT / "tests" / "star" / "warshall_listings.star").read_text()
    for limit in (5, 20, 60, 200):
        assert differences(src, "w.star", max_steps=limit) == []
    _, _, err, m = run(src, "w.star", "on", max_steps=20)
    assert "step limit reached: more than 20" in err and compiled_routines(m)


OVERFLOW = """
var f, i: integer;
begin
  f := 1;
  for i := 1 to 30 do f := f * i;
  writeln(f);
end.
"""


def test_integers_past_64_bits_neither_wrap_nor_stop():
    """The compiled main block stops where f passes 64 bits and runs again interpreted
    (call.JitRoutine.restart): the exact factorial, the interpreter's steps."""
    off = run(OVERFLOW, "big.star", "off")
    assert off[0] == f"{__import__('math').factorial(30)}\n" and off[2] is None
    on = run(OVERFLOW, "big.star", "on")
    assert on[:3] == off[:3]
    assert on[3].jit.routines["main_"].restarts == 1


def test_recursive_routines_compile_and_compute_integers_past_64_bits():
    src = (ROOT / "tests" / "star" / "recursion.star").read_text()
    # everything compiles, iseven and isodd (mutually recursive) too; the call of fact whose
    # integers pass 64 bits runs again interpreted and prints the interpreter's value
    off = run(src, "rec.star", "off")
    out, counts, err, m = run(src, "rec.star", "on")
    assert (out, counts, err) == off[:3]
    m.profile = True
    report = m.profile_report()
    assert "main block (with " in report and "fact" in report and "iseven" in report and "isodd" in report
    assert "interpreted" not in report


UNCOMPILABLE = """
function huge(x: integer): integer;
begin huge := x * 100000000000000000000000 end;
proc uses(var s: integer);
var i: integer;
begin for i := 1 to 3 do s := s + huge(i) end;
var s: integer;
begin s := 0; uses(s); writeln(s) end.
"""


def test_routines_it_cannot_compile_fall_back_and_say_why():
    assert differences(UNCOMPILABLE, "big.star") == []
    out, _, err, m = run(UNCOMPILABLE, "big.star", "on")
    assert out == "600000000000000000000000\n" and err is None and compiled_routines(m) == []
    m.profile = True
    report = m.profile_report()
    assert "huge: interpreted: uses what the compiled tier does not compile: the integer " \
           "100000000000000000000000 does not fit 64 bits (at big.star:3:19)" in report
    assert "uses: interpreted: calls 'huge', which is not compiled" in report
    assert "main block: interpreted: calls 'uses', which is not compiled" in report


def test_auto_backend_runs_host_calls_compiled_and_device_calls_interpreted_without_a_gpu():
    """On auto the CPU tier takes calls whose tables are on the host; a table on the
    (emulated) device keeps the call interpreted, with the reason (tests/jit/test_auto_tier.py)."""
    from starvm.backends.auto_backend import AutoBackend
    from starvm.backends import get_backend
    from starvm.backends.emulated_device import EmulatedDevice
    text = NESTED_ERROR.replace("outer(T);", "").replace("writeln('before');", "writeln(NCOLS(T));")
    for rows, compiled in ((5, True), (70, False)):
        backend = AutoBackend(get_backend("numpy"), EmulatedDevice(), gpu_rows=64, gpu_bits=4096)
        m = starvm.Machine(backend=backend, jit="on", out=io.StringIO())
        m.run(text.replace("table(5, 3)", f"table({rows}, 3)"), "a.star")
        m.profile = True
        report = m.profile_report()
        assert m.jit.routines["main_"].compiled_calls == int(compiled), report
        assert ("on the CPU tier (Numba)" if compiled else "its tables are on the device") in report, report


def test_auto_compiles_only_routines_with_enough_work(monkeypatch):
    src = (ROOT / "tests" / "star" / "warshall_listings.star").read_text()
    m = run(src, "w.star", "auto")[3]
    assert compiled_routines(m) == []
    assert any("too little work" in r.why for r in m.jit.routines.values())
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "10")
    m = run(src, "w.star", "auto")[3]
    # the main block (a loop) calls the three listings, WARSHALL-adapt's parallel for included:
    # all of it compiled as one routine
    assert compiled_routines(m) == ["main block"]
    assert m.jit.routines["main_"].compiled_calls == 1


def test_compiled_code_is_loaded_from_the_disk_cache(tmp_path, monkeypatch):
    """A fresh process loads the compiled routine from the cache instead of compiling it.
    This process compiles it first (into an empty cache: a miss), so one fresh process is started."""
    src = "proc twice(var P: table); var i: integer; begin for i := 1 to 2 do COL(1, P) := COL(2, P) end;"
    probe = ("import starvm, sys; m = starvm.Machine(jit='on'); m.load(sys.argv[1], 'c.star'); "
             "P = m.table(rows=3, cols=2); m.call('twice', P); d = m.jit.routines['r_twice'].dispatcher; "
             "print(sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))")
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path))
    m = starvm.Machine(jit="on")
    m.load(src, "c.star")
    m.call("twice", m.table(rows=3, cols=2))
    first = m.jit.routines["r_twice"].dispatcher.stats
    assert sum(first.cache_hits.values()) == 0 and sum(first.cache_misses.values()) > 0
    second = subprocess.run([sys.executable, "-c", probe, src], capture_output=True, text=True, check=True, timeout=300)
    assert second.stdout.split()[0] == "1", (second.stdout, second.stderr)
    assert len(list(tmp_path.glob("star_*.py"))) == 1


# ------------------------------------------------------------------ random programs (tests/reference/gen.py)
@pytest.mark.parametrize("seed", range(4))
def test_random_programs_compiled_equal_the_model(seed):
    from reference.gen import RandomSource
    from reference.harness import differential
    random.seed(seed)
    _src, problems = differential(RandomSource(10_000 + seed), ("numpy", "jit"))
    assert problems == []


def test_cli_jit_flag_and_profile_report():
    path = ROOT / "programs" / "warshall_c.star"
    res = subprocess.run([sys.executable, "-m", "starvm", "run", str(path), "--jit", "on", "--profile"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "compiled tier (Numba, --jit on)" in res.stderr
    # the main block compiles with the routine it calls (and graph input through the host)
    assert re.search(r"main block \(with [^)]*WARSHALL-C[^)]*\): compiled", res.stderr), res.stderr
    assert "interpreted:" not in res.stderr


ADAPT = """
proc MY_ADAPT(n: integer; var P: table);
var V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin
      W := COL(k, P);
      V := COL(i, P);
      if V(k) = 1 then V := V or W;
      COL(i, P) := V;
    end;
end;
"""


TWO_TABLES = """
proc MY_TWO(n: integer; var P, Q: table);
var V: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin
      V := COL(i, P);
      if V(k) = 1 then V := V or COL(k, P);
      COL(i, P) := V;
      COL(i, Q) := not V;
    end;
end;
"""


def test_auto_compiles_parallel_for_over_columns_and_leaves_two_tables_to_the_fused_interpreter(monkeypatch):
    """A loop writing COL(i, T) runs compiled without a copy of T (faster than the fused
    whole-array form); one writing two tables would run against copies: auto leaves it fused."""
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "10")
    adj = np.random.default_rng(3).random((70, 70)) < 0.05
    got = {}
    for jit in ("auto", "off"):
        m = starvm.Machine(jit=jit)
        m.load(ADAPT + TWO_TABLES, "adapt.star")
        P, Q, R = m.table(adj), m.table(adj), m.table(rows=70, cols=70)
        m.call("MY_ADAPT", 70, P)
        stats = m.last_call_stats
        m.call("MY_TWO", 70, Q, R)
        got[jit] = (P.to_numpy().tolist(), Q.to_numpy().tolist(), R.to_numpy().tolist(), stats, m.last_call_stats)
        if jit == "auto":
            assert compiled_routines(m) == ["MY_ADAPT"]
            m.profile = True
            assert "MY_TWO: interpreted: its parallel for (writing rows or two tables) runs fused" in m.profile_report()
    assert got["auto"] == got["off"]
    mo = starvm.Machine(jit="on")
    mo.load(TWO_TABLES, "adapt.star")
    Q, R = mo.table(adj), mo.table(rows=70, cols=70)
    mo.call("MY_TWO", 70, Q, R)
    assert compiled_routines(mo) == ["MY_TWO"]
    assert (Q.to_numpy().tolist(), R.to_numpy().tolist(), mo.last_call_stats) == got["off"][1:3] + (got["off"][4],)


def test_an_invalid_jit_setting_is_a_usage_error():
    env = {**__import__("os").environ, "STARVM_JIT": "fast"}
    res = subprocess.run([sys.executable, "-m", "starvm", "run", str(ROOT / "programs" / "warshall_c.star")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 2
    assert res.stderr.strip() == "star: error: STARVM_JIT must be auto, on or off, not 'fast'"
    with pytest.raises(ValueError, match="jit=... must be auto, on or off, not 'fast'"):
        starvm.Machine(jit="fast")
