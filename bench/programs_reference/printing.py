"""What the graph programs print, from their answers (levels, distances, a forest's size and
weight, component labels), word for word: shared by the SciPy reference (programs.py) and the
Numba floors (bench/programs_floor), NumPy only so that the floors do not import SciPy."""
from __future__ import annotations

import numpy as np

from .graphs import Arcs


def numbers(values) -> str:
    return " ".join(map(str, np.asarray(values).tolist()))


def level_lines(g: Arcs, source: int, level: np.ndarray) -> list[str]:
    """What bfs.star prints from the levels (-1: unreached)."""
    lines = [f"BFS from vertex {source}: {g.n} vertices, {g.m} arcs, read as directed"]
    reached = level >= 0
    by_level = np.argsort(np.where(reached, level, g.n + 1), kind="stable")
    counts = np.bincount(level[reached])
    start = 0
    for d, count in enumerate(counts.tolist()):
        lines.append(f"level {d}: {numbers(by_level[start:start + count] + 1)}")
        start += count
    lines.append(f"reached {int(reached.sum())} of {g.n} vertices")
    if not reached.all():
        lines.append(f"unreached: {numbers(np.flatnonzero(~reached) + 1)}")
    return lines


def distance_lines(g: Arcs, source: int, name: str, dist: np.ndarray) -> list[str]:
    finite = np.isfinite(dist)
    lines = [f"shortest paths from vertex {source} ({name}): {g.n} vertices, {g.m} arcs, "
             f"{int(finite.sum())} reached, read as directed"]
    text = np.where(finite, np.where(finite, dist, 0).astype(np.int64).astype(str), "unreachable")
    lines += [f"  to {v}: {t}" for v, t in enumerate(text.tolist(), 1)]
    return lines


def mst_lines(g: Arcs, name: str, edges: int, total: int) -> list[str]:
    """What mst_prim.star, mst_kruskal.star and mst_boruvka.star print from the forest."""
    return [f"minimum spanning forest ({name}): {g.n} vertices, {g.m} arcs, read as undirected",
            f"tree edges: {edges}", f"total weight: {total}", f"trees: {g.n - edges}"]


def component_lines(g: Arcs, labels: np.ndarray) -> list[str]:
    """What components.star prints from any labelling of the vertices by component."""
    _, labels = np.unique(labels, return_inverse=True)
    count = int(labels.max()) + 1 if g.n else 0
    first = np.full(count, g.n, dtype=np.int64)
    np.minimum.at(first, labels, np.arange(g.n))
    sizes = np.bincount(labels, minlength=count)
    order = np.argsort(first)
    lines = [f"connected components: {count} ({g.n} vertices, {g.m} arcs), read as undirected"]
    lines += [f"component of vertex {f}: {s} vertices"
              for f, s in zip((first[order] + 1).tolist(), sizes[order].tolist())]
    return lines
