"""The REPL (starvm/ui/repl.py): its logic without a terminal (Session), and its prompt_toolkit
front end driven through a pipe input (Repl). The real-terminal test is
tests/cli/test_repl_terminal.py."""
from __future__ import annotations

import io
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import starvm
from conftest import subprocess_env
from starvm.ui import repl
from starvm.ui.repl import Session, is_complete

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def s(machine) -> Session:
    return Session(machine, out=io.StringIO())


def test_variables_persist_and_expressions_echo(s):
    assert s.feed("var x: integer; X2: slice; P: table(4, 4);") == ""
    assert s.feed("x := 5") == ""
    assert s.feed("x") == "5\n"
    assert s.feed("x + 1") == "6\n"
    # statement level: an assignment, as in the paper; the prompt says so (issue 21)
    assert s.feed("x = 7;").startswith("note: '=' as a statement assigns")
    assert s.feed("x") == "7\n"
    assert s.feed("x > 3") == "true\n"
    assert s.feed("X2 := BITS('0110')") == ""
    assert s.feed("NUMB(X2)") == "2\n"
    assert s.feed("X2") == "0110\n"               # a vector prints as bits
    assert s.feed("STEP(X2)") == "2\n"            # the echo runs the function: X2 changes
    assert s.feed("X2") == "0010\n"
    assert s.feed("X2(3)") == "1\n"
    assert s.feed("COL(2, P) := X2; ROW(1, P) := BITS('1001')") == ""
    assert s.feed("P") == "1001\n0000\n0100\n0000\n"
    assert s.feed("'text'") == "text\n"
    assert s.machine.global_("x") == 7
    assert s.errors == 0


def test_statements_loops_and_routines(s):
    s.feed("var i, n: integer;")
    assert s.feed("for i := 1 to 3 do\n  writeln(i * i)") == "1\n4\n9\n"
    assert s.feed("proc dbl(var a: integer);\nbegin\n  a := 2 * a\nend;") == ""
    assert s.feed("n := 3; dbl(n); dbl(n)") == ""
    assert s.feed("n") == "12\n"
    assert s.feed("function sq(a: integer): integer; begin sq := a * a end;") == ""
    assert s.feed("sq(n)") == "144\n"
    assert s.feed("writeln('n = ', n)") == "n = 12\n"
    assert s.feed("begin writeln(n div 5) end.") == "2\n"     # a whole program runs its main block
    assert s.feed("repeat n := n - 5 until n < 0") == ""
    assert s.feed("n") == "-3\n"
    s.feed("var Q: table(3, 3);")
    s.feed("ROW(1, Q) := BITS('010'); ROW(2, Q) := BITS('001')")
    assert s.feed("WARSHALL-C(3, Q); writeln(Q)") == "011\n001\n000\n"   # from the standard library
    assert s.errors == 0


def test_errors_are_reported_and_the_session_goes_on(s):
    s.feed("var x: integer; P: table(2, 2);")
    out = s.feed("x := y")
    assert out.startswith("<input-2>:1:6: error: unknown name 'y'")
    assert "    1 | x := y" in out
    out = s.feed("x :=")
    assert out.startswith("<input-3>:1:5: error: unexpected end of input")
    out = s.feed("ROW(9, P)")
    assert out.startswith("<input-4>:1:1: error: row index 9 out of range 1..2")
    assert "main block at <input-4>:1:1" in out
    out = s.feed("x := 1;\nx := x div 0")
    assert out.startswith("<input-5>:2:8: error: division by zero")
    assert s.feed("x") == "1\n"              # what ran before the error stays done
    assert "is declared twice" in s.feed("var x: integer;")
    assert s.feed(":nonsense").startswith("unknown command :nonsense")
    assert s.errors == 6
    assert s.feed("x + 1") == "2\n"


def test_input_completeness():
    assert is_complete("x := 5")
    assert is_complete("var x: integer;")
    assert is_complete("")
    assert is_complete(":load foo.star")
    assert not is_complete("begin")
    assert not is_complete("begin x := 1;")
    assert is_complete("begin x := 1 end")
    assert not is_complete("writeln(1,")
    assert not is_complete("writeln((1 + 2)")
    assert not is_complete("proc P;")                      # a declaration without its body
    assert not is_complete("proc P;\nvar i: integer;\nbegin")
    assert not is_complete("proc P; begin while true do begin end")
    assert is_complete("proc P; begin while true do begin end end;")
    assert not is_complete("repeat x := 1")
    assert is_complete("repeat x := 1 until x = 1")
    assert not is_complete("x :=")
    assert not is_complete("for i := 1 to 3 do")
    assert not is_complete("{ an open comment")
    assert not is_complete("(* an open comment")
    assert is_complete("{ begin } x := 1")                # keywords in comments and strings don't count
    assert is_complete("writeln('begin (')")
    assert not is_complete("program demo; var x: integer;")
    assert is_complete("program demo; begin end.")


