"""bench/bench_programs.py (issue 31, the shipped programs end to end) and its SciPy/NumPy side,
bench/programs_reference: the reference makes starvm's generated graphs arc for arc and prints
what each of the 13 programs prints; the bench, run on a tiny graph, writes its table, and
marks a row FAILED (exit 1) when the reference's answer differs from the program's."""
from __future__ import annotations

import contextlib
import io
import json
import sys

import numpy as np
import pytest

import starvm.graphs as sg
from bench import bench_programs
from bench.programs_reference.graphs import generate
from bench.programs_reference.programs import LINES
from starvm.ui.cli import main as star_main
from tests.conftest import ROOT


@pytest.mark.parametrize("spec", ["rmat:scale=6,ef=8,seed=3", "rmat:scale=3,ef=16,seed=7,wmax=1",
                                  "gnp:n=40,p=0.1,seed=2", "gnp:n=1,p=0.5,seed=1", "rmat:scale=0,seed=1"])
def test_reference_graph_is_starvms_arc_for_arc(spec):
    ours, theirs = generate(spec), sg.generate(spec)
    assert ours.n == theirs.n and ours.m == theirs.m
    for a, b in ((ours.src, theirs.src), (ours.dst, theirs.dst), (ours.weight, theirs.weight)):
        assert np.array_equal(a, b)


def test_reference_refuses_what_it_cannot_make():
    for spec in ("ssca2:n=10", "rmat:scale=4,directed=1", "gnp:n=5,q=1"):
        with pytest.raises(ValueError, match="reference"):
            generate(spec)


def test_every_shipped_program_has_a_reference():
    assert sorted(LINES) == bench_programs.PROGRAMS and bench_programs.DENSE <= set(LINES)


# R-MAT leaves vertices isolated: vertex 2 reaches only part of the graph, and there are several
# components; wmax=5 makes ties among the weights. The interpreter (--jit off): the reference
# semantics, and no compiled tier's set-up cost per run.
SPEC, SOURCE = "rmat:scale=4,ef=2,seed=5,wmax=5", 2
# the programs without `const source` (they compute the same for every vertex)
WITHOUT_SOURCE = {"components", "mst_prim", "mst_kruskal", "mst_boruvka", "warshall", "warshall_c", "warshall_adapt"}


def test_reference_prints_what_each_program_prints(backend):
    graph = generate(SPEC)
    for program in sorted(LINES):
        argv = ["run", f"programs/{program}.star", "--generate", SPEC, "--backend", backend, "--jit", "off"]
        if program not in WITHOUT_SOURCE:
            argv += ["--param", f"source={SOURCE}"]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert star_main(argv) == 0, err.getvalue()
        expected = LINES[program](graph, SOURCE)
        assert bench_programs.first_difference(out.getvalue(), "\n".join(expected)) is None, program
        if program == "bfs":
            assert expected[-1].startswith("unreached: ")
        if program == "components":
            assert int(expected[0].split()[2]) > 1


def test_first_difference_says_where():
    assert bench_programs.first_difference("a\nb\n", "a\nb") is None
    assert bench_programs.first_difference("a\nb\n", "a\nc\n") == "line 2: starvm 'b', reference 'c'"
    assert bench_programs.first_difference("a\n", "a\nb\n") == "starvm printed 1 lines, the reference 2"


