"""No import circles inside starvm/: every ``import`` of a starvm module, at module level or
inside a function, is an edge of the import graph, and the graph must have no cycle.

Function-level imports count too: a lazy import that closes a circle still ties the two
modules together, it only hides the circle from Python until run time. Importing a
submodule implicitly runs its parent packages' ``__init__``; those implicit edges are not
counted (every submodule has them), only the imports written in the source."""
from __future__ import annotations

from pathlib import Path

from import_graph import modules, package_of
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


# ------------------------------------------------------------------ packages
# "No folder imports one that imports it" (issue 34): the packages of starvm/ (its folders, each
# targets/<target> one of its own, each loose module at the root one of its own) import one
# another one way only. The root package's __init__ (the public facade, which puts the parts
# together) is left out: every part is below it.
#
# Circles of packages not taken apart yet, with what closes them: the test fails on any other
# circle, and on one of these that is gone (take it off the list then).
KNOWN_CIRCLES: dict[frozenset[str], str] = {}


def package_node(module: str, known: dict[str, Path]) -> str | None:
    """The package a module is a node of: ``starvm.jit.tier`` -> ``jit``,
    ``starvm.targets.numba.lower`` -> ``targets/numba``, ``starvm.config`` -> ``config`` (a
    loose module at the root is a node of its own); None for the root package itself."""
    if module == known_root(known):
        return None
    package = package_of(module, known)
    return module.split(".")[1] if package == "starvm" else package


def known_root(known: dict[str, Path]) -> str:
    return min(known, key=len)


def package_graph_of(graph: dict[str, set[str]], known: dict[str, Path]):
    """(package -> the packages it imports, (package, package) -> the module imports between them)."""
    packages: dict[str, set[str]] = {}
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, targets in graph.items():
        pa = package_node(a, known)
        for b in targets:
            pb = package_node(b, known)
            if pa is None or pb is None or pa == pb:
                continue
            packages.setdefault(pa, set()).add(pb)
            edges.setdefault((pa, pb), []).append((a, b))
    return packages, edges


def package_circles(packages: dict[str, set[str]]) -> list[frozenset[str]]:
    """Each group of packages that import one another (directly or around a circle)."""
    return [frozenset(reachable_both_ways(packages, c[0])) for c in all_cycles(packages)]


def test_no_package_imports_one_that_imports_it():
    known = modules()
    packages, edges = package_graph_of(import_graph(), known)
    assert {"runtime", "jit", "backends", "execution", "targets/numba"} <= set(packages)
    found = package_circles(packages)
    new = [c for c in found if c not in KNOWN_CIRCLES]
    gone = [KNOWN_CIRCLES[c] for c in KNOWN_CIRCLES if c not in found]

    def closing(circle):
        return "\n".join(f"    {a} -> {b}" for (pa, pb), pairs in sorted(edges.items())
                         if pa in circle and pb in circle for a, b in pairs)
    assert not new, "packages that import one another:\n" + "\n".join(
        f"  {', '.join(sorted(c))}:\n{closing(c)}" for c in new)
    assert not gone, f"circles taken apart: take them off KNOWN_CIRCLES: {gone}"


def test_the_package_check_sees_a_circle_through_a_function_level_import(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from .run.machine import M\n",      # the facade: left out
        "config.py": "",
        "run/__init__.py": "", "run/machine.py": "from ..jit import tier\nfrom .. import config\n",
        "jit/__init__.py": "", "jit/tier.py": "def f():\n    from ..run import machine\n",
        "values/__init__.py": "", "values/bits.py": "from .. import config\n",
    })
    known = modules(root)
    packages, edges = package_graph_of(import_graph(root), known)
    assert packages == {"run": {"jit", "config"}, "jit": {"run"}, "values": {"config"}}
    assert package_circles(packages) == [frozenset({"jit", "run"})]
    assert edges[("jit", "run")] == [("pkg.jit.tier", "pkg.run.machine")]


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
