"""The paper's listings (spec §7) run as printed and compute the transitive closure.

The texts live in tests/listings.py: Listings 1 and 2 verbatim from the spec, and with `: =`
-> `:=` in `i : = STEP(X)` and `COL ( i , P ) : =V` (the paper's scanning errors). The unfixed
text must be accepted too, since the grammar reads `: =` as `:=`. Listing 4 is the project's
`parallel for` form (programs/warshall_adapt.star). All three must give P(i, j) = 1 iff
there is a path of length >= 1 from i to j (so P(i, i) = 1 only where i lies on a cycle).
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import starvm
from listings import LISTING_1, LISTING_1_AS_PRINTED, LISTING_2, LISTING_2_AS_PRINTED, LISTING_4

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "STAR.md"

LISTING_4_FILE = ROOT / "programs" / "warshall_adapt.star"

# name -> (how to load it, the routine to call)
VERSIONS = {
    "listing1": (LISTING_1, "WARSHALL"),
    "listing1-as-printed": (LISTING_1_AS_PRINTED, "WARSHALL"),
    "listing2": (LISTING_2, "WARSHALL-C"),
    "listing2-as-printed": (LISTING_2_AS_PRINTED, "WARSHALL-C"),
    "listing4-parallel-for": (LISTING_4_FILE, "WARSHALL-adapt"),
}


def test_listings_are_verbatim_copies_of_the_spec():
    if not SPEC.exists():
        pytest.skip("the spec is not next to this checkout")
    spec = SPEC.read_text()
    assert LISTING_1 != LISTING_1_AS_PRINTED and LISTING_2 != LISTING_2_AS_PRINTED
    for text in (LISTING_1_AS_PRINTED, LISTING_2_AS_PRINTED):
        assert "```\n" + text + "```" in spec


def test_listing4_is_a_parallel_for():
    text = LISTING_4_FILE.read_text().lower()
    assert "proc warshall-adapt(" in text and "parallel for i := 1 to n do" in text


@pytest.mark.parametrize("path, texts", [
    ("programs/warshall.star", [LISTING_1]),
    ("programs/warshall_c.star", [LISTING_2]),
    ("programs/warshall_adapt.star", [LISTING_4]),
    ("stdlib/warshall.star", [LISTING_1, LISTING_2, LISTING_4]),
    ("tests/star/warshall_listings.star", [LISTING_1_AS_PRINTED, LISTING_2_AS_PRINTED]),
])
def test_star_files_hold_the_same_listings(path, texts):
    """The copies that cannot import tests/listings.py (Star files) are checked against it."""
    text = (ROOT / path).read_text()
    for listing in texts:
        assert listing in text, f"{path} differs from tests/listings.py"


# ---------------------------------------------------------------------------------------
# references

def closure_bfs(adj: np.ndarray) -> np.ndarray:
    """R[i, j] = 1 iff a path of length >= 1 leads from i to j."""
    n = adj.shape[0]
    out = np.zeros((n, n), dtype=bool)
    succ = [np.flatnonzero(adj[i]) for i in range(n)]
    for i in range(n):
        queue = deque(succ[i])
        seen = out[i]
        seen[succ[i]] = True
        while queue:
            u = queue.popleft()
            for v in succ[u]:
                if not seen[v]:
                    seen[v] = True
                    queue.append(v)
    return out


def closure_networkx(adj: np.ndarray) -> np.ndarray:
    # reflexive=False: a self-loop (v, v) only where v lies on a cycle (of length >= 1).
    g = nx.DiGraph()
    g.add_nodes_from(range(adj.shape[0]))
    g.add_edges_from(zip(*np.nonzero(adj)))
    tc = nx.transitive_closure(g, reflexive=False)
    return nx.to_numpy_array(tc, nodelist=range(adj.shape[0]), dtype=bool)


def random_digraph(n: int, seed: int, mean_degree: float = 2.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = min(0.5, mean_degree / n)
    return rng.random((n, n)) < p


def cycle(n: int) -> np.ndarray:
    a = np.zeros((n, n), dtype=bool)
    a[np.arange(n), (np.arange(n) + 1) % n] = True
    return a


def path(n: int) -> np.ndarray:
    a = np.zeros((n, n), dtype=bool)
    a[np.arange(n - 1), np.arange(1, n)] = True
    return a


def special_graphs():
    loops = np.zeros((6, 6), dtype=bool)
    loops[[0, 3], [0, 3]] = True                   # self-loops on 1 and 4
    loops[0, 1] = loops[1, 2] = loops[4, 5] = True
    two_cycles = np.zeros((9, 9), dtype=bool)
    two_cycles[:4, :4] = cycle(4)
    two_cycles[5:, 5:] = cycle(4)
    two_cycles[3, 4] = two_cycles[4, 5] = True     # cycle -> 5 -> cycle
    backward = path(7).T.copy()                    # arcs i+1 -> i: needs pivots in both orders
    return {
        "empty-1": np.zeros((1, 1), dtype=bool),
        "self-loop-1": np.ones((1, 1), dtype=bool),
        "empty-17": np.zeros((17, 17), dtype=bool),
        "complete-9": np.ones((9, 9), dtype=bool),
        "complete-no-loops-8": ~np.eye(8, dtype=bool),
        "self-loops": loops,
        "cycle-70": cycle(70),
        "path-66": path(66),
        "backward-path-7": backward,
        "two-cycles": two_cycles,
        "all-loops-5": np.eye(5, dtype=bool),
    }


def graph_cases():
    cases = {}
    for n in (1, 2, 5, 63, 64, 65, 130):
        seeds = (1, 2, 3) if n <= 5 else (1,)
        for s in seeds:
            cases[f"random-{n}-s{s}"] = random_digraph(n, seed=100 * n + s)
    cases.update(special_graphs())
    return cases


GRAPHS = graph_cases()


@pytest.mark.parametrize("name", list(GRAPHS))
def test_references_agree(name):
    adj = GRAPHS[name]
    ref = closure_bfs(adj)
    assert np.array_equal(ref, closure_networkx(adj))


def test_reference_semantics_on_a_small_example():
    a = np.zeros((4, 4), dtype=bool)
    a[0, 1] = a[1, 0] = a[1, 2] = True             # 1 <-> 2 -> 3, 4 alone
    want = np.array([[1, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=bool)
    assert np.array_equal(closure_bfs(a), want)
    assert np.array_equal(closure_networkx(a), want)


# ---------------------------------------------------------------------------------------
# the listings on every backend

def load_version(machine: starvm.Machine, version: str) -> str:
    src, routine = VERSIONS[version]
    if isinstance(src, Path):
        machine.load_file(src)
    else:
        machine.load(src, f"{version}.star")
    return routine


def closure_by(machine: starvm.Machine, routine: str, adj: np.ndarray) -> np.ndarray:
    P = machine.table(adj)
    result = machine.call(routine, adj.shape[0], P)
    assert result is None
    return P.to_numpy()


@pytest.mark.parametrize("version", list(VERSIONS))
@pytest.mark.parametrize("name", list(GRAPHS))
def test_listing_computes_the_transitive_closure(machine, version, name):
    adj = GRAPHS[name]
    routine = load_version(machine, version)
    got = closure_by(machine, routine, adj)
    want = closure_bfs(adj)
    assert got.shape == adj.shape and got.dtype == bool
    assert np.array_equal(got, want), f"{version} on {name}: {np.argwhere(got != want)[:5]}"


def test_the_three_versions_agree(machine):
    for version in ("listing1", "listing2", "listing4-parallel-for"):
        load_version(machine, version)
    for seed in range(6):
        n = 20 + 9 * seed
        adj = random_digraph(n, seed=seed, mean_degree=1.0 + seed * 0.5)
        a = closure_by(machine, "WARSHALL", adj)
        c = closure_by(machine, "WARSHALL_C", adj)        # the same routine as WARSHALL-C
        d = closure_by(machine, "warshall-ADAPT", adj)
        assert np.array_equal(a, c) and np.array_equal(a, d)
        assert np.array_equal(a, closure_bfs(adj))


def test_warshall_step_counts(machine):
    """Listing 1 reads COL n times; it reads ROW n times plus once per row it rewrites."""
    load_version(machine, "listing1")
    adj = random_digraph(40, seed=5)
    machine.reset_stats()
    got = closure_by(machine, "WARSHALL", adj)
    s = machine.stats
    assert s["COL_GET"] == 40
    assert s["ROW_GET"] == 40 + s["ROW_SET"]
    assert s["STEP"] == s["ROW_SET"] == s["OR"]
    assert 0 < s["ROW_SET"] <= got.sum()


def test_listing_leaves_a_closed_matrix_unchanged(machine):
    load_version(machine, "listing2")
    adj = closure_bfs(random_digraph(30, seed=9))
    assert np.array_equal(closure_by(machine, "WARSHALL-C", adj), adj)


# ---------------------------------------------------------------------------------------
# the three programs through the CLI

EXAMPLE_ARCS = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5), (6, 7)]   # as in the programs' main blocks


def example_closure_lines() -> list[str]:
    a = np.zeros((8, 8), dtype=bool)
    for i, j in EXAMPLE_ARCS:
        a[i - 1, j - 1] = True
    return ["".join("1" if b else "0" for b in row) for row in closure_bfs(a)]


def test_example_closure_by_hand():
    # 1, 2, 3 lie on the cycle and reach 1..5; 4 reaches 5; 6 reaches 7; 5, 7, 8 reach nothing.
    assert example_closure_lines() == [
        "11111000", "11111000", "11111000", "00001000", "00000000", "00000010", "00000000", "00000000"]


def test_cli_runs_the_three_programs_with_the_same_output():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("STARVM_BACKEND", None)
    want = ["transitive closure, read as directed (row i: the vertices reachable from i):"] + example_closure_lines()
    outputs = []
    for prog in ("warshall.star", "warshall_c.star", "warshall_adapt.star"):
        r = subprocess.run([sys.executable, "-m", "starvm", "run", f"programs/{prog}"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
        assert r.stdout.splitlines() == want, prog
        outputs.append(r.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
