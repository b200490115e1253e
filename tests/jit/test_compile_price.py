"""--jit auto prices a routine's compile against its work (jit/estimate.py compile_seconds,
jit/background.py): the estimate grows with the kernel calls of its generated code and its
callees'; a routine estimated over STARVM_JIT_MAX_COMPILE_S runs interpreted and --profile
says why; a longer compile needs more work than the threshold. Nothing here compiles."""
from __future__ import annotations

import io

import starvm
from starvm.jit.estimate import COMPILE_BASE_S, COMPILE_S_PER_CALL, compile_seconds


def _program(statements: int) -> str:
    body = "\n".join(f"    V := V or COL({j % 4 + 1}, P);" for j in range(statements))
    return f"""
proc SMALL(var P: table);
var i: integer; V: slice;
begin
  for i := 1 to 2 do V := COL(1, P);
end;

proc BIG(var P: table; k: integer);
var i: integer; V: slice;
begin
  V := COL(1, P);
  for i := 1 to k do
  begin
{body}
  end;
  SMALL(P)
end;
"""


def _machine(statements: int, **env):
    m = starvm.Machine(backend="numpy", jit="auto", out=io.StringIO(), native=False)
    m.load(_program(statements), "price.star")
    return m


def _routine(m, display):
    return next(r for r in m.jit.routines.values() if r.display == display)


def test_the_estimate_grows_with_the_calls_and_counts_the_callees():
    m = _machine(40)
    source = _routine(m, "BIG").unit.lowered.source
    small = compile_seconds(source, "f_r_small")
    big = compile_seconds(source, "f_r_big")
    assert small > COMPILE_BASE_S
    # each statement, one loop over words (lower.word_wise_assign): col_ref, ck_logic and
    # asg_words; SMALL's calls counted inside BIG's
    assert big - small >= COMPILE_S_PER_CALL * 3 * 40
    bigger = compile_seconds(_routine(_machine(80), "BIG").unit.lowered.source, "f_r_big")
    assert abs((bigger - big) - COMPILE_S_PER_CALL * 3 * 40) < COMPILE_S_PER_CALL * 4


def test_a_routine_too_big_to_compile_quickly_runs_interpreted_and_the_profile_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "0")
    monkeypatch.setenv("STARVM_JIT_MAX_COMPILE_S", "2")
    results = {}
    for jit in ("auto", "off"):
        m = starvm.Machine(backend="numpy", jit=jit, out=io.StringIO(), native=False)
        m.load(_program(40), "price.star")
        P = m.table(rows=70, cols=4)
        m.call("BIG", P, 3)
        results[jit] = (P.to_numpy().tolist(), m.last_call_stats)
        if jit == "auto":
            big = _routine(m, "BIG")
            assert big.compiled_calls == 0 and big.state == "waiting"
            m.profile = True
            assert ("BIG: interpreted, 1 call(s): too big to compile quickly: Numba's compile of its generated "
                    "code is estimated at") in m.profile_report()
            assert "STARVM_JIT_MAX_COMPILE_S = 2 s" in big.why
    assert results["auto"] == results["off"]


def test_a_longer_compile_needs_more_work(monkeypatch, tmp_path):
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "10000000")
    m = _machine(40)
    m.call("BIG", m.table(rows=70, cols=4), 1)
    big = _routine(m, "BIG")
    cost = big.background.cost
    assert cost > 2.0
    assert f"threshold 10000000, STARVM_JIT_THRESHOLD; {int(10_000_000 * cost / 2.0)} for its compile" in big.why


def test_the_gpu_tier_compiles_at_the_first_call_what_an_earlier_run_compiled(monkeypatch, tmp_path):
    """On the CuPy backend (its stand-in): a routine far below STARVM_JIT_GPU_THRESHOLD runs
    interpreted until a run has compiled its kernel plan (the marker note_compiled leaves in
    the cache folder); a later machine on auto then compiles it at its first call. The
    compile and the kernel's run are stand-ins here: what is checked is the decision."""
    from gpu_sources.fake_cupy import fake_cupy_installed
    from starvm.jit import background
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("STARVM_JIT_GPU_THRESHOLD", str(10**18))
    program = _program(4)
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend"):
        def big_of_a_new_machine():
            m = starvm.Machine(backend="cupy", jit="auto", native=False, out=io.StringIO())
            m.load(program, "gpu.star")
            big = _routine(m, "BIG")
            calls = []
            big.interpreted = lambda *args: calls.append("interpreted")
            big.compile = lambda converted: calls.append("compiled") or True
            big.run = lambda args, converted=None: calls.append("ran")
            return m, big, calls
        m, big, calls = big_of_a_new_machine()
        P = m.table(rows=70, cols=4)
        big(P, 3)
        assert calls == ["interpreted"] and "STARVM_JIT_GPU_THRESHOLD" in big.why
        background.note_compiled(big)             # what a run that compiled it leaves
        assert len(list(tmp_path.glob("gpu_*.ready"))) == 1
        m, big, calls = big_of_a_new_machine()
        big(m.table(rows=70, cols=4), 3)
        assert calls == ["compiled", "ran"]
