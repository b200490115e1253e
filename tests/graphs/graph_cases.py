"""The graphs of the correctness suite and their references (NetworkX and SciPy).

A case is n vertices 1..n and an arc list (u, v, w), 1-based, weights >= 0: the real graphs
NetworkX ships (each undirected edge once, as NetworkX lists it, and as both arcs) and small
made-up lists with the shapes that broke or could break a routine: many tied weights,
distinct weights, zero weights, one arc, two arcs, disconnected parts, isolated vertices,
self-loops, repeated arcs. Directed routines read the list as a digraph; the MST routines
read every row as an undirected edge.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree, shortest_path


@dataclass(frozen=True)
class Case:
    name: str
    n: int
    arcs: tuple          # ((u, v, w), ...), 1-based

    @property
    def a(self) -> np.ndarray:
        return np.asarray(self.arcs, dtype=np.int64).reshape(-1, 3)

    def both_ways(self) -> "Case":
        back = tuple((v, u, w) for u, v, w in self.arcs if u != v)
        return Case(self.name + "+reverse", self.n, self.arcs + back)

    def __str__(self) -> str:
        return self.name


def _from_nx(name: str, G, weighted: bool) -> Case:
    ids = {v: i + 1 for i, v in enumerate(G.nodes())}
    arcs = tuple((ids[u], ids[v], int(d.get("weight", 1)) if weighted else 1) for u, v, d in G.edges(data=True))
    return Case(name, len(ids), arcs)


def real_cases() -> list[Case]:
    """Each undirected edge once, as NetworkX lists it (the SNAP-file form)."""
    return [_from_nx("karate", nx.karate_club_graph(), True),
            _from_nx("lesmis", nx.les_miserables_graph(), True),
            _from_nx("florentine", nx.florentine_families_graph(), False),
            _from_nx("davis", nx.davis_southern_women_graph(), False)]


def _random_arcs(rng, n: int, m: int, weights) -> tuple:
    u = rng.integers(1, n + 1, m)
    v = rng.integers(1, n + 1, m)
    keep = u != v
    return tuple(zip(u[keep].tolist(), v[keep].tolist(), weights(keep.sum()).tolist()))


def made_up_cases() -> list[Case]:
    rng = np.random.default_rng(20)
    ties = _random_arcs(rng, 30, 70, lambda k: rng.integers(1, 3, k))                  # weights 1, 2
    distinct = _random_arcs(rng, 30, 70, lambda k: rng.permutation(k) + 1)
    zeros = _random_arcs(rng, 25, 60, lambda k: rng.integers(0, 3, k) * rng.integers(0, 2, k))
    parts = tuple((u, v, w) for u, v, w in _random_arcs(rng, 9, 20, lambda k: rng.integers(1, 5, k))) + \
        tuple((u + 10, v + 10, w) for u, v, w in _random_arcs(rng, 8, 16, lambda k: rng.integers(1, 5, k)))
    return [
        Case("ties", 30, ties),
        Case("distinct", 30, distinct),
        Case("zero-weights", 25, zeros),
        Case("one-arc", 2, ((1, 2, 5),)),
        Case("one-arc-isolated", 4, ((3, 2, 1),)),
        Case("two-arcs", 2, ((1, 2, 3), (2, 1, 3))),
        Case("two-arcs-path", 3, ((2, 3, 4), (1, 2, 0))),
        Case("disconnected-isolated", 20, parts),                                      # 9, 18..20 isolated
        Case("self-loops", 6, ((1, 1, 0), (1, 2, 3), (2, 2, 1), (2, 3, 2), (3, 1, 1), (5, 5, 4), (4, 5, 2))),
        Case("duplicates", 7, ((1, 2, 3), (1, 2, 3), (2, 1, 1), (2, 3, 2), (2, 3, 2), (3, 2, 7), (4, 5, 1),
                               (4, 5, 1), (5, 4, 1), (1, 3, 9), (3, 3, 2), (6, 4, 5))),          # 7 isolated
        Case("only-self-loop", 3, ((2, 2, 1),)),
    ]


def all_cases() -> list[Case]:
    return real_cases() + made_up_cases()


# ------------------------------------------------------------------ references
def digraph(case: Case) -> nx.MultiDiGraph:
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(1, case.n + 1))
    G.add_weighted_edges_from(case.arcs)
    return G


def multigraph(case: Case) -> nx.MultiGraph:
    G = nx.MultiGraph()
    G.add_nodes_from(range(1, case.n + 1))
    G.add_weighted_edges_from(case.arcs)
    return G


def adjacency(case: Case) -> np.ndarray:
    A = np.zeros((case.n, case.n), dtype=bool)
    a = case.a
    A[a[:, 0] - 1, a[:, 1] - 1] = True
    return A


def mst_reference(case: Case) -> tuple[int, int]:
    """(total weight, number of trees) of the minimum spanning forest of the rows read as
    undirected edges, by NetworkX; SciPy (on the least weight of each pair, zero weights
    as a tiny positive value so that they stay edges) must agree."""
    G = multigraph(case)
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    weight = int(sum(d["weight"] for _, _, d in nx.minimum_spanning_edges(G, keys=False, data=True)))
    trees = nx.number_connected_components(G)
    dense = np.full((case.n, case.n), np.inf)
    for u, v, w in case.arcs:
        if u != v:
            x = min(u, v) - 1, max(u, v) - 1
            dense[x] = min(dense[x], w)
    eps = 1e-9
    sp = np.where(np.isinf(dense), 0, np.where(dense == 0, eps, dense))
    t = minimum_spanning_tree(csr_matrix(sp))
    assert round(t.sum()) == weight, "NetworkX and SciPy disagree"
    return weight, trees


def check_spanning_forest(case: Case, chosen: np.ndarray) -> None:
    """The chosen rows: the reference's total weight, no self-loop, no cycle, one tree per
    connected part (so n - trees edges)."""
    weight, trees = mst_reference(case)
    rows = case.a[np.flatnonzero(chosen)]
    assert int(rows[:, 2].sum()) == weight, f"total weight {rows[:, 2].sum()}, NetworkX {weight}"
    assert len(rows) == case.n - trees, f"{len(rows)} edges for {case.n} vertices in {trees} trees"
    parent = list(range(case.n + 1))

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for u, v, _ in rows:
        ru, rv = root(int(u)), root(int(v))
        assert ru != rv, f"edge {u}-{v} closes a cycle (or is a self-loop)"
        parent[ru] = rv


def bfs_levels(case: Case, s: int) -> dict[int, int]:
    return nx.single_source_shortest_path_length(digraph(case), s)


def distances(case: Case, s: int) -> dict[int, int]:
    """Single-source distances by NetworkX (repeated arcs: the least; zero weights kept)."""
    d = nx.single_source_dijkstra_path_length(digraph(case), s, weight="weight")
    return {v: int(x) for v, x in d.items()}


def all_pairs(case: Case) -> np.ndarray:
    """All-pairs distances by SciPy's Floyd-Warshall (inf: unreachable; 0 on the diagonal)."""
    dense = np.full((case.n, case.n), np.inf)
    for u, v, w in case.arcs:
        dense[u - 1, v - 1] = min(dense[u - 1, v - 1], w)
    np.fill_diagonal(dense, 0)
    from scipy.sparse.csgraph import csgraph_from_dense
    return shortest_path(csgraph_from_dense(dense, null_value=np.inf), method="FW")


