"""The row moves of distributed ranks whose tables live on a device (distributed/rows.py with
device_rows.py's local parts), on the emulated device (NumPy arrays in device style: the code
a CuPy rank runs; also NumPy ranks, and CuPy ranks where there is a GPU), over 1, 2 and 3 ranks run as threads of this process (a communicator of
threads: no mpiexec), against one NumPy machine: the same tables, slices and step counts, the
kernels ran (not the Star bodies), and only the exchanged arrays crossed to the host (no
whole table). Both paths of the array collectives: host MPI (the emulated device's) and
device buffers (a staging path that treats every array as a device one, as NCCL would).
"""
from __future__ import annotations

import io
import threading

import numpy as np
import pytest

import starvm
from starvm.backends.emulated_device import EmulatedDevice
from starvm.distributed import SelfComm, distribute
from starvm.distributed.collectives import DeviceAccess, StagingCollectives
from starvm.distributed.device_rows import LocalRows
from starvm.distributed.rows import HostRows
from starvm.errors import StarError

_OPS = {"sum": np.add, "min": np.minimum, "max": np.maximum}


class _Hub:
    """What the threads of one communicator share: one slot per rank and a barrier."""

    def __init__(self, size: int):
        self.size = size
        self.slots = [None] * size
        self.barrier = threading.Barrier(size, timeout=120)

    def everyone(self, rank: int, obj) -> list:
        self.slots[rank] = obj
        self.barrier.wait()
        out = list(self.slots)
        self.barrier.wait()
        return out


class ThreadComm(SelfComm):
    """comm.py's interface over threads of one process (rank = thread); a SelfComm by type, so
    that distribute() takes it as one of its own."""

    def __init__(self, hub: _Hub, rank: int):
        self.hub, self.rank, self.size = hub, rank, hub.size

    def allreduce(self, x: int, op: str) -> int:
        return int(_OPS[op].reduce(np.array(self.hub.everyone(self.rank, int(x)), dtype=object)))

    def allreduce_array(self, a, op: str):
        parts = self.hub.everyone(self.rank, np.array(a, copy=True))
        return _OPS[op].reduce(np.stack(parts), axis=0)

    def bcast(self, obj, root: int = 0):
        return self.hub.everyone(self.rank, obj)[root]

    def bcast_array(self, a, root: int):
        return np.array(self.hub.everyone(self.rank, np.array(a, copy=True))[root], copy=True)

    def allgather(self, obj) -> list:
        return self.hub.everyone(self.rank, obj)

    def allgatherv(self, a):
        return np.concatenate([np.ravel(p) for p in self.hub.everyone(self.rank, np.array(a, copy=True))])

    def alltoallv(self, parts):
        every = self.hub.everyone(self.rank, [np.array(p, copy=True) for p in parts])
        return [every[r][self.rank] for r in range(self.size)]

    def agree_on_failure(self, failed: bool, timeout: float):
        return True

    def abort(self, code: int) -> None:
        raise SystemExit(code)


