"""Ctrl-C of `star run --distributed --jit on` under mpiexec while compiled code runs on the
ranks (mpi_kernels.tick: the ranks agree at each poll): SIGINT to mpiexec (which forwards it
to every rank) or to one rank alone stops all of them together, exit 130 with the
interpreter's `star: interrupted at FILE:LINE:COL`, printed once."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import subprocess_env

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install '.[mpi]' (or '.[test]')")
pytest.importorskip("numba")

# a slice spread over the ranks: its bit write crosses ranks in every turn of the loop
SPIN = """var T: table(100, 2); X: slice(T); n: integer;
proc spin(var X: slice; var i: integer);
begin
  writeln('spinning');
  while true do begin i := i + 1; X(1) := 1 end
end;
begin
  writeln('before');
  spin(X, n)
end.
"""


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if not found:
        pytest.skip("no mpiexec on PATH (pip install mpich)")
    return found


def _rank_pids(path: Path) -> list[int]:
    """The processes running the program (each rank and the parent that waits for it)."""
    res = subprocess.run(["pgrep", "-f", f"starvm run {path}"], capture_output=True, text=True, timeout=30)
    return sorted(int(p) for p in res.stdout.split())


@pytest.mark.parametrize("target", ["mpiexec", "one rank"])
def test_ctrl_c_stops_compiled_code_on_every_rank(tmp_path, target):
    if target == "one rank" and shutil.which("pgrep") is None:
        pytest.skip("pgrep is needed to find a rank")
    path = tmp_path / "spin.star"
    path.write_text(SPIN)
    cmd = [_mpiexec(), "-n", "2", sys.executable, "-m", "starvm", "run", str(path), "--distributed", "--jit", "on"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=subprocess_env(STARVM_MPI_ERROR_WAIT="30"), start_new_session=True)
    try:
        lines = []
        while not lines or lines[-1] != "spinning":     # the compiled call has begun on rank 0
            line = proc.stdout.readline()
            assert line, f"the output ended: {lines}; {proc.stderr.read()}"
            lines.append(line.rstrip("\n"))
        time.sleep(0.5)
        assert proc.poll() is None
        t0 = time.monotonic()
        if target == "mpiexec":
            proc.send_signal(signal.SIGINT)
        else:
            os.kill(_rank_pids(path)[-1], signal.SIGINT)     # the last started: a rank, not mpiexec
        out, err = proc.communicate(timeout=60)
        stopped = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, (out, err)
    said = [x for x in err.splitlines() if x.startswith("star:")]
    # all ranks stopped alike (not one rank alone after STARVM_MPI_ERROR_WAIT): rank 0 says it once
    assert said == [f"star: interrupted at {path}:5:3"], err
    assert stopped < 25, stopped
