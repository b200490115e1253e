"""bench/tiers_e2e_json.py: the lines of bench/tiers_e2e_pairs.sh as JSON (the figures
docs/figures.toml checks in bench/results/tiers_e2e_h200host.json come from it)."""
from __future__ import annotations

import json
from pathlib import Path

from bench.tiers_e2e_json import parse

ROOT = Path(__file__).resolve().parents[1]

LINES = """\
bfs scale=14 jit=off rc=0 5.58 s
bfs scale=14 jit=on rc=0 16.21 s
bfs scale=14 jit=on rc=0 3.90 s
bfs same output
dijkstra scale=14 jit=off rc=124 85.11 s
dijkstra scale=14 jit=on rc=0 9.00 s
dijkstra scale=14 jit=on rc=0 8.00 s
dijkstra OUTPUT DIFFERS
bfs_adapt cupy scale=14 jit=off rc=0 43.22 s
""".splitlines(keepends=True)


def test_lines_become_one_record_per_program_and_backend():
    rows = {(r["program"], r["backend"]): r for r in parse(LINES)["results"]}
    bfs = rows[("bfs", "numpy")]
    assert (bfs["off_s"], bfs["on_cold_s"], bfs["on_warm_s"], bfs["same_output"]) == (5.58, 16.21, 3.90, True)
    assert bfs["off_over_warm"] == 1.43
    slow = rows[("dijkstra", "numpy")]
    assert slow["off_rc"] == 124 and "off_over_warm" not in slow      # a killed run gives no ratio
    assert slow["same_output"] is False
    assert rows[("bfs_adapt", "cupy")]["on_warm_s"] is None


def test_the_committed_results_are_what_the_parser_makes_of_their_lines():
    md = (ROOT / "bench" / "results" / "tiers_e2e_h200host.md").read_text().splitlines(keepends=True)
    committed = json.loads((ROOT / "bench" / "results" / "tiers_e2e_h200host.json").read_text())
    assert parse(md)["results"] == committed["results"]
