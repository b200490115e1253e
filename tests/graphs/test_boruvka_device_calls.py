"""What BORUVKA asks of a GPU, counted without one: on the auto backend's emulated device
(backends/emulated_device.py, NumPy behind device-style vectors) every device-to-host read
(SOME, NUMB, FND, STEP, a bit or a vector brought to the host, and the one transfer each row
kernel makes, starvm/native/shared/emulated.py ``host_read``), every other device operation (each
one or a few kernel launches on CuPy) and every native kernel call is recorded, and split
into BORUVKA's rounds (a round starts at its GROUPMIN). A round must stay a bounded number
of reads and operations, whatever the graph's size: the test fails when a change puts a
per-column or per-row host read back into a round.

    python3 tests/graphs/test_boruvka_device_calls.py 16     # the counts per round at R-MAT scale 16
"""
from __future__ import annotations

import collections
import importlib
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("STARVM_AUTO_EMULATE", "1")

import starvm  # noqa: E402
from starvm.backends.emulated_device import EmulatedDevice  # noqa: E402
from starvm.graphs import rmat  # noqa: E402
from starvm.native import ROUTINES  # noqa: E402
from starvm.native.shared import emulated  # noqa: E402

# device methods whose result the host reads (a device-to-host copy and a wait on CuPy)
HOST_READS = ("numb", "some", "fnd", "step", "get_bit", "equal", "compare", "to_bools", "to_words",
              "trim", "rep", "add", "subt")
# device methods that launch work and return a device value or nothing
DEVICE_OPS = ("zeros", "ones", "from_bools", "from_words", "set_bit", "frst", "and_", "or_", "xor", "not_",
              "table", "table_copy", "table_snapshot", "col_get", "col_set", "row_get", "row_set",
              "table_set_ints", "table_get_ints")
KERNEL_NAMES = {"groupmin_counted": "GROUPMIN", "iota": "IOTA", "compact": "COMPACT", "expand": "EXPAND"}


class Recorder:
    """Events in order: ("read", what), ("op", what), ("native", routine)."""

    def __init__(self):
        self.events: list[tuple[str, str]] = []

    def install(self, patch) -> None:
        for name in HOST_READS + DEVICE_OPS:
            real = getattr(EmulatedDevice, name)

            def wrapped(*a, _real=real, _kind="read" if name in HOST_READS else "op", _name=name, **k):
                self.events.append((_kind, _name))
                return _real(*a, **k)
            patch(EmulatedDevice, name, wrapped)
        real_read = emulated.host_read

        def host_read(*values):
            self.events.append(("read", "kernel transfer"))
            return real_read(*values)
        patch(emulated, "host_read", host_read)
        # every routine's guard (native/<routine>/__init__.py) times its kernel's call
        for module in (importlib.import_module(f"starvm.native.{r}") for r in ROUTINES):
            if not hasattr(module, "timed_call"):
                continue
            real_call = module.timed_call

            def timed_call(kernel, backend, meter, *args, _real=real_call):
                if isinstance(backend, EmulatedDevice):
                    name = getattr(kernel, "__name__", "?")
                    self.events.append(("native", KERNEL_NAMES.get(name, "GATHER/SCATTER" if name == "run" else name)))
                return _real(kernel, backend, meter, *args)
            patch(module, "timed_call", timed_call)

    def phases(self) -> list[collections.Counter]:
        """Counters of (kind) and (kind, what): the set-up before the first round's GROUPMIN
        (the edge dedupe is the first GROUPMIN), then one per round; the wrap-up after the last
        round counts with the last round."""
        starts = [i for i, e in enumerate(self.events) if e == ("native", "GROUPMIN")][1:]
        bounds = [0, *starts, len(self.events)]
        out = []
        for lo, hi in zip(bounds, bounds[1:]):
            c = collections.Counter()
            for kind, what in self.events[lo:hi]:
                c[kind] += 1
                c[(kind, what)] += 1
            out.append(c)
        return out


