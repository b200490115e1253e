"""Configuration is read in starvm/config.py only (issue 34): no other module of starvm/ reads
an environment variable (os.environ[...], os.environ.get, `in os.environ`, os.getenv).
Copying the environment for a child process (dict(os.environ)) and setting a variable for one
are not reads of configuration."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "starvm"

# modules that still read variables themselves, with what they read (to move to config.py)
KNOWN: dict[str, str] = {
}


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
            and node.value.id == "os")


def reads(source: str) -> list[int]:
    """The lines of ``source`` that read an environment variable."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load):
            found.append(node.lineno)
        elif isinstance(node, ast.Attribute) and _is_environ(node.value) and node.attr in ("get", "copy", "items",
                                                                                           "keys", "values"):
            found.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            found.append(node.lineno)
        elif (isinstance(node, ast.Attribute) and node.attr == "getenv" and isinstance(node.value, ast.Name)
              and node.value.id == "os"):
            found.append(node.lineno)
    return sorted(found)


def test_only_config_reads_the_environment():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "config.py":
            continue
        lines = reads(path.read_text())
        if lines:
            found[rel] = lines
    assert "config.py" not in found and len(list(ROOT.rglob("*.py"))) > 50
    new = {rel: lines for rel, lines in found.items() if rel not in KNOWN}
    assert not new, f"environment variables read outside starvm/config.py (file: lines): {new}"
    gone = [rel for rel in KNOWN if rel not in found]
    assert not gone, f"these read no variable any more: take them off KNOWN: {gone}"


def test_the_check_tells_reads_from_copies_and_writes():
    source = ("import os\n"
              "a = os.environ['A']\n"
              "b = os.environ.get('B')\n"
              "c = 'C' in os.environ\n"
              "d = os.getenv('D')\n"
              "env = dict(os.environ)\n"
              "os.environ['E'] = '1'\n")
    assert reads(source) == [2, 3, 4, 5]
