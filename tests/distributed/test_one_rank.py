"""One rank costs nothing (issue 33): ``Machine(comm=...)`` and `star run --distributed` in a
world of one rank run the plain machine of the rank's backend (distributed.machine_backend):
the CPU tier's or the GPU tier's routines and main-block parts, the backend's own native
kernels, graph input as one process reads it; the same output, steps and errors as the plain
machine, --profile saying "1 rank: the plain ... machine". ``distribute(...)`` (and the
backend named mpi:<name>) still give the distributed code on one rank, which the other tests
of this folder run.

In process (comm.SelfComm, no MPI) on NumPy with --jit on, and on the emulated device (CuPy's
stand-in, the GPU tier's kernels on CPU threads: tests/gpu_sources/emulate.py); then under
mpiexec -n 1 through the command line, on NumPy and on the emulated device.
"""
from __future__ import annotations

import io
import json
import sys
import textwrap
import pytest

import starvm
from starvm.distributed import SelfComm, distribute


# test_gpu_main's program (graph input, a STEP loop, a routine that may fail, output): its
# kernels are the ones that file's tests build on the emulated device, so none is built twice
from tests.jit.test_gpu_main import PROGRAM, _run as run_program  # noqa: E402


def _run(backend, jit: str, comm=None, mode: int = 0):
    return run_program(backend, jit, mode, comm=comm)


def test_one_rank_numpy_machine_is_the_plain_one():
    """The plain NumPy backend and the CPU tier (Numba), not the ranks' tier: the main block
    compiled whole, as on one process; distribute() still gives the distributed code."""
    from starvm.backends import get_backend
    from starvm.jit.call import JitRoutine
    from starvm.jit.mpi_tier import MpiRoutine
    plain = _run("numpy", "on")
    ranked = _run("numpy", "on", SelfComm())
    m = ranked[0]
    assert ranked[1:] == plain[1:] and "n=34 m=156 s=12246" in plain[1]
    assert type(m.backend) is type(get_backend("numpy")) and not m.backend.distributed
    routines = list(m.jit.routines.values())
    assert routines and all(type(r) is JitRoutine and not isinstance(r, MpiRoutine) for r in routines)
    assert [r.compiled_calls for r in routines if r.display == "main block"] == [1]
    report = m.profile_report()
    assert "STAR-machine steps (numpy backend)" in report
    assert "1 rank: the plain numpy machine (no rows split, no collectives" in report
    assert "compiled tier (Numba, --jit on):" in report and "rank(s)" not in report
    spread = starvm.Machine(backend=distribute("numpy", None), out=io.StringIO())
    assert spread.backend.distributed and spread.backend.name == "mpi:numpy"


def test_one_rank_errors_are_the_plain_machines():
    """A Star error in one rank's run (ERROR in a routine): the plain machine's message and stack."""
    plain = _run("numpy", "off", mode=1)
    ranked = _run("numpy", "off", SelfComm(), mode=1)
    assert plain[3] is not None and "past the arcs" in plain[3] and ranked[1:] == plain[1:]


def test_a_misspelt_device_path_is_refused_on_one_rank_too(monkeypatch):
    from starvm.backends import BackendUnavailable
    monkeypatch.setenv("STARVM_MPI_DEVICE_PATH", "carrier-pigeon")
    with pytest.raises(BackendUnavailable, match="STARVM_MPI_DEVICE_PATH"):
        starvm.Machine(comm=SelfComm(), out=io.StringIO())


@pytest.fixture
def device(monkeypatch):
    from gpu_sources.emulate import emulated_device
    with emulated_device(monkeypatch):
        yield


def test_one_rank_gpu_machine_is_the_plain_gpu_machine(device):
    """On a GPU rank alone (the emulated device): the CuPy backend itself, the GPU tier's
    kernels for the main block's parts (graph input on the device between them), the output
    and steps of the plain GPU machine and of the interpreter on NumPy."""
    from starvm.jit.cuda_runtime import GpuRoutine
    plain = _run("cupy", "on")
    ranked = _run("cupy", "on", SelfComm())
    reference = _run("numpy", "off")
    assert ranked[1:] == plain[1:] == reference[1:]
    m = ranked[0]
    assert m.backend.name == "cupy" and not m.backend.distributed
    parts = [r for r in m.jit.routines.values() if getattr(r, "part", False)]
    assert parts and all(isinstance(r, GpuRoutine) and r.state == "compiled" and r.compiled_calls for r in parts)
    report = m.profile_report()
    assert "1 rank: the plain cupy machine" in report and "one CUDA kernel per routine" in report


