"""`star compile` (starvm/ui/precompile.py): a program's routines compiled ahead into the disk
cache, which a later run on --jit auto loads at the routines' first calls; concurrent
compiles share the cache; exit codes 0 / 1 (Star error) / 2 (usage, I/O).

One routine, one compiled module for the file (a Numba compile costs seconds).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import subprocess_env

# every kind of argument a compiled call takes: a table, a slice (unassigned at the call), an
# integer, a boolean; no library routine
PROGRAM = """var T: table(70, 3); X: slice(T);
proc FILLS(var P: table; var X: slice; k: integer; b: boolean);
var i: integer;
begin
  for i := 1 to k do
  begin X(i) := 1; COL(1, P) := X end;
  if b then COL(2, P) := X
end;
begin
  FILLS(T, X, 5, true);
  writeln(NUMB(COL(2, T)), ' ', NUMB(COL(1, T)))
end.
"""


def star(*args, cache, **env):
    return subprocess.run([sys.executable, "-m", "starvm", *args], capture_output=True, text=True, timeout=600,
                          env=subprocess_env(STARVM_JIT_CACHE=str(cache), STARVM_JIT_BACKGROUND="1", **env))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Two `star compile`s of the program at once into an empty cache: (folder, program, both)."""
    folder = tmp_path_factory.mktemp("compile_cli")
    program = folder / "fills.star"
    program.write_text(PROGRAM)
    cache = folder / "jit"
    env = subprocess_env(STARVM_JIT_CACHE=str(cache))
    procs = []
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "starvm", "compile", str(program)],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
        done = [(p.wait(timeout=600), p.stdout.read(), p.stderr.read()) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return cache, program, done


def test_concurrent_compiles_share_the_cache(compiled):
    _cache, _program, done = compiled
    for code, out, err in done:
        assert code == 0, err
        assert "1/1" in err and "FILLS" in err          # the progress: one routine
    summaries = sorted(out.splitlines()[0] for _c, out, _e in done)
    assert summaries[0].startswith("0 routine(s) compiled, 1 already in the cache"), summaries
    assert summaries[1].startswith("1 routine(s) compiled, 0 already in the cache"), summaries


def test_a_run_after_it_runs_the_routine_from_the_cache_at_its_first_call(compiled):
    cache, program, _done = compiled
    run = star("run", str(program), "--profile", cache=cache, STARVM_JIT_THRESHOLD=str(10**18))
    off = star("run", str(program), "--jit", "off", cache=cache)
    assert run.returncode == 0 and off.returncode == 0, run.stderr
    assert run.stdout == off.stdout == "5 5\n"
    assert "FILLS: compiled; from the disk cache at its first call; 1 call(s)" in run.stderr, run.stderr


def test_compiling_again_finds_it_in_the_cache(compiled):
    cache, program, _done = compiled
    again = star("compile", str(program), cache=cache)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("0 routine(s) compiled, 1 already in the cache")


@pytest.mark.parametrize("args, code, message", [
    ((), 2, "needs a .star file or --stdlib"),
    (("missing.star",), 2, "cannot read missing.star"),
    (("--jobs", "0", "x.star"), 2, "--jobs must be at least 1"),
    (("bad.star",), 1, "bad.star:2:"),
])
def test_errors_and_exit_codes(tmp_path, args, code, message):
    (tmp_path / "bad.star").write_text("begin\n  x := ;\nend.\n")
    (tmp_path / "x.star").write_text("begin end.\n")
    done = subprocess.run([sys.executable, "-m", "starvm", "compile", *args], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=subprocess_env(STARVM_JIT_CACHE=str(tmp_path / "jit")))
    assert done.returncode == code, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_program_without_compiled_routines_has_nothing_to_compile(tmp_path):
    (tmp_path / "x.star").write_text("var i: integer;\nbegin\n  i := 1;\n  writeln(i)\nend.\n")
    done = subprocess.run([sys.executable, "-m", "starvm", "compile", "x.star"], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=subprocess_env(STARVM_JIT_CACHE=str(tmp_path / "jit")))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("nothing to compile")


def test_stdlib_takes_every_library_file_as_a_python_call_loads_it(tmp_path, monkeypatch):
    """`star compile --stdlib` compiles each library file's routines as the unit a Python call
    of one of them loads (Machine.call of a library routine: the file on its own), so such a
    call finds its compiled code in the cache. (It compiled nothing before: a machine with no
    program loaded holds no routine.) Here the jobs and their cache entries, not the compile."""
    from starvm.frontend.parser import fold
    from starvm.jit import cache
    from starvm.runtime.machine import Machine
    from starvm.ui.precompile import jobs_of, loaded
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path / "jit"))
    jobs = [(r, spec) for m, body, every in loaded(["--stdlib"], None) for r, spec in jobs_of(m, body, every)]
    names = {r.display for r, spec in jobs if spec is not None}
    assert {"MIN", "MATCH", "WARSHALL-C", "WARSHALL-adapt", "BFS", "DIJKSTRA", "PRIM", "KRUSKAL", "BORUVKA",
            "COMPACT", "ADDV"} <= names and len(names) >= 30, sorted(names)
    entries = {cache.write_entry(r.unit.lowered.source, r.unit.backend_name) for r, spec in jobs if spec is not None}
    for name in ("MIN", "BFS"):
        m = Machine(backend="numpy", jit="auto")
        m._library_routine(fold(name))
        routine = next(r for r in m.jit.routines.values() if r.display == name)
        assert cache.write_entry(routine.unit.lowered.source, routine.unit.backend_name) in entries, name