def run_counted(scale: int, patch) -> tuple[list[collections.Counter], object, np.ndarray]:
    g = rmat(scale, seed=2015, edge_factor=16, a=0.57, b=0.19, c=0.19, d=0.05, wmax=100)
    m = starvm.Machine(backend="auto")
    L, R, W = (m.table_from_ints(v, b) for v, b in ((g.src, g.vbits), (g.dst, g.vbits), (g.weight, g.wbits)))
    Tr = m.slice(np.zeros(g.m, bool))
    w = rmat(3, seed=1)                                      # loads the library outside the count
    m.call("BORUVKA", w.n, *(m.table_from_ints(v, b) for v, b in ((w.src, w.vbits), (w.dst, w.vbits),
                                                                 (w.weight, w.wbits))), m.slice(np.zeros(w.m, bool)))
    rec = Recorder()
    rec.install(patch)
    m.call("BORUVKA", g.n, L, R, W, Tr)
    return rec.phases(), g, np.asarray(Tr.to_numpy(), bool)


@pytest.fixture
def auto_on_device(monkeypatch):
    """Every table of the run on the emulated device, as on a GPU at scale 22."""
    from starvm.backends import get_backend
    if not isinstance(getattr(get_backend("auto"), "dev", None), EmulatedDevice):
        pytest.skip("the auto backend's device is a real GPU here, not the emulated one")
    monkeypatch.setenv("STARVM_AUTO_GPU_ROWS", "64")
    monkeypatch.setenv("STARVM_AUTO_GPU_BITS", "4096")
    return monkeypatch


@pytest.mark.parametrize("scale", [8, 10])
def test_a_round_reads_the_device_a_bounded_number_of_times(auto_on_device, scale):
    from scipy.sparse.csgraph import minimum_spanning_tree
    phases, g, tree = run_counted(scale, auto_on_device.setattr)
    ref = minimum_spanning_tree(g.weight_matrix())
    assert (int(g.weight[tree].sum()), int(tree.sum())) == (int(round(ref.sum())), ref.nnz)
    setup, rounds = phases[0], phases[1:]
    assert rounds, "BORUVKA ran no round"
    for phase in phases:
        # at most one transfer per native kernel call, never one per column or per row ...
        assert phase[("read", "kernel transfer")] <= phase["native"] + 1, phase
        # ... and a few SOME / NUMB of the Star text: NUMB(U) and the live arcs, the merge
        # check, one SOME per pointer jump (before: NCOLS(G) NUMBs per GROUPMIN, two SOMEs a jump)
        assert phase["read"] <= phase["native"] + 10, phase
        assert phase[("read", "numb")] <= 4, phase
    assert setup["read"] <= 16, setup


def main(argv: list[str]) -> int:
    scale = int(argv[1]) if len(argv) > 1 else 16
    patches = []

    def patch(obj, name, value):
        patches.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)
    try:
        phases, g, _ = run_counted(scale, patch)
    finally:
        for obj, name, old in reversed(patches):
            setattr(obj, name, old)
    print(f"BORUVKA, R-MAT scale {scale} (n = {g.n}, {g.m} arcs), auto backend on the emulated device")
    print("phase      | host reads | device ops | native calls | reads by kind")
    for i, c in enumerate(phases):
        kinds = ", ".join(f"{w} {n}" for (k, w), n in sorted(((k, n) for k, n in c.items() if isinstance(k, tuple)
                                                                and k[0] == "read"), key=lambda x: -x[1]))
        print(f"{'set-up' if i == 0 else f'round {i}':10s} | {c['read']:10d} | {c['op']:10d} | {c['native']:12d} | {kinds}")
    total = collections.Counter()
    for c in phases:
        total.update({k: v for k, v in c.items() if isinstance(k, str)})
    print(f"{'total':10s} | {total['read']:10d} | {total['op']:10d} | {total['native']:12d} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
