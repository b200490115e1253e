"""bench/frontier_shrink.py: the frontier-shrinking variants of BFS-adapt and BELLMAN_FORD-adapt
it measures (Star code in the script) give the library routines' results and SciPy's (the
script stops otherwise), on every backend, and the results file holds both timings."""
from __future__ import annotations

import json


from bench import frontier_shrink


def test_variants_match_the_library_and_scipy(backend, tmp_path):
    out = tmp_path / "shrink"
    assert frontier_shrink.main(["--scales", "6", "--runs", "1", "--backend", backend, "--out", str(out)]) == 0
    rows = json.loads(out.with_suffix(".json").read_text())["results"]
    assert [(r["routine"], r["scale"]) for r in rows] == [("BFS-adapt", 6), ("BELLMAN_FORD-adapt", 6)]
    assert all(r["library_s"] > 0 and r["variant_s"] > 0 and r["cpu_ratio"] > 0 for r in rows)
    assert "| BFS-adapt | 6 |" in out.with_suffix(".md").read_text()