def closure(case: Case) -> np.ndarray:
    """P(i, j) = 1 iff a path of one or more arcs leads from i to j (SciPy reachability);
    NetworkX's transitive closure must agree."""
    A = adjacency(case)
    reach = np.isfinite(shortest_path(csr_matrix(A.astype(float)), unweighted=True))   # paths of >= 0 arcs
    C = (A.astype(np.int64) @ reach.astype(np.int64)) > 0
    T = nx.transitive_closure(nx.DiGraph(adjacency_edges(A, case.n)), reflexive=False)
    N = np.zeros_like(C)
    for u, v in T.edges():
        N[u - 1, v - 1] = True
    assert (N == C).all(), "SciPy and NetworkX closures disagree"
    return C


def adjacency_edges(A: np.ndarray, n: int) -> nx.DiGraph:
    G = nx.DiGraph()
    G.add_nodes_from(range(1, n + 1))
    G.add_edges_from((int(i) + 1, int(j) + 1) for i, j in zip(*np.nonzero(A)))
    return G


def components(case: Case) -> tuple[int, list[int]]:
    """(count, the smallest vertex of every vertex's component) of the rows read as
    undirected edges (NetworkX); SciPy's count must agree."""
    G = multigraph(case)
    label = [0] * (case.n + 1)
    comps = list(nx.connected_components(G))
    for c in comps:
        first = min(c)
        for v in c:
            label[v] = first
    A = adjacency(case)
    assert connected_components(csr_matrix(A | A.T), directed=False)[0] == len(comps)
    return len(comps), label[1:]
