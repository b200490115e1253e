"""starvm/ipython.py: the %%star cell magic in an in-process IPython shell, and rich display
of tables as PNG pictures."""
from __future__ import annotations

import pytest

pytest.importorskip("IPython", reason="the Jupyter extension needs IPython (pip install \".[test]\")")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

import starvm  # noqa: E402


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "starvm.ipython")
    for name in ("_star_machine", "m2"):
        shell.user_ns.pop(name, None)
    yield shell
    for name in ("_star_machine", "m2"):
        shell.user_ns.pop(name, None)


def test_cell_magic_keeps_a_machine(ip, capsys):
    ip.run_cell_magic("star", "", "var P: table(3, 4); X: slice(P); n: integer;\n"
                                  "begin ROW(2, P) := BITS('0110'); X := COL(2, P); n := NUMB(X); writeln(n) end.")
    assert capsys.readouterr().out == "1\n"
    m = ip.user_ns["_star_machine"]
    assert isinstance(m, starvm.Machine) and m.globals["n"] == 1
    ip.run_cell_magic("star", "", "n := n + 41\nn\nwriteln(P)")   # the next cell: same machine
    assert capsys.readouterr().out == "42\n0000\n0110\n0000\n"
    assert ip.user_ns["_star_machine"] is m


def test_named_machine_and_backend(ip, capsys):
    ip.run_cell_magic("star", "--machine m2 --backend numpy", "var k: integer;\nk := 3\nk * 2")
    assert capsys.readouterr().out == "6\n"
    assert ip.user_ns["m2"].globals["k"] == 3
    assert "_star_machine" not in ip.user_ns
    ip.run_cell_magic("star", "--machine bad-name", "1")
    assert "--machine takes a Python name" in capsys.readouterr().err


def test_errors_are_star_errors_not_tracebacks(ip, capsys):
    ip.run_cell_magic("star", "", "var n: integer;\nn := 1 div 0\nwriteln('not reached')")
    out = capsys.readouterr()
    text = out.out + out.err
    assert "error: division by zero" in text and "|" in text
    assert "Traceback" not in text and "not reached" not in text
    ip.run_cell_magic("star", "", "begin writeln('abc) end.")
    text = "".join(capsys.readouterr())
    assert "error:" in text and "Traceback" not in text


def test_run_cell_through_the_shell(ip, capsys):
    result = ip.run_cell("%%star\nvar T: table(2, 2);\nROW(1, T) := BITS('01')")
    assert result.success
    result = ip.run_cell("%%star\nT")
    assert isinstance(result.result, starvm.Table) and result.result.shape == (2, 2)


def test_rich_display_png(ip):
    pytest.importorskip("matplotlib")
    ip.run_cell_magic("star", "", "var T: table(2, 3);\nROW(1, T) := BITS('101')")
    table = ip.run_cell_magic("star", "", "T")
    fmt, _ = ip.display_formatter.format(table)
    assert fmt["image/png"][:8] == b"\x89PNG\r\n\x1a\n"
