"""The statement hook costs nothing when neither debugging nor tracing: ordinary machines
generate no `_dbg` call at all; the debugger's machines generate one per statement."""
from __future__ import annotations

from pathlib import Path

import pytest

import starvm
from starvm.debug.events import debug_machine, statement_lines

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "programs").glob("warshall*.star")) + [ROOT / "programs" / "bfs_adapt.star"]


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_no_hook_without_the_debugger(backend, path):
    m = starvm.Machine(backend=backend)
    m.compile(path.read_text(), path.name)
    assert all("_dbg" not in unit.source for unit in m.units.values())
    d = debug_machine(backend=backend)
    d.compile(path.read_text(), path.name)
    assert any("_dbg()" in unit.source for unit in d.units.values())
    lines = statement_lines(d)[path.name]
    # every line with an event holds a statement of the source (not a comment or a declaration)
    text = path.read_text().split("\n")
    assert lines and all(text[n - 1].strip() and not text[n - 1].strip().startswith(("{", "var ")) for n in lines)