# ---------------------------------------------------------------------- under mpiexec -n 1
_CLI = """
import contextlib, io, json, sys
from mpi4py import MPI
argv_list = json.loads(sys.argv[2])
def runs():
    from starvm.ui.cli import main
    got = []
    for argv in argv_list:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            got.append([main(argv), out.getvalue(), err.getvalue()])
    return got
if sys.argv[3] == "emulated":              # (run from the checkout: tests/ is a namespace package)
    import pytest
    from tests.gpu_sources.emulate import emulated_device
    with pytest.MonkeyPatch.context() as mp, emulated_device(mp):
        got = runs()
else:
    got = runs()
open(sys.argv[1], "w").write(json.dumps(got))
"""


def _steps(profile: str) -> list[str]:
    lines = profile.splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith("total")), len(lines))
    return [" ".join(line.split()[:2]) for line in lines[:end + 1] if line[:1].isalpha() and "steps" not in line]


@pytest.mark.parametrize("local", ["numpy", "emulated", "cupy"])
def test_mpiexec_one_rank_runs_the_plain_machine(tmp_path, local):
    """`mpiexec -n 1 star run --distributed`: the plain machine's output, steps (--profile) and
    exit codes (0, and 1 with one message for a Star error); its tier is the plain one. On
    NumPy, the emulated device, and a real GPU (skipped without one)."""
    from test_mpi import mpirun, serial
    if local == "emulated":
        from gpu_sources.emulate import require
        require()
    if local == "cupy":
        from conftest import cupy_or_skip
        cupy_or_skip()
    backend = "numpy" if local == "numpy" else "cupy"
    prog = tmp_path / "one_rank.star"
    prog.write_text(PROGRAM)
    bad = tmp_path / "bad.star"
    bad.write_text(PROGRAM.replace("var mode: integer;", "const mode = 1;"))
    runs = [["run", str(prog), "--distributed", "--backend", backend, "--jit", "on", "--profile"],
            ["run", str(bad), "--distributed", "--jit", "off"]]     # (the stand-in for CuPy computes no CuPy kernel)
    dest = tmp_path / "got.json"
    rc, out, err = mpirun(1, [sys.executable, "-c", _CLI, str(dest), json.dumps(runs), local], timeout=300)
    assert rc == 0, err[-3000:]
    (rc1, out1, err1), (rc2, out2, err2) = json.loads(dest.read_text())
    src, sout, serr = serial("run", str(prog), "--jit", "off", "--profile")
    assert (rc1, out1) == (0, sout) and _steps(err1) == _steps(serr) and _steps(serr), err1[-2000:]
    assert f"1 rank: the plain {backend} machine" in err1, err1[-2000:]
    tier = "compiled tier (Numba, --jit on)" if local == "numpy" else "one CUDA kernel per routine"
    assert tier in err1 and "rank(s)" not in err1 and ": compiled" in err1, err1[-2000:]
    brc, bout, berr = serial("run", str(bad), "--jit", "off")
    assert brc == 1 and (rc2, out2, err2) == (brc, bout, berr), err2[-2000:]


def test_mpiexec_one_rank_starts_no_mpi(tmp_path):
    """Where mpiexec's environment says it started one rank (PMI_SIZE=1), `star run
    --distributed` makes no MPI world (no MPI_Init to pay): the plain machine's output and exit
    codes; with two ranks MPI starts as before."""
    from test_mpi import mpirun, serial
    prog = tmp_path / "one_rank.star"
    prog.write_text(PROGRAM)
    # Each rank records whether MPI started in a file of its own: two ranks printing it would
    # interleave on the shared stdout ("MPI started:MPI started: True\n True\n", seen in CI).
    script = ("import os, sys\nfrom starvm.ui.cli import main\n"
              "rc = main(['run', sys.argv[1], '--distributed', '--jit', 'off'])\n"
              "open(os.path.join(sys.argv[2], 'rank%d' % os.getpid()), 'w')"
              ".write(str('mpi4py.MPI' in sys.modules))\nsys.exit(rc)\n")

    def started(n):
        marks = tmp_path / f"marks{n}"
        marks.mkdir()
        rc, out, err = mpirun(n, [sys.executable, "-c", script, str(prog), str(marks)], timeout=120)
        return rc, out, err, sorted(p.read_text() for p in marks.iterdir())

    src, sout, _serr = serial("run", str(prog), "--jit", "off")
    rc, out, err, marks = started(1)
    assert (rc, out, marks) == (src, sout, ["False"]), err[-2000:]
    rc, out, err, marks = started(2)
    assert (rc, out, marks) == (0, sout, ["True", "True"]), err[-2000:]
