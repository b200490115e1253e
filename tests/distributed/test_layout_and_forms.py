"""The distributed backend without MPI: row blocks, and the three vector forms (Shard,
replicated, Fill) on one rank (comm.SelfComm), against the NumPy backend primitive by
primitive. tests/distributed/test_mpi.py runs the same code over 2 and 3 ranks."""
from __future__ import annotations

import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from starvm.backends import get_backend
from starvm.distributed import Fill, Shard, distribute
from starvm.distributed.partition import layout


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 5000), size=st.integers(1, 9), align=st.sampled_from([1, 3, 64]))
def test_blocks_cover_the_rows_in_order(n, size, align):
    lays = [layout(n, size, r, align) for r in range(size)]
    assert lays[0].start == 0 and lays[-1].stop == n
    for a, b in zip(lays, lays[1:]):
        assert a.stop == b.start
    assert all(lay.start % align == 0 for lay in lays if lay.local_n)
    assert max(lay.local_n for lay in lays) == lays[0].local_n == lays[0].largest()
    for i in range(0, n, max(1, n // 50)):
        owner = lays[0].owner(i)
        assert lays[owner].has(i)


def _forms(B, bools):
    """The same n-bit vector in every form the distributed backend knows."""
    n = len(bools)
    out = [B.L.from_bools(bools), Shard(B.L.from_bools(bools), n)]
    if not bools.any():
        out.append(Fill(0, n))
    if bools.all():
        out.append(Fill(1, n))
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 140))
def test_primitives_agree_with_numpy_in_every_form(data, n):
    B = distribute("numpy", None)
    N = get_backend("numpy")
    pick = lambda: np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)) if data.draw(st.booleans())
                            else [data.draw(st.booleans())] * n, dtype=bool)   # noqa: E731
    a, b = pick(), pick()
    va, vb = N.from_bools(a), N.from_bools(b)
    i = data.draw(st.integers(0, n - 1))
    for x in _forms(B, a):
        assert B.numb(x) == N.numb(va) and B.some(x) == N.some(va) and B.fnd(x) == N.fnd(va)
        assert B.get_bit(x, i) == N.get_bit(va, i)
        assert (B.to_bools(B.not_(x, n), n) == N.to_bools(N.not_(va, n), n)).all()
        assert (B.to_bools(B.frst(x), n) == N.to_bools(N.frst(va), n)).all()
        assert (B.to_bools(B.set_bit(x, i, 1), n) == N.to_bools(N.set_bit(va, i, 1), n)).all()
        pos, rest = B.step(x)
        pos0, rest0 = N.step(va)
        assert pos == pos0 and (B.to_bools(rest, n) == N.to_bools(rest0, n)).all()
        for y in _forms(B, b):
            for f, g in ((B.and_, N.and_), (B.or_, N.or_), (B.xor, N.xor)):
                assert (B.to_bools(f(x, y), n) == N.to_bools(g(va, vb), n)).all()
            assert B.equal(x, y) == N.equal(va, vb)
            assert B.compare(x, y) == N.compare(va, vb)
            assert (B.to_bools(B.add(x, y, n), n) == N.to_bools(N.add(va, vb, n), n)).all()
            assert (B.to_bools(B.subt(x, y, n), n) == N.to_bools(N.subt(va, vb, n), n)).all()


def test_without_mpi4py_distributed_is_a_usage_error(monkeypatch, tmp_path, capsys):
    from starvm.ui.cli import main
    prog = tmp_path / "p.star"
    prog.write_text("begin writeln('x') end.\n")
    monkeypatch.setitem(sys.modules, "mpi4py", None)      # import mpi4py fails
    assert main(["run", str(prog), "--distributed"]) == 2
    assert "pip install 'starvm[mpi]'" in capsys.readouterr().err


