"""No import circles inside starvm/: every ``import`` of a starvm module, at module level or
inside a function, is an edge of the import graph, and the graph must have no cycle.

Function-level imports count too: a lazy import that closes a circle still ties the two
modules together, it only hides the circle from Python until run time. Importing a
submodule implicitly runs its parent packages' ``__init__``; those implicit edges are not
counted (every submodule has them), only the imports written in the source."""
from __future__ import annotations

from pathlib import Path

from import_graph import module_graph as import_graph   # tests/import_graph.py: modules, imported


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None (depth-first search, three colours)."""
    state: dict[str, int] = {}     # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def all_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that import one another (each strongly
    connected component of two or more modules), so that a failure names every group at once."""
    cycles, done = [], set()
    while (cycle := find_cycle({a: bs - done for a, bs in graph.items() if a not in done})) is not None:
        cycles.append(cycle)
        done.update(reachable_both_ways(graph, cycle[0]))
    return cycles


def reachable_both_ways(graph: dict[str, set[str]], start: str) -> set[str]:
    def reach(edges):
        seen, todo = {start}, [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen
    reverse: dict[str, set[str]] = {}
    for a, bs in graph.items():
        for b in bs:
            reverse.setdefault(b, set()).add(a)
    return reach(graph) & reach(reverse)


def test_starvm_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 30 and graph["starvm.api"] >= {"starvm.runtime.machine"}
    cycles = all_cycles(graph)
    assert cycles == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_function_level_circle_is_found(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "api.py": "def f():\n    from .run.machine import M\n",
        "run/__init__.py": "",
        "run/machine.py": "from ..api import f\n",
    })
    assert find_cycle(import_graph(root)) == ["pkg.api", "pkg.run.machine", "pkg.api"]


def test_from_package_import_module_and_absolute_imports(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from . import a\n",
        "a.py": "import pkg.b\n",
        "b.py": "from pkg import c\n",
        "c.py": "from . import a\n",        # a -> b -> c -> a
    })
    graph = import_graph(root)
    assert graph["pkg.b"] == {"pkg.c"} and graph["pkg"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]


def test_every_group_of_circles_is_named(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n", "b.py": "from . import c\n", "c.py": "from . import a, b\n",
        "x.py": "def f():\n    from . import y\n", "y.py": "from . import x\n",
        "z.py": "from . import a, x\n",
    })
    assert all_cycles(import_graph(root)) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"], ["pkg.x", "pkg.y", "pkg.x"]]


def test_one_way_imports_pass(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from .api import f\n",
        "api.py": "from .run.machine import M\nfrom . import util\n",
        "util.py": "",
        "run/__init__.py": "",
        "run/machine.py": "from .. import util\nfrom ..util import *\n",
    })
    assert find_cycle(import_graph(root)) is None
