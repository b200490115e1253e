"""tracemap: a Ctrl-C taken at a generated-code instruction with no line number (a loop's back
edge) still stops at a Star position (issue 36: found by the interrupt fuzz campaign)."""
import dis
import sys
from types import SimpleNamespace

import pytest

import starvm
from starvm.runtime.tracemap import star_frames

SOURCE = """program backedge;
var s: integer;
procedure L(n: integer; var s: integer);
var i: integer;
begin
  for i := 1 to n do
  begin
    s := (s * 31 + i) mod 1000003;
    if i mod 7 = 0 then writeln(i)
  end
end;
begin
  s := 1;
  L(100000, s)
end.
"""
LOOP = (6, SOURCE.splitlines()[5].index("for") + 1)      # the for statement's line and column


def _lineless_jumps(code):
    """Offsets of the jumps of no line number in a generated routine (its loop's back edge)."""
    return [i.offset for i in dis.get_instructions(code) if i.positions.lineno is None and i.opname.startswith("JUMP")]


def _routine_code(m):
    """The code object of the generated r_l of the program m ran."""
    [unit] = m.units.values()
    module = compile(unit.source, unit.filename, "exec")
    [code] = [c for c in module.co_consts if getattr(c, "co_name", None) == "r_l"]
    return code


def _skip_where_every_jump_has_a_line(backend):
    """Python 3.12 gives a loop's back edge its line (3.11 does not): there nothing is to map."""
    import io
    m = starvm.Machine(out=io.StringIO(), jit="off", backend=backend)
    m.run(SOURCE, "backedge.star")
    if not _lineless_jumps(_routine_code(m)):
        pytest.skip(f"Python {sys.version_info.major}.{sys.version_info.minor} gives every jump of the loop a line")
    return m


def test_a_ctrl_c_at_a_loops_back_edge_stops_at_the_loop(backend):
    """The KeyboardInterrupt raised (by a trace function) at the back edge's own instruction, as
    Python's SIGINT handler does when the signal lands there."""
    _skip_where_every_jump_has_a_line(backend)
    seen = []

    def tracer(frame, event, arg):
        if not frame.f_code.co_filename.startswith("<star-") or frame.f_code.co_name != "r_l":
            return None
        frame.f_trace_opcodes = True
        if event == "opcode" and frame.f_lasti in _lineless_jumps(frame.f_code):
            seen.append(frame.f_lasti)
            if len(seen) == 20:
                raise KeyboardInterrupt
        return tracer

    import io
    m = starvm.Machine(out=io.StringIO(), jit="off", backend=backend)
    sys.settrace(tracer)
    try:
        with pytest.raises(starvm.StarError) as stop:
            m.run(SOURCE, "backedge.star")
    finally:
        sys.settrace(None)
    assert len(seen) == 20, "no back edge of no line number in the generated loop: the test no longer applies"
    assert "interrupted" in str(stop.value)
    loc = stop.value.loc
    assert loc is not None and (loc.line, loc.column) == LOOP, loc
    assert [f.routine for f in stop.value.stack][-1].lower() == "l"


def test_star_frames_of_a_lineless_instruction_take_the_jump_target_or_the_line_before(backend):
    """star_frames on a synthetic traceback entry at each lineless instruction of the routine:
    each (a jump) maps to its target: the loop statement."""
    m = _skip_where_every_jump_has_a_line(backend)
    code = _routine_code(m)
    jumps = _lineless_jumps(code)
    for offset in jumps:
        tb = SimpleNamespace(tb_frame=SimpleNamespace(f_code=code), tb_lasti=offset, tb_lineno=None, tb_next=None)
        [frame] = star_frames(tb, m.units)
        assert frame.loc is not None and (frame.loc.line, frame.loc.column) == LOOP, (offset, frame)
