"""Where BORUVKA's time goes on the GPU, kernel by kernel (auto or cupy backend, CuPy needed).

    python3 bench/profile_boruvka.py --scale 22 [--backend auto] [--out FILE] [--ab NAME=VALUE ...]

Generates an R-MAT graph on the GPU (bench_stdlib's model and seed, CuPy's random stream),
builds the left/right/weight tables, runs BORUVKA once to warm up and ``--runs`` times timed
(the device synchronised), then once more with every native routine call timed (wall time,
synchronised: ``timed_call``) and every launch of the row, search and compare kernels and of
the CuPy functions they call (cumsum, argsort) timed with CUDA events, each attributed to the
native routine it ran in. Prints the routines' calls (with the table sizes) and the kernels,
by time; the time outside native routines is the interpreted Star steps (a launch or a host
read each). Checks the forest against SciPy. ``--ab NAME=VALUE`` adds a variant (a constant
of the row kernels changed, starvm/native/<routine>/cuda.py or native/shared/cuda_rows.py, e.g.
``GATHER_NARROW_COLS=0``, ``DEDUPE_BITS_MAX=0``): its runs alternate
with the plain code's, and it is profiled too (several constants at once: ``--ab A=0,B=0``);
``--set NAME=VALUE`` changes one for every run. A measuring tool for issue 13, not a benchmark
of record (bench_stdlib.py is that).
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np


import starvm  # noqa: E402
from starvm.benchmarking import clock, device_info, device_label, git_state, machine_info, synchronizer  # noqa: E402
from starvm.graphs import rmat  # noqa: E402

RMAT = dict(edge_factor=16, a=0.57, b=0.19, c=0.19, d=0.05, wmax=100)
SEED = 2015


class Profile:
    def __init__(self, cp):
        self.cp = cp
        self.label = ["(interpreted)"]
        self.events = []                     # (label, kernel, start event, end event)
        self.calls = []                      # (label, seconds)

    def wrap_kernel(self, name, fn):
        cp = self.cp

        def launch(*a, **k):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            out = fn(*a, **k)
            e.record()
            self.events.append((self.label[-1], name, s, e))
            return out
        return launch

    def wrap_call(self, real):
        def timed_call(kernel, backend, meter, *args):
            label = getattr(kernel, "__name__", "?")
            shapes = [f"{a.n}x{a.k}" for a in args if hasattr(a, "k") and hasattr(a, "n")]
            label = f"{label}({', '.join(shapes)})"
            self.label.append(label)
            t0 = time.perf_counter()
            try:
                return real(kernel, backend, meter, *args)
            finally:
                self.calls.append((label, time.perf_counter() - t0))
                self.label.pop()
        return timed_call

    def install(self):
        cp = self.cp
        from starvm.native.hit import cuda as hit_cuda
        from starvm.native.setmin import cuda as setmin_cuda
        from starvm.native.shared import cuda_rows, cuda_search
        for mod in routine_guards():
            mod.timed_call = self.wrap_call(mod.timed_call)
        for fns in list(cuda_rows._modules.values()) + list(cuda_search._modules.values()) + [hit_cuda._k,
                                                                                             setmin_cuda._k]:
            for name in list(fns):
                fns[name] = self.wrap_kernel(name, fns[name])
        for name in ("cumsum", "argsort", "full", "zeros", "ascontiguousarray"):   # the fills and copies too
            setattr(cp, name, self.wrap_kernel("cupy." + name, getattr(cp, name)))

    def report(self) -> list[str]:
        self.cp.cuda.Device().synchronize()
        by_kernel = collections.defaultdict(lambda: [0, 0.0])
        for label, name, s, e in self.events:
            key = (label.split("(")[0], name)
            by_kernel[key][0] += 1
            by_kernel[key][1] += self.cp.cuda.get_elapsed_time(s, e) / 1e3
        lines = ["native routine calls (wall, synchronised), slowest first:"]
        for label, t in sorted(self.calls, key=lambda x: -x[1])[:40]:
            lines.append(f"  {t * 1e3:9.2f} ms  {label}")
        by_routine = collections.defaultdict(lambda: [0, 0.0])
        for label, t in self.calls:
            by_routine[label.split("(")[0]][0] += 1
            by_routine[label.split("(")[0]][1] += t
        lines.append("native routines, total:")
        for r, (c, t) in sorted(by_routine.items(), key=lambda x: -x[1][1]):
            lines.append(f"  {t * 1e3:9.2f} ms  {c:4d} calls  {r}")
        lines.append("kernels (CUDA events), by routine:")
        for (r, name), (c, t) in sorted(by_kernel.items(), key=lambda x: -x[1][1]):
            lines.append(f"  {t * 1e3:9.2f} ms  {c:4d} launches  {r} / {name}")
        return lines


def routine_guards() -> list:
    """The routine packages whose guards time their kernels' calls (starvm/native/<routine>/)."""
    import importlib
    from starvm.native import ROUTINES
    mods = [importlib.import_module(f"starvm.native.{r}") for r in ROUTINES]
    return [mod for mod in mods if hasattr(mod, "timed_call")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-check", action="store_true", help="skip SciPy's forest (bench_stdlib checks it)")
    ap.add_argument("--ab", action="append", default=[], metavar="NAME=VALUE[,NAME=VALUE]",
                    help="a variant: constants of the row kernels set to VALUE (e.g. GATHER_NARROW_COLS=0); "
                         "the variants' timed runs alternate with the plain code's, each profiled once")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a constant of the row kernels changed for every run (the plain code's too)")
    ap.add_argument("--nosync", action="store_true",
                    help="a variant whose native routines do not wait for the device at their end (timed_call "
                         "without synchronize; their own reads still wait): what those waits cost")
    args = ap.parse_args(argv)
    import cupy as cp
    from scipy.sparse.csgraph import minimum_spanning_tree
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)
    m = starvm.Machine(backend=args.backend)
    w = rmat(8, seed=1)
    m.call("BORUVKA", w.n, *(m.table_from_ints(v, b) for v, b in ((w.src, w.vbits), (w.dst, w.vbits),
                                                                 (w.weight, w.wbits))), m.slice(np.zeros(w.m, bool)))
    t0 = time.perf_counter()
    g = rmat(args.scale, seed=SEED, xp=cp, **RMAT)
    cp.get_default_memory_pool().free_all_blocks()
    L, R, W = (m.table_from_ints(v, b) for v, b in ((g.src, g.vbits), (g.dst, g.vbits), (g.weight, g.wbits)))
    say(f"R-MAT scale {args.scale}: n = {g.n}, {g.m} arcs, made in {time.perf_counter() - t0:.1f} s; "
        f"device {device_label(device_info(m), machine_info())}, backend {args.backend}, "
        f"git {(git_state().get('commit') or '?')[:12]}")
    expect = None
    if not args.no_check:
        ref = minimum_spanning_tree(g.weight_matrix())
        expect = (int(round(ref.sum())), ref.nnz)
    import importlib
    kernel_modules = [importlib.import_module(m) for m in ("starvm.native.shared.cuda_rows", *(
        f"starvm.native.{r}.cuda" for r in ("iota", "gather", "scatter", "groupmin", "compact", "expand")))]

    def owner(name):
        """The row kernels' module that defines constant ``name`` (None: none does)."""
        return next((mod for mod in kernel_modules if name in vars(mod)), None)

    def settings(spec, flag):
        out = {}
        for item in spec.split(","):
            name, _, value = item.partition("=")
            if owner(name) is None:
                ap.error(f"--{flag} {spec}: the row kernels have no {name}")
            out[name] = int(value)
        return out
    for spec in args.set:
        for name, value in settings(spec, "set").items():
            setattr(owner(name), name, value)
    variants = [("as committed" if not args.set else "as set: " + ",".join(args.set), {})]
    for spec in args.ab:
        variants.append((spec, settings(spec, "ab")))
    if args.nosync:
        variants.append(("nosync", {"nosync": 1}))
    plain = {name: getattr(owner(name), name) for _, sets in variants for name in sets if name != "nosync"}
    callers = routine_guards()
    synced = {mod: mod.timed_call for mod in callers}

    def unsynced(kernel, backend, meter, *a):
        t0 = time.perf_counter()
        out = kernel(*a)
        meter.timing[0] += 1
        meter.timing[1] += time.perf_counter() - t0
        return out

    nosync = {mod: unsynced for mod in callers}

    def use(sets):
        for name, v in plain.items():
            setattr(owner(name), name, sets.get(name, v))
        for mod in callers:
            mod.timed_call = (nosync if sets.get("nosync") else synced)[mod]
    times = {label: [] for label, _ in variants}
    sync = synchronizer(m)
    forests = set()
    for i in range(args.runs + 1):              # the variants alternate run by run
        for label, sets in variants:
            use(sets)
            Tr = m.slice(np.zeros(g.m, bool))
            times[label].append(clock(lambda: m.call("BORUVKA", g.n, L, R, W, Tr), sync))
            tree = np.asarray(Tr.to_numpy(), bool)
            got = (int(g.weight[tree].sum()), int(tree.sum()))
            forests.add(got)
            if expect is not None and got != expect:
                say(f"MISMATCH ({label}): starvm {got} != SciPy {expect}")
                return 1
    if len(forests) > 1:
        say(f"MISMATCH: the variants' forests differ: {sorted(forests)}")
        return 1
    for label, _ in variants:
        med = float(np.median(times[label][1:]))
        say(f"BORUVKA{'' if len(variants) == 1 else f' ({label})'}: runs "
            f"{', '.join(f'{t:.4f}' for t in times[label])} s (first: warm-up); median {med:.4f} s = "
            f"{g.m / 2 / med / 1e6:.0f} MTEPS; "
            + (f"equal to SciPy {expect}" if expect else f"forest {got} (not checked)"))
    prof = Profile(cp)
    use({})
    prof.install()                   # wraps the modules' timed_call: the variants' own, wrapped too
    synced.update({mod: mod.timed_call for mod in callers})
    nosync.update({mod: prof.wrap_call(unsynced) for mod in callers})
    for label, sets in variants:
        use(sets)
        prof.events.clear()
        prof.calls.clear()
        Tr = m.slice(np.zeros(g.m, bool))
        total = clock(lambda: m.call("BORUVKA", g.n, L, R, W, Tr), sync)
        native = sum(x for _, x in prof.calls)
        say(f"profiled run{'' if len(variants) == 1 else f' ({label})'}: {total * 1e3:.1f} ms, "
            f"native routines {native * 1e3:.1f} ms, outside them {(total - native) * 1e3:.1f} ms")
        for s in prof.report():
            say(s)
    use({})
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
