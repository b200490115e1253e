"""What `star run` does before the program runs: the parser's tables come from the cache
folder when they are there (frontend/parser.py), and building the command line loads no
harness or benchmark code (starvm.benchmarking imports its modules on first use)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from starvm.frontend import parser

PROGRAM = "program p; var x: integer; begin x := 2 + 3 * 4; if x > 3 then writeln(x) end."


@pytest.fixture
def fresh_parser(tmp_path, monkeypatch):
    """_lark() built anew, its cache folder an empty temporary one."""
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path / "jit"))
    parser._lark.cache_clear()
    yield tmp_path / "jit"
    parser._lark.cache_clear()


def tables(folder: Path) -> list[Path]:
    return sorted(folder.glob("star-parser-*.lark"))


def test_tables_are_kept_and_read_back(fresh_parser):
    built = parser.parse(PROGRAM)
    [kept] = tables(fresh_parser)
    stamp = kept.stat().st_mtime_ns
    parser._lark.cache_clear()
    again = parser.parse(PROGRAM)              # from the file this time: not written again
    assert repr(again) == repr(built)
    assert tables(fresh_parser) == [kept] and kept.stat().st_mtime_ns == stamp
    assert not list(fresh_parser.glob("*.part"))
    with pytest.raises(Exception) as bad:      # syntax errors read the same from the loaded tables
        parser.parse("program p; begin x := end.")
    parser._lark.cache_clear()
    kept.unlink()
    with pytest.raises(Exception) as bad_built:
        parser.parse("program p; begin x := end.")
    assert str(bad.value) == str(bad_built.value)


def test_a_damaged_file_is_built_again(fresh_parser):
    parser.parse(PROGRAM)
    [kept] = tables(fresh_parser)
    kept.write_bytes(b"not a parser")
    parser._lark.cache_clear()
    assert repr(parser.parse(PROGRAM)) == repr(parser.parse(PROGRAM))
    assert kept.read_bytes() != b"not a parser"      # written anew


def test_a_folder_that_cannot_be_written_still_parses(fresh_parser, monkeypatch):
    fresh_parser.parent.joinpath("jit").write_text("a file where the folder should be")
    assert parser.parse(PROGRAM).main


def test_star_run_loads_no_harness():
    """`star run`'s command line (every subcommand's options) without starvm.benchmarking's
    modules, which the names of the package still reach."""
    code = ("import sys, json; from starvm.ui.cli import _parser; _parser(); "
            "import starvm.benchmarking as b; before = sorted(m for m in sys.modules if m.startswith('starvm.benchmarking')); "
            "b.clock; print(json.dumps([before, 'starvm.benchmarking.timing' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    loaded, timing_after = json.loads(out.stdout)
    assert loaded == ["starvm.benchmarking", "starvm.benchmarking.cli"] and timing_after


def test_a_name_like_its_module_is_the_function_whichever_name_came_first():
    """starvm.benchmarking's `watchdog` is watchdog.py's function, also after another name of
    that module (RunTimeout) imported it: the import system had made the package's attribute
    the submodule, and `from starvm.benchmarking import watchdog` then gave a module."""
    code = ("import types; from starvm.benchmarking import RunTimeout; from starvm.benchmarking import watchdog; "
            "print(isinstance(watchdog, types.ModuleType), callable(watchdog), RunTimeout.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "RunTimeout"]
