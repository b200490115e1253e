"""`star run --profile`'s per-routine table: calls, self/total steps and time per routine."""
from __future__ import annotations

import subprocess
import sys

import pytest

import starvm

PROGRAM = """
proc INNER(var X: slice);                    { 2 steps: not, and }
begin
  X := not X and X
end;
proc OUTER(var X: slice; n: integer);        { SET, then INNER n times }
var i: integer;
begin
  SET(X);
  for i := 1 to n do INNER(X)
end;
function COUNT(n: integer): integer;          { recursive, one NUMB per call }
var Y: slice;
begin
  Y := BITS('101');
  if n = 0 then COUNT := NUMB(Y) else COUNT := COUNT(n - 1) + NUMB(Y)
end;
var X: slice; k: integer;
begin
  X := BITS('0110');
  OUTER(X, 3);
  OUTER(X, 2);
  k := COUNT(4);
  writeln(k)
end.
"""


def profiled(backend: str, jit: str = "off") -> starvm.Machine:
    m = starvm.Machine(backend=backend, jit=jit, out=None)
    m.profile = True
    m.run(PROGRAM, "prof.star")
    return m


def test_calls_and_steps_per_routine(backend):
    m = profiled(backend)
    r = {s.display: s for s in m.routine_profile.routines.values()}
    assert (r["OUTER"].calls, r["INNER"].calls, r["COUNT"].calls) == (2, 5, 5)
    assert (r["INNER"].steps_self, r["INNER"].steps_total) == (10, 10)
    assert (r["OUTER"].steps_self, r["OUTER"].steps_total) == (2, 12)
    # recursion: the total is the outermost call's; every call's own NUMB is self
    assert (r["COUNT"].steps_self, r["COUNT"].steps_total) == (5, 5)
    assert sum(s.steps_self for s in r.values()) == sum(m.counts)   # main block takes no step
    for s in r.values():
        assert 0 <= s.time_self <= s.time_total + 1e-9


def test_report_lists_routines_by_total_steps(backend):
    report = profiled(backend).profile_report()
    lines = report.splitlines()
    start = lines.index(next(x for x in lines if x.startswith("per routine")))
    rows = lines[start + 3:start + 6]
    assert [r.split()[-2] for r in rows] == ["OUTER", "INNER", "COUNT"]
    assert rows[0].split()[:3] == ["2", "2", "12"] and "(prof.star:6)" in rows[0]


def test_no_table_without_profile():
    m = starvm.Machine(backend="numpy", out=None)
    m.run(PROGRAM, "prof.star")
    assert "per routine" not in m.profile_report()


def test_errors_keep_their_star_stack_under_profile():
    m = starvm.Machine(backend="numpy", out=None)
    m.profile = True
    with pytest.raises(starvm.StarError) as info:
        m.run("proc P(var X: slice);\nbegin\n  X(9) := 1\nend;\nvar X: slice;\nbegin\n"
              "  X := BITS('01');\n  P(X)\nend.", "e.star")
    assert [f.routine for f in info.value.stack] == ["main block", "P"]
    assert info.value.line == 3


def test_cli_prints_the_table(tmp_path):
    path = tmp_path / "prof.star"
    path.write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-m", "starvm", "run", "--profile", "--jit", "off", str(path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "10\n"
    assert "per routine" in r.stderr and "OUTER" in r.stderr and "COUNT" in r.stderr


def test_compiled_routines_are_counted_as_a_whole():
    pytest.importorskip("numba")
    # called from Python (with --jit on a main block compiles whole, calls and all)
    m = starvm.Machine(backend="numpy", jit="on", out=None)
    m.profile = True
    m.load(PROGRAM.split("var X: slice; k")[0], "prof.star")
    x = m.slice([False, True, True, False])
    m.call("OUTER", x, 3)
    m.call("OUTER", x, 2)
    r = {s.display: s for s in m.routine_profile.routines.values() if s.calls}
    # OUTER runs compiled with INNER inside it: one row holds both
    assert (r["OUTER"].calls, r["OUTER"].steps_total, r["OUTER"].steps_self) == (2, 12, 12)
    assert "INNER" not in r


def test_profile_off_unwraps_the_routines():
    m = starvm.Machine(backend="numpy", jit="off", out=None)
    m.load(PROGRAM.split("var X: slice; k")[0], "prof.star")
    plain = m.ns[m.env.routines["inner"].pyname]
    m.profile = True
    assert m.ns[m.env.routines["inner"].pyname] is not plain
    m.profile = False
    assert m.ns[m.env.routines["inner"].pyname] is plain


def test_reset_stats_keeps_counting_per_routine(backend):
    # reset_stats() zeroes the table; the routines wrapped before it still report into it
    m = profiled(backend)
    m.reset_stats()
    assert all(s.calls == 0 and s.steps_total == 0 for s in m.routine_profile.routines.values())
    x = m.slice([True, False, True])
    m.call("OUTER", x, 4)
    r = {s.display: s for s in m.routine_profile.routines.values()}
    assert (r["OUTER"].calls, r["INNER"].calls, r["COUNT"].calls) == (1, 4, 0)
    assert r["OUTER"].steps_total == 1 + 2 * 4
    assert "OUTER" in m.profile_report()
