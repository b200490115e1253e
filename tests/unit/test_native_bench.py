"""bench/bench_natives_gpu.py, which decides which GPU native kernels go (issue 10 item 4): its
verdict rule on made-up rows, and one run of the script on the auto backend's emulated device
(no GPU needed: the user-named bodies run interpreted there), whose results and steps must
equal the library calls'."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, subprocess_env

from bench import bench_natives_gpu as bench


def row(routine, n, library_s, compiled_s, route="native kernel", compiled_route="compiled (GPU tier)"):
    return {"routine": routine, "n": n, "library_s": library_s, "compiled_s": compiled_s,
            "ratio": compiled_s / library_s, "library_route": route, "compiled_route": compiled_route}


def test_a_kernel_goes_only_within_the_bound_at_every_size():
    got = bench.verdicts([
        row("MATCH", 1 << 20, 1.0, 1.9), row("MATCH", 1 << 27, 1.0, 2.0),         # within 2x at both: goes
        row("HIT", 1 << 20, 1.0, 2.1), row("HIT", 1 << 27, 1.0, 1.1),             # past it at one size: stays
        row("GATHER", 16384, 1.0, 1.5),                                           # another file's kernel
        row("MIN", 1 << 20, 1.0, 1.2, compiled_route="interpreted"),              # no compiled body to compare
        row("SETMIN", 1 << 20, 0.3, 0.3, route="compiled (GPU tier)"),            # no kernel any more
    ])
    assert got["MATCH"] == ("goes", 2.0)
    assert got["HIT"][0] == "stays" and abs(got["HIT"][1] - 2.1) < 1e-12
    assert got["GATHER"][0].startswith("would go")
    assert got["MIN"][0].startswith("stays (the body ran interpreted")
    assert got["SETMIN"] == ("no kernel (the library call ran compiled (GPU tier))", None)


def test_user_library_renames_every_routine_with_a_kernel():
    text = bench.user_library().upper()
    for name in bench.SEARCH + bench.ROWS:
        assert f"PROC MY_{name}(" in text and f"PROC {name}(" not in text
    assert "PROC MY_WARSHALL_ADAPT(" in text


def test_one_run_on_the_emulated_device(tmp_path):
    out = tmp_path / "natives"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_natives_gpu.py"), "--backend", "auto", "--quick",
                        "--only", "MATCH,MIN,COMPACT", "--runs", "1", "--out", str(out)],
                       env=subprocess_env(STARVM_AUTO_EMULATE="1", STARVM_AUTO_GPU_ROWS="1", STARVM_AUTO_GPU_BITS="0"),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.with_suffix(".json").read_text())
    rows = {res["routine"]: res for res in doc["results"]}
    assert set(rows) == {"MATCH", "MIN", "COMPACT"} and all(res["equal"] for res in rows.values())
    gpu = rows["MIN"]["compiled_route"] != "interpreted"           # auto's device is a real GPU here
    assert rows["MIN"]["library_route"] == "native kernel"            # the device's kernel
    assert rows["MATCH"]["library_route"] == ("compiled (GPU tier)" if gpu else "interpreted")   # its kernel went
    assert doc["verdicts"]["MATCH"]["verdict"].startswith("no kernel")
    verdict = doc["verdicts"]["MIN"]["verdict"]
    assert verdict in ("stays", "goes") if gpu else verdict.startswith("stays (the body ran interpreted")
    assert "| MIN |" in out.with_suffix(".md").read_text()
