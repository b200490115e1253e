"""The compiled tiers on the auto backend: each call runs where its arguments are.

``install_auto`` (called by ``Tier.install`` on ``--backend auto``) builds, for every routine,
a Numba ``JitRoutine`` (the CPU tier, tier.py) and a ``GpuRoutine`` (cuda_tier.py, only with
a real GPU) where each tier takes it, and puts one ``PlacedRoutine`` in the machine's
namespace. At each call it looks where the tables and vectors of the call are (the
arguments and the globals the routine and its callees use):

* all on the host (auto's host side is the NumPy backend: tables of NumPy words, vectors
  Python ints) -> the CPU tier, unless a fused `parallel for` inside could move a table to
  the device (``AutoBackend.place`` does that for loops over ``gpu_bits`` table bits or
  more): compiled code keeps tables where they are, so such a call runs interpreted and
  the tables end where the interpreter puts them;
* tables on the device and none on the host -> the GPU tier (which declines, itself, what
  it cannot run);
* anything else (tables on both sides, a device vector with host tables) -> interpreted.

Results, output and steps do not depend on the route (every tier reports the interpreter's).
"""
from __future__ import annotations

from collections import Counter

from ..ir.ops import Op
from ..targets.numpy.forall import fusable
from ..execution.values import Bits, Table
from ..types import T
from ..ir.walk import callees, walk


def install_auto(tier, candidates: dict, main, recursive):
    from .cuda_runtime import GpuRoutine
    from .cuda_tier import install_gpu
    ns = tier.context.ns
    displays = {p: (info.display if info else "main block") for p, (info, _b) in candidates.items()}
    interpreted = {p: (main if p == "main_" else ns[p]) for p in candidates}
    host = tier.compile_host(candidates, main)
    host_why = {p: tier.skipped.get(d, "") for p, d in displays.items() if p not in host}
    for p, d in displays.items():
        tier.skipped.pop(d, None)
    install_gpu(tier, candidates, main, recursive)
    gpu = {p: ns[p] for p in candidates if p != "main_" and isinstance(ns.get(p), GpuRoutine)}
    gpu_why = {p: _gpu_part(tier.skipped.get(d, "")) for p, d in displays.items() if p not in gpu}
    bodies = {**tier.bodies, **candidates}
    for pyname, display in displays.items():
        h, g = host.get(pyname), gpu.get(pyname)
        if h is None and g is None:
            whys = [f"CPU tier: {host_why[pyname]}" if host_why.get(pyname) else "",
                    f"GPU tier: {gpu_why[pyname]}" if gpu_why.get(pyname) else ""]
            whys = [w for w in whys if w]
            if whys:
                tier.skipped[display] = "; ".join(whys)
            if pyname != "main_":
                ns[pyname] = interpreted[pyname]
            continue
        tier.skipped.pop(display, None)
        info = candidates[pyname][0]
        routine = PlacedRoutine(tier, pyname, display, interpreted[pyname], h, g,
                                host_why.get(pyname, ""), gpu_why.get(pyname, ""),
                                placed_loops(pyname, bodies, tier.context.fuse),
                                device_native=info is not None and tier._native(info) and not tier._native(info, "host"))
        tier.routines[pyname] = routine
        if pyname == "main_":
            main = routine
        else:
            ns[pyname] = routine
    return main


def _gpu_part(why: str) -> str:
    """cuda_tier's reason without its sentence about the CPU tier (which does run on auto)."""
    head = "keeps tables where the CPU tier does not run, and "
    return why.split(head, 1)[1] if head in why else why


def placed_loops(pyname: str, bodies: dict, fuse: bool) -> int | None:
    """The most table values one fused `parallel for` of the routine or its callees hands
    ``AutoBackend.place`` (its tables and their snapshots); None when such a loop may see a
    local table, whose size is known only while the call runs."""
    seen, todo, most, local_tables = set(), [pyname], 0, False
    while todo:
        p = todo.pop()
        if p in seen or p not in bodies:
            continue
        seen.add(p)
        info, body = bodies[p]
        if info is not None and any(s.type is T.TABLE for s in info.locals):
            local_tables = True
        for n in walk(body):
            if fuse and n.op is Op.PFOR and fusable(n):
                var = n.arg[0]
                tables = {x.arg for x in walk(n.src[2]) if x.op is Op.VAR and x.arg is not var and x.arg.type is T.TABLE}
                most = max(most, len(tables))
        todo.extend(c.pyname for c in callees(body))
    return None if most and local_tables else most


