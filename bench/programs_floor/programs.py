"""Each graph program's floor end to end: its tables packed as GRAPH_ADJ / GRAPH_EDGES pack them
(the widths of the program's declarations: GRAPH_VBITS, GRAPH_WBITS), its stdlib routine by
hand (floors.py), and its answer read out and printed with the reference's formatting."""
from __future__ import annotations

from typing import Callable

import numpy as np

from bench.programs_reference.graphs import Arcs
from bench.programs_reference.printing import component_lines, distance_lines, level_lines, mst_lines

from . import floors
from .bitslice import pack, unpack


def _bits(g: Arcs) -> tuple[int, int]:
    """GRAPH_VBITS (the least c with 2^c > n) and GRAPH_WBITS (bits of the largest weight)."""
    return max(1, g.n.bit_length()), max(1, int(g.weight.max()).bit_length() if g.m else 1)


def _edges(g: Arcs, weight_bits: int):
    c, _ = _bits(g)
    return pack(g.src, c), pack(g.dst, c), pack(g.weight, weight_bits)


def _levels(g: Arcs, source: int, table: np.ndarray) -> list[str]:
    level = unpack(table, g.n)
    inf = (1 << table.shape[0]) - 1
    return level_lines(g, source, np.where(level == inf, -1, level))


def bfs(g: Arcs, source: int) -> list[str]:
    c, _ = _bits(g)
    return _levels(g, source, floors.bfs(g.n, source - 1, g.src, g.dst, c + 1))


def bfs_adapt(g: Arcs, source: int) -> list[str]:
    c, _ = _bits(g)
    left, right, _w = _edges(g, _bits(g)[1])     # GRAPH_EDGES(A, B, WT): the weights packed too
    return _levels(g, source, floors.bfs_adapt(g.n, source - 1, left, right, g.m, c + 1))


def components(g: Arcs, source: int) -> list[str]:
    c, _ = _bits(g)
    table, _count = floors.components(g.n, g.src, g.dst, c)
    return component_lines(g, unpack(table, g.n))


def _distances(routine, name: str):
    def lines(g: Arcs, source: int) -> list[str]:
        c, wb = _bits(g)
        left, right, weight = _edges(g, c + wb)
        d = unpack(routine(g.n, source - 1, left, right, weight, g.m), g.n)
        return distance_lines(g, source, name, np.where(d == (1 << (c + wb)) - 1, np.inf, d.astype(np.float64)))
    return lines


def _forest(routine, name: str):
    def lines(g: Arcs, source: int) -> list[str]:
        left, right, weight = _edges(g, _bits(g)[1])
        edges, total = floors.tree_weight(routine(g.n, left, right, weight, g.m), weight)
        return mst_lines(g, name, int(edges), int(total))
    return lines


FLOORS: dict[str, Callable[[Arcs, int], list[str]]] = {
    "bfs": bfs, "bfs_adapt": bfs_adapt, "components": components,
    "dijkstra": _distances(floors.dijkstra, "Dijkstra"),
    "bellman_ford": _distances(floors.bellman_ford, "Bellman-Ford"),
    "bellman_ford_adapt": _distances(floors.bellman_ford_adapt, "Bellman-Ford-adapt"),
    "mst_prim": _forest(floors.prim, "Prim"), "mst_kruskal": _forest(floors.kruskal, "Kruskal"),
    "mst_boruvka": _forest(floors.boruvka, "Boruvka"),
}
