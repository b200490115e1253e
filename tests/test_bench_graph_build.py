"""bench/bench_graph_build.py runs (--quick) and writes rows whose tables were checked."""
from __future__ import annotations

import json

from bench import bench_graph_build


def test_quick_run(tmp_path, capsys):
    assert bench_graph_build.main(["--quick", "--out", str(tmp_path / "gb")]) == 0
    data = json.loads((tmp_path / "gb.json").read_text())
    rows = data["rows"]
    assert [r["scale"] for r in rows] == [8, 9, 10]
    assert all(r["m"] > 0 and r["new_s"] > 0 and r["new_peak"] > 0 for r in rows)
    assert rows[0]["old_s"] > 0 and "old_s" not in rows[2]
    # the memory bound: the build's peak within 2x (packed tables + edge list)
    assert all(r["new_peak"] <= 2 * (r["tables_bytes"] + r["edges_bytes"]) for r in rows)
    assert "| 10 |" in (tmp_path / "gb.md").read_text()
