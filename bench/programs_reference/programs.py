"""The jobs of the 13 shipped programs (programs/*.star) done with SciPy and NumPy: one function
per program, taking the graph and the source vertex and returning the lines the Star program
prints, word for word, so that the benchmark compares the two outputs whole.

Each uses the SciPy routine of its algorithm (scipy.sparse.csgraph: breadth_first_order,
dijkstra, bellman_ford, floyd_warshall, minimum_spanning_tree, connected_components) and NumPy
for Warshall's transitive closure (the algorithm itself, on rows packed 8 bits a byte).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.sparse import csgraph

from .graphs import Arcs
from .printing import component_lines, distance_lines, level_lines, mst_lines


def bfs_lines(g: Arcs, source: int) -> list[str]:
    """bfs.star and bfs_adapt.star: the vertices level by level, then the unreached ones."""
    order, pred = csgraph.breadth_first_order(g.csr(), source - 1, directed=True, return_predecessors=True)
    level = np.full(g.n, -1, dtype=np.int64)
    level[source - 1] = 0
    pred_of = pred.tolist()
    lv = level.tolist()
    for v in order[1:].tolist():          # BFS order: a vertex's predecessor comes before it
        lv[v] = lv[pred_of[v]] + 1
    return level_lines(g, source, np.asarray(lv, dtype=np.int64))


def dijkstra_lines(g: Arcs, source: int) -> list[str]:
    return distance_lines(g, source, "Dijkstra", csgraph.dijkstra(g.csr(), directed=True, indices=source - 1))


def _bellman_ford(g: Arcs, source: int, name: str) -> list[str]:
    return distance_lines(g, source, name, csgraph.bellman_ford(g.csr(), directed=True, indices=source - 1))


def bellman_ford_lines(g: Arcs, source: int) -> list[str]:
    return _bellman_ford(g, source, "Bellman-Ford")


def bellman_ford_adapt_lines(g: Arcs, source: int) -> list[str]:
    return _bellman_ford(g, source, "Bellman-Ford-adapt")


def _mst(name: str) -> Callable[[Arcs, int], list[str]]:
    def lines(g: Arcs, source: int) -> list[str]:
        tree = csgraph.minimum_spanning_tree(g.csr())
        return mst_lines(g, name, int(tree.nnz), int(round(tree.sum())))
    lines.__name__ = f"mst_{name.lower()}_lines"
    return lines


def components_lines(g: Arcs, source: int) -> list[str]:
    """components.star: the number of components, then each one's first vertex and size."""
    _, labels = csgraph.connected_components(g.csr(), directed=False)
    return component_lines(g, labels)


def floyd_lines(g: Arcs, source: int) -> list[str]:
    """floyd.star: reachable ordered pairs, the sum of their distances, the longest shortest
    path (the first in row order), the distances from the source."""
    d = csgraph.floyd_warshall(g.csr(), directed=True)
    n = g.n
    off = ~np.eye(n, dtype=bool)
    reach = np.isfinite(d) & off
    pairs = int(reach.sum())
    lines = [f"all-pairs shortest paths (Floyd): {n} vertices, {g.m} arcs, read as directed",
             f"reachable ordered pairs: {pairs} of {n * (n - 1)}",
             f"sum of their distances: {int(d[reach].astype(np.int64).sum())}"]
    if pairs:
        flat = int(np.argmax(np.where(reach, d, -1.0)))
        lines.append(f"longest shortest path: {int(d.flat[flat])} ({flat // n + 1} -> {flat % n + 1})")
    row = d[source - 1]
    words = np.where(np.isfinite(row), np.where(np.isfinite(row), row, 0).astype(np.int64).astype(str), "-")
    lines.append(f"from vertex {source}: " + " ".join(words.tolist()))
    return lines


def closure(g: Arcs) -> np.ndarray:
    """The transitive closure by Warshall's algorithm on packed rows: for every pivot k, each
    row i with P(i, k) = 1 gets row k or-ed in. An n x n bool matrix."""
    n = g.n
    adj = np.zeros((n, n), dtype=bool)
    adj[g.src - 1, g.dst - 1] = True
    packed = np.packbits(adj, axis=1)              # row i: bytes, bit k of row i at byte k // 8
    del adj
    for k in range(n):
        rows = np.flatnonzero(packed[:, k >> 3] & (0x80 >> (k & 7)))
        if rows.size:
            packed[rows] |= packed[k]
    return np.unpackbits(packed, axis=1, count=n).astype(bool)


def warshall_lines(g: Arcs, source: int) -> list[str]:
    """warshall.star, warshall_c.star, warshall_adapt.star: the closure, one row of 0/1 a line."""
    chars = (closure(g).view(np.uint8) + ord("0")).astype(np.uint8)
    head = "transitive closure, read as directed (row i: the vertices reachable from i):"
    return [head, *(row.tobytes().decode() for row in chars)]


LINES: dict[str, Callable[[Arcs, int], list[str]]] = {
    "bfs": bfs_lines, "bfs_adapt": bfs_lines,
    "dijkstra": dijkstra_lines, "bellman_ford": bellman_ford_lines, "bellman_ford_adapt": bellman_ford_adapt_lines,
    "mst_prim": _mst("Prim"), "mst_kruskal": _mst("Kruskal"), "mst_boruvka": _mst("Boruvka"),
    "components": components_lines, "floyd": floyd_lines,
    "warshall": warshall_lines, "warshall_c": warshall_lines, "warshall_adapt": warshall_lines,
}
