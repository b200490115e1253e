"""BFS-adapt on deep graphs (stdlib/graphs.star, BFS_LEVELS): a narrow frontier's arcs come
from a MATCH per vertex and their heads one arc at a time, a wide one's from GATHER and
SCATTER. On a graph hundreds of levels deep (levels of two vertices, arcs back to earlier
levels, so the live arcs stay many) the levels equal SciPy's BFS on every backend, on the
interpreter and the compiled tier, and GATHER runs only for the wide frontiers; the programs
bfs.star and bfs_adapt.star print the same levels for such a graph read from a file."""
from __future__ import annotations

import io

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

import starvm

from test_bfs_shrink import levels_of


def deep_arcs(levels: int, back: int, seed: int):
    """Vertices 2l+1, 2l+2 at level l from vertex 1 (both arcs between consecutive levels and
    inside a level), plus `back` random arcs to earlier levels (they shorten no path)."""
    rng = np.random.default_rng(seed)
    arcs = set()
    for lv in range(levels - 1):
        a, b, c, d = 2 * lv + 1, 2 * lv + 2, 2 * lv + 3, 2 * lv + 4
        for x in (a, b):
            for y in (c, d):
                arcs |= {(x, y), (y, x)}
        arcs |= {(a, b), (b, a)}
    n = 2 * levels
    while len(arcs) < 6 * levels + back:
        u, v = (int(x) for x in rng.integers(1, n + 1, 2))
        if (v - 1) // 2 < (u - 1) // 2:
            arcs.add((u, v))
    src, dst = (np.array(x, np.int64) for x in zip(*sorted(arcs)))
    return n, src, dst


@pytest.mark.parametrize("jit", ["off", "on"])
def test_bfs_adapt_on_a_deep_graph_keeps_bfs_levels_and_gathers_only_wide_frontiers(backend, jit):
    n, src, dst = deep_arcs(150, 900, 3)
    m = starvm.Machine(backend=backend, out=io.StringIO(), jit=jit)
    c = int(n).bit_length()
    left, right = m.table_from_ints(src, c), m.table_from_ints(dst, c)
    m.call("NUMOF", m.word(np.zeros(3, bool)))                 # loads graphs.star
    gathers = []
    if jit == "off":
        gather = m.ns["r_gather"]
        m.ns["r_gather"] = lambda *a: gathers.append(1) or gather(*a)
    p = csr_matrix((np.ones(len(src)), (src - 1, dst - 1)), shape=(n, n))
    b = c + 1
    for s in (1, 101):
        L = m.table(np.zeros((n, b), bool))
        m.call("BFS-adapt", n, s, left, right, L)
        ref = shortest_path(p, unweighted=True, indices=s - 1)
        assert levels_of(L) == np.where(np.isinf(ref), 2 ** b - 1, ref).astype(np.int64).tolist()
    if jit == "off":
        assert len(gathers) < 10, len(gathers)          # about 150 + 100 levels, nearly all narrow


def test_bfs_and_bfs_adapt_print_the_same_levels_of_a_deep_graph_file(tmp_path):
    from starvm.ui.cli import main
    import contextlib
    n, src, dst = deep_arcs(120, 600, 4)
    f = tmp_path / "deep.txt"
    f.write_text("# levels of two vertices\n" + "".join(f"{u} {v}\n" for u, v in zip(src, dst)))
    outs = {}
    for prog in ("bfs", "bfs_adapt"):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = main(["run", f"programs/{prog}.star", "--graph", str(f)])
        outs[prog] = (rc, buf.getvalue())
    assert outs["bfs"] == outs["bfs_adapt"]
    assert outs["bfs"][0] == 0 and "level 119: 239 240\n" in outs["bfs"][1]
    assert f"reached {n} of {n} vertices" in outs["bfs"][1]