def test_commands(s, tmp_path):
    assert "Commands:" in s.feed(":help") and ":plot NAME" in s.feed(":help")
    assert s.feed(":vars") == "nothing declared yet\n"
    lib = tmp_path / "lib.star"
    lib.write_text("var g: integer; W: word;\nproc setg(v: integer); begin g := v end;\n"
                   "begin writeln('main ran'); g := 99 end.\n")
    out = s.feed(f":load {lib}")
    assert "routines setg" in out and "globals g, W" in out and "main block was not run" in out
    assert s.feed("g") == "0\n"
    assert "'g' is declared twice" in s.feed(f":run {lib}") and s.errors == 1
    s.feed("setg(41); g := g + 1; W := BITS('101')")
    vars_out = s.feed(":vars")
    assert "g: integer = 42" in vars_out and "W: word of 3 bits = 101" in vars_out
    assert "proc setg(v: integer)" in vars_out
    s.feed("var P: table(3, 12); b: boolean;")
    s.feed("ROW(2, P) := BITS('100000000001')")
    show = s.feed(":show P").splitlines()
    assert show[0] == "P: table 3 x 12"
    assert show[2] == "       123456789012"
    assert show[4] == "    2 |1..........1"
    assert s.feed(":show W").startswith("W: word of 3 bits, 2 ones (at 1, 3)")
    assert s.feed(":show b") == "b: boolean = false\n"
    assert "no global variable 'nope'" in s.feed(":show nope")
    assert s.feed(":show").startswith("usage:")
    assert s.feed(":backend") == f"backend: {s.machine.backend.name}\n"
    assert "cannot read" in s.feed(":load /no/such/file.star")


def test_profile_and_stats(s):
    s.feed("var X: slice; P: table(4, 4);")
    assert s.feed(":profile on").startswith("profiling on")
    assert s.machine.profile
    out = s.feed("X := COL(1, P); NUMB(X)")
    assert "[steps: " in out and "COL read 1" in out   # the names of :stats and --profile
    stats = s.feed(":stats")
    assert "STAR-machine steps" in stats and "COL read" in stats and "mean, us" in stats
    assert s.feed(":profile off") == "profiling off\n"
    assert s.feed("NUMB(X)") == "0\n"
    assert s.feed(":stats reset") == "step counters reset\n"
    assert s.machine.stats == {}


def test_reset_and_quit(s):
    s.feed("var x: integer; x := 3")
    assert "fresh machine" in s.feed(":reset")
    assert "unknown name 'x'" in s.feed("x")
    assert s.execute(":quit") is False and s.done


def test_plot(s, tmp_path, monkeypatch):
    s.feed("var P: table(5, 3); n: integer;")
    s.feed("ROW(2, P) := BITS('101')")
    assert ":plot draws a table" in s.feed(":plot n")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        out = s.feed(f":plot P {tmp_path / 'p.png'}")
        assert "needs matplotlib" in out and "pip install" in out
        return
    out = s.feed(f":plot P {tmp_path / 'p.png'}")
    assert out == f"wrote {tmp_path / 'p.png'}\n"
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    # without matplotlib the command says so
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert "needs matplotlib" in s.feed(":plot P")


def test_ctrl_c_stops_a_running_loop_and_keeps_the_state(backend):
    # A watchdog: if the interrupt never arrives, the step limit ends the loop (and the test
    # fails on the message) instead of the test hanging.
    s = Session(starvm.Machine(backend=backend, out=io.StringIO(), native=False, max_steps=10 ** 8),
                out=io.StringIO())
    s.feed("var i: integer;")
    # interrupt_main raises KeyboardInterrupt only where SIGINT has Python's handler; a shell
    # that starts the tests in the background makes the process ignore SIGINT.
    old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: __import__("_thread").interrupt_main())
    timer.start()
    t0 = time.time()
    try:
        out = s.feed("while true do i := i + 1")
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, old_handler)
    assert time.time() - t0 < 60
    assert out.startswith("interrupted at <input-2>:1:")
    assert "keep the values" in out
    count = int(s.feed("i"))
    assert count > 0                              # the loop ran and its state is kept
    assert s.feed("i := i + 1") == ""
    assert int(s.feed("i")) == count + 1


