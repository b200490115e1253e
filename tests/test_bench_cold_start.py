"""bench/bench_first_run.py and bench/bench_auto_warm.py (issue 32) on the harness: their star
processes replaced by stand-ins (a real run takes minutes), each writes NAME.json and NAME.md
with the harness's header and its own table, and reads the --profile line it relies on."""
from __future__ import annotations

import json

from bench import bench_auto_warm, bench_first_run

PROFILE = ("  MY_COLLOOP: compiled; from the disk cache at its first call; 1 call(s) ran compiled in 0.0812 s "
           "(compiling or loading it from the cache: 0.0123 s)\n")


def test_auto_warm_writes_its_results(tmp_path, monkeypatch):
    calls = []

    def star(*args, env):
        calls.append(args)
        assert env["STARVM_JIT_CACHE"].endswith("jit") and "STARVM_JIT" not in env
        return (1.0 if "on" in args else 1.5), PROFILE

    monkeypatch.setattr(bench_auto_warm, "star", star)
    assert bench_auto_warm.main(["--runs", "2", "--out", str(tmp_path / "aw")]) == 0
    assert calls[0][0] == "compile" and calls[1][:4] == ("run", calls[1][1], "--jit", "on") and len(calls) == 6
    doc = json.loads((tmp_path / "aw.json").read_text())
    assert doc["benchmark"] == "auto warm" and doc["machine"]["python"] and doc["date"]
    assert doc["median_process_s"] == {"on": 1.0, "auto": 1.5} and doc["ratio_auto_on"] == 1.5 and doc["met"]
    assert doc["every_auto_run_compiled_from_the_first_call"] is True
    assert doc["runs"]["auto"][0]["call_s"] == 0.0812 and doc["runs"]["auto"][0]["load_s"] == 0.0123
    md = (tmp_path / "aw.md").read_text()
    assert md.startswith("# --jit auto against --jit on") and "| auto | 1.500 | 1.500, 1.500 | 0.0812, 0.0812 |" in md
    assert bench_auto_warm.routine_line("MY_COLLOOP: interpreted") == {"compiled": False}


def test_first_run_writes_its_results_case_by_case(tmp_path, monkeypatch):
    runs = []

    def star_run(program, graph, env, *extra, timeout):
        runs.append(extra)
        if graph == "gnp:n=10,p=0.5,seed=1":
            return None, "error: something\n"
        first = not [e for e in runs[:-1] if e == ()]
        return (2.0 if first else 1.0), ("  main block (with BFS, MATCH): compiled; from the disk cache at its first call\n"
                                         "  BFS: compiled; 1 call(s) ran compiled in 0.1 s\n")

    monkeypatch.setattr(bench_first_run, "star_run", star_run)
    monkeypatch.setattr(bench_first_run, "workers_of", lambda folder: 0)
    assert bench_first_run.main(["--programs", "bfs", "--graphs", "bundled;gnp:n=10,p=0.5,seed=1",
                                 "--out", str(tmp_path / "fr")]) == 0
    doc = json.loads((tmp_path / "fr.json").read_text())
    ok, failed = doc["results"]
    assert doc["benchmark"] == "first run" and doc["machine"]["cpu_count"]
    assert ok["first_s"] == 2.0 and ok["warm_s"] == 1.0 and ok["limit_s"] == 3.0 and ok["met"] is True
    assert ok["compiled_in_warm_run"] == ["BFS", "main block"] and failed["first_s"] is None and "something" in failed["error"]
    md = (tmp_path / "fr.md").read_text()
    assert md.startswith("# The first `star run` of each shipped program") and "| bfs | bundled | 2.00 | 1.00 |" in md
    assert "1 of 2 cases meet the target" in md


def test_first_run_kernels_measures_each_tree_cold_kernels_cached_and_warm(tmp_path, monkeypatch):
    runs = []

    def cpu_run(tree, program, graph, env, timeout):
        runs.append((tree.name, env["STARVM_JIT_CACHE"].rsplit("/", 1)[1], env["NUMBA_CACHE_DIR"]))
        cold = len(runs) % 3 == 1
        return (20.0 if cold else 5.0 if len(runs) % 3 == 2 else 1.0), 9.0

    monkeypatch.setattr(bench_first_run, "cpu_run", cpu_run)
    before, after = tmp_path / "before", tmp_path / "after"
    assert bench_first_run.main(["--kernels", "--programs", "bfs", "--graphs", "bundled", "--tree", f"{before}=before",
                                 "--tree", f"{after}=after", "--out", str(tmp_path / "k")]) == 0
    # per tree: cold, then kernels cached (a second compiled-code cache, the same Numba cache), warm in it
    assert [r[:2] for r in runs] == [("before", "a"), ("before", "b"), ("before", "b"),
                                      ("after", "a"), ("after", "b"), ("after", "b")]
    assert runs[0][2] == runs[1][2] != runs[3][2]
    doc = json.loads((tmp_path / "k.json").read_text())
    assert [r["tree"] for r in doc["results"]] == ["before", "after"]
    assert doc["results"][0]["kernels_cpu_s"] == 15.0 and doc["results"][0]["warm_cpu_s"] == 1.0
    assert "| before | bfs | bundled | 20.00 | 5.00 | 15.00 | 1.00 |" in (tmp_path / "k.md").read_text()
