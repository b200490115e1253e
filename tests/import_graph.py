"""The import graph of starvm/, by module and by package (docs/architecture.md's table of
packages is checked against it: tests/unit/test_architecture_doc.py).

    python tests/import_graph.py          # the packages table, as docs/architecture.md has it

Every ``import`` of a starvm module counts, at module level or inside a function (a lazy import
still ties two modules together). A module's package is its folder under starvm/, except that
the targets' folders (targets/python, targets/numba, ...) are packages of their own; the loose
modules at the root (api, config, errors, ...) are the package ``starvm``."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "starvm"
SPLIT = {"targets"}       # folders whose sub-folders are drawn as packages of their own


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package ``root``."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``path`` (module ``name``) imports anywhere in its body.
    ``from P import x`` is an import of the module ``P.x`` when there is one, else of ``P``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in known else module)
    return {m for m in found if m in known and m != name}


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def package_of(module: str, known: dict[str, Path]) -> str:
    """``starvm.jit.tier`` -> ``jit``, ``starvm.targets.numba.lower`` -> ``targets/numba``,
    ``starvm.config`` -> ``starvm`` (a loose module at the root)."""
    parts = module.split(".")[1:]
    if module in known and known[module].name != "__init__.py":
        parts = parts[:-1]        # a module's package is its folder
    if not parts:
        return "starvm"
    depth = 2 if parts[0] in SPLIT and len(parts) > 1 else 1
    return "/".join(parts[:depth])


def package_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Package -> the other packages its modules import (``starvm``: the loose root modules)."""
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, targets in module_graph(root).items():
        src = package_of(name, known)
        graph.setdefault(src, set()).update(package_of(t, known) for t in targets)
    for src in graph:
        graph[src].discard(src)
    return graph


def imports_cell(deps: set[str]) -> str:
    """The table's imports column: the packages, the root's modules left out (any package
    may read config, errors and types)."""
    return ", ".join(f"`{d}/`" for d in sorted(deps - {"starvm"})) or "—"


def table_rows(graph: dict[str, set[str]], what: dict[str, str] | None = None) -> list[str]:
    """docs/architecture.md's table of packages: one row per package, what it holds (from
    ``what``, the doc's own words) and the packages it imports."""
    what = what or {}
    rows = ["| package | what it holds | imports |", "| --- | --- | --- |"]
    for src in sorted(graph, key=lambda p: (p == "starvm", p)):
        name = "starvm/*.py" if src == "starvm" else f"{src}/"
        rows.append(f"| `{name}` | {what.get(src, '')} | {imports_cell(graph[src])} |")
    return rows


if __name__ == "__main__":
    print("\n".join(table_rows(package_graph())))
