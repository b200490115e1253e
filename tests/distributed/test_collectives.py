"""The array collectives of distributed GPU ranks (starvm/distributed/collectives.py) on the CPU:
the NCCL path through a stand-in for cupy.cuda.nccl (nccl_standin.py), CUDA-aware MPI with
host arrays in place of device ones, host staging. Without CuPy these are the tests of the
device paths' logic; test_device_collectives_on_gpus below runs the real ones on GPUs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import gpu_count
from test_mpi import DRIVER, ROOT, mpirun, serial, star_cli, star_files  # noqa: F401  (skips without mpi4py)

HERE = Path(__file__).parent


def test_path_choice_and_every_path_against_a_reference(tmp_path):
    """3 ranks: NCCL where the GPUs are distinct; host staging (or CUDA-aware MPI) where two
    ranks share one, saying which; what STARVM_MPI_DEVICE_PATH asks for; a rank without NCCL
    or an NCCL start refused on one rank makes every rank fall back alike. Then all-reduce
    (sum, min, max), broadcast from every root, all-gather and all-to-all of unequal parts, on
    each path, equal a reference made from a pickled all-gather; NCCL calls did run (the
    all-to-all's as a group of sends and receives)."""
    dest = tmp_path / "coll.json"
    rc, out, err = mpirun(3, [sys.executable, str(HERE / "collectives_driver.py"), str(dest)], timeout=120)
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["same_on_all_ranks"]
    c = got["choices"]
    assert c["distinct GPUs"] == ["nccl", ""]
    path, why = c["two ranks share GPU 0"]
    assert path == "host-staging" and "ranks 0 and 1" in why and "refuses two ranks on one device" in why
    assert c["shared GPU, CUDA-aware MPI"][0] == "cuda-aware-mpi"
    assert c["asked for host staging"] == ["host-staging", "STARVM_MPI_DEVICE_PATH=host-staging"]
    assert c["asked for CUDA-aware MPI"] == ["cuda-aware-mpi", ""]
    assert c["no NCCL on the last rank"][0] == "host-staging" and "not usable on rank 2" in c["no NCCL on the last rank"][1]
    path, why = c["NCCL refuses on rank 1"]
    assert path == "host-staging" and "NCCL did not start: rank 1" in why
    assert c["host backend"] == ["host", ""]
    assert got["results"] == {"nccl": [], "host-staging": [], "cuda-aware-mpi": [], "host": []}
    assert got["nccl_calls"] > 50
    assert got["nccl_point_to_point"] > 10


def _loop_programs() -> list[str]:
    """The programs whose fused loops reduce over rows (array all-reductions) and those that
    gather partitioned slices: programs/ and the parallel-for language tests."""
    return [f for f in star_files() if f.startswith("programs/") or "parallel for" in (ROOT / f).read_text().lower()]


@pytest.fixture(scope="module")
def loop_reference() -> dict:
    """What one NumPy machine prints, raises and counts for each of _loop_programs(), once for
    both paths (the interpreter alone, as driver.py's machines)."""
    import io

    import starvm
    from starvm.errors import StarError
    res = {}
    for f in _loop_programs():
        ref = io.StringIO()
        m = starvm.Machine(backend="numpy", out=ref, jit="off")
        want_err = ""
        try:
            m.run_file(ROOT / f)
        except StarError as e:
            want_err = e.render()
        res[f] = (ref.getvalue(), m.stats, want_err.replace(str(ROOT / f), f))
    return res


@pytest.mark.parametrize("path", ["nccl", "host-staging"])
def test_programs_same_over_every_device_path(tmp_path, path, loop_reference):
    """Every program of programs/ and the parallel-for tests, over 2 ranks with device-style
    local vectors and each array-collective path: the output, errors and steps of one NumPy
    machine."""
    files = _loop_programs()
    dest = tmp_path / "out.json"
    rc, out, err = mpirun(2, [sys.executable, str(DRIVER), str(dest), "1", *files], timeout=300,
                          env={"DRIVER_LOCAL": "emulated", "DRIVER_PATH": path})
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    for f in files:
        want_out, want_steps, want_err = loop_reference[f]
        r = got[f]
        assert r["same_on_all_ranks"] and r["out"] == want_out and r["steps"] == want_steps, f
        assert r["err"].replace(str(ROOT / f), f) == want_err, f


# ---------------------------------------------------------------------- on GPUs (skip without)
def test_device_collectives_on_gpus(tmp_path):
    """2 ranks on real CuPy arrays: every path the GPUs allow gives the reference's results.
    One GPU: NCCL is not tried (the two ranks share it) and the choice says so; two or more:
    NCCL, when CuPy has it."""
    gpus = gpu_count()
    dest = tmp_path / "gpu.json"
    rc, out, err = mpirun(2, [sys.executable, str(HERE / "collectives_driver.py"), str(dest), "--gpu"], timeout=300)
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["same_on_all_ranks"]
    assert all(bad == [] for bad in got["results"].values()), got["results"]
    path, why = got["choices"]["auto"]
    if gpus == 1:
        assert path in ("host-staging", "cuda-aware-mpi") and "refuses two ranks on one device" in why, why
    else:
        assert path in ("nccl", "cuda-aware-mpi", "host-staging") and "share a GPU" not in why, why


def test_star_run_on_two_cupy_ranks_reports_its_path():
    """`star run --distributed --backend cupy` on 2 ranks: the output of one NumPy process, and
    --profile names the array collectives' path (host staging on one shared GPU)."""
    gpus = gpu_count()
    rc, out, err = mpirun(2, star_cli("run", "programs/warshall_adapt.star", "--distributed", "--backend", "cupy",
                                      "--profile"), timeout=300)
    src, sout, _ = serial("run", "programs/warshall_adapt.star")
    assert (rc, out) == (0, sout), err[-3000:]
    assert "mpi:cupy" in err and "array collectives: " in err
    if gpus == 1:
        assert "array collectives: host-staging" in err or "array collectives: cuda-aware-mpi" in err, err
        assert "share a GPU" in err, err
