"""One Star program over several MPI ranks (starvm/distributed), run by mpiexec from pytest.

Few mpiexec starts, each doing much: every program of programs/ and every language test of
tests/star runs in one start per rank count (driver.py) and must print, fail and count steps
exactly as one NumPy machine does. Every start has a timeout and is killed (its whole process
group) in ``finally``.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import starvm
from conftest import gpu_count, subprocess_env
from starvm.errors import StarError

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("driver.py")

mpi4py = pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install '.[mpi]' (or '.[test]')")


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    import shutil
    found = shutil.which("mpiexec")
    if not found:
        pytest.skip("mpi4py is installed but no mpiexec is on PATH (pip install mpich)")
    return found


def mpirun(ranks: int | list, argv: list[str], timeout: float = 120, env: dict | None = None):
    """``mpiexec -n ranks argv`` (or an MPMD list of (n, argv) pairs); returns (rc, out, err)."""
    cmd = [_mpiexec()]
    if isinstance(ranks, int):
        cmd += ["-n", str(ranks), *argv]
    else:
        for i, (n, a) in enumerate(ranks):
            cmd += ([":"] if i else []) + ["-n", str(n), *a]
    # the checkout on PYTHONPATH: a driver script's ranks (python driver.py) import this starvm, as
    # `python -m starvm` and `-c` ranks do from cwd, not an installed copy (in CI a second copy
    # whose Numba kernels compiled again, cold, in the first compiled ranks: about 20 s)
    full_env = subprocess_env(STARVM_MPI_ERROR_WAIT="2", **(env or {}))
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    # Open MPI gives each rank's stdout a pseudo-terminal, and colorama (imported by Numba when
    # it compiles) writes its reset code there at exit: no output of the program
    return proc.returncode, out.replace("\x1b[0m", ""), err


def star_files() -> list[str]:
    return [str(p.relative_to(ROOT)) for p in sorted((ROOT / "programs").glob("*.star"))] + \
           [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests" / "star").glob("*.star"))]


@pytest.fixture(scope="module")
def reference() -> dict:
    """What one NumPy machine prints, raises and counts for every file."""
    res = {}
    for f in star_files():
        out = io.StringIO()
        m = starvm.Machine(backend="numpy", out=out, jit="off")     # as driver.py's machines
        err = ""
        try:
            m.run_file(ROOT / f)
        except StarError as e:
            err = e.render()
        res[f] = {"out": out.getvalue(), "err": err.replace(str(ROOT / f), f), "steps": m.stats}
    return res


def assert_same_as_reference(got: dict, reference: dict) -> None:
    """Every file printed, raised and counted on every rank what one NumPy machine did."""
    for f, want in reference.items():
        r = got[f]
        assert r["same_on_all_ranks"], f
        assert r["out"] == want["out"], f
        assert r["err"].replace(str(ROOT / f), f) == want["err"], f
        assert r["steps"] == want["steps"], f


@pytest.mark.parametrize("ranks, align, local", [(1, 64, "numpy"), (2, 64, "numpy"), (3, 1, "numpy"), (2, 1, "emulated")],
                         ids=["1rank", "2ranks", "3ranks-rows1", "2ranks-rows1-device-vectors"])
def test_every_program_same_on_several_ranks(tmp_path, reference, ranks, align, local):
    """Blocks of 64 rows are what `star run --distributed` uses; blocks of 1 row split even
    8-row tables (uneven blocks, ranks with no rows, blocks of one row). ``emulated``: each
    rank's local backend is the emulated GPU (device-style vectors, the paths a CuPy rank
    takes, with the Star bodies of the row routines)."""
    dest = tmp_path / "out.json"
    rc, out, err = mpirun(ranks, [sys.executable, str(DRIVER), str(dest), str(align), *star_files()], timeout=300,
                          env={"DRIVER_LOCAL": local})
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert_same_as_reference(got, reference)


@pytest.mark.parametrize("local, align", [("numpy", 1), ("emulated", 1), ("numpy", 64)])
def test_row_moving_kernels_exchange_rows(tmp_path, local, align):
    """GATHER, SCATTER, GROUPMIN, IOTA, COMPACT, EXPAND and WARSHALL-adapt on random tables of 1..200 rows over
    3 ranks (row requests by all-to-all, and the all-gather / all-reduction paths for small
    tables): the same tables and step counts as one NumPy machine; the kernels ran. On the
    emulated device (a GPU rank's paths) the row moves' local parts run on the device's
    arrays (device_rows.py) and WARSHALL-adapt runs its Star body. Blocks of 64 rows: small source tables travel as
    their columns' words."""
    dest = tmp_path / "rows.json"
    rc, out, err = mpirun(3, [sys.executable, str(DRIVER), str(dest), str(align), "--rows", "8"], timeout=300,
                          env={"DRIVER_LOCAL": local})
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["same_on_all_ranks"]
    for case in got["cases"]:
        assert case["same"] and case["same_steps"], case
        assert case["kernel_calls"] == (8 if local == "numpy" else 7), case


def test_row_moves_exchange_device_arrays_over_nccl(tmp_path):
    """The row moves' all-to-alls on a device path: device-style arrays (the emulated device)
    through the NCCL stand-in's grouped sends and receives (collectives.NcclCollectives.alltoallv),
    3 ranks, blocks of one row: the same tables and steps as one NumPy machine."""
    dest = tmp_path / "rows.json"
    rc, out, err = mpirun(3, [sys.executable, str(DRIVER), str(dest), "1", "--rows", "8"], timeout=300,
                          env={"DRIVER_LOCAL": "emulated", "DRIVER_PATH": "nccl"})
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["same_on_all_ranks"]
    for case in got["cases"]:
        assert case["same"] and case["same_steps"], case
        assert case["kernel_calls"] == 7, case
    assert got["nccl_point_to_point"] > 0


@pytest.mark.parametrize("ranks, align", [(2, 64), (3, 1)], ids=["2ranks", "3ranks-rows1"])
def test_every_program_same_on_gpu_ranks(tmp_path, request, ranks, align):
    """Every program and language test over ranks whose local backend is CuPy on real GPUs
    (each rank its own GPU where there are enough: the array collectives then go through NCCL;
    ranks sharing a GPU stage through the host): what one NumPy machine prints, raises and
    counts. Skips without a GPU."""
    gpus = gpu_count()
    reference = request.getfixturevalue("reference")     # after the skip: not computed for nothing
    dest = tmp_path / "out.json"
    rc, out, err = mpirun(ranks, [sys.executable, str(DRIVER), str(dest), str(align), *star_files()], timeout=600,
                          env={"DRIVER_LOCAL": "cupy"})
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    paths = {r["path"].split(" ")[0] for r in got.values()}
    if gpus >= ranks:
        assert paths <= {"nccl", "cuda-aware-mpi"}, paths     # distinct GPUs: a device path
    else:
        assert paths <= {"host-staging", "cuda-aware-mpi"}, paths
    assert_same_as_reference(got, reference)


def test_row_moving_kernels_on_gpu_ranks(tmp_path):
    """The row-moving routines of test_row_moving_kernels_exchange_rows over 2 CuPy ranks on
    real GPUs: the tables and steps of one NumPy machine. Skips without a GPU."""
    gpu_count()
    dest = tmp_path / "rows.json"
    rc, out, err = mpirun(2, [sys.executable, str(DRIVER), str(dest), "1", "--rows", "8"], timeout=600,
                          env={"DRIVER_LOCAL": "cupy"})
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["same_on_all_ranks"]
    for case in got["cases"]:
        assert case["same"] and case["same_steps"], case


def test_search_kernels_run_on_each_device_rank(tmp_path):
    """MATCH, MIN, MAX, HIT, SETMIN over 3 ranks whose local backend is the emulated device (the
    paths of a CuPy rank; distributed/search.py): each rank's kernel on its rows, MIN and MAX
    agreed by one all-gather; random tables of 1..200 rows and 1..64 columns with ties: the
    results and steps of one NumPy machine, and the 5 kernels ran."""
    dest = tmp_path / "search.json"
    rc, out, err = mpirun(3, [sys.executable, str(DRIVER), str(dest), "1", "--search", "14"], timeout=300)
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["same_on_all_ranks"]
    assert {c["k"] for c in got["cases"]} >= {1, 64}
    for case in got["cases"]:
        assert case["same"] and case["same_steps"] and case["kernel_calls"] == 5, case


def test_search_kernels_on_ranks_sharing_a_gpu(tmp_path):
    """The same over 2 ranks whose stand-in GPU is one (host staging): MIN and MAX give the
    NumPy machine's results, and --profile's lines name the ranks that share the GPU and
    whether CUDA MPS runs for them (here it does not: an empty pipe directory)."""
    dest = tmp_path / "search.json"
    rc, out, err = mpirun(2, [sys.executable, str(DRIVER), str(dest), "64", "--search", "6"], timeout=300,
                          env={"DRIVER_PATH": "host-staging", "DRIVER_SHARED_GPU": "1",
                               "CUDA_MPS_PIPE_DIRECTORY": str(tmp_path)})
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["same_on_all_ranks"]
    for case in got["cases"]:
        assert case["same"] and case["same_steps"] and case["kernel_calls"] == 5, case
    assert got["cases"][-1]["shared_gpu"][0].startswith("ranks 0, 1 share one GPU; CUDA MPS does not run")


def test_each_rank_generates_or_reads_its_share_of_the_graph(tmp_path):
    """Per-rank graph input over 3 ranks, rows in blocks of 1 and of 64: R-MAT (undirected,
    directed, scale 0, unweighted) and edge-list files (weights and comments, 0-based, empty,
    one line, repeated arcs both ways and one way) give the whole graph of one process arc for
    arc, and so does their undirected reading (Graph.undirected); each rank holds a share of
    the arcs (none all of them), the rows a table receives are the graph's; a file of mixed
    lines is left to the whole-file reader on every rank."""
    for align in (1, 64):
        dest = tmp_path / f"graphs{align}.json"
        folder = tmp_path / f"files{align}"
        folder.mkdir()
        rc, out, err = mpirun(3, [sys.executable, str(DRIVER), str(dest), str(align), "--graphs", str(folder)],
                              timeout=120)
        assert rc == 0, err[-3000:]
        got = json.loads(dest.read_text())
        assert got["same_on_all_ranks"]
        for case in got["cases"]:
            if case["case"] == "file mixed.txt":
                assert not case["per_rank"]
                continue
            assert case["per_rank"] and case["same"] and case["rows_ok"] and case["undirected_same"], case
            assert case["adjacency_ok"], case
            assert sum(case["held"]) >= case["m"] and (case["m"] < 20 or max(case["held"]) < 0.6 * case["m"]), case


def test_graph_file_read_per_rank_from_the_command_line(tmp_path):
    """`star run --distributed --graph FILE` over 3 ranks: the output of one process (the
    arcs as given, and the undirected reading; GRAPH_EDGES, and GRAPH_ADJ built per rank)."""
    from starvm.graphs import rmat, write_edgelist
    path = tmp_path / "g.txt"
    write_edgelist(rmat(8, seed=3, directed=True), path)
    runs = [["run", program, "--distributed", "--graph", str(path), "--jit", "off", *how]     # as driver.py
            for program in ("programs/bfs_adapt.star", "programs/mst_boruvka.star", "programs/components.star")
            for how in ([], ["--directed"])]
    for argv, (rc, out) in zip(runs, cli_runs_on_ranks(3, runs, tmp_path)):
        src, sout, serr = serial(*(a for a in argv if a != "--distributed"))
        assert (rc, out) == (src, sout), (argv, serr[-2000:])


CLI_RUNS = """
import contextlib, io, json, sys
from mpi4py import MPI
from starvm.ui.cli import main
got = []
for argv in json.loads(sys.argv[2]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        got.append([main(argv), out.getvalue()])
if MPI.COMM_WORLD.rank == 0:
    open(sys.argv[1], "w").write(json.dumps(got))
"""


def cli_runs_on_ranks(ranks: int, runs: list[list[str]], tmp_path, timeout: float = 240) -> list:
    """The command line's main(argv) for each argv of ``runs`` (each with --distributed), one
    after the other in one mpiexec start (a start costs each rank its imports): rank 0's
    (exit code, standard output) of each."""
    dest = tmp_path / "cli_runs.json"
    rc, out, err = mpirun(ranks, [sys.executable, "-c", CLI_RUNS, str(dest), json.dumps(runs)], timeout=timeout)
    assert rc == 0 and out == "", err[-3000:]
    return [tuple(r) for r in json.loads(dest.read_text())]


# ---------------------------------------------------------------------- the command line
def star_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "starvm", *args]


