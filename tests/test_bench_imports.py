"""bench/ and tests/ import each other without editing sys.path (issue 34): the tests import the
bench scripts as bench.NAME and the scripts the tests' helpers as tests.NAME, the checkout being
on sys.path (pytest's pythonpath setting; an editable install or PYTHONPATH=. for a script, as
bench/README.md says). A script's own folder is on sys.path when it runs, so its siblings
import by name."""
from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT, subprocess_env

EDIT = re.compile(r"sys\.path\s*(?:\.\s*(?:insert|append|extend|remove)\s*\(|\[[^\]]*\]\s*=|\+=|=(?!=))")


def test_no_file_edits_sys_path():
    files = [p for folder in ("bench", "tests", "starvm") for p in (ROOT / folder).rglob("*.py")
             if "results" not in p.relative_to(ROOT).parts]
    edits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in files
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if EDIT.search(line) and not line.lstrip().startswith("#")]
    assert not edits, "sys.path edited (import through the bench/tests namespace packages instead):\n" + "\n".join(edits)
    path = "sys." "path"      # split, so that this file does not match itself
    assert EDIT.search(path + ".insert(0, x)") and EDIT.search(path + "[:0] = [a]") and not EDIT.search("p in " + path)


def test_scripts_import_the_tests_helpers_as_a_package():
    """fuzz_differential.py and fuzz_frontend.py import tests.reference as `python bench/X.py`."""
    for script in ("fuzz_differential.py", "fuzz_frontend.py"):
        r = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--help"], capture_output=True, text=True,
                           timeout=120, env=subprocess_env(), cwd=ROOT / "bench")
        assert r.returncode == 0 and "usage" in r.stdout, (script, r.stdout + r.stderr)


def test_scripts_import_each_other_as_bench_modules():
    """`from bench.bench_compiled import X`, never `from bench_compiled import X` (which needs
    bench/ itself on sys.path: it fails where the tests import the script as bench.NAME)."""
    import ast
    scripts = {p.stem for p in (ROOT / "bench").glob("*.py")}
    bare = [f"{p.name}:{node.lineno}: {node.module}" for p in sorted((ROOT / "bench").glob("*.py"))
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module in scripts
            or isinstance(node, ast.Import) and any(a.name in scripts for a in node.names)]
    assert not bare, "bench scripts imported by a bare name:\n" + "\n".join(bare)
