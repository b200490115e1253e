"""Benchmark one Star program (``star bench``; ``starvm.benchmarking.run`` from Python): its main block,
or one routine, repeated after warm-ups on one or several backends side by side.

Each configuration (backend, and ``jit`` where the machine has a compiled tier) gets its own
machine; the program is parsed and checked once (``starvm.compile``), loaded into each machine
once (code generation, untimed), and before every run its globals are initialised afresh
(untimed), so that every run does the same work. Only the main block (or the call) is timed,
the backend synchronised before and after. What the program writes is discarded."""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..api import Program, compile as compile_star
from ..backends import BackendUnavailable
from ..errors import Loc, Source, StarTypeError
from ..ir.ops import BASE_OPS, OP_TITLES
from ..runtime.machine import Machine
from .environment import device_info, device_label, machine_info
from .results import document
from .timing import Timing, clock, synchronizer

TITLES = {op.name: OP_TITLES[op] for op in BASE_OPS}


class _Discard:
    """The machine's ``out`` while benchmarking: writeln's text goes nowhere."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def machine_has_jit() -> bool:
    """Does this starvm's Machine take ``jit=`` (the compiled tier)?"""
    return "jit" in inspect.signature(Machine.__init__).parameters


@dataclass
class Measurement:
    """One configuration's figures: ``status`` "ran", or "unavailable" with ``error``."""
    backend: str
    jit: bool | None
    status: str
    error: str | None = None
    resolved: str | None = None            # the backend that ran (auto without a GPU: numpy)
    device: dict | None = None
    timing: Timing = field(default_factory=Timing)
    steps: dict[str, int] = field(default_factory=dict)     # of the first timed run, by kind
    native_calls: int = 0                  # standard-library routines run as native kernels
    tier: str = ""                         # the tier the figure's runs used (TierWatch)
    tiers: list[str] = field(default_factory=list)          # of every timed run, in order
    left_out_s: list[float] = field(default_factory=list)   # timed runs of another tier: not in the figure
    warmups: int = 0                       # warm-up runs made (until the tier stopped changing)
    settled: bool = True                   # False: the tier still changed when the warm-ups ran out

    @property
    def label(self) -> str:
        return self.backend + ("" if self.jit is None else f", jit {'on' if self.jit else 'off'}")

    @property
    def steps_total(self) -> int:
        return sum(self.steps.values())

    @property
    def steps_per_s(self) -> float | None:
        if self.status != "ran" or not self.steps_total or self.timing.median_s <= 0:
            return None                    # no base operation ran (a scalar program): no rate
        return self.steps_total / self.timing.median_s

    def as_dict(self) -> dict:
        d = {"backend": self.backend, "jit": self.jit, "status": self.status}
        if self.status != "ran":
            return {**d, "error": self.error}
        return {**d, "backend_resolved": self.resolved, "device_info": self.device, **self.timing.as_dict(),
                "steps": dict(self.steps), "steps_total": self.steps_total, "steps_per_s": self.steps_per_s,
                "native_calls": self.native_calls, "tier": self.tier, "tiers_of_timed_runs": list(self.tiers),
                "left_out_runs_s": list(self.left_out_s), "warmup_runs": self.warmups,
                "tier_settled": self.settled}


