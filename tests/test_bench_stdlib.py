"""Smoke test of bench/bench_stdlib.py: its --quick mode (tiny R-MAT scales, a few seconds)
writes a JSON with the expected keys, every Star result checked against SciPy."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_stdlib_quick(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_stdlib.py"), "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "stdlib-quick.json").read_text())
    assert (tmp_path / "stdlib-quick.md").read_text().startswith("# starvm stdlib graph benchmark")
    for key in ("benchmark", "quick", "date", "backend", "machine", "graph", "scales", "budget", "method",
                "gpu_goal", "results", "all_correct", "mismatches", "notes", "total_wall_s"):
        assert key in data, key
    assert data["quick"] is True and data["backend"] == "numpy" and data["all_correct"] is True
    for key in ("cpu_model", "cpu_count", "python", "numpy", "scipy", "starvm"):
        assert key in data["machine"], key
    measured = [e for e in data["results"] if e["status"] == "measured"]
    assert {e["algorithm"] for e in measured} == {"PRIM", "KRUSKAL", "DIJKSTRA", "BELLMAN_FORD", "BFS"}
    for e in measured:
        for key in ("scale", "n", "teps_edges", "star_median_s", "scipy_median_s", "ratio_star_vs_scipy",
                    "star_mteps", "scipy_mteps", "correct"):
            assert key in e, key
        assert e["correct"] is True and e["star_median_s"] > 0 and e["scipy_median_s"] > 0
