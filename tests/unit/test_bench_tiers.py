"""`star bench` measures one tier (starvm/benchmarking/program.py): warm-up runs go on until the
tier in use stops changing (a routine compiled at a later run, or in the background), each
timed run's tier is reported, and a run of another tier is left out of the figure."""
from __future__ import annotations

import starvm.benchmarking.program as program
from starvm.benchmarking import run

PROGRAM = """var T: table(70, 3); X: slice(T); s: integer;
proc SPREAD(var P: table; k: integer);
var i: integer; V: slice;
begin
  V := COL(1, P);
  for i := 1 to k do begin V(i) := 1; COL(2, P) := V or COL(3, P) end
end;
begin
  SPREAD(T, 60);
  X := COL(2, T);
  s := NUMB(X)
end.
"""


class _Routine:
    def __init__(self, display, state="waiting"):
        self.display, self.state = display, state
        self.calls = self.compiled_calls = 0
        self.background = None


class _Machine:
    def __init__(self, routines):
        self.jit = type("Tier", (), {"routines": routines})()


def test_a_runs_tier_names_what_ran_compiled_and_what_ran_interpreted():
    a, b = _Routine("A"), _Routine("B")
    watch = program.TierWatch(_Machine({"a": a, "b": b}))
    before = watch.snapshot()
    a.calls, b.calls = 2, 1
    assert watch.tier_since(before) == "interpreted"
    before = watch.snapshot()
    a.calls, a.compiled_calls, b.calls = 4, 2, 2
    assert watch.tier_since(before) == "mixed (compiled: A; interpreted: B)"
    before = watch.snapshot()
    a.calls, a.compiled_calls = 5, 3
    assert watch.tier_since(before) == "compiled"
    assert watch.can_change()                    # B still waits: it may compile later
    a.state = b.state = "compiled"
    assert not watch.can_change()


def test_interpreted_runs_need_no_more_warmups():
    report = run(PROGRAM, backends=["numpy"], jit=[False], repeat=3, warmup=1)
    (m,) = report.measurements
    assert (m.tier, m.warmups, m.tiers, m.left_out_s, m.settled) == ("interpreted", 1, ["interpreted"] * 3, [], True)
    assert "tier: interpreted (1 warm-up(s))" in report.text()


def test_warmups_go_on_until_the_routine_switched(monkeypatch, tmp_path):
    """On --jit auto a routine compiled at its second call (foreground compile, threshold just
    above one run's work): the first warm-up interpreted, then compiled; warm-ups stop after
    two runs of one tier; every timed run is compiled."""
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("STARVM_JIT_BACKGROUND", "0")
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", str(10**18))
    probe = run(PROGRAM, backends=["numpy"], repeat=1, warmup=0)
    assert probe.measurements[0].tier == "interpreted"
    import starvm
    m = starvm.Machine(jit="auto")
    m.load(PROGRAM, "w.star")
    m.run_main()
    one_run = next(r for r in m.jit.routines.values() if r.display == "SPREAD").work
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", str(int(one_run * 1.5)))
    report = run(PROGRAM, backends=["numpy"], repeat=3, warmup=1)
    (got,) = report.measurements
    assert got.tier == "compiled" and got.tiers == ["compiled"] * 3 and got.left_out_s == []
    assert got.warmups == 2 and got.settled        # interpreted, compiled: nothing left to switch
    assert "tier: compiled (2 warm-up(s))" in report.text()
    doc = report.document(machine={})
    (res,) = doc["results"]
    assert res["tier"] == "compiled" and res["tiers_of_timed_runs"] == ["compiled"] * 3 and res["warmup_runs"] == 2


def test_a_timed_run_of_another_tier_is_left_out(monkeypatch):
    """The tier changes during the timed runs (warm-ups ran out): the runs of the tier the
    warm-ups ended on make the figure, the others are listed."""
    tiers = iter(["interpreted", "compiled", "compiled", "compiled", "compiled"])
    monkeypatch.setattr(program.TierWatch, "tier_since", lambda self, before: next(tiers))
    monkeypatch.setattr(program.TierWatch, "can_change", lambda self: True)
    monkeypatch.setattr(program, "MAX_WARMUPS", 2)
    report = run(PROGRAM, backends=["numpy"], jit=[False], repeat=3, warmup=1)
    (m,) = report.measurements
    assert not m.settled and m.warmups == 2
    assert m.tier == "compiled" and m.tiers == ["compiled"] * 3
    tiers = iter(["interpreted", "compiled", "compiled", "interpreted", "compiled"])
    report = run(PROGRAM, backends=["numpy"], jit=[False], repeat=3, warmup=1)
    (m,) = report.measurements
    assert m.tier == "compiled" and m.tiers == ["compiled", "interpreted", "compiled"]
    assert len(m.timing.runs_s) == 2 and len(m.left_out_s) == 1
    assert not m.settled and m.warmups == 2
    text = report.text()
    assert "1 timed run(s) of another tier left out of the figure" in text and "(interpreted)" in text
    assert "the tier still changed after 2 warm-up run(s)" in text