@dataclass
class Report:
    """What ``run`` measured: one Measurement per configuration, in the order asked."""
    program: str
    call: str | None
    args: tuple
    repeat: int
    warmup: int
    max_steps: int | None
    measurements: list[Measurement]

    @property
    def ran(self) -> list[Measurement]:
        return [m for m in self.measurements if m.status == "ran"]

    def what(self) -> str:
        if self.call is None:
            return "main block"
        return f"{self.call}({', '.join(_star_literal(a) for a in self.args)})"

    def text(self) -> str:
        """The table ``star bench`` prints: times and rates, then the steps of one run by kind."""
        lines = [f"{self.program}: {self.what()}, {self.repeat} timed run(s) after {self.warmup} warm-up(s) "
                 "per backend (more until the tier in use stops changing), device synchronised around each; "
                 "the program's output is suppressed", ""]
        width = max([len("backend")] + [len(m.label) for m in self.measurements])
        lines.append(f"{'backend':<{width}}  {'median s':>10}  {'min s':>10}  {'max s':>10}  {'steps/run':>12}  "
                     f"{'steps/s':>12}")
        for m in self.measurements:
            if m.status != "ran":
                lines.append(f"{m.label:<{width}}  {m.status}: {m.error}")
                continue
            t = m.timing
            resolved = f"  (ran on {m.resolved})" if m.resolved != m.backend else ""
            lines.append(f"{m.label:<{width}}  {t.median_s:>10.6f}  {t.min_s:>10.6f}  {t.max_s:>10.6f}  "
                         f"{m.steps_total:>12,}  {_rate(m.steps_per_s):>12}  tier: {m.tier} ({m.warmups} warm-up(s)){resolved}")
        for m in self.measurements:
            if m.status != "ran":
                continue
            if m.left_out_s:
                lines.append(f"{m.label}: {len(m.left_out_s)} timed run(s) of another tier left out of the figure: "
                             + ", ".join(f"{s:.6f} s ({t})" for s, t in zip(m.left_out_s, _other(m))))
            if not m.settled:
                lines.append(f"{m.label}: the tier still changed after {m.warmups} warm-up run(s)")
        ran = self.ran
        kinds = [op.name for op in BASE_OPS if any(op.name in m.steps for m in ran)]
        if ran and not kinds:
            lines += ["", "no step counted: the run did no base operation of the STAR-machine "
                          "(scalar work counts none)"]
        if kinds:
            lines += ["", "steps of one run by kind" + ("" if len(ran) > 1 else f" ({ran[0].label})")]
            tw = max([len("total")] + [len(TITLES[k]) for k in kinds])
            cols = [max(10, len(m.label)) for m in ran]
            if len(ran) > 1:
                lines.append(f"{'':<{tw}}" + "".join(f"  {m.label:>{c}}" for m, c in zip(ran, cols)))
            for k in kinds:
                lines.append(f"{TITLES[k]:<{tw}}" + "".join(f"  {m.steps.get(k, 0):>{c},}" for m, c in zip(ran, cols)))
            lines.append(f"{'total':<{tw}}" + "".join(f"  {m.steps_total:>{c},}" for m, c in zip(ran, cols)))
            natives = [m for m in ran if m.native_calls]
            if natives:
                lines.append("standard-library routines run as native kernels (calls): "
                             + ", ".join(f"{m.label} {m.native_calls}" for m in natives))
        return "\n".join(lines)

    def document(self, machine: dict | None = None) -> dict:
        """The JSON of ``--json``: the harness's header, the settings, one row per configuration."""
        first = next((m.device for m in self.ran if m.device and m.device.get("gpu")), None) \
            or next((m.device for m in self.ran), None)
        machine = machine if machine is not None else machine_info()
        return document("star bench", f"star bench {self.program}", machine=machine,
                        device=first if first is not None else device_info(),
                        program=self.program, run=self.what(), call=self.call, args=list(self.args),
                        repeat=self.repeat, warmup=self.warmup, max_steps=self.max_steps,
                        method="the program parsed and checked once, loaded into one machine per configuration; "
                               "globals initialised afresh before every run (untimed); only the main block or "
                               "the call is timed, the backend synchronised before and after; output discarded",
                        results=[m.as_dict() for m in self.measurements],
                        devices={m.label: device_label(m.device, machine) for m in self.ran if m.device})


def _other(m: Measurement) -> list[str]:
    return [t for t in m.tiers if t != m.tier]


