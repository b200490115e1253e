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


def test_whole_runs_and_another_checkout(tmp_path):
    """--e2e times whole `star run` processes (start-up alone, and reading the graph); --before
    runs the same commands with another checkout's starvm first on PYTHONPATH (here a stand-in
    that notes its arguments)."""
    other = tmp_path / "before" / "starvm"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    (other / "__main__.py").write_text(
        f"import sys\nopen({str(tmp_path / 'calls')!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n")
    assert bench_graph_build.main(["--scales", "6", "--old-scales", "none", "--no-memory", "--e2e", "--repeat", "1",
                                   "--before", str(tmp_path / "before"), "--out", str(tmp_path / "e2e")]) == 0
    data = json.loads((tmp_path / "e2e.json").read_text())
    [row] = data["rows"]
    assert row["star_run_now_s"] > 0 and row["star_run_now_cpu_s"] > 0 and row["star_run_before_s"] > 0
    assert data["meta"]["startup_now_s"] > 0 and data["meta"]["startup_before_cpu_s"] >= 0
    assert row["undirected_s"] >= 0 and row["undirected_sort_s"] > 0
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 4 and sum("rmat:scale=6,ef=16,seed=2015" in c for c in calls) == 2
    assert all(c.startswith("run ") and "--jit off --backend numpy" in c for c in calls)
    md = (tmp_path / "e2e.md").read_text()
    assert "star run s (before)" in md and "Start-up (now" in md
