"""starvm/ui/ipython.py: the %%star cell magic in an in-process IPython shell, and rich display
of tables as PNG pictures."""
from __future__ import annotations

import pytest

pytest.importorskip("IPython", reason="the Jupyter extension needs IPython (pip install \".[test]\")")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

import starvm  # noqa: E402
from starvm.ui.ipython import StarCellError  # noqa: E402


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "starvm.ui.ipython")
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
    with pytest.raises(StarCellError, match="--machine takes a Python name"):
        ip.run_cell_magic("star", "--machine bad-name", "1")


def test_errors_are_star_errors_not_tracebacks(ip, capsys):
    with pytest.raises(StarCellError) as e:
        ip.run_cell_magic("star", "", "var n: integer;\nwriteln('before')\nn := 1 div 0\nwriteln('not reached')")
    assert capsys.readouterr().out == "before\n"            # the error is raised, not printed as well
    lines = e.value._render_traceback_()
    assert lines[0] == "<input-3>:1:8: error: division by zero" and lines[1].endswith("| n := 1 div 0")
    with pytest.raises(StarCellError) as e:
        ip.run_cell_magic("star", "", "begin writeln('abc) end.")
    assert "error: unterminated string literal" in e.value.message


def test_a_failing_cell_fails_in_the_shell_without_a_traceback(ip, capsys):
    """Run All stops at a cell whose Star code fails: IPython shows the Star error (the
    exception's _render_traceback_), not a Python traceback."""
    result = ip.run_cell("%%star\nvar k: integer;\nk := 1 div 0")
    assert not result.success and isinstance(result.error_in_exec, StarCellError)
    shown = "".join(capsys.readouterr())
    assert "<input-2>:1:8: error: division by zero" in shown
    assert "Traceback" not in shown and "StarCellError" not in shown and "ipython.py" not in shown
    result = ip.run_cell("%%star\n:vars nonsense")            # a :command's error fails the cell too
    assert not result.success and "usage: :vars [--all]" in "".join(capsys.readouterr())
    assert ip.run_cell("%%star\nk := 2\nk").success            # the machine goes on
    assert "2\n" in capsys.readouterr().out


def test_backend_of_an_existing_machine_is_not_silently_ignored(ip, capsys):
    ip.run_cell_magic("star", "--backend numpy", "var k: integer;\nk := 5")
    ip.run_cell_magic("star", "--backend numpy", "k")          # the same backend: fine
    assert capsys.readouterr().out == "5\n"
    with pytest.raises(StarCellError) as e:
        ip.run_cell_magic("star", "--backend auto", "k")
    assert e.value.message.startswith("%%star: the machine _star_machine runs on the numpy backend; "
                                      "--backend auto chooses the backend of a new machine")
    assert "%%star --machine NAME --backend auto" in e.value.message and "del _star_machine" in e.value.message
    assert capsys.readouterr().out == ""                        # nothing ran
    ip.run_cell_magic("star", "--machine m2 --backend auto", "var j: integer;\nj := 1\nj")
    assert capsys.readouterr().out == "1\n" and ip.user_ns["m2"].backend.name == "auto"


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