def serial(*args: str):
    """`star ARGS` in one process, without MPI: (exit code, standard output, standard error),
    through the command line's main() in this process, from the checkout's folder."""
    from starvm.ui.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(args))
        except SystemExit as e:         # argparse's usage errors
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def _counts(profile: str) -> list[str]:
    """The operation and count columns of a --profile report's step table, down to its total
    (times differ between runs; what follows describes the backend and its tiers)."""
    lines = profile.splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith("total")), len(lines))
    return [" ".join(line.split()[:-2]) for line in lines[:end + 1] if line[:1].isalpha() and "steps" not in line]


def test_cli_output_errors_and_profile_once(tmp_path):
    rc, out, err = mpirun(2, star_cli("run", "programs/warshall_c.star", "--distributed", "--profile"))
    src, sout, serr = serial("run", "programs/warshall_c.star", "--profile")
    assert (rc, out) == (0, sout)                      # writeln: once, from rank 0
    assert _counts(err) == _counts(serr) and _counts(err)   # the machine's steps, not P times them
    assert "mpi:numpy" in err and "2 rank(s);" in err and "array collectives: host" in err

    rc, out, err = mpirun(3, star_cli("run", "tests/star/err_row_index.star", "--distributed"))
    src, sout, serr = serial("run", "tests/star/err_row_index.star")
    # one message, exit 1 (after it Open MPI's launcher reports the exit status itself; MPICH's does not)
    assert (rc, out) == (1, sout) and src == 1 and err.startswith(serr) and "error:" not in err[len(serr):], err

    loop = tmp_path / "loop.star"
    loop.write_text("var T: table(200, 2); X: slice(T); i: integer;\n"
                    "begin i := 0; while true do begin X := COL(1, T); i := i + NUMB(X) end end.\n")
    rc, out, err = mpirun(2, star_cli("run", str(loop), "--distributed", "--max-steps", "500"), timeout=60)
    assert rc == 1 and err.count("step limit reached: more than 500") == 1