def test_bench_table_and_a_wrong_answer_fails_its_row(tmp_path):
    """One row, bfs on R-MAT scale 3, every run a real process; the reference, given through
    main's argument, prints a wrong level: the row is FAILED, with its times, and the bench exits 1."""
    def reference(program, spec):
        wrong = ("import subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                 "sys.stderr.write(done.stderr); print(done.stdout.replace('level 1: ', 'level 1: 99 ', 1), end='')")
        return [sys.executable, "-c", wrong, *bench_programs.reference_command(program, spec)]

    def floor(program, spec):          # the floor as plain Python: no seconds of Numba compiles here
        return ["env", "NUMBA_DISABLE_JIT=1", *bench_programs.floor_command(program, spec)]

    out = tmp_path / "e2e"
    rc = bench_programs.main(["--programs", "bfs", "--scale", "3", "--repeat", "1", "--timeout", "100",
                              "--jit", "off", "--out", str(out)], reference=reference, floor=floor)
    assert rc == 1
    doc = json.loads(out.with_suffix(".json").read_text())
    assert doc["benchmark"] == "programs e2e" and doc["backend"] == "numpy" and doc["versions"]["scipy"]
    [row] = doc["results"]
    assert row["graph"] == "rmat:scale=3,ef=16,seed=7" and row["answer"].startswith("reached ")
    assert row["cold_s"] > 0 and len(row["warm_runs_s"]) == 1 and row["warm_s"] > 0 and row["reference_s"] > 0
    assert set(row["reference_phases_s"]) == {"import_s", "generate_s", "compute_s", "print_s"}
    assert row["floor_cold_s"] > 0 and len(row["floor_runs_s"]) == 1 and row["floor_s"] > 0
    assert set(row["floor_phases_s"]) == {"import_s", "generate_s", "compute_s", "print_s"}
    assert row["status"] == "FAILED" and "answers differ: line 3" in row["why"] and "99" in row["why"]
    md = out.with_suffix(".md").read_text().splitlines()
    assert md[0].startswith("# The shipped programs end to end") and "SciPy" in md[2]
    header = next(ln for ln in md if ln.startswith("| program |"))
    assert header.split(" | ")[1:9] == ["graph", "n", "starvm warm s", "starvm cold s", "reference s", "starvm / ref",
                                        "floor s", "starvm / floor"]
    [line] = [ln for ln in md if ln.startswith("| bfs |")]
    cells = line.split(" | ")
    assert cells[2] == "8" and all(float(c) > 0 for c in cells[3:6]) and cells[6].endswith("×")
    assert float(cells[7]) > 0 and cells[8].endswith("×")
    assert "≤ 5× ref or ≤ 1.5× floor" in line and "**FAILED**: answers differ: line 3" in line
    assert "0 of 1 rows without failure" in "\n".join(md)


def _run(out: str, s: float | None = 1.0, rc: int | None = 0, err: str = "") -> dict:
    return {"s": s, "rc": rc, "out": out, "err": err}


def test_judge_compares_the_answers():
    same = "BFS from vertex 1\nreached 3 of 4 vertices\n"
    assert bench_programs.judge("bfs", [_run(same), _run(same)], [_run(same)]) == {"status": "ok", "answer": "reached 3"}
    wrong = bench_programs.judge("bfs", [_run(same)], [_run(same.replace("3 of", "4 of"))])
    assert wrong["status"] == "FAILED" and wrong["why"].startswith("answers differ: line 2")
    assert bench_programs.judge("bfs", [_run(same), _run(same + "x\n")], [_run(same)])["why"] == \
        "starvm's runs printed different outputs"
    crashed = bench_programs.judge("bfs", [_run("", rc=3, err="Traceback\nboom")], [])
    assert crashed == {"status": "FAILED", "why": "star run exit 3: boom"}
    star_error = "p.star:16:3: error: row index 0 out of range (in X)\n   16 | X;\nStar call stack:\n  SCATTER at s:1:1"
    assert bench_programs.judge("bfs", [_run(same), _run("", rc=1, err=star_error)], [])["why"] == \
        "star run exit 1: p.star:16:3: error: row index 0 out of range (in X)"
    assert bench_programs.judge("bfs", [_run("", s=None, rc=None)], [_run(same)]) == \
        {"status": "not checked", "why": "starvm ran past the timeout"}


def _row(**kw):
    row = {"program": "mst_boruvka", "graph": "rmat:scale=18,ef=16,seed=7", "scale": 18, "backend": "cupy",
           "status": "ok", "load_before": 1.0, "load_after": 1.0}
    return {**row, **kw}


def test_timeouts_are_kept_and_targets_judged():
    slow = _row(cold_s=None, warm_runs_s=[None], warm_s=None, reference_runs_s=[2.0], reference_s=2.0,
                status="not checked", why="starvm ran past the timeout")
    fast = _row(cold_s=9.0, warm_runs_s=[2.5], warm_s=2.5, reference_runs_s=[3.0], reference_s=3.0,
                numpy_backend_runs_s=[None], numpy_backend_warm_s=None)
    assert bench_programs.target(slow) == ("≤ 3 s", False)
    assert bench_programs.target(fast) == ("≤ 3 s, < numpy backend", True)
    assert bench_programs.target(_row(program="bfs", scale=12, warm_s=9.0)) == ("—", None)
    cpu = _row(backend="numpy", warm_runs_s=[6.0], warm_s=6.0, reference_s=1.0)
    assert bench_programs.target(cpu) == ("≤ 5× ref", False)
    past = _row(backend="numpy", warm_runs_s=[None], warm_s=None, reference_s=50.0, timeout_s=120.0)
    assert bench_programs.target(past) == ("≤ 5× ref", None)          # > 120 s against 50 s: > 2.4x, unknown
    assert bench_programs.target(dict(past, reference_s=10.0)) == ("≤ 5× ref", False)
    doc = {"method": "m", "timeout_s": 120.0, "backend": "cupy", "results": [slow, fast]}
    text = "\n".join(bench_programs.markdown(doc))
    assert "| > 120 s | > 120 s | 2.00 | > 60× | — | — |" in text and "**not checked**: starvm ran past the timeout" in text
    assert "| 2.50 | 9.00 | 3.00 | 0.8× | — | — | > 120 s | ≤ 3 s, < numpy backend | ✓ |" in text


def test_the_cpu_target_is_met_within_5x_of_the_reference_or_1_5x_of_the_floor():
    cpu = _row(backend="numpy", program="dijkstra", scale=16, warm_runs_s=[6.0], warm_s=6.0, reference_s=1.0)
    text = "≤ 5× ref or ≤ 1.5× floor"
    assert bench_programs.target(dict(cpu, floor_runs_s=[5.0], floor_s=5.0)) == (text, True)      # 1.2x the floor
    assert bench_programs.target(dict(cpu, floor_runs_s=[3.0], floor_s=3.0)) == (text, False)     # 6x, 2x
    assert bench_programs.target(dict(cpu, reference_s=2.0, floor_runs_s=[3.0], floor_s=3.0)) == (text, True)
    assert bench_programs.target(dict(cpu, floor_runs_s=[None], floor_s=None)) == (text, None)    # floor timed out
    past = dict(cpu, warm_runs_s=[None], warm_s=None, timeout_s=120.0, floor_runs_s=[50.0], floor_s=50.0)
    assert bench_programs.target(past) == (text, False)                   # > 120 s: past 5 x 1 s and 1.5 x 50 s
    assert bench_programs.target(dict(past, floor_s=90.0, floor_runs_s=[90.0])) == (text, None)
    doc = {"method": "m", "timeout_s": 120.0, "backend": "numpy",
           "results": [dict(cpu, cold_s=7.0, reference_runs_s=[1.0], floor_runs_s=[5.0], floor_s=5.0)]}
    assert "| 6.00 | 7.00 | 1.00 | 6.0× | 5.00 | 1.2× | ≤ 5× ref or ≤ 1.5× floor | ✓ |" in \
        "\n".join(bench_programs.markdown(doc))


def test_a_floor_whose_answer_differs_fails_the_row():
    same = "BFS from vertex 1\nreached 3 of 4 vertices\n"
    ok = bench_programs.judge("bfs", [_run(same)], [_run(same)], [_run(same), _run(same)])
    assert ok == {"status": "ok", "answer": "reached 3"}
    wrong = bench_programs.judge("bfs", [_run(same)], [_run(same)], [_run(same.replace("3 of", "2 of"))])
    assert wrong["status"] == "FAILED" and wrong["why"] == \
        "the floor's answer differs: line 2: floor 'reached 2 of 4 vertices', reference 'reached 3 of 4 vertices'"
    crashed = bench_programs.judge("bfs", [_run(same)], [_run(same)], [_run("", rc=1, err="RuntimeError: x")])
    assert crashed == {"status": "FAILED", "why": "floor exit 1: RuntimeError: x"}


def test_machine_names_and_out_paths():
    assert bench_programs.machine_name("numpy", {"gpu": {"name": "NVIDIA H200"}}).startswith("cpu")
    assert bench_programs.machine_name("cupy", {"gpu": {"name": "NVIDIA H200"}}) == "h200"
    assert bench_programs.machine_name("cupy", {"gpu": {"name": "NVIDIA H100 80GB HBM3"}}) == "h100"
    assert bench_programs.out_paths(None, "h200") == ROOT / "bench" / "results" / "programs_e2e_h200.json"
    assert bench_programs.out_paths("x.md", "cpu2") == ROOT / "bench" / "results" / "x.json"


def test_budget_and_merge(tmp_path):
    """--budget 0 runs no row and lists them; --merge joins the rows of several files."""
    part = tmp_path / "part"
    assert bench_programs.main(["--programs", "bfs,floyd", "--scale", "5", "--dense-scale", "4", "--budget", "0",
                                "--out", str(part)]) == 0
    doc = json.loads(part.with_suffix(".json").read_text())
    assert doc["results"] == [] and doc["not_run"] == ["bfs rmat:scale=5,ef=16,seed=7", "floyd rmat:scale=4,ef=16,seed=7"]
    assert "Not run (--budget spent): bfs rmat:scale=5" in part.with_suffix(".md").read_text()
    assert doc["floor"] is True and "bench.programs_floor" in doc["method"]     # on by default on the CPU
    none = tmp_path / "none"
    assert bench_programs.main(["--programs", "bfs", "--budget", "0", "--no-floor", "--out", str(none)]) == 0
    doc_none = json.loads(none.with_suffix(".json").read_text())
    assert doc_none["floor"] is False and "programs_floor" not in doc_none["method"]
    done = dict(doc, results=[_row(backend="numpy", program="bfs", graph="rmat:scale=5,ef=16,seed=7", scale=5,
                                   warm_s=1.0, warm_runs_s=[1.0], cold_s=2.0, reference_s=0.5,
                                   reference_runs_s=[0.5], answer="reached 20")], not_run=[])
    other = tmp_path / "other.json"
    other.write_text(json.dumps(done))
    merged = tmp_path / "merged"
    assert bench_programs.main(["--merge", str(part.with_suffix(".json")), str(other), "--out", str(merged)]) == 0
    doc = json.loads(merged.with_suffix(".json").read_text())
    assert [r["program"] for r in doc["results"]] == ["bfs"] and doc["not_run"] == ["floyd rmat:scale=4,ef=16,seed=7"]
    assert "| bfs | scale=5,ef=16,seed=7 | 32 | 1.00 | 2.00 | 0.50 | 2.0× | — | — | ≤ 5× ref | ✓ | reached 20 | ok |" in \
        merged.with_suffix(".md").read_text()
