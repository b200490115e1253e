"""Smoke tests of bench/bench_stdlib.py on the NumPy backend, tiny R-MAT scales (a few seconds):
the command line end to end, the options (--backend, --scales, --probes, --fallback,
--algorithms, --budget, --cap, --runs, --out), the skip rule, the watchdog, the mismatch exit,
the output names, the packed adjacency table and the per-iteration cost model."""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parent.parent

from bench import bench_stdlib as bs

ROW_KEYS = ("algorithm", "scale", "n", "edges", "star_median_s", "scipy_median_s", "ratio_star_vs_scipy",
            "star_mteps", "scipy_mteps", "steps", "steps_total", "native_calls", "us_per_op", "status", "correct")


def test_cli_end_to_end(tmp_path):
    """One command as on the device machine, with every new option, writes PREFIX.{json,md}."""
    prefix = tmp_path / "sb"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_stdlib.py"), "--backend", "numpy",
                           "--scales", "5-6", "--probes", "4", "--fallback", "none", "--runs", "2",
                           "--budget", "60", "--cost-scale", "4", "--out", str(prefix)],
                          capture_output=True, text=True, timeout=300, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "sb.json").read_text())
    md = (tmp_path / "sb.md").read_text()
    assert md.startswith("# starvm stdlib graph benchmark")
    assert "## Cost model" in md and "| algorithm | scale |" in md
    # the end of the output holds the results table (the device reply shows only the tail)
    assert "| BFS | 6 |" in proc.stdout[-3000:]
    for key in ("benchmark", "date", "backend", "backend_resolved", "device", "device_info", "machine", "graph",
                "scales", "budget", "method", "results", "all_correct", "mismatches", "errors", "notes",
                "cost_model", "complete", "total_wall_s"):
        assert key in data, key
    assert data["backend"] == "numpy" and data["all_correct"] is True and data["complete"] is True
    assert data["scales"] == {"probe": [4], "main": [5, 6], "fallback": []}
    for key in ("cpu_model", "cpu_count", "python", "numpy", "scipy", "starvm", "git"):
        assert key in data["machine"], key
    ran = [e for e in data["results"] if e["status"] == "ran"]
    assert {e["algorithm"] for e in ran} == set(bs.ALGORITHMS)
    assert {e["scale"] for e in ran} == {4, 5, 6}
    for e in ran:
        for key in ROW_KEYS:
            assert key in e, key
        assert e["correct"] is True and e["star_median_s"] > 0 and e["scipy_median_s"] > 0
        assert 1 <= len(e["star_runs_s"]) <= 2 and e["steps_total"] == sum(e["steps"].values()) > 0
    assert set(data["cost_model"]["algorithms"]) == set(bs.ALGORITHMS)


def test_quick_mode_folder_output(tmp_path):
    """--quick with --out FOLDER keeps the old file names (stdlib-quick.*)."""
    rc = bs.main(["--quick", "--algorithms", "prim,bfs", "--runs", "1", "--out", str(tmp_path)])
    assert rc == 0
    data = json.loads((tmp_path / "stdlib-quick.json").read_text())
    assert data["quick"] is True and data["all_correct"] is True
    assert {e["algorithm"] for e in data["results"] if e["status"] == "ran"} == {"PRIM", "BFS"}
    assert (tmp_path / "stdlib-quick.md").exists()