def _rate(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _star_literal(value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def run(program, *, call: str | None = None, args=(), backends=("numpy",), jit=(None,), repeat: int = 5,
        warmup: int = 1, max_steps: int | None = None, filename: str | None = None, graph=None,
        **machine_options) -> Report:
    """Benchmark ``program`` — a ``starvm.Program``, a ``pathlib.Path`` of a .star file, or
    Star source text — on every backend of ``backends`` (names) × every value of ``jit``
    (``None``: the machine's default; True/False need a Machine with a compiled tier).
    ``call``: time that routine with ``args`` instead of the main block. ``max_steps`` and
    ``graph`` (a ``starvm.graphs.Graph``) are given to every machine, as ``star run`` does, and
    so are ``machine_options`` (other ``Machine`` keywords, e.g. ``native=False``).

    Raises StarError (the program is wrong, or fails while running), ValueError (bad
    settings); a backend that cannot run here is reported in the Report, not raised."""
    if repeat < 1 or warmup < 0:
        raise ValueError("repeat must be at least 1 and warmup at least 0")
    jits = [None] if jit is None else list(jit)
    if any(j is not None for j in jits) and not machine_has_jit():
        raise ValueError("this starvm's Machine has no compiled tier (no jit= option)")
    prog = _program(program, filename)
    if call is None and not prog.has_main:
        raise StarTypeError("the program has no main block (begin ... end.) to run; --call NAME times one routine",
                            Loc(Source(prog.filename, prog.source), 1, 1))
    options = dict(machine_options, max_steps=max_steps, graph=graph)
    out = [_measure(prog, b, j, call, tuple(args), repeat, warmup, options) for b in backends for j in jits]
    return Report(prog.filename, call, tuple(args), repeat, warmup, max_steps, out)


def _program(program, filename: str | None) -> Program:
    if isinstance(program, Program):
        return program
    if isinstance(program, Path):
        return compile_star(program.read_text(), filename or str(program))
    return compile_star(program, filename or "<string>")


def _measure(prog: Program, backend: str, jit, call, args, repeat, warmup, options) -> Measurement:
    if jit is not None:
        options = dict(options, jit=jit)
    try:
        m = Machine(backend=backend, out=_Discard(), **options)
    except BackendUnavailable as e:
        return Measurement(backend, jit, "unavailable", error=str(e))
    prog.load(m)                                   # code generation and the globals: untimed
    init = m.ns["init_"]
    body = (lambda: m.call(call, *args)) if call is not None else m.run_main
    sync = synchronizer(m)
    result = Measurement(backend, jit, "ran", resolved=m.backend.name, device=device_info(m))
    watch = TierWatch(m)
    first = True

    def one_run():
        nonlocal first
        if not first:
            m._guard(init)                         # fresh globals: every run does the same work
        first = False
        m.reset_stats()
        before = watch.snapshot()
        seconds = clock(body, sync)
        return seconds, watch.tier_since(before)

    # warm-ups: at least ``warmup``, then on until the tier in use stops changing (a routine
    # compiled in the background switches at a later run)
    last = None
    started = time.monotonic()
    while True:
        if result.warmups >= warmup and (watch.steady(last, result.warmups) or not watch.can_change()):
            break
        if result.warmups >= max(warmup, MAX_WARMUPS) or time.monotonic() - started > MAX_WARMUP_S:
            result.settled = False
            break
        _seconds, tier = one_run()
        watch.previous, last = last, tier
        result.warmups += 1
    runs = []
    for i in range(repeat):
        seconds, tier = one_run()
        runs.append((seconds, tier))
        if i == 0:
            result.steps = dict(m.stats)
            result.native_calls = int(m.native_timing[0])
    # the figure: the runs of the tier the warm-ups settled on (else the most frequent one)
    tiers = [t for _s, t in runs]
    result.tier = last if last in tiers else max(set(tiers), key=tiers.count)
    result.tiers = tiers
    result.timing.runs_s = [s for s, t in runs if t == result.tier]
    result.left_out_s = [s for s, t in runs if t != result.tier]
    return result


# warm-up runs the tier may take to settle: a background compile of a routine takes seconds
MAX_WARMUPS = 100_000
MAX_WARMUP_S = 300.0


class TierWatch:
    """Which tier a run used: the routines of the compiled tier that ran compiled and those
    that ran interpreted in it, from their call counters."""

    def __init__(self, machine):
        self.routines = machine.jit.routines if machine.jit is not None else {}
        self.previous = None

    def snapshot(self) -> dict:
        return {p: (r.calls, r.compiled_calls) for p, r in self.routines.items()}

    def tier_since(self, before: dict) -> str:
        compiled, interpreted = [], []
        for p, r in self.routines.items():
            calls0, compiled0 = before.get(p, (0, 0))
            calls, done = r.calls - calls0, r.compiled_calls - compiled0
            if done:
                compiled.append(r.display)
            if calls - done:
                interpreted.append(r.display)
        if not compiled:
            return "interpreted"
        if not interpreted:
            return "compiled"
        return f"mixed (compiled: {', '.join(sorted(compiled))}; interpreted: {', '.join(sorted(interpreted))})"

    def pending(self) -> bool:
        """A background compile (or its load) under way: the tier is about to change."""
        for r in self.routines.values():
            bg = getattr(r, "background", None) or getattr(getattr(r, "host", None), "background", None)
            if bg and (bg.job is not None or bg.loader is not None):
                return True
        return False

    def can_change(self) -> bool:
        """Could a later run use another tier? Not without routines that may still switch."""
        return any(r.state == "waiting" for r in self.routines.values()) or self.pending()

    def steady(self, last, runs: int) -> bool:
        """Two warm-up runs of one tier in a row, nothing compiling."""
        return runs >= 2 and last is not None and last == self.previous and not self.pending()
