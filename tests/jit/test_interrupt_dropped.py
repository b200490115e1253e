"""A Ctrl-C whose KeyboardInterrupt Python drops still stops a compiled call (issue 36, item 2).

`star run --jit on` sent SIGINT under load sometimes ran on for good (bench/fuzz_compiled
--cases interrupt, seeds 3074 and 3083; 22 of 1500 in-process calls with 6 busy processes
beside them). The signal landed while OutputSink.flush had Numba's dispatcher type the output
holder: the dispatcher asks an argument for `_numba_type_` with PyObject_HasAttr, which clears
any exception, so the KeyboardInterrupt that StructRefProxy's Python property raised was dropped
and the signal with it; compiled code polls Python's record of the signal, which was gone.
Now the holder's type is a plain attribute (no Python runs there), and every compiled call is
armed: a SIGINT sets its st[S_INTR] at C level before Python sees it (jit/interrupts.py).
"""
from __future__ import annotations

import io
import signal
import sys
import threading

import pytest

from reference.jit_differential import jit_cache  # noqa: F401 - the module's fixture: the compiled-code cache
import starvm
from starvm.errors import StarInterrupt
from starvm.jit import interrupts
from starvm.jit.buffers import output_records
from starvm.targets.numba import kernels

# an endless loop writing a line every 1000 turns (a flush of the output every 1024 steps)
SPIN = """var n: integer;
proc spin(var i: integer);
begin
  while true do begin i := i + 1; if i mod 1000 = 0 then writeln('turn ', i) end
end;
begin n := 0 end.
"""


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler (KeyboardInterrupt), as `star run` has it."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_typing_the_output_holder_runs_no_python():
    """Numba types the holder from an attribute: no Python code (where Python would run its
    SIGINT handler, inside the dispatcher that drops what it raises) runs for it."""
    ob = kernels.new_output(4)
    output_records(ob)
    called = []

    def profile(frame, event, arg):
        if event == "call":
            called.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        output_records(ob)
    finally:
        sys.setprofile(None)
    assert "_numba_type_" not in called, called


def test_a_ctrl_c_the_dispatcher_drops_still_stops_the_call(monkeypatch, default_sigint):
    """The holder's type from a Python property again, which raises SIGINT at its second use
    by a flush inside the loop: Python's KeyboardInterrupt
    is raised in the property and dropped by the dispatcher, as it was; the call stops at the
    loop as interrupted, not at the step limit (before: Python's record of the signal was gone,
    so the loop's polls never saw it)."""
    m = starvm.Machine(backend="numpy", jit="on", out=io.StringIO(), max_steps=3_000_000)
    m.load(SPIN, "spin.star")
    uses = []

    def type_raising_sigint(self):
        if sys._getframe(2).f_code.co_name == "flush":     # OutputSink.flush (buffers.output_records), inside the call
            uses.append(1)
            if len(uses) == 2:
                signal.raise_signal(signal.SIGINT)     # its handlers run now, in this thread
        return self._type
    monkeypatch.setattr(kernels.Output, "_numba_type_", property(type_raising_sigint))
    with pytest.raises(StarInterrupt) as e:
        m.call("spin", 0)
    assert len(uses) >= 2
    assert str(e.value.loc) == "spin.star:4:3"
    assert m.jit.routines["r_spin"].compiled_calls == 1
    lines = m.out.getvalue().splitlines()
    assert lines and lines == [f"turn {1000 * (k + 1)}" for k in range(len(lines))]
    assert m.counts and sum(m.counts) < 3_000_000         # stopped well before the limit


def test_arming_nests_and_leaves_sigint_alone_where_python_has_no_handler(default_sigint):
    """arm/disarm: an inner call's word while it runs, the outer's again after; nothing armed
    off the main thread or where SIGINT is ignored (a signal there keeps doing what it did)."""
    import numpy as np
    outer, inner = np.zeros(1, np.int64), np.zeros(1, np.int64)
    a = interrupts.arm(outer.ctypes.data)
    b = interrupts.arm(inner.ctypes.data)
    try:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert (outer[0], inner[0]) == (0, 1)
    finally:
        interrupts.disarm(b)
    try:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert (outer[0], inner[0]) == (1, 1)
    finally:
        interrupts.disarm(a)
    outer[0] = 0
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    assert outer[0] == 0                                     # disarmed
    answers = []
    thread = threading.Thread(target=lambda: answers.append(interrupts.arm(outer.ctypes.data)))
    thread.start()
    thread.join()
    assert answers == [False]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    assert interrupts.arm(outer.ctypes.data) is False
    signal.raise_signal(signal.SIGINT)                       # ignored, as before
    assert outer[0] == 0


# 1500 turns, a line every 100: one flush inside the loop (at step 1024), then the call
# returns before its next poll (at 2048)
SHORT = """proc few(n: integer);
var i: integer;
begin
  for i := 1 to n do if i mod 100 = 0 then writeln('turn ', i)
end;
begin end.
"""


def test_a_ctrl_c_after_the_last_poll_interrupts_the_caller_once(monkeypatch, default_sigint):
    """A SIGINT whose KeyboardInterrupt the dispatcher dropped, in the call's last flush: the
    call returns complete (all its lines) and the interrupt is raised to its caller, once
    (Python's record taken: the next call runs). Before, the call returned and the Ctrl-C
    was gone."""
    m = starvm.Machine(backend="numpy", jit="on", out=io.StringIO())
    m.load(SHORT, "few.star")
    m.call("few", 1500)
    sent = []

    def type_raising_sigint(self):
        if sys._getframe(2).f_code.co_name == "flush" and not sent:
            sent.append(1)
            signal.raise_signal(signal.SIGINT)
        return self._type
    monkeypatch.setattr(kernels.Output, "_numba_type_", property(type_raising_sigint))
    with pytest.raises(StarInterrupt):
        m.call("few", 1500)
    assert sent and m.jit.routines["r_few"].compiled_calls == 2
    assert m.out.getvalue() == 2 * "".join(f"turn {100 * k}\n" for k in range(1, 16))
    m.call("few", 200)                                        # no interrupt left pending
    assert m.out.getvalue().endswith("turn 1500\nturn 100\nturn 200\n")
