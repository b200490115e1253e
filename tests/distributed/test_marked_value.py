"""The device part of a distributed MIN / MAX (search.extreme_here): the one-copy read of
marked_value.py (the value a marked row holds, against the rows' values read from the
table's bits; the CUDA body compiled by NVRTC), and the turns that ranks sharing a GPU take
at it (gpu_turns.py: the chain's order, an error in a turn); MIN / MAX over 1, 2 and 3 ranks
(threads of this process, the emulated device or the GPU) against one NumPy machine, with
ties and the values that equal the all-reduction's neutral element (MIN of all ones, MAX of
zeros)."""
from __future__ import annotations

import io
import threading
import time

import numpy as np
import pytest

import starvm
from starvm.distributed import SelfComm, distribute, marked_value, search
from starvm.distributed.collectives import gpu_peers
from starvm.distributed.gpu_turns import GpuTurns
from test_rows_device import Ranks, ThreadComm, _device_path, _Hub, on_ranks


def _words(bits: np.ndarray) -> np.ndarray:
    """n bools as ceil(n/64) little-endian words (row r = bit r % 64 of word r // 64)."""
    n = bits.size
    buf = np.zeros((n + 63) // 64 * 8, dtype=np.uint8)
    packed = np.packbits(bits, bitorder="little")
    buf[:packed.size] = packed
    return buf.view(np.uint64)


def _row_values(T: np.ndarray) -> list[int]:
    """Each row of an n x k bool table as an integer, column 1 the most significant bit."""
    return [int("".join("1" if b else "0" for b in row), 2) if row.size else 0 for row in T]


def _table_words(T: np.ndarray) -> np.ndarray:
    return np.stack([_words(T[:, c]) for c in range(T.shape[1])])


def _cases(seed: int):
    rng = np.random.default_rng(seed)
    for n in (1, 63, 64, 65, 200):
        for k in (1, 7, 32, 64):
            T = rng.random((n, k)) < 0.5
            for density in (0.0, 0.02, 0.5, 1.0):
                yield T, rng.random(n) < density


def test_model_reads_the_first_marked_rows_value():
    for T, z in _cases(1):
        found, value = marked_value.model(_table_words(T), _words(z))
        rows = np.flatnonzero(z)
        assert (found, value) == ((1, _row_values(T)[rows[0]]) if rows.size else (0, 0))


def test_cuda_body_compiles():
    """BODY in a kernel that gives it what CuPy's ElementwiseKernel does (z, i, raw tab and res)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from gpu_sources import nvrtc
    nvrtc.require()
    code = ('extern "C" __global__ void star_marked_value(const unsigned long long* zs, '
            'const unsigned long long* tab, long long nwords, int ncols, unsigned long long* res, long long n) {\n'
            '    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n'
            '    if (i >= n) return;\n    const unsigned long long z = zs[i];\n'
            + marked_value.BODY + "}\n")
    ptx = nvrtc.compile_ptx(code, "marked_value.cu")
    assert "atom.global.cas.b64" in ptx.text
    assert ptx.entry("star_marked_value") == [64, 64, 64, 32, 64, 64]


def test_cupy_read_equals_the_rows_values():
    """On the GPU: no marked row gives (0, 0); rows all of one value (MIN's result) give it;
    any marks give one of the marked rows' values; the result buffer is reset between calls."""
    from conftest import cupy_or_skip
    cupy_or_skip()
    import cupy as cp
    for T, z in _cases(3):
        values = _row_values(T)
        rows = np.flatnonzero(z)
        tw = cp.asarray(_table_words(T))
        found, value = marked_value.on_cupy(tw, cp.asarray(_words(z)), T.shape[1])
        if not rows.size:
            assert (found, value) == (0, 0)
            continue
        assert found == 1 and value in {values[r] for r in rows}
        same = rows[np.array([values[r] for r in rows]) == values[rows[-1]]]   # one value only
        zs = np.zeros_like(z)
        zs[same] = True
        assert marked_value.on_cupy(tw, cp.asarray(_words(zs)), T.shape[1]) == (1, values[rows[-1]])


def _min_max_cases(seed: int):
    """(T, X) pairs: random values with ties, all ones in 64 columns (MIN's value is the
    neutral element of the min-reduction), all zeros (MAX's), one row, no row marked."""
    rng = np.random.default_rng(seed)
    for n in (1, 5, 64, 65, 130, 200):
        for k in (1, 3, 64):
            levels = int(rng.choice([2, 5, 1 << min(k, 20)]))
            vals = rng.integers(0, levels, n)
            T = np.array([[(int(v) >> (k - 1 - c)) & 1 for c in range(k)] for v in vals], dtype=bool).reshape(n, k)
            yield T, rng.random(n) < float(rng.choice([0.05, 0.7, 1.0]))
    yield np.ones((130, 64), dtype=bool), np.ones(130, dtype=bool)
    yield np.zeros((130, 64), dtype=bool), np.ones(130, dtype=bool)
    yield np.ones((70, 8), dtype=bool), np.zeros(70, dtype=bool)


def _script(T, X):
    def script(mach):
        out = []
        for name in ("MIN", "MAX"):
            Z = mach.slice(np.zeros(T.shape[0], dtype=bool))
            mach.call(name, mach.table(T), X, Z)
            out.append((Z.to_numpy().tolist(), mach.last_call_stats))
        return out
    return script


@pytest.mark.parametrize("size, align", [(1, 64), (2, 64), (3, 1)])
def test_min_max_over_ranks_read_once_and_equal_one_numpy_machine(size, align, monkeypatch):
    """MIN and MAX over emulated-device ranks: the results and steps of one NumPy machine, the
    same with the FND + ROW read (FUSED_READ off); with it on, no rank calls FND or ROW, and
    one rank alone reads nothing at all (its extreme is the extreme)."""
    ranks = Ranks(size, align, "host")
    calls = {"fnd": 0, "row_get": 0, "model": 0}
    for m in ranks.machines:
        L = m.backend.L
        for name in ("fnd", "row_get"):
            def counted(*a, _f=getattr(L, name), _name=name):
                calls[_name] += 1
                return _f(*a)
            monkeypatch.setattr(L, name, counted)

    def model(*a, _f=marked_value.model):
        calls["model"] += 1
        return _f(*a)
    monkeypatch.setattr(marked_value, "model", model)
    for T, X in _min_max_cases(size):
        everyone, want = ranks.run(_script(T, X))
        assert everyone == [want] * size
    assert calls["fnd"] == calls["row_get"] == 0
    assert (calls["model"] > 0) == (size > 1)
    monkeypatch.setattr(search, "FUSED_READ", False)
    for T, X in _min_max_cases(size):
        everyone, want = ranks.run(_script(T, X))
        assert everyone == [want] * size
    assert (calls["fnd"] > 0) == (size > 1)


@pytest.mark.parametrize("size, align", [(1, 64), (2, 64), (3, 1)])
def test_min_max_over_gpu_ranks_equal_one_numpy_machine(size, align):
    """The same over ranks (threads) sharing the GPU: CuPy's kernels and the one-copy read."""
    ranks = Ranks(size, align, "host", local="cupy")
    for T, X in _min_max_cases(size + 10):
        everyone, want = ranks.run(_script(T, X))
        assert everyone == [want] * size


# ---------------------------------------------------------------- ranks sharing a GPU take turns
def _token_ranks(size: int):
    hub = _Hub(size)
    return hub, [ThreadComm(hub, r) for r in range(size)]


def test_gpu_peers_are_the_ranks_on_one_gpu_of_one_host():
    facts = [("h0", "g0", True, False), ("h0", "g0", True, False), ("h0", "g1", True, False),
             ("h1", "g0", True, False), ("h0", "g0", True, False)]
    assert [gpu_peers(facts, r) for r in range(5)] == [(0, 1, 4), (0, 1, 4), (), (), (0, 1, 4)]
    assert gpu_peers(facts[:1], 0) == ()


def test_turns_go_in_a_chain_whose_order_alternates_and_survive_an_error():
    """Three ranks on one GPU: in each call every rank's turn follows the previous rank's (0, 1,
    2, then 2, 1, 0, ...); a rank that raises in its turn still hands the GPU on."""
    hub, comms = _token_ranks(3)
    log, lock = [], threading.Lock()

    def rank(r):
        turns = GpuTurns(comms[r], (0, 1, 2), mode="token")
        for call in range(4):
            try:
                with turns.turn():
                    time.sleep(0.01 * (2 - r))        # the earlier ranks slower: no order by chance
                    with lock:
                        log.append((call, r))
                    if call == 2 and r == 0:
                        raise ValueError("rank 0 fails in its turn")
            except ValueError:
                pass
            hub.everyone(r, call)                     # the call's all-reduction
        return turns.calls
    assert on_ranks(hub, rank) == [4, 4, 4]
    assert [r for _, r in log] == [0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0]


def test_ranks_alone_on_their_gpu_take_no_turns():
    turns = GpuTurns(SelfComm(), ())
    with turns.turn():
        pass
    assert turns.calls == 0 and GpuTurns(SelfComm(), (0,)).peers == ()


@pytest.mark.parametrize("size, align", [(2, 64), (3, 1)])
def test_min_max_with_turns_equal_one_numpy_machine(size, align, monkeypatch):
    """MIN and MAX over emulated-device ranks that all share one 'GPU' and take turns."""
    from starvm.backends.emulated_device import EmulatedDevice
    monkeypatch.setenv("STARVM_MPI_GPU_TURNS", "token")
    hub, comms = _token_ranks(size)

    def make(r):
        coll = _device_path(comms[r])
        coll.gpu_peers = tuple(range(size))
        return starvm.Machine(backend=distribute(EmulatedDevice(), comms[r], align, coll), out=io.StringIO())
    machines = on_ranks(hub, make)
    reference = starvm.Machine(backend="numpy", out=io.StringIO())
    for T, X in _min_max_cases(size + 20):
        everyone = on_ranks(hub, lambda r: _script(T, X)(machines[r]))
        assert everyone == [_script(T, X)(reference)] * size
    assert all(m.backend.gpu_turns.peers == tuple(range(size)) and m.backend.gpu_turns.calls > 0 for m in machines)


def test_event_turns_hand_the_gpu_on_once_the_work_is_queued():
    """Mode "event": a rank records its event and passes the token right after queueing its
    work, and the next rank's stream waits for that event before its own work: the next rank
    queues while the first still waits for the device (in mode "token" it could not)."""
    hub, comms = _token_ranks(2)
    log, lock = [], threading.Lock()

    class Events:                                     # stands in for CupyEvents
        def __init__(self, r):
            self.r = r

        def record(self):
            with lock:
                log.append(("record", self.r))

        def wait_for(self, rank):
            with lock:
                log.append(("wait", self.r, rank))

    def rank(r):
        turns = GpuTurns(comms[r], (0, 1), events=Events(r), mode="event")
        for call in range(2):
            with turns.turn() as handoff:
                with lock:
                    log.append(("queue", call, r))
                handoff()
                time.sleep(0.05)                      # the wait for the device
                with lock:
                    log.append(("done", call, r))
            hub.everyone(r, call)
    on_ranks(hub, rank)
    first = log[:log.index(("done", 0, 0))]
    assert first == [("queue", 0, 0), ("record", 0), ("wait", 1, 0), ("queue", 0, 1), ("record", 1)]
    second = log[log.index(("done", 0, 1)) + 1:]
    assert second[:5] == [("queue", 1, 1), ("record", 1), ("wait", 0, 1), ("queue", 1, 0), ("record", 0)]


def test_event_turns_without_ipc_events_fall_back_to_tokens_on_every_rank(monkeypatch):
    """Where a rank cannot make its CUDA event (here: no CuPy, or a made-up failure on rank 1
    alone) every rank agrees to pass plain tokens, and MIN / MAX still equal one NumPy machine."""
    from starvm.backends.emulated_device import EmulatedDevice
    from starvm.distributed import gpu_turns

    class Fails(gpu_turns.CupyEvents):
        def __init__(self, peers):
            if threading.current_thread().name.endswith("rank1"):
                raise RuntimeError("no IPC here")
            self.peers, self.handle, self.others = peers, None, {}

        def open(self, handles, rank):
            pass
    size = 3
    hub, comms = _token_ranks(size)
    monkeypatch.setattr(gpu_turns, "CupyEvents", Fails)
    monkeypatch.setenv("STARVM_MPI_GPU_TURNS", "event")

    def make(r):
        threading.current_thread().name = f"rank{r}"
        coll = _device_path(comms[r])
        coll.gpu_peers = tuple(range(size))
        return starvm.Machine(backend=distribute(EmulatedDevice(), comms[r], 1, coll), out=io.StringIO())
    machines = on_ranks(hub, make)
    reference = starvm.Machine(backend="numpy", out=io.StringIO())
    for T, X in list(_min_max_cases(5))[:6]:
        everyone = on_ranks(hub, lambda r: (setattr(threading.current_thread(), "name", f"rank{r}"),
                                            _script(T, X)(machines[r]))[1])
        assert everyone == [_script(T, X)(reference)] * size
    assert all(m.backend.gpu_turns.events is None and "rank 1: RuntimeError: no IPC here" == m.backend.gpu_turns.events_failed
               for m in machines)


def test_turns_mode_from_the_environment(monkeypatch):
    from starvm.backends import BackendUnavailable
    for value, enabled, mode in (("", False, "token"), ("token", True, "token"), ("Event", True, "event"),
                                 ("off", False, "token")):
        monkeypatch.setenv("STARVM_MPI_GPU_TURNS", value)
        t = GpuTurns(SelfComm(), ())
        assert (t.enabled, t.mode) == (enabled, mode)
    monkeypatch.setenv("STARVM_MPI_GPU_TURNS", "sometimes")
    with pytest.raises(BackendUnavailable, match="token, event or off, not 'sometimes'"):
        GpuTurns(SelfComm(), ())


def test_unknown_turns_mode_is_a_usage_error_of_star_run(monkeypatch):
    """`star run --distributed` with STARVM_MPI_GPU_TURNS=sometimes: exit 2 and one line saying
    what it may be (one rank, in this process: the distributed backend reads it when made)."""
    from test_mpi import serial
    monkeypatch.setenv("STARVM_MPI_GPU_TURNS", "sometimes")
    rc, out, err = serial("run", "programs/bfs.star", "--distributed")
    assert rc == 2 and out == ""
    assert "STARVM_MPI_GPU_TURNS is token, event or off, not 'sometimes'" in err and "Traceback" not in err