class PlacedRoutine:
    """One routine on the auto backend: the CPU tier, the GPU tier or the interpreter per call."""

    def __init__(self, tier, pyname, display, interpreted, host, gpu, host_why: str, gpu_why: str,
                 loop_tables: int | None, device_native: bool = False):
        self.tier = tier
        self.pyname, self.display = pyname, display
        self.interpreted = interpreted
        self.host, self.gpu = host, gpu
        self.host_why = host_why or "it does not compile (no reason given)"
        self.gpu_why = gpu_why or "not taken by the GPU tier"
        self.loop_tables = loop_tables
        # a library routine with a kernel on the device only (COMPACT, EXPAND, WARSHALL-adapt):
        # ``interpreted`` is its native wrapper, whose AutoBackend.place may move host tables there
        self.device_native = device_native
        self.globals = host.compiled.globals if host is not None else list(gpu.plan.globals)
        self.calls = 0
        self.interpreted_why: Counter = Counter()     # reason -> calls run interpreted

    # what tier.report and the tests read of a JitRoutine
    @property
    def compiled_calls(self) -> int:
        return sum(r.compiled_calls for r in (self.host, self.gpu) if r is not None)

    @property
    def state(self) -> str:
        states = [r.state for r in (self.host, self.gpu) if r is not None]
        return "compiled" if "compiled" in states else states[0]

    @property
    def why(self) -> str:
        return "; ".join(self.interpreted_why) if self.interpreted_why else ""

    @property
    def compile_seconds(self) -> float:
        return sum(r.compile_seconds for r in (self.host, self.gpu) if r is not None)

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in (self.host, self.gpu) if r is not None)

    @property
    def compiled(self):
        return (self.host or self.gpu).compiled

    @property
    def unit(self):
        return (self.host or self.gpu).unit

    @property
    def dispatcher(self):
        return (self.host or self.gpu).dispatcher

    # ------------------------------------------------------------------ one call
    def __call__(self, *args):
        self.calls += 1
        where, why = self.where(args)
        routine = self.host if where == "host" else self.gpu if where == "device" else None
        if routine is None:
            self.interpreted_why[why] += 1
            return self.interpreted(*args)
        before = routine.compiled_calls
        try:
            return routine(*args)
        finally:
            if routine.compiled_calls == before:
                self.interpreted_why[f"{'CPU' if where == 'host' else 'GPU'} tier: {routine.why}"] += 1

    def where(self, args) -> tuple[str, str]:
        """('host' | 'device' | 'interpreted', why not compiled) for a call with these arguments."""
        auto = self.tier.context.backend
        ns = self.tier.context.ns
        values = list(args) + [ns.get(g.pyname) for g in self.globals]
        host_tables = dev_tables = dev_vectors = 0
        most_bits = 0
        for v in values:
            if isinstance(v, Table):
                if v.backend is auto.host:
                    host_tables += 1
                    most_bits = max(most_bits, v.n * v.k)
                else:
                    dev_tables += 1
            elif isinstance(v, Bits) and type(v.v) is not int:
                dev_vectors += 1
        if dev_tables and not host_tables:
            if self.gpu is None:
                return "interpreted", f"its tables are on the device: GPU tier: {self.gpu_why}"
            return "device", ""
        if dev_tables:
            return "interpreted", "its tables are on both sides (host and device)"
        if dev_vectors:
            return "interpreted", "its tables are on the host and a vector on the device"
        if self.device_native and sum(v.n * v.k for v in args if isinstance(v, Table)) >= auto.gpu_bits:
            return "interpreted", (f"its tables reach STARVM_AUTO_GPU_BITS = {auto.gpu_bits} bits: the native "
                                   "wrapper moves them to the device kernel (AutoBackend.place)")
        if self.host is None:
            return "interpreted", f"its arguments are on the host: CPU tier: {self.host_why}"
        if self.loop_tables is None:
            return "interpreted", ("a fused parallel for inside may see a local table, which the interpreter "
                                   "may move to the device")
        if self.loop_tables and self.loop_tables * most_bits >= auto.gpu_bits:
            return "interpreted", (f"a fused parallel for inside may move a table to the device (its tables "
                                   f"reach STARVM_AUTO_GPU_BITS = {auto.gpu_bits} bits): interpreted, so the "
                                   f"tables end where the interpreter puts them")
        return "host", ""

    # ------------------------------------------------------------------ --profile
    def report_lines(self) -> list[str]:
        parts = []
        for name, r in (("CPU tier (Numba)", self.host), ("GPU tier", self.gpu)):
            if r is not None and r.compiled_calls:
                parts.append(f"{r.compiled_calls} on the {name} in {r.seconds:.4f} s "
                             f"(compiling or loading it: {r.compile_seconds:.3f} s)")
        ran = self.calls - self.compiled_calls
        if ran:
            whys = "; ".join(f"{n} call(s): {w}" for w, n in self.interpreted_why.items())
            parts.append(f"{ran} interpreted ({whys})")
        lines = [f"  {self.display}: {self.calls} call(s): {', '.join(parts)}"]
        if self.host is None:
            lines.append(f"    not on the CPU tier: {self.host_why}")
        if self.gpu is None and self.pyname != "main_":
            lines.append(f"    not on the GPU tier: {self.gpu_why}")
        return lines