def test_rank_that_fails_alone_stops_all_with_its_message():
    """An error on one rank only (here a Python error injected into rank 1's NUMB, then a Star
    runtime error on rank 2 only) stops every rank within the wait, with that rank's message."""
    for exc, code in (("RuntimeError('injected')", 3),
                      ("__import__('starvm.errors').errors.StarRuntimeError('only here')", 1)):
        script = textwrap.dedent(f"""
            import sys
            from mpi4py import MPI
            from starvm.distributed.backend import DistributedBackend
            bad = {1 if code == 3 else 2}
            numb = DistributedBackend.numb
            def failing(self, v):
                if MPI.COMM_WORLD.rank == bad:
                    raise {exc}
                return numb(self, v)
            DistributedBackend.numb = failing
            from starvm.ui.cli import main
            sys.exit(main(["run", "programs/bfs.star", "--distributed", "--jit", "off"]))
        """)
        rc, out, err = mpirun(3, [sys.executable, "-c", script], timeout=90)
        assert rc == code, err
        lines = [line for line in err.splitlines() if "rank" in line]
        assert any(f"rank {1 if code == 3 else 2} of 3 failed alone" in line for line in lines), err
        assert ("injected" if code == 3 else "only here") in err


def test_rank_that_dies_stops_the_run():
    script = textwrap.dedent("""
        import os, signal
        from mpi4py import MPI
        from starvm.distributed.backend import DistributedBackend
        numb = DistributedBackend.numb
        def dying(self, v):
            if MPI.COMM_WORLD.rank == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            return numb(self, v)
        DistributedBackend.numb = dying
        from starvm.ui.cli import main
        main(["run", "programs/bfs.star", "--distributed", "--jit", "off"])
    """)
    rc, out, err = mpirun(2, [sys.executable, "-c", script], timeout=90)
    assert rc != 0
    said = out + err      # MPICH's mpiexec reports it on standard output, Open MPI's on standard error
    assert "signal 9" in said or "killed" in said.lower() or "terminated" in said.lower(), said


