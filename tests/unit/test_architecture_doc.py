"""docs/architecture.md drawn from the code: its table of packages names every package of
starvm/ and exactly the packages each one imports (tests/import_graph.py computes them), its
diagram shows every package; the files the docs and starvm's comments name exist (a moved
module leaves no stale name behind); every package's docstring names its modules."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from import_graph import package_graph, table_rows

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ROW = re.compile(r"^\| `([^`]+)` \| (.*) \| (.*) \|$", re.M)


def doc_table() -> dict[str, tuple[str, str]]:
    """The doc's table of packages: package -> (what it holds, its imports column)."""
    section = DOC.read_text().split("## The packages", 1)[1].split("\n## ", 1)[0]
    return {name: (what.strip(), deps.strip()) for name, what, deps in ROW.findall(section)}


def package_name(src: str) -> str:
    return "starvm/*.py" if src == "starvm" else f"{src}/"


def test_table_of_packages_is_the_import_graph():
    graph = package_graph()
    table = doc_table()
    what = {src: table.get(package_name(src), ("", ""))[0] for src in graph}
    want = table_rows(graph, what)[2:]
    have = [f"| `{name}` | {w} | {deps} |" for name, (w, deps) in table.items()]
    assert have == want, ("docs/architecture.md's table of packages is not the code's import graph; "
                          "its rows should read (python tests/import_graph.py prints them):\n" + "\n".join(want))
    assert all(w for w, _ in table.values()), "every package's row says what it holds"


def test_diagram_shows_every_package():
    diagram = DOC.read_text().split("```", 2)[1]
    missing = [src for src in package_graph() if src not in ("starvm", "targets") and f"{src}/" not in diagram]
    assert not missing, f"the diagram at the top of docs/architecture.md leaves out {missing}"


def test_import_graph_sees_relative_and_function_level_imports(tmp_path):
    """The graph the doc is checked against: a module's package is its folder (targets' folders
    each one), relative and lazy imports count, a package's own modules are no edge."""
    pkg = tmp_path / "starvm"
    for folder in ("", "a", "targets", "targets/x", "targets/y"):
        (pkg / folder).mkdir(exist_ok=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "config.py").write_text("")
    (pkg / "a" / "m.py").write_text("from . import n\nfrom ..targets.x import r\n")
    (pkg / "a" / "n.py").write_text("def f():\n    from starvm.targets.y.s import g\n    from .. import config\n")
    (pkg / "targets" / "x" / "r.py").write_text("from ...a import n\n")
    (pkg / "targets" / "y" / "s.py").write_text("import os\n")
    assert package_graph(pkg) == {"starvm": set(), "a": {"targets/x", "targets/y", "starvm"},
                                  "targets": set(), "targets/x": {"a"}, "targets/y": set()}


PATH = re.compile(r"(?<![\w/.<>-])((?:[a-z_0-9]+/)*[a-z_0-9]+\.(?:py|cu|cuh|star|lark|toml))\b")


def _checkout_files() -> set[str]:
    """Every file of the checkout as its path from the top, ``starvm/ui/cli.py``."""
    files = {p.name for p in ROOT.iterdir() if p.is_file()}
    for folder in ("starvm", "tests", "bench", "stdlib", "grammar", "programs", "data", "docs"):
        files |= {str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*") if p.is_file()}
    return files


def _stale(text: str, where: str, files: set[str]) -> list[str]:
    """The files ``text`` names that the checkout lacks. A path (`jit/tier.py`, `shared/rows.cu`)
    is the end of a file's path; a module named alone (`cache.py`, `prelude.cu`) is a file's
    name (a Star program named alone, `prog.star`, is an example, not looked up)."""
    names = {f.rpartition("/")[2] for f in files}
    stale = []
    for path in sorted(set(PATH.findall(text))):
        if "/" in path:
            found = path in files or any(f.endswith("/" + path) for f in files)
        else:
            found = path in names or not path.endswith((".py", ".cu", ".cuh"))
        if not found:
            stale.append(f"{where}: {path}")
    return stale


def test_files_the_docs_name_exist():
    """A file the docs name (`runtime/machine.py`, `starvm/ui/cli.py`, `cache.py`) is a file
    of the checkout."""
    files = _checkout_files()
    stale = [s for doc in DOCS for s in _stale(doc.read_text(), doc.name, files)]
    assert not stale, f"the docs name files the checkout does not have: {stale}"


def test_files_the_code_names_exist():
    """So is a file starvm's docstrings and comments name: a module moved leaves no stale
    name behind."""
    files = _checkout_files()
    stale = [s for source in sorted((ROOT / "starvm").rglob("*.py"))
             for s in _stale(source.read_text(), str(source.relative_to(ROOT)), files)]
    assert not stale, f"starvm's sources name files the checkout does not have: {stale}"


def test_every_package_docstring_names_its_modules():
    """Each package's docstring says what it holds: it names every module and sub-package in
    it (native/'s routine folders are named by ``registry.ROUTINES``, which the docstring cites)."""
    from starvm.native.registry import ROUTINES
    missing = []
    for init in sorted((ROOT / "starvm").rglob("__init__.py")):
        folder = init.parent
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        parts = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
        parts += [d.name for d in folder.iterdir() if (d / "__init__.py").exists()]
        if folder.name == "native":
            parts = [p for p in parts if p not in ROUTINES]
        missing += [f"{folder.relative_to(ROOT)}: {p}" for p in sorted(parts)
                    if not re.search(rf"(?<![\w]){re.escape(p)}(?![\w])", doc)]
    assert not missing, f"package docstrings that leave out a module: {missing}"
