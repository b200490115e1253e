"""Differences between the compiled tier and the interpreter found by the compiled tier's
differential fuzzing (bench/fuzz_compiled.py, tests/reference/jit_differential.py), each as the
smallest program that shows it. A strict xfail stays until the difference is settled; then
the XPASS fails and the mark goes.
"""
from __future__ import annotations



import pytest

from reference.jit_differential import run

# A directly recursive procedure (compiled since direct recursion compiles), four levels deep.
RECURSION = """proc R(d: integer);
begin
  if d > 0 then R(d - 1)
end;

begin
  R({depth});
  writeln('done')
end.
"""

from reference.jit_differential import jit_cache  # noqa: E402,F401 - the module's fixture: the compiled-code cache (jit_differential.py)


@pytest.mark.parametrize("depth, max_depth", [(4, 2), (4001, None)])
def test_the_recursion_limit_stops_both_tiers_alike(depth, max_depth):
    """Both tiers count nested Star calls exactly: R(4) under max_depth=2 and R(4001) under the
    default 4000 stop at the same call with the same message and stack (the interpreter once
    leaned on Python's recursion limit and ran both to the end)."""
    src = RECURSION.format(depth=depth)
    off = run(src, "rec.star", "off", max_depth=max_depth)
    on = run(src, "rec.star", "on", max_depth=max_depth)
    assert (on[0], on[1], on[2]) == (off[0], off[1], off[2])


def test_the_default_recursion_limit_runs_the_same_program_alike():
    """The same program without a small limit: both tiers agree (what the xfail above differs in
    is only the limit)."""
    off = run(RECURSION.format(depth=4), "rec.star", "off")
    on = run(RECURSION.format(depth=4), "rec.star", "on")
    assert off[0] == on[0] == "done\n" and off[1] == on[1] and off[2] is on[2] is None
    # R ran compiled: called by the compiled main block (or by itself where the main block is not)
    assert {r.display for r in on[3].jit.routines.values() if r.compiled_calls} & {"main block", "R"}


# An interpreted routine (no loop: --jit auto leaves it) calling a compiled recursive one: the
# limit counts the interpreted calls in progress and the compiled ones as one stack.
MIXED = """proc R(d: integer);
var i: integer;
begin
  i := 0;
  while i < 2 do i := i + 1;
  if d > 0 then R(d - 1)
end;
proc A(d: integer);
begin
  R(d)
end;
begin
  A({depth});
  writeln('done')
end.
"""


@pytest.mark.parametrize("depth, max_depth", [(2, 4), (3, 4), (9, 4), (4001, None)])
def test_the_recursion_limit_counts_interpreted_and_compiled_calls_as_one_stack(depth, max_depth, monkeypatch):
    monkeypatch.setenv("STARVM_JIT_THRESHOLD", "0")
    src = MIXED.format(depth=depth)
    off = run(src, "rec.star", "off", max_depth=max_depth)
    auto = run(src, "rec.star", "auto", max_depth=max_depth)
    assert (auto[0], auto[1], auto[2]) == (off[0], off[1], off[2])
    assert [r.display for r in auto[3].jit.routines.values() if r.compiled_calls] == ["R"]
    assert (off[0] == "done\n") == (depth + 2 <= (max_depth or 4000))


# Found by bench/fuzz_compiled.py (seed 1028, under a step limit): compiled code grew its
# output buffer by returning a new array, so when the call then failed, the host held the old
# buffer and st[S_OUT] counted records of the lost one ('bad output record 0'). Now out_room
# replaces the array inside a holder the host keeps (tests/jit/test_compiled_output.py).
OUTPUT_THEN_FAIL = """var T: table(4000, 2); X: slice(T); i: integer;
begin
  X := COL(1, T);
  for i := 1 to 20 do writeln(X);
  X(4001) := 1
end.
"""


def test_output_written_before_a_failure_in_compiled_code_is_printed():
    off = run(OUTPUT_THEN_FAIL, "ob.star", "off")
    on = run(OUTPUT_THEN_FAIL, "ob.star", "on")
    assert off[2].startswith("ob.star:5:3: error: bit index 4001 out of range")
    assert off[0].count("\n") == 20
    assert (on[0], on[1], on[2]) == (off[0], off[1], off[2])
    assert [r.display for r in on[3].jit.routines.values() if r.compiled_calls] == ["main block"]


# Found by bench/fuzz_compiled.py (seed 13556, bench/results/fuzz_failures/compiled_seed13556.star):
# a recursive procedure multiplies an integer by 3 on every call until it passes 2^63. The
# interpreter's integers are unbounded; the compiled tier stopped with an overflow error of its
# own. Now the call that passes 64 bits runs again interpreted (call.JitRoutine.restart):
# output and steps are the unbounded model's, with the main block compiled.
def test_a_result_beyond_64_bits_equals_the_unbounded_model():
    from reference.jit_differential import check_program
    from reference.gen import Gen, RandomSource
    gen = Gen(RandomSource(13556), 8, recursion_pct=20, fn_output_pct=20, error_pct=15)
    rec = check_program(gen.program(), "numpy", error_at=gen.error_at)
    assert rec["problems"] == [] and rec["error"] is None
    assert rec["beyond_64_bits"] and "main block" in rec["restarted"] and rec["ran_compiled"]


def test_the_64_bit_model_stops_at_the_first_result_beyond_64_bits():
    from reference.model import Int64Overflow, Interp
    from reference.gen import Gen, RandomSource
    prog = Gen(RandomSource(13556), 8, recursion_pct=20, fn_output_pct=20, error_pct=15).program()
    unbounded = Interp(prog)
    unbounded.run()
    bounded = Interp(prog, int64=True)
    with pytest.raises(Int64Overflow) as info:
        bounded.run()
    assert abs(info.value.args[0]) >= 1 << 63
    # it printed a prefix of what the unbounded model prints, and less
    assert "".join(unbounded.out).startswith("".join(bounded.out)) and len(bounded.out) < len(unbounded.out)