def on_ranks(hub: _Hub, fn):
    """fn(rank) on the hub's threads at once; their results by rank (the first error
    re-raised; it breaks the barrier, so the other ranks stop too instead of waiting)."""
    size = hub.size
    out, errors = [None] * size, []

    def run(r):
        try:
            out[r] = fn(r)
        except BaseException as e:          # noqa: BLE001  (re-raised in the caller)
            errors.append(e)
            hub.barrier.abort()

    threads = [threading.Thread(target=run, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    if errors:
        raise errors[0]
    return out


def _device_path(comm):
    """Array collectives that take every array as a device buffer and stage it through the
    host (the path of CuPy ranks sharing a GPU): rows.py's device branch."""
    dev = DeviceAccess(xp=np, gpu=f"stand-in {comm.rank}", on_device=lambda a: True)
    return StagingCollectives(comm, dev, "test: every array a device one")


class Ranks:
    """``size`` distributed machines over the emulated device (one per thread) and one NumPy
    machine; made once, reused by the cases (loading the library routines is most of a
    machine's cost)."""

    def __init__(self, size: int, align: int, path: str, local: str = "emulated", max_steps: int | None = None):
        self.hub = hub = _Hub(size)
        self.size = size
        if local == "cupy":
            from conftest import cupy_or_skip
            cupy_or_skip()

        def make(r):
            comm = ThreadComm(hub, r)
            if local in ("cupy", "numpy"):  # cupy: the ranks share the GPU, collectives.choose stages through the host
                backend = distribute(local, comm, align)
            else:
                backend = distribute(EmulatedDevice(), comm, align, _device_path(comm) if path == "device" else None)
            return starvm.Machine(backend=backend, out=io.StringIO(), max_steps=max_steps)
        self.machines = on_ranks(hub, make)
        self.reference = starvm.Machine(backend="numpy", out=io.StringIO(), max_steps=max_steps)

    def run(self, script):
        """script(machine) on every rank and on the NumPy machine: (the ranks' results, the
        reference's)."""
        return on_ranks(self.hub, lambda r: script(self.machines[r])), script(self.reference)


@pytest.fixture(scope="module", params=[(1, 64, "host"), (2, 1, "host"), (2, 64, "device"), (3, 1, "device"),
                                        (3, 64, "host"), (3, 1, "host", "numpy")],
                ids=["1rank", "2ranks-rows1", "2ranks-rows64-device-buffers", "3ranks-rows1-device-buffers",
                     "3ranks-rows64", "3ranks-rows1-numpy-ranks"])
def ranks(request):
    return Ranks(*request.param)


def _codes(values, bits: int) -> np.ndarray:
    """Rows holding ``values`` in ``bits`` columns, column 1 the most significant."""
    values = np.asarray(values, dtype=np.int64)
    return ((values[:, None] >> np.arange(bits - 1, -1, -1)) & 1).astype(bool)


def _case(seed: int) -> dict:
    """Random tables of 1..200 rows; index tables with many repeats (SCATTER's ties)."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 5, 63, 64, 65, 129, 200]))
    m = int(rng.choice([1, 3, 64, 100, 130, 200]))
    k = int(rng.choice([1, 2, 7, 64, 65, 70]))
    bits = max(1, n.bit_length())
    few = int(rng.integers(1, n + 1))               # the distinct targets: ties when few < n
    r = max(1, m // 8)                               # SCATTER into a table of few rows
    return dict(
        n=n, m=m, k=k,
        T=rng.random((n, k)) < 0.5,
        IXg=_codes(rng.integers(1, n + 1, m), bits), Xm=rng.random(m) < rng.choice([0.0, 0.1, 0.6, 1.0]),
        Rg=rng.random((m, k)) < 0.5,
        IXs=_codes(rng.integers(1, few + 1, n), bits), Xn=rng.random(n) < rng.choice([0.1, 0.6, 1.0]),
        Rs=rng.random((n, k)) < 0.5,
        T2=rng.random((m, k)) < 0.5, IXr=_codes(rng.integers(1, r + 1, m), max(1, r.bit_length())),
        Rr=rng.random((r, k)) < 0.5,
        G=_codes(rng.integers(0, int(rng.choice([1, 3, 40])), n), 6),
        K=_codes(rng.integers(0, int(rng.choice([2, 8, 1 << 20])), n), 21),
    )


def _moves(c: dict):
    """GATHER, SCATTER (two forms), GROUPMIN, IOTA, COMPACT in place and EXPAND on one machine:
    the tables and slice after each, their steps, the native kernel calls."""
    def script(mach):
        calls = mach.native_timing[0]
        got, steps = [], []

        def call(name, *args):
            mach.call(name, *args)
            steps.append(mach.last_call_stats)
        R1, R2, R4 = mach.table(c["Rg"]), mach.table(c["Rs"]), mach.table(c["Rr"])
        call("GATHER", mach.table(c["T"]), mach.table(c["IXg"]), c["Xm"], R1)
        call("SCATTER", mach.table(c["T"]), mach.table(c["IXs"]), c["Xn"], R2)
        call("SCATTER", mach.table(c["T2"]), mach.table(c["IXr"]), c["Xm"], R4)
        Z = mach.slice(np.zeros(c["n"], dtype=bool))
        call("GROUPMIN", mach.table(c["G"]), mach.table(c["K"]), c["Xn"], Z)
        I = mach.table(np.zeros((c["n"], 9), dtype=bool))
        call("IOTA", I)
        C = mach.table(c["Rs"])
        call("COMPACT", C, c["Xn"], C)
        R3 = mach.table(np.zeros((c["n"], c["k"]), dtype=bool))
        call("EXPAND", C, c["Xn"], R3)
        for x in (R1, R2, R4, Z, I, C, R3):
            got.append(x.to_numpy().tolist())
        return got, steps, mach.native_timing[0] - calls
    return script


@pytest.mark.parametrize("seed", range(6))
def test_row_moves_on_device_ranks_equal_one_numpy_machine(ranks, seed):
    everyone, (want, want_steps, _) = ranks.run(_moves(_case(seed)))
    for got, steps, calls in everyone:
        assert got == want
        assert steps == want_steps
        assert calls == 7                       # every routine ran its kernel, none its Star body
    kind = HostRows if ranks.machines[0].backend.L.name == "numpy" else LocalRows
    assert all(type(m.backend._local_rows) is kind for m in ranks.machines)


def test_row_number_out_of_range_runs_the_star_body_on_every_rank(ranks):
    """A marked row naming row 0 on one rank only: every rank runs the Star body and stops with
    the NumPy machine's error."""
    ix = _codes([3, 1, 0, 2, 5, 4, 1, 2], 3)
    T = np.eye(8, 5, dtype=bool)

    def script(mach):
        R = mach.table(np.zeros((8, 5), dtype=bool))
        try:
            mach.call("GATHER", mach.table(T), mach.table(ix), np.ones(8, dtype=bool), R)
        except StarError as e:
            return e.render().splitlines()[0], mach.native_timing[0]
        return "no error", mach.native_timing[0]
    everyone, (want, _) = ranks.run(script)
    assert want != "no error"
    assert [msg for msg, _ in everyone] == [want] * ranks.size


@pytest.mark.parametrize("size, align", [(1, 64), (2, 64), (3, 1)])
def test_row_moves_on_gpu_ranks_equal_one_numpy_machine(size, align):
    """The same cases over ranks whose local backend is CuPy on the GPU (threads sharing it):
    device_rows.CupyRows, the row kernels of native/shared/cuda_rows.py. Skips without a GPU."""
    from starvm.distributed.device_rows import CupyRows
    r = Ranks(size, align, "host", local="cupy")
    for seed in range(6):
        everyone, (want, want_steps, _) = r.run(_moves(_case(seed)))
        for got, steps, calls in everyone:
            assert (got, steps, calls) == (want, want_steps, 7), seed
    assert all(type(m.backend._local_rows) is CupyRows for m in r.machines)


@pytest.mark.parametrize("routine", ["GATHER", "SCATTER"])
def test_step_limit_stops_every_rank_before_a_row_moves(routine):
    """--max-steps: a GATHER or SCATTER of 200 rows past the limit stops every rank with the
    NumPy machine's error (the same on every rank)."""
    rng = np.random.default_rng(3)
    T, R0 = rng.random((200, 5)) < 0.5, rng.random((200, 5)) < 0.5
    ix = _codes(rng.integers(1, 201, 200), 8)

    def script(mach):
        R = mach.table(R0)
        try:
            mach.call(routine, mach.table(T), mach.table(ix), np.ones(200, dtype=bool), R)
        except StarError as e:
            return e.render().splitlines()[0], R.to_numpy().tolist()
        return "no error", None
    everyone, want = Ranks(3, 1, "device", max_steps=100).run(script)
    # the native runs only where the steps afford its Star body: here the body runs and stops
    # part way, at its own position in the library, as with natives off
    assert "error: step limit reached" in want[0]
    assert everyone == [want] * 3


def test_only_the_exchanged_rows_cross_to_the_host(monkeypatch):
    """GATHER of 3 rows of a 4096-row table over 2 ranks: what the ranks copy to the host is the
    asked row numbers and the answered rows (bytes per moved row), never a table (the host
    staging of before copied every table argument: 4096 x 64 bits each)."""
    copied = []
    real = LocalRows.host

    def host(self, a):
        copied.append(int(np.asarray(a).nbytes))
        return real(self, a)
    monkeypatch.setattr(LocalRows, "host", host)
    rng = np.random.default_rng(7)
    n, m, k = 4096, 200, 64
    T = rng.random((n, k)) < 0.5
    X = np.zeros(m, dtype=bool)
    X[[5, 70, 190]] = True                           # on both ranks (blocks of 64 rows)
    ix = _codes([1, 4096, 2000] * 66 + [3, 4], 13)   # rows of T on both ranks
    r = Ranks(2, 64, "host")

    def script(mach):
        R = mach.table(np.zeros((m, k), dtype=bool))
        mach.call("GATHER", mach.table(T), mach.table(ix), X, R)
        return R.to_numpy().tolist(), mach.native_timing[0]
    copied.clear()
    everyone, (want, _) = r.run(script)
    for got, calls in everyone:
        assert got == want and calls == 1
    assert copied and max(copied) <= 3 * 8, copied