def test_skip_rule_and_fallback(tmp_path, capsys, monkeypatch):
    """A run estimated above the per-run cap is skipped with its reason, the algorithm's larger
    scales too; the fallback scales are tried when the first main scale is out of reach. The
    watchdog is off: a first run (no estimate yet) gets 1.5x this tiny cap, which a loaded
    machine passes; the skips asked about come from the estimates."""
    monkeypatch.setattr(bs, "watchdog", lambda limit_s: contextlib.nullcontext())
    rc = bs.main(["--backend", "numpy", "--scales", "8-9", "--probes", "4,5", "--fallback", "6",
                  "--algorithms", "KRUSKAL,BFS", "--cap", "0.002", "--runs", "1", "--budget", "60",
                  "--cost-scale", "4", "--out", str(tmp_path / "skip")])
    assert rc == 0
    data = json.loads((tmp_path / "skip.json").read_text())
    rows = {(e["algorithm"], e["scale"]): e for e in data["results"] if e["status"] != "model"}
    assert rows[("KRUSKAL", 4)]["status"] == "ran"          # the first run has no estimate
    # scale 5 runs on a quiet machine; on a loaded one its estimate may already pass the cap
    assert rows[("KRUSKAL", 5)]["status"] == "ran" or rows[("KRUSKAL", 5)]["status"].startswith("skipped: estimated")
    for s in (8, 9):
        assert rows[("KRUSKAL", s)]["status"].startswith("skipped: estimated"), rows[("KRUSKAL", s)]["status"]
        assert rows[("KRUSKAL", s)]["n"] == 1 << s
    assert any("fallback" in note for note in data["notes"])
    assert "skipped: estimated" in capsys.readouterr().out
    assert data["all_correct"] is True


def test_mismatch_fails_loudly(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bs, "check", lambda alg, star, ref: "forced mismatch")
    rc = bs.main(["--scales", "4", "--probes", "none", "--fallback", "none", "--algorithms", "BFS",
                  "--runs", "1", "--budget", "30", "--cost-scale", "4", "--out", str(tmp_path / "bad")])
    assert rc == 1
    captured = capsys.readouterr()
    assert "MISMATCH" in captured.out and "MISMATCH" in captured.err
    data = json.loads((tmp_path / "bad.json").read_text())
    assert data["all_correct"] is False and data["mismatches"]
    assert "MISMATCH" in (tmp_path / "bad.md").read_text()


def test_json_written_after_every_row(tmp_path, monkeypatch):
    writes = []
    real = bs.write_outputs
    monkeypatch.setattr(bs, "write_outputs", lambda data, paths: (writes.append(len(data["results"])),
                                                                   real(data, paths)))
    assert bs.main(["--scales", "4-5", "--probes", "none", "--fallback", "none", "--algorithms", "PRIM,DIJKSTRA",
                    "--runs", "1", "--budget", "30", "--cost-scale", "4", "--out", str(tmp_path / "p")]) == 0
    assert [1, 2, 3, 4] == [w for w in writes if 1 <= w <= 4][:4]      # one write per finished row


def test_watchdog_stops_a_run():
    import starvm
    # interpreted: a signal is handled between Python bytecodes, so it stops interpreted Star code
    # at once but compiled code only when its call returns (and compiled DIJKSTRA at scale 8 ends
    # before the watchdog's 0.05 s floor)
    m = starvm.Machine(backend="numpy", jit="off")
    g = bs.make_graph(8)
    inputs = bs.Inputs(m, g)
    m.call("SETNUM", 0, m.word([False]))         # load the library first, as the warm-up does
    times, res, steps, natives, status = bs.star_run(m, "DIJKSTRA", g, inputs, 3, 0.02, None)
    assert times == [] and status.startswith("timeout")
    times, res, steps, natives, status = bs.star_run(m, "DIJKSTRA", g, inputs, 1, None, None)   # still usable
    assert status == "ran" and bs.check("DIJKSTRA", res, bs._scipy_call("dijkstra", g, g.weight_matrix())) is None


def test_packed_adjacency_is_graph_adj():
    import starvm
    for scale in (3, 6, 7):
        g = bs.make_graph(scale)
        for backend in ("numpy",):
            t = bs.adjacency_table(starvm.Machine(backend=backend), g)
            assert np.array_equal(np.asarray(t.to_numpy(), bool), g.adjacency())