def test_rank_killed_outright_is_named_by_its_parent():
    """kill -9 (or the out-of-memory killer) on one rank's process: the parent process it
    runs under (distributed/supervise.py) prints one line naming the rank and the signal
    (mpiexec kills the others with SIGKILL: none of them could); no rank is left behind."""
    script = textwrap.dedent("""
        import os, signal, sys
        from starvm.distributed.backend import DistributedBackend
        numb = DistributedBackend.numb
        def dying(self, v):
            if self.comm.rank == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            return numb(self, v)
        DistributedBackend.numb = dying
        from starvm.ui.cli import main
        sys.exit(main(["run", "programs/bfs.star", "--distributed", "--jit", "off"]))
    """)
    rc, out, err = mpirun(3, [sys.executable, "-c", script], timeout=90)
    assert rc != 0
    assert "star: rank 1 stopped (signal 9: Killed; out of memory?)" in err.splitlines(), err
    rc, out, err = mpirun(2, [sys.executable, "-c", script], timeout=90, env={"STARVM_RANK_SUPERVISOR": "0"})
    assert rc != 0 and "stopped (signal" not in err           # turned off: mpiexec's own report only


def test_ranks_reading_different_graph_files_stop_with_an_error(tmp_path):
    """A stale copy of the graph file on one host: one error, no run on two graphs."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1 2 5\n2 3 1\n")
    b.write_text("1 2 5\n2 3 2\n")
    argv = ["run", "programs/dijkstra.star", "--distributed", "--graph"]
    rc, out, err = mpirun([(1, star_cli(*argv, str(a))), (1, star_cli(*argv, str(b)))], [], timeout=60)
    assert rc == 1 and out == ""
    assert err.count("the ranks read different graph inputs: on rank 0 ") == 1, err
    rc, out, err = mpirun([(1, star_cli(*argv, str(a))), (1, star_cli(*argv, str(a)))], [], timeout=60)
    assert rc == 0 and out.splitlines()[-1] == "  to 3: 6", err


def test_ranks_loading_different_texts_stop_with_an_error(tmp_path):
    a, b = tmp_path / "a.star", tmp_path / "b.star"
    a.write_text("begin writeln('a') end.\n")
    b.write_text("begin writeln('b') end.\n")
    rc, out, err = mpirun([(1, star_cli("run", str(a), "--distributed")), (1, star_cli("run", str(b), "--distributed"))],
                          [], timeout=60)
    assert rc == 1 and out == ""
    assert err.count("the ranks load different program texts") == 1, err


def test_table_too_large_for_one_rank_fits_across_ranks():
    """The memory refusal of execution/limits.py, with 12 MB free per rank: a 16 MB table is
    refused on one rank (with the plain machine's message: one rank is the plain machine) and
    runs on 2 and 4 (blocks of 1 048 576 and 524 288 rows, 8 and 4 MB), with the output of one
    unlimited machine."""
    program = ("var T: table(2097152, 64); X: slice(T);\n"
               "begin ROW(2000000, T) := BITS('1' * 64); X := COL(7, T); writeln(NUMB(X), ' ', FND(X)) end.\n")
    program = program.replace("BITS('1' * 64)", "BITS('" + "1" * 64 + "')")
    script = textwrap.dedent(f"""
        import sys
        from mpi4py import MPI
        from starvm.execution import limits
        limits.free_bytes = lambda backend: int(sys.argv[2]) << 20
        from starvm.ui.cli import main
        if MPI.COMM_WORLD.rank == 0:
            open(sys.argv[1], "w").write({program!r})
        MPI.COMM_WORLD.Barrier()
        sys.exit(main(["run", sys.argv[1], "--distributed"]))
    """)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "big.star")
        rc, out, err = mpirun(1, [sys.executable, "-c", script, path, "12"], timeout=60)
        assert rc == 1 and "table(2097152, 64) needs 16777216 bytes but only 12582912 bytes of memory are free" in err, err
        rc, out, err = mpirun(2, [sys.executable, "-c", script, path, "6"], timeout=60)   # 8 MB a rank, 6 free
        assert rc == 1 and err.count("needs 8388608 bytes on rank 0 of 2 (its block of rows) but only 6291456") == 1, err
        for ranks in (2, 4):
            rc, out, err = mpirun(ranks, [sys.executable, "-c", script, path, "12"], timeout=120)
            assert (rc, out) == (0, "1 2000000\n"), err


def test_machine_comm_in_python():
    """Machine(comm=MPI.COMM_WORLD): writeln once; globals and results the same on every rank."""
    word = "01" + "0" * 128
    script = textwrap.dedent(f"""
        from mpi4py import MPI
        import starvm
        m = starvm.Machine(comm=MPI.COMM_WORLD)
        m.run("var P: table(130, 130); begin ROW(1, P) := BITS('{word}'); writeln('hello from the machine') end.")
        P = m.global_("P").to_numpy()
        seen = MPI.COMM_WORLD.gather(f"rank {{MPI.COMM_WORLD.rank}} {{int(P.sum())}} {{int(P[0, 1])}} {{m.backend.name}}")
        if MPI.COMM_WORLD.rank == 0:
            print(chr(10).join(seen), flush=True)
    """)
    rc, out, err = mpirun(2, [sys.executable, "-c", script], timeout=60)
    assert rc == 0, err
    assert out.count("hello from the machine") == 1
    assert sorted(line for line in out.splitlines() if line.startswith("rank")) == \
        ["rank 0 1 1 mpi:numpy", "rank 1 1 1 mpi:numpy"]


def test_generated_graph_over_three_ranks_in_64_row_blocks(tmp_path):
    """`star run --distributed --generate`: 512 vertices (and some 15000 arcs) in blocks of 64
    rows over 3 ranks (192, 192 and 128 vertices): the output of one process."""
    spec = "rmat:scale=9,seed=5"
    programs = ["programs/mst_boruvka.star", "programs/bfs_adapt.star", "programs/warshall_adapt.star"]
    runs = [["run", program, "--distributed", "--generate", spec, "--jit", "off"] for program in programs]   # as driver.py
    for program, (rc, out) in zip(programs, cli_runs_on_ranks(3, runs, tmp_path)):
        src, sout, serr = serial("run", program, "--generate", spec, "--jit", "off")
        assert (rc, out) == (src, sout) == (0, sout), (program, serr[-2000:])
