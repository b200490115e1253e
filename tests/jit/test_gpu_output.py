"""Output of GPU-tier kernels while they run (jit/cuda_output.py; prelude.cu out_pub, out_room),
on the emulated device (the kernels compiled as C++, every GPU thread an OS thread, the host's
page-locked memory a shared mapping): the host writes a kernel's finished write calls while it
runs, a full record buffer waits for the host instead of launching again, and the output of
every call equals the interpreter's. No GPU needed; tests/jit/test_gpu_tier.py has the real
GPU's Ctrl-C run, which needs the output streamed."""
from __future__ import annotations

import io
import threading

import numpy as np
import pytest

import starvm
from gpu_sources import emulate

SAY = """
proc SAY(n: integer; X: slice; wide: boolean);
var i: integer;
begin
  i := 0;
  while i < n do begin
    if wide and (i = 3) then writeln('all ', X, ' ', NUMB(X))
    else writeln('line ', i, ' ', i * i, ' ', SOME(X));
    i := i + 1
  end;
  write('end');
  writeln
end;

proc SPIN(n: integer);
var i: integer;
begin
  writeln('before');
  i := 0;
  while i < n do i := i + 1;
  writeln('never')
end;
begin end.
"""


def _interpreted(name, *args):
    out = io.StringIO()
    m = starvm.Machine(backend="numpy", jit="off", out=out)
    m.load(SAY, "say.star")
    m.call(name, *[m.slice(a) if isinstance(a, np.ndarray) else a for a in args])
    return out.getvalue()


@pytest.mark.parametrize("ob_words", [64, 1 << 16])
def test_more_output_than_the_buffer_holds_is_written_in_rounds_by_one_launch(monkeypatch, ob_words):
    """64 words of records hold 5 of SAY's lines: the kernel waits for the host to write the
    finished lines, moves the unfinished line's records to the buffer's start and goes on, in
    one launch; a line longer than the whole buffer (a 5000-row slice) launches again with a
    larger one, the lines the host wrote before skipped. The output is the interpreter's."""
    from starvm.jit import cuda_runtime
    monkeypatch.setattr(cuda_runtime, "OB_WORDS", ob_words)
    rng = np.random.default_rng(3)
    with emulate.emulated_device(monkeypatch):
        out = io.StringIO()
        m = starvm.Machine(backend="cupy", jit="on", out=out)
        m.load(SAY, "say.star")
        r = m.jit.routines["r_say"]
        for n, rows, wide in ((40, 70, False), (0, 1, False), (9, 5000, True)):
            X = rng.random(rows) < 0.4
            out.seek(0)
            out.truncate()
            launches = r.launches
            m.call("SAY", n, m.slice(X), wide)
            assert out.getvalue() == _interpreted("SAY", n, X, wide), (n, rows, wide)
            assert r.state == "compiled" and r.reruns == 0
            grew = wide and ob_words == 64     # a line of 81 words of records: a larger buffer
            assert r.launches - launches == 1 + grew, (n, rows, wide)
        assert r.ob_launches == (1 if ob_words == 64 else 0)


def test_a_kernel_prints_while_it_runs_and_ctrl_c_stops_it_there(monkeypatch):
    """SPIN prints a line, then loops: the line reaches the stream while the kernel runs (a
    host thread, here the stream's write, sets the Ctrl-C flag once it sees the line), and
    the kernel stops at its loop as interrupted. Without the output streamed the line would
    come at the kernel's end, which the step limit makes an error of another kind."""
    from starvm.jit import cuda_runtime
    from starvm.targets.layout import S_INTR

    class Stream(io.StringIO):
        def write(self, text):
            if "before" in text:
                flag, _address = cuda_runtime._interrupt_flag()
                threading.Timer(0.2, lambda: flag.__setitem__(S_INTR, 1)).start()
            return super().write(text)

    with emulate.emulated_device(monkeypatch):
        out = Stream()
        m = starvm.Machine(backend="cupy", jit="on", out=out, max_steps=20_000_000)
        m.load(SAY, "say.star")
        with pytest.raises(starvm.StarError) as e:
            m.call("SPIN", 10 ** 12)
        cuda_runtime._interrupt_flag()[0][S_INTR] = 0
    assert out.getvalue() == "before\n"
    assert "interrupted" in e.value.render() and e.value.loc.line == 20, e.value.render()


def test_a_stream_that_fails_stops_the_kernel_and_the_call_raises_its_error(monkeypatch):
    """The stream's write fails (a closed pipe) while the kernel runs, its buffer full: the
    drain stops the kernel (as Ctrl-C does) instead of leaving it waiting for the host, and the
    call raises the stream's error, as the interpreter's write would."""
    from starvm.jit import cuda_runtime
    from starvm.targets.layout import S_INTR
    monkeypatch.setattr(cuda_runtime, "OB_WORDS", 64)

    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError("the reader went away")

    with emulate.emulated_device(monkeypatch):
        m = starvm.Machine(backend="cupy", jit="on", out=Closed())
        m.load(SAY, "say.star")
        with pytest.raises(BrokenPipeError):
            m.call("SAY", 10 ** 6, m.slice(np.ones(70, bool)), False)
        flag, _address = cuda_runtime._interrupt_flag()
        assert flag[S_INTR] == 1
        flag[S_INTR] = 0
        assert m.jit.routines["r_say"].launches == 1
