"""The compiled tier on MPI ranks (starvm/jit/mpi_*.py): routines run as Numba code per
rank over its rows, the collectives inside the compiled code; run by mpiexec from pytest.

Each mpiexec start runs jit_driver.py's programs (loops over SOME, NUMB, FND, STEP, FRST, bit
reads and writes, ROW reads and writes, `=` and CONVERT of slices, writeln of a slice and a
table; `parallel for` loops that cross ranks in every iteration; WARSHALL-C and MIN under
users' names called from interpreted code;
index errors inside compiled loops; integers past 64 bits and a failing `parallel for`, which
run again interpreted) three ways per rank: one NumPy machine, the distributed
machine with --jit off, and with --jit on; the output, the error message and the step counts
must be the reference's, on every rank alike, and the routines must have run compiled.
"""
from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from test_mpi import mpirun, serial, star_cli  # noqa: F401  (skips without mpi4py)

DRIVER = Path(__file__).with_name("jit_driver.py")

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install '.[mpi]' (or '.[test]')")
pytest.importorskip("numba")

# what runs compiled: the counter programs' main block whole (COUNTER and FLIP, with its local
# table, inside it; writeln of a slice and of a table gathered), the closure programs' routines from an
# interpreted main block (a BITS literal handed to a slice parameter keeps it so), the pfor programs' main
# block whole (its parallel for loops cross ranks in every iteration; MY-WARSHALL-ADAPT inside)
COMPILED = {"counter": {"main block"}, "closure": {"MY-CLOSURE", "MY-MIN"}, "pfor": {"main block"}}


@pytest.mark.parametrize("ranks, align", [(1, 64), (2, 64), (3, 1)], ids=["1rank", "2ranks", "3ranks-rows1"])
def test_compiled_routines_on_ranks_match_the_interpreter(tmp_path, ranks, align):
    """Tables of 1, 2, 70 and 130 rows (blocks of 64: 70 rows are 64 + 6 on two ranks; blocks
    of one row over 3 ranks: uneven blocks, a 1- and a 2-row table leave ranks empty)."""
    dest = tmp_path / "jit.json"
    rc, out, err = mpirun(ranks, [sys.executable, str(DRIVER), str(dest), str(align)], timeout=400)
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    for name, r in got.items():
        assert r["same_on_all_ranks"], name
        for how in ("off", "on"):
            assert r[how]["out"] == r["ref"]["out"], (name, how)
            assert r[how]["err"] == r["ref"]["err"], (name, how)
            assert r[how]["steps"] == r["ref"]["steps"], (name, how)
        kind = name.rstrip("0123456789")
        if kind in COMPILED:
            assert r["ref"]["out"] and not r["ref"]["err"], name
            assert {k for k, calls in r["compiled"].items() if calls} == COMPILED[kind], (name, r["report"])
        elif kind == "edge":     # past 64 bits, then a failing parallel for: the main block ran again interpreted
            assert "column index 4 out of range 1..3" in r["ref"]["err"], name
            assert r["ref"]["out"].startswith(f"{10 ** 6}\n{10 ** 24}\n{1 << 63}\n"), name
            assert r["restarts"]["main block"] == 1, (name, r["report"])
        else:      # the error programs: the main block (and the failing routine with it) ran compiled
            assert "out of range" in r["ref"]["err"] and r["compiled"]["main block"] == 1, (name, r["report"])
    report = got["counter70"]["report"]
    assert "Numba on each MPI rank's rows" in report[0] and "  main block (with COUNTER, FLIP): compiled" in " ".join(report)
    assert any(line.startswith("  main block: interpreted:") and "a BITS literal passed as a slice on MPI ranks"
               in line for line in got["closure67"]["report"]), got["closure67"]["report"]
    assert "  main block (with MY-WARSHALL-ADAPT): compiled" in " ".join(got["pfor70"]["report"]), got["pfor70"]["report"]


WARSHALL_ADAPT_MAIN = """
var P: table(70, 70); i: integer; r: word(P);
begin
  for i := 1 to 69 do if i mod 3 <> 0 then begin r := ROW(i, P); r(i + 1) := 1; ROW(i, P) := r end;
  for i := 2 to 70 do if i mod 5 = 0 then begin r := ROW(i, P); r(1) := 1; ROW(i, P) := r end;
  MY-WARSHALL-ADAPT(70, P);
  writeln(P);
end.
"""


@pytest.mark.parametrize("ranks", [1, 2])
def test_auto_leaves_a_fused_loop_that_crosses_ranks_to_the_interpreter(tmp_path, ranks):
    """--jit auto (threshold 0: compile whatever it takes): on one rank WARSHALL-adapt's
    `parallel for` (a bit read of a slice per iteration) runs compiled, as on one process; on
    two it stays fused per rank (one array all-reduction per pivot instead of one per
    iteration), --profile saying why; the output is one process's either way."""
    from starvm.distributed.user_named import warshall_adapt
    prog = tmp_path / "adapt.star"
    prog.write_text(warshall_adapt("MY-WARSHALL-ADAPT") + WARSHALL_ADAPT_MAIN)
    src, sout, serr = serial("run", str(prog), "--jit", "off")
    assert src == 0 and sout.count("\n") == 70, serr
    rc, out, err = mpirun(ranks, star_cli("run", str(prog), "--distributed", "--jit", "auto", "--profile"),
                          timeout=300, env={"STARVM_JIT_THRESHOLD": "0"})
    assert (rc, out) == (0, sout), err[-2000:]
    if ranks == 1:
        assert "main block (with MY-WARSHALL-ADAPT): compiled; 1 call(s) ran compiled" in err, err[-2000:]
    else:
        assert ("MY-WARSHALL-ADAPT: interpreted: uses what the compiled tier does not compile on MPI ranks: parallel "
                "for on MPI ranks whose body reads a bit of a slice in every iteration: fused per rank") in err, err[-2000:]