def test_one_rank_without_mpi_runs_programs_alike():
    """distribute(..., None): the distributed code on one rank, no MPI at all (Machine(comm=)
    of one rank is the plain machine: test_one_rank.py)."""
    import io

    import starvm
    from starvm.distributed import distribute
    from pathlib import Path
    src = (Path(__file__).resolve().parents[2] / "programs" / "warshall_adapt.star").read_text()
    outs = []
    for backend in ("numpy", distribute("numpy", None)):
        out = io.StringIO()
        m = starvm.Machine(backend=backend, out=out)
        m.run(src, "warshall_adapt.star")
        outs.append((out.getvalue(), m.stats, m.backend.name))
    assert outs[0][:2] == outs[1][:2] and outs[1][2] == "mpi:numpy"


def test_registered_name_is_the_distributed_backend_on_one_rank():
    import io

    import starvm
    from starvm.backends import get_backend
    from starvm.distributed import DistributedBackend, named_backend
    B = named_backend("mpi:numpy")
    assert isinstance(B, DistributedBackend) and B.size == 1 and B.L is get_backend("numpy")
    out = io.StringIO()
    starvm.Machine(backend="mpi:numpy", out=out).run("var T: table(70, 3); begin ROW(70, T) := BITS('101'); "
                                                      "writeln(NUMB(COL(3, T)), ' ', FND(COL(1, T))) end.")
    assert out.getvalue() == "1 70\n"


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 70000), k=st.integers(0, 64), seed=st.integers(0, 2**32 - 1))
def test_row_values_in_blocks_agree_with_the_numpy_kernels(n, k, seed):
    """distributed/rows.py decodes index tables a block of rows at a time (32-bit lanes up to
    32 columns): the numbers of native/shared/numpy_rows.py, for all rows and for some."""
    from starvm.distributed.rows import _values
    from starvm.native.shared.numpy_rows import values as reference
    rng = np.random.default_rng(seed)
    words = (n + 63) // 64
    data = rng.integers(0, 2**64 - 1, (k, words), dtype=np.uint64, endpoint=True)
    if n % 64 and words:
        data[:, -1] &= np.uint64((1 << (n % 64)) - 1)
    rows = np.sort(rng.choice(n, min(n, 9), replace=False)) if n else np.zeros(0, dtype=np.int64)
    assert (_values(data, n) == reference(data, n)).all()
    assert (_values(data, n, rows, chunk=1024) == reference(data, n, rows)).all()


def test_collective_path_choice_on_one_rank(monkeypatch):
    """collectives.choose without MPI: a host backend takes the host path, a GPU rank alone
    the one-rank path (its arrays untouched), a path that is not one is a usage error (exit 2
    from the CLI), and without CuPy there is no GPU to offer; this MPI library is not CUDA-aware."""
    import io

    import pytest

    import starvm
    from starvm.backends import BackendUnavailable
    from starvm.distributed import SelfComm
    from starvm.distributed.collectives import DeviceAccess, choose, cupy_access, mpi_cuda_aware
    assert choose(SelfComm(), None).path == "host"
    alone = choose(SelfComm(), DeviceAccess(xp=np, gpu="g0", on_device=lambda a: True))
    a = np.arange(5, dtype=np.uint64)
    assert alone.path == "one-rank" and (alone.allreduce(a, "sum") == a).all() and alone.bcast(a, 0) is a
    assert (alone.allgatherv(a.reshape(1, 5)) == a).all()
    with pytest.raises(BackendUnavailable, match="STARVM_MPI_DEVICE_PATH"):
        choose(SelfComm(), None, "carrier-pigeon")
    monkeypatch.setenv("STARVM_MPI_DEVICE_PATH", "carrier-pigeon")
    with pytest.raises(BackendUnavailable):
        starvm.Machine(backend="mpi:numpy", out=io.StringIO())
    try:
        import cupy  # noqa: F401
    except ImportError:
        assert cupy_access() is None
    assert mpi_cuda_aware() in (True, False)
