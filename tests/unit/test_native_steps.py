"""One step count per program, whatever the route: a native kernel reports the steps its Star
body takes (starvm/native/steps.py), per kind and in --max-steps ticks, so `counting()`,
`--profile` and the step limit give the same with natives on and off, on every backend.

The per-call comparisons of kernel and body steps live beside the kernels' result checks
(test_native.py, test_native_search.py, test_native_rows.py); here: the step limit, whole
programs through the API and the CLI, and the GPU's WARSHALL-adapt step count replayed in
NumPy.
"""
from __future__ import annotations

import io
import re
import subprocess
import sys

import numpy as np
import pytest

import starvm
from starvm.graphs import generate
from starvm.native import native_for

from conftest import ROOT, subprocess_env


def _bits(rng, shape, p=0.5):
    return rng.random(shape) < p


def _codes(values, width):
    v = np.asarray(values, dtype=np.int64)
    return ((v[:, None] >> np.arange(width - 1, -1, -1)) & 1).astype(bool)


def calls(rng, n):
    """(routine, argument builder) for every routine with a native kernel, n rows."""
    T, F, X = _bits(rng, (n, 6)), _bits(rng, (n, 6)), _bits(rng, n)
    F[::2] = T[::2]
    IX = _codes(rng.integers(1, n + 1, n), 8)
    G, K = _codes(rng.integers(0, 4, n), 2), _codes(rng.integers(0, 5, n), 3)
    P = _bits(rng, (n, n), 2.0 / n)
    z = np.zeros(n, bool)
    return [
        ("WARSHALL-adapt", lambda m: (n, m.table(P))),
        ("MIN", lambda m: (m.table(T), m.slice(X), m.slice(z))),
        ("MAX", lambda m: (m.table(T), m.slice(X), m.slice(z))),
        ("HIT", lambda m: (m.table(T), m.table(F), m.slice(X), m.slice(z))),
        ("SETMIN", lambda m: (m.table(T), m.table(F), m.slice(X), m.slice(z))),
        ("IOTA", lambda m: (m.table(T),)),
        ("GATHER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(F))),
        ("SCATTER", lambda m: (m.table(T), m.table(IX), m.slice(X), m.table(F))),
        ("GROUPMIN", lambda m: (m.table(G), m.table(K), m.slice(X), m.slice(z))),
        ("COMPACT", lambda m: (m.table(T), m.slice(X), m.table(F))),
        ("EXPAND", lambda m: (m.table(T), m.slice(X), m.table(F))),
    ]


_LIMITED: dict = {}


def passes(backend, native, limit, name, build) -> bool:
    """Does the call finish within ``limit`` ticks? (One machine per backend and route, made
    with a step limit so that its code ticks; the limit of each run is set before it.)"""
    m = _LIMITED.get((backend, native))
    if m is None:
        m = _LIMITED[(backend, native)] = starvm.Machine(backend=backend, native=native, max_steps=1 << 40)
    m.max_steps = limit
    try:
        m.call(name, *build(m))
    except starvm.StarError as e:
        assert "step limit" in str(e)
        return False
    return True


@pytest.mark.parametrize("n", [5, 70])                 # auto: the CPU side, and the device side
def test_the_step_limit_counts_a_native_call_as_its_body(backend, n):
    """The fewest --max-steps ticks a call needs is the same with the kernel and the body."""
    for name, build in calls(np.random.default_rng(n), n):
        if backend != "auto" and native_for(name.lower().replace("-", "_"), backend, enabled=True) is None:
            continue
        lo, hi = 0, 1
        while not passes(backend, False, hi, name, build):      # the body's need, by bisection
            lo, hi = hi, hi * 4
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if passes(backend, False, mid, name, build) else (mid, hi)
        side = backend if backend != "auto" else ("numpy" if n < 64 else "emulated")   # where auto puts it
        kernel = native_for(name.lower().replace("-", "_"), side, enabled=True) is not None
        before = _LIMITED[(backend, True)].native_timing[0] if (backend, True) in _LIMITED else 0
        assert passes(backend, True, hi, name, build), name
        assert _LIMITED[(backend, True)].native_timing[0] == before + kernel, name
        assert not passes(backend, True, hi - 1, name, build), name


GRAPH = "rmat:scale=6,ef=4,seed=3,wmax=20"
# every routine with a kernel, from Star code: BORUVKA (IOTA, GATHER, SCATTER, GROUPMIN,
# SETMIN, HIT, ...), BFS-adapt and BELLMAN_FORD-adapt, and WARSHALL-adapt on the arcs
PROGRAM = """var L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_VBITS + GRAPH_WBITS);
    Tr: slice(L); D: table(GRAPH_N, GRAPH_VBITS + GRAPH_WBITS); V: table(GRAPH_N, GRAPH_VBITS + 1);
    P: table(GRAPH_N, GRAPH_N);
    pw: word(P); e, i: integer;
begin
  GRAPH_EDGES(L, R, W);
  BORUVKA(GRAPH_N, L, R, W, Tr);
  writeln(NUMB(Tr));
  BFS-adapt(GRAPH_N, 1, L, R, V);
  BELLMAN_FORD-adapt(GRAPH_N, 1, L, R, W, D);
  writeln(D);
  Tr := COL(1, L);
  while SOME(Tr) do
  begin
    e := STEP(Tr); i := NUMOF(ROW(e, L));
    pw := ROW(i, P); pw(NUMOF(ROW(e, R))) := 1; ROW(i, P) := pw;
  end;
  WARSHALL-adapt(GRAPH_N, P);
  writeln(NUMB(COL(1, P)), ' ', V);
end."""


def test_counting_is_the_same_with_natives_on_and_off(backend):
    got = []
    for native in (True, False):
        out = io.StringIO()
        m = starvm.Machine(backend=backend, out=out, native=native, graph=generate(GRAPH))
        with m.counting() as c:
            m.run(PROGRAM, "natives.star")
        got.append((out.getvalue(), c.stats, m.native_timing[0]))
    assert got[0][0] == got[1][0]
    assert got[0][1] == got[1][1]
    assert got[0][2] > 10 and got[1][2] == 0


def _profile(tmp_path, backend, native: bool) -> tuple[list, str, str]:
    """(the (operation, count) rows of `star run --profile`, its stderr, its stdout)."""
    prog = tmp_path / "natives.star"
    prog.write_text(PROGRAM)
    env = subprocess_env(STARVM_NATIVE="1" if native else "0", STARVM_AUTO_EMULATE="1",
                         STARVM_AUTO_GPU_ROWS="64", STARVM_AUTO_GPU_BITS="4096")
    r = subprocess.run([sys.executable, "-m", "starvm", "run", "--backend", backend, "--profile",
                        "--generate", GRAPH, str(prog)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = [m.groups() for m in map(re.compile(r"^([A-Za-z].*?)\s+(\d+)(?:\s+[\d.]+)*$").match,
                                    r.stderr.splitlines()) if m]
    return rows, r.stderr, r.stdout


def test_profile_is_the_same_with_natives_on_and_off(tmp_path, backend):
    """`star run --profile`: the same steps per kind (the report's rows, without the times)."""
    on, err_on, out_on = _profile(tmp_path, backend, True)
    off, err_off, out_off = _profile(tmp_path, backend, False)
    assert out_on == out_off
    assert "native kernel call" in err_on and "native kernel call" not in err_off
    assert len(on) > 5 and on == off


# ---------------------------------------------------------------- the GPU's WARSHALL-adapt count
def _replayed_ors(a: np.ndarray) -> int:
    """native/warshall_adapt/cuda.py's pivot_steps, in NumPy: per block of 64 pivots, the pivot rows' words
    before their own pivot (a 64-step Warshall on the 64 x 64 sub-matrix), then every row's
    word b replayed through the block's pivots, counting the pivots it holds. The blocks'
    closure itself is the plain one (what rows_update computes)."""
    n = a.shape[0]
    rows = [int("".join("1" if b else "0" for b in a[:, c][::-1]), 2) for c in range(n)]   # data row c
    ors = 0
    for kb in range((n + 63) // 64):
        cnt = min(64, n - 64 * kb)
        word = [(r >> (64 * kb)) & ((1 << 64) - 1) for r in rows]
        sub = [word[64 * kb + t] for t in range(cnt)]
        pre = [0] * cnt
        for t in range(cnt):
            pre[t] = sub[t]
            for r in range(cnt):
                if (sub[r] >> t) & 1:
                    sub[r] |= pre[t]
        for c in range(n):
            w = word[c]
            for t in range(cnt):
                if (w >> t) & 1:
                    ors += 1
                    w |= pre[t]
        for t in range(cnt):                    # the block's pivots, on whole rows
            p = 64 * kb + t
            for c in range(n):
                if (rows[c] >> p) & 1:
                    rows[c] |= rows[p]
    return ors


@pytest.mark.parametrize("n", [1, 5, 64, 65, 130])
def test_gpu_warshall_step_count_replays_the_pivots(n):
    rng = np.random.default_rng(n)
    path = np.zeros((n, n), bool)
    path[np.arange(1, n), np.arange(n - 1)] = True                 # reversed path: every pivot counts
    for a in (path, rng.random((n, n)) < 2.0 / n, rng.random((n, n)) < 0.2, np.ones((n, n), bool)):
        m = starvm.Machine(backend="numpy", native=False)
        P = m.table(a)
        m.call("WARSHALL-adapt", n, P)
        assert _replayed_ors(a) == m.stats.get("OR", 0)


# ---------------------------------------------------------------- waiting for the device
class _CountingBackend:
    def __init__(self):
        self.waits = 0

    def synchronize(self):
        self.waits += 1


@pytest.mark.parametrize("profiled", [False, True])
def test_native_calls_wait_for_the_device_only_when_profiled(profiled):
    """A kernel's time is only known after a wait for the device: the machine's meter waits
    under --profile (the report then gives the kernels' seconds) and not otherwise (the next
    read of the device waits, as after any launch); calls are counted either way."""
    from starvm.native import timed_call
    m = starvm.Machine(backend="numpy")
    m.profile = profiled
    b = _CountingBackend()
    assert timed_call(lambda x: x + 1, b, m._native_meter, 41) == 42
    assert (b.waits, m.native_timing[0]) == (int(profiled), 1)
    report = m.profile_report()
    assert "1 native kernel call(s) replaced standard-library Star bodies" in report
    assert (" s; the steps above" in report) == profiled
