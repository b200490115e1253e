"""`star trace`: the recorded events against the debugger at the same events (every backend),
the limits, the JSON and HTML files, the command line's messages and exit codes, and
`%%star --trace`."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import subprocess_env
from star_programs import RECURSIVE, closure, random_digraph, warshall_c_program
from trace_model import event, shown_variables
from starvm.debug import Debugger
from starvm.debug.trace import record
from starvm.debug.trace_html import render_html


@pytest.mark.parametrize("which", ["warshall_c", "recursive"])
def test_trace_equals_the_debugger_at_every_sampled_event(backend, which):
    if which == "warshall_c":
        adj = random_digraph(9, 21, p=0.3)
        text = warshall_c_program(adj)
    else:
        text = RECURSIVE
    trace = record(text, "prog.star", backend=backend)
    assert trace["end"] == "finished"
    events = trace["events"]
    with Debugger(text, "prog.star", backend=backend, out=io.StringIO()) as d:
        d.start()
        end = d.cont()
        assert len(events) == end.event + 1          # + the final state
        rng = np.random.default_rng(3)
        sample = sorted({1, 2, end.event, *rng.integers(1, end.event + 1, size=12).tolist()})
        for e in sample:
            stop = d.run_to(e)
            ev = event(trace, e)
            assert (ev["line"], ev["steps"], ev["depth"]) == (stop.line, stop.steps, len(d.where()))
            callers = [trace["frames"][c[0]]["r"] for c in trace["stacks"][ev["callers"]]]
            assert callers + [trace["frames"][ev["frame"]]["r"]] == [r for r, _ in d.where()]
            assert shown_variables(trace, e) == d.variables(), f"event {e}"
        # the final event: the globals after the run
        d.cont()
        final = shown_variables(trace, len(events))
        assert final == {k: v for k, v in d.variables().items() if "." not in k}
    if which == "warshall_c":
        rows = final["P"]
        assert rows == tuple("".join("1" if b else "0" for b in r) for r in closure(adj))
    out = "".join(t for _, t in trace["output"])
    assert out == "8 11111000\n" if which == "recursive" else out.strip().isdigit()


def test_max_events_and_max_rows_limit_the_trace():
    adj = random_digraph(80, 5, p=0.05)
    trace = record(warshall_c_program(adj), "big.star", max_events=300, max_rows=16)
    assert trace["end"] == "limit" and len(trace["events"]) == 301
    assert "--max-events 300" in trace["message"]
    P = next(v for v in trace["vars"] if v["name"] == "P" and v["scope"] == "global")
    assert (P["n"], P["k"], P["wr"], P["wc"]) == (80, 80, 16, 80)
    assert len(P["init"]) == 16 * 80
    # the ones of the whole table are kept, not just the window's
    ones = [c[2] for c in P["ch"]]
    assert P["o"] == 0 and int(adj.sum()) in ones and ones == sorted(ones)   # the ROW writes, then the closure grows


def test_the_page_is_self_contained():
    trace = record(RECURSIVE, "rec.star")
    page = render_html(trace)
    assert page.startswith("<!doctype html>") and "__TRACE_DATA__" not in page
    for remote in ("http://", "https://", "src=", "<link"):
        assert remote not in page, remote
    data = page.split('<script id="trace-data" type="application/json">')[1].split("</script>")[0]
    assert json.loads(data)["events"] == trace["events"]


def test_a_script_end_tag_in_the_source_cannot_break_the_page():
    text = "begin writeln('</script><!-- x') end.\n"
    trace = record(text, "s.star")
    page = render_html(trace)
    data = page.split('<script id="trace-data" type="application/json">')[1].split("</script>")[0]
    assert "".join(t for _, t in json.loads(data)["output"]) == "</script><!-- x\n"


def _star(*args, cwd, input_=None):
    return subprocess.run([sys.executable, "-m", "starvm", *args], capture_output=True, text=True, cwd=cwd,
                          env=subprocess_env(), timeout=120, input=input_)


def test_star_trace_command_line(tmp_path):
    (tmp_path / "rec.star").write_text(RECURSIVE)
    r = _star("trace", "rec.star", "--html", "run.html", "--json", "run.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "8 11111000\n"
    assert "events" in r.stderr and "wrote run.html" in r.stderr
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["format"] == "starvm-trace-2" and data["end"] == "finished"
    assert (tmp_path / "run.html").stat().st_size > 5000
    r = _star("trace", "rec.star", "--html", "run2.html", "--max-events", "10", "--profile", cwd=tmp_path)
    assert r.returncode == 0
    assert "the trace stops at event 10 (--max-events 10)" in r.stderr
    assert "native kernels and the compiled tier were bypassed" in r.stderr
    r = _star("trace", "rec.star", "--html", "run3.html", "--jit", "on", cwd=tmp_path)
    assert r.returncode == 0 and "--jit on has no effect" in r.stderr and "compiled tier is bypassed" in r.stderr
    r = _star("trace", "rec.star", cwd=tmp_path)
    assert r.returncode == 2 and "needs --html" in r.stderr
    r = _star("trace", "rec.star", "--html", "x.html", "--max-rows", "0", cwd=tmp_path)
    assert r.returncode == 2
    r = _star("trace", "rec.star", "--html", str(tmp_path / "no" / "dir" / "x.html"), cwd=tmp_path)
    assert r.returncode == 2 and "cannot write" in r.stderr
    (tmp_path / "err.star").write_text("var X: slice;\nbegin\n  X := BITS('01');\n  X(3) := 1;\nend.\n")
    r = _star("trace", "err.star", "--html", "e.html", cwd=tmp_path)
    assert r.returncode == 1 and "err.star:4:" in r.stderr and (tmp_path / "e.html").exists()


def test_jupyter_trace_cell():
    from starvm.ui.ipython import StarCellError, TracePage, run_cell
    page = run_cell({}, "--trace --max-rows 8", RECURSIVE)
    assert isinstance(page, TracePage) and page.events > 10
    html = page._repr_html_()
    assert html.startswith("<iframe srcdoc=") and "&lt;!doctype html&gt;" in html
    with pytest.raises(StarCellError, match="unknown name 'y'"):     # does not load: the cell fails
        run_cell({}, "--trace", "begin y := 1 end.")
    with pytest.raises(StarCellError) as e:                            # fails while running: the page up to it
        run_cell({}, "--trace", "var X: slice;\nbegin\n  X := BITS('01');\n  X(3) := 1;\nend.\n")
    assert e.value.message.startswith("<cell>:4:") and isinstance(e.value.page, TracePage)


def test_jupyter_trace_magic_in_an_ipython_shell(capsys):
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell
    from starvm.ui.ipython import TracePage
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "starvm.ui.ipython")
    page = ip.run_cell_magic("star", "--trace --max-events 50", RECURSIVE)
    assert isinstance(page, TracePage) and page.events == 51
    err = capsys.readouterr().err
    assert "the trace stops at event 50 (--max-events 50)" in err
    formatted, _ = ip.display_formatter.format(page)
    assert formatted["text/html"].startswith("<iframe srcdoc=")
    result = ip.run_cell("%%star --trace --max-rows x\n" + RECURSIVE)
    assert not result.success and "--max-rows takes a number >= 1" in "".join(capsys.readouterr())