def test_completion(s):
    s.feed("var counter: integer; proc Compute(a: integer); begin end;")
    words = s.completions("co")
    assert "counter" in words and "Compute" in words and "COL" in words and "CONVERT" in words
    assert "WARSHALL-C" in s.completions("warsh")        # standard library, spelled as declared
    assert "NUMB" in s.completions("nu")
    assert "begin" in s.completions("BEG")                # case-insensitive
    assert s.completions("zzz") == []


def test_plain_mode_reads_inputs_from_stdin():
    stdin = io.StringIO("var x: integer;\nproc p;\nbegin\n  x := x + 2\nend;\n\np; p\nx\n")
    out = io.StringIO()
    assert repl.main(backend="numpy", stdin=stdin, stdout=out) == 0
    assert out.getvalue() == "4\n"
    out = io.StringIO()
    assert repl.main(backend="numpy", stdin=io.StringIO("y\n:quit\nwriteln(1)\n"), stdout=out) == 1
    assert "unknown name 'y'" in out.getvalue() and "1\n" not in out.getvalue().splitlines()


def test_star_with_no_arguments_and_star_repl_start_it(tmp_path):
    for args in ([], ["repl"], ["repl", "--backend", "numpy"]):
        r = subprocess.run([sys.executable, "-m", "starvm", *args], input="var x: integer;\nx := 6 * 7\nx\n",
                           capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           env=subprocess_env())
        assert (r.returncode, r.stdout, r.stderr) == (0, "42\n", ""), args


# ---------------------------------------------------------------------- prompt_toolkit
pt = pytest.importorskip("prompt_toolkit")


def drive(keys, tmp_path, session=None):
    """Type ``keys`` (a string, or a list of strings typed 0.3 s apart, e.g. to let a
    completion finish) into the real prompt through a pipe input, no terminal; then EOF.
    Returns (output, session)."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    session = session or Session(starvm.Machine(backend="numpy"), out=io.StringIO())
    chunks = [keys] if isinstance(keys, str) else list(keys)
    with create_pipe_input() as inp:
        r = repl.Repl(session, input=inp, output=DummyOutput(), history=tmp_path / "history")

        def typist():
            for i, chunk in enumerate(chunks):
                if i:
                    time.sleep(0.3)
                inp.send_text(chunk)
            time.sleep(0.1)
            inp.close()  # EOF after the keys: like Ctrl-D

        t = threading.Thread(target=typist)
        t.start()
        assert r.run() == 0
        t.join()
    return session.out.getvalue(), session


def test_prompt_runs_multiline_inputs_and_keeps_history(tmp_path):
    out, session = drive("var x: integer;\rproc p;\rbegin\r  x := x + 1\rend;\rp; p\rx\r", tmp_path)
    assert out == "2\n"
    hist = (tmp_path / "history").read_text()
    assert "+proc p;\n+begin\n+  x := x + 1\n+end;" in hist     # one multi-line entry
    assert "+x\n" in hist
    # a new prompt on the same file sees the history: Up recalls the last input
    out2, _ = drive("\x1b[A\r", tmp_path, Session(starvm.Machine(backend="numpy"), out=io.StringIO()))
    assert "unknown name 'x'" in out2


def test_prompt_quit_errors_and_ctrl_d(tmp_path):
    out, session = drive("writeln(1 +\r2)\rnope\r:quit\rwriteln('not run')\r", tmp_path)
    assert out.startswith("3\n<input-2>:1:1: error: unknown name 'nope'")
    assert "not run" not in out and session.done
    out, session = drive("writeln(5)\r\x04", tmp_path)           # Ctrl-D quits
    assert out == "5\n"


def test_prompt_empty_line_ends_an_unfinished_input(tmp_path):
    out, _ = drive("begin writeln(7)\r\r", tmp_path)
    assert "error" in out and "unexpected end of input" in out


def test_prompt_tab_completion(tmp_path):
    session = Session(starvm.Machine(backend="numpy"), out=io.StringIO())
    session.feed("var counter: integer;")
    session.feed("counter := 11")
    out, _ = drive(["coun\t", "\r"], tmp_path, session)
    assert out == "11\n"
    completer = repl.StarCompleter(session)
    from prompt_toolkit.document import Document
    got = [c.text for c in completer.get_completions(Document("NU"), None)]
    assert got == ["NUMB"] or "NUMB" in got
    got = [c.text for c in completer.get_completions(Document(":pro"), None)]
    assert got == [":profile"]


def test_history_path_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("STARVM_HISTORY", str(tmp_path / "h"))
    assert repl.history_path() == tmp_path / "h"
    monkeypatch.delenv("STARVM_HISTORY")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert repl.history_path() == tmp_path / "data" / "starvm" / "history"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert repl.history_path() == Path.home() / ".local" / "share" / "starvm" / "history"
