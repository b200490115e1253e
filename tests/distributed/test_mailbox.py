"""In-kernel collectives served by the host (starvm/targets/mpi/mailbox.py): a kernel that
keeps running posts its cross-rank steps to a mailbox and a Numba thread of its rank answers
them with MPI. The kernel's side runs here as Numba code on each rank (mailbox_driver.py), on
1 and 3 ranks, tables of 1-200 rows in 64-row blocks (ranks with no rows): NUMB, the
`while SOME(X) do i := STEP(X)` loop, a Ctrl-C flag raised on one rank seen by all at the same
request, a row broadcast, the slice made whole, against NumPy; every rank alike; a row and a
slice past the payload's room answered with the words they need, no collective run."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from test_mpi import mpirun  # noqa: F401  (skips without mpi4py)

pytest.importorskip("numba")
DRIVER = Path(__file__).with_name("mailbox_driver.py")


@pytest.mark.parametrize("ranks", [1, 3])
def test_requests_posted_by_a_running_kernel_are_answered_across_ranks(tmp_path, ranks):
    dest = tmp_path / "mailbox.json"
    rc, out, err = mpirun(ranks, [sys.executable, str(DRIVER), str(dest), "50"], timeout=300)
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["ranks"] == ranks
    for case in got["cases"]:
        assert case["same_on_all_ranks"], case["n"]
        assert case["got"] == case["ref"], case["n"]
    assert got["post_s"] > 0


def test_a_cuda_kernel_posts_to_the_mailbox(tmp_path):
    """On GPUs (one rank per GPU, up to 2): a CUDA kernel's thread posts 2000 requests to the
    mailbox in page-locked host memory and spins on the answers; they are the ranks' reductions."""
    from conftest import gpu_count
    ranks = min(2, gpu_count())
    dest = tmp_path / "mailbox_gpu.json"
    rc, out, err = mpirun(ranks, [sys.executable, str(DRIVER), str(dest), "2000", "gpu"], timeout=300)
    assert rc == 0, err[-3000:]
    got = json.loads(dest.read_text())
    assert got["ok"] and got["ranks"] == ranks and got["post_s"] > 0, got