def test_index_error_in_compiled_code_stops_every_rank_once(tmp_path):
    """`star run --distributed --jit on`: an index out of range inside a compiled loop, on a
    row that one rank holds: one message (the interpreter's), exit 1, no rank left waiting;
    --profile names what ran compiled and why the rest did not."""
    prog = tmp_path / "walk.star"
    prog.write_text("proc WALK(var P: table; n: integer; var s: integer);\n"
                    "var i: integer; w: word(P);\n"
                    "begin s := 0; for i := 1 to n + 1 do begin w := ROW(i, P); s := s + NUMB(w) end end;\n"
                    "var P: table(100, 3); s: integer;\n"
                    "begin ROW(70, P) := BITS('111'); WALK(P, 100, s); writeln(s) end.\n")
    src, sout, serr = serial("run", str(prog), "--jit", "off")
    assert src == 1 and "row index 101 out of range 1..100" in serr
    rc, out, err = mpirun(2, star_cli("run", str(prog), "--distributed", "--jit", "on"), timeout=200)
    # the message once; after it Open MPI's launcher reports the exit status itself (MPICH's does not)
    assert (rc, out) == (1, sout) and err.startswith(serr) and "error:" not in err[len(serr):], err[-2000:]
    ok = tmp_path / "ok.star"
    ok.write_text(prog.read_text().replace("n + 1 do", "n do"))
    rc, out, err = mpirun(2, star_cli("run", str(ok), "--distributed", "--jit", "on", "--profile"), timeout=200)
    assert (rc, out) == (0, "3\n"), err[-2000:]
    assert "main block (with WALK): compiled; 1 call(s) ran compiled" in err, err[-2000:]


def test_local_table_too_large_for_one_rank_fits_across_ranks_compiled():
    """A local table of a compiled routine holds the rank's rows; with 12 MB free per rank a
    16 MB one is refused on one rank with the interpreter's message (one rank is the plain
    machine: its message), with 6 MB free on two ranks with the rank named, and runs on two
    with 12 MB free with the output of one process."""
    program = ("proc BIG(var s: integer);\nvar T: table(2097152, 64); X: slice(T); i: integer;\n"
               "begin for i := 1999999 to 2000001 do ROW(i, T) := BITS('" + "1" * 64 + "');\n"
               "  X := COL(7, T); s := NUMB(X) + FND(X) end;\n"
               "var s: integer;\nbegin BIG(s); writeln(s) end.\n")
    script = textwrap.dedent(f"""
        import sys
        from mpi4py import MPI
        from starvm.execution import limits
        limits.free_bytes = lambda backend: int(sys.argv[3]) << 20
        from starvm.ui.cli import main
        if MPI.COMM_WORLD.rank == 0:
            open(sys.argv[1], "w").write({program!r})
        MPI.COMM_WORLD.Barrier()
        sys.exit(main(["run", sys.argv[1], "--distributed", "--jit", sys.argv[2]]))
    """)
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "big.star")
        rc, out, err_on = mpirun(1, [sys.executable, "-c", script, path, "on", "12"], timeout=120)
        assert rc == 1 and "table(2097152, 64) needs 16777216 bytes but only 12582912 bytes" in err_on, err_on
        rc, out, err_off = mpirun(1, [sys.executable, "-c", script, path, "off", "12"], timeout=120)
        assert rc == 1 and err_off == err_on
        rc, out, err_on = mpirun(2, [sys.executable, "-c", script, path, "on", "6"], timeout=120)   # 8 MB a rank
        assert rc == 1 and err_on.count("needs 8388608 bytes on rank 0 of 2 (its block of rows) but only") == 1, err_on
        rc, out, err = mpirun(2, [sys.executable, "-c", script, path, "on", "12"], timeout=120)
        assert (rc, out) == (0, "2000002\n"), err[-2000:]


def test_kernels_are_cached_per_mpi_library():
    """Numba keys a cached kernel by its bytecode, not by the MPI handle type it was compiled
    with: mpi_kernels.py's kernels are cached in a folder of their MPI library's own (so MPICH
    and Open MPI never share machine code), kernels.py's where they always were, and Numba's
    setting is as it was afterwards."""
    script = textwrap.dedent("""
        import json, sys
        from numba.core import config
        before = config.CACHE_DIR
        from starvm.distributed import jit_comm
        from starvm.targets.numba import kernels
        from starvm.targets.mpi import kernels as mpi_kernels
        json.dump({"mp": mpi_kernels.mp_some._cache._cache_path, "op": kernels.op_some._cache._cache_path,
                   "folder": jit_comm.kernel_cache_dir(), "library": jit_comm.load(),
                   "restored": config.CACHE_DIR == before}, sys.stdout)
    """)
    rc, out, err = mpirun(1, [sys.executable, "-c", script], timeout=120)
    assert rc == 0, err[-2000:]
    got = json.loads(out)
    assert got["mp"].startswith(got["folder"] + "/") and not got["op"].startswith(got["folder"]), got
    assert "handle" in got["library"] and got["restored"], got
