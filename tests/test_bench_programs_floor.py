"""bench/programs_floor (issue 31's floors): every graph program's stdlib routine hand-written in
Numba on the bit-sliced layout prints what the SciPy reference prints, on small R-MAT graphs
(ties among the weights, isolated vertices, several components, a source reaching part of
the graph) and on one vertex. The floors run as plain Python here (NUMBA_DISABLE_JIT=1, in a
child process: Numba reads it at import): the same code the compiled floors run, without
seconds of Numba compiles in the suite; the benchmark runs them compiled."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from bench import bench_programs
from bench.programs_floor import PROGRAMS
from tests.conftest import ROOT

# (spec, source, the floors to run: all when None); scale 8 gives BFS-adapt frontiers wide
# enough for its GATHER / SCATTER path (more than 64 * live / NROWS(left) vertices)
SPECS = [("rmat:scale=6,ef=8,seed=3", 1, None), ("rmat:scale=7,ef=4,seed=1,wmax=3", 2, None),
         ("rmat:scale=4,ef=2,seed=5,wmax=5", 2, None), ("gnp:n=1,p=0.5,seed=1", 1, None),
         ("rmat:scale=8,ef=16,seed=7", 1, ["bfs_adapt", "bfs", "mst_prim"])]

CHECK = """
import json, sys
from bench.programs_floor.programs import FLOORS
from bench.programs_reference.graphs import generate
from bench.programs_reference.programs import LINES
out = {"floors": sorted(FLOORS), "differ": []}
for spec, source, programs in json.loads(sys.argv[1]):
    g = generate(spec)
    for program in programs or sorted(FLOORS):
        if FLOORS[program](g, source) != LINES[program](g, source):
            out["differ"].append([program, spec])
print(json.dumps(out))
"""


def _plain_python_env() -> dict:
    return {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(ROOT)}


def test_every_floor_prints_the_reference_answer():
    done = subprocess.run([sys.executable, "-c", CHECK, json.dumps(SPECS)], cwd=ROOT, env=_plain_python_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert tuple(out["floors"]) == PROGRAMS and set(PROGRAMS) <= set(bench_programs.PROGRAMS)
    assert out["differ"] == []


def test_floor_command_prints_the_answer_and_its_phases():
    spec = "rmat:scale=5,ef=4,seed=2"
    cmd = bench_programs.floor_command("mst_prim", spec)
    done = subprocess.run(cmd, cwd=ROOT, env=_plain_python_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ref = subprocess.run(bench_programs.reference_command("mst_prim", spec), cwd=ROOT, env=_plain_python_env(),
                         capture_output=True, text=True, timeout=60)
    assert done.stdout == ref.stdout and done.stdout.startswith("minimum spanning forest (Prim): 32 vertices")
    assert set(json.loads(done.stderr.strip().splitlines()[-1])) == {"import_s", "generate_s", "compute_s", "print_s"}
    bad = subprocess.run([*bench_programs.floor_command("bfs", spec), "--param", "source=99"], cwd=ROOT,
                         env=_plain_python_env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "source vertex must be one of the graph's vertices 1 .. 32" in bad.stderr
    assert "Traceback" not in bad.stderr