def test_names_and_parsing(tmp_path):
    assert bs.parse_scales("14-18") == [14, 15, 16, 17, 18]
    assert bs.parse_scales("8-9,12") == [8, 9, 12] and bs.parse_scales("none") == []
    with pytest.raises(ValueError):
        bs.parse_scales("9-8")
    assert bs.parse_algorithms("bfs,prim") == ["PRIM", "BFS"]
    with pytest.raises(ValueError):
        bs.parse_algorithms("DFS")
    assert bs.slug("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3"
    ap = type("A", (), {})
    for backend, quick, out, want in [("numpy", False, None, ROOT / "bench" / "results" / "stdlib.json"),
                                      ("cupy", False, None, ROOT / "bench" / "results" / "stdlib_cupy_h100-80gb-hbm3.json"),
                                      ("auto", True, str(tmp_path), tmp_path / "stdlib_auto_h100-80gb-hbm3-quick.json"),
                                      ("cupy", False, str(tmp_path / "x.json"), tmp_path / "x.json")]:
        a = ap()
        a.backend, a.quick, a.out = backend, quick, out
        js, md = bs.output_paths(a, backend, "NVIDIA H100 80GB HBM3")
        assert js == want and md == want.with_suffix(".md")
    # the plan: probes and fallback below the first main scale, closer on a GPU backend
    a = ap()
    a.quick, a.scales, a.probes, a.fallback, a.budget, a.cap, a.runs, a.algorithms, a.cost_scale = \
        False, "14-18", None, None, None, None, 3, None, None
    p = bs.plan(a, "numpy")
    assert (p["probes"], p["fallback"], p["budget"], p["cap"]) == ([10, 11], [12, 13], 420.0, 105.0)
    p = bs.plan(a, "cupy")
    assert (p["probes"], p["fallback"]) == ([8, 9], [10, 11, 12, 13])


def test_cost_model_counts():
    """The per-iteration cost model comes from the step counters: its totals equal a plain
    call's Machine.stats, and on a backend with a native MIN its steps leave the count (MATCH
    has no kernel: the GPU tier compiles its body)."""
    cm = bs.cost_model(5, "cupy", ["PRIM", "BFS"])
    prim = cm["algorithms"]["PRIM"]
    g = bs.make_graph(5)
    import starvm
    m = starvm.Machine(backend="numpy")
    args = bs.star_args(m, "PRIM", g, bs.Inputs(m, g))
    m.call("PRIM", *args)
    assert prim["steps"] == m.last_call_stats
    assert prim["iterations"]["count"] == g.n
    assert sum(prim["by_length"].values()) == prim["steps_total"]
    assert "MIN" in cm["backend_natives"] and "MATCH" not in cm["backend_natives"]
    assert prim["subroutines"]["MATCH"]["calls"] == 2 * g.n
    assert prim["ops_on_backend"] == (prim["steps_total"] - prim["steps_in_native_subroutines"]
                                      + prim["native_calls"]) < prim["steps_total"]
    assert cm["algorithms"]["BFS"]["by_length"]["E"] == 0          # BFS works on n x n, not on arcs


def test_boruvka_device_memory_estimate():
    """The estimate that keeps a BORUVKA run off a GPU it cannot fit: R-MAT scale 24 fits an
    H100 (78 GiB), scale 25 only an H200 (139 GiB); it grows with the arcs; it is at least
    the input and key tables themselves."""
    def need(scale):
        n = 1 << scale
        return bs.boruvka_device_bytes(n, int(bs.ARCS_PER_VERTEX * n), 7)
    assert need(24) < 0.9 * 78 * 2**30 < need(25) < 0.9 * 139 * 2**30
    assert need(20) < need(21) < need(22)
    n, arcs = 1 << 22, int(bs.ARCS_PER_VERTEX * (1 << 22))
    assert need(22) > arcs * (2 * 23 + 7 + 7 + 2 * 23) / 8
    assert bs.parse_algorithms("boruvka") == ["BORUVKA"]


def test_profile_option_adds_the_per_routine_table(tmp_path):
    """--profile: one more run per main row with Machine.profile; its report (time per
    operation kind and per routine, the routines' counters not lost to the reset before it)
    goes to the JSON and to a Markdown section."""
    prefix = tmp_path / "p"
    assert bs.main(["--quick", "--algorithms", "BORUVKA", "--profile", "--probes", "none", "--out", str(prefix)]) == 0
    data = json.loads((tmp_path / "p.json").read_text())
    rows = [e for e in data["results"] if e.get("profile")]
    assert rows and all(e["role"] == "main" for e in rows)
    assert "GATHER (stdlib/rows.star" in rows[0]["profile"] and "BORUVKA_ROUNDS" in rows[0]["profile"]
    md = (tmp_path / "p.md").read_text()
    assert "## Profiles" in md and "per routine" in md
