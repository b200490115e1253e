"""The cost of a machine's run: its counters and geometry read, each model evaluated, for
the whole run and (when the per-routine profile ran with steps by kind) for each routine."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..execution.values import Bits, Table
from ..types import T
from .evaluate import Estimate, Geometry, counts_dict, estimate
from .model import Model, ModelError, load_model, model_names
from .operands import machine_classes


def geometry_of(machine, rows: int | None = None, width: int | None = None) -> Geometry:
    """The rows (processing elements) and the row width the run needs: the tallest and the
    widest table among the globals and the tables ``Machine.call`` was given; without tables,
    the longest global slice and word. ``rows`` and ``width`` override what the machine holds."""
    tall, wide = getattr(machine, "call_shape", (0, 0))
    for sym in machine.env.globals.values():
        value = machine.ns.get(sym.pyname)
        if isinstance(value, Table):
            tall, wide = max(tall, value.n), max(wide, value.k)
    if not tall or not wide:
        for sym in machine.env.globals.values():
            value = machine.ns.get(sym.pyname)
            if isinstance(value, Bits) and value.n > 0:
                if sym.type is T.SLICE and not tall:
                    tall = max(tall, value.n)
                elif sym.type is T.WORD and not wide:
                    wide = max(wide, value.n)
    return Geometry(rows if rows is not None else max(tall, 1), width if width is not None else max(wide, 1))


def words_of(classes: dict[str, str]) -> frozenset[str]:
    """The kinds to price as word operations: those the program writes on words only."""
    return frozenset(k for k, c in classes.items() if c == "word")


def as_models(models) -> list[Model]:
    """Model objects from names ("gsi-gemini", "a,b"), paths to .toml files, or Models."""
    if isinstance(models, (str, Model)):
        models = [models]
    out = []
    for m in models:
        if isinstance(m, Model):
            out.append(m)
        else:
            out.extend(load_model(name.strip()) for name in m.split(",") if name.strip())
    return out


@dataclass
class RoutineCost:
    """One routine of a profiled run: its calls, host time, and its steps priced on each model
    without the routines it calls (self) and with them (total)."""
    display: str
    where: str
    calls: int
    host_seconds: float
    self_estimates: list[Estimate] = field(default_factory=list)
    total_estimates: list[Estimate] = field(default_factory=list)


@dataclass
class CostReport:
    """``Machine.cost(model)``: the run's estimate on each model, per routine when profiled."""
    geometry: Geometry
    estimates: list[Estimate]
    routines: list[RoutineCost] = field(default_factory=list)
    host_seconds: float | None = None
    steps: int = 0
    classes: dict[str, str] = field(default_factory=dict)   # operands.py: slice | word | both, by kind

    def __getitem__(self, name: str) -> Estimate:
        for e in self.estimates:
            if e.model.name == name:
                return e
        raise KeyError(name)

    @property
    def models(self) -> list[str]:
        return [e.model.name for e in self.estimates]

    def text(self) -> str:
        from .report import report_text
        return report_text(self)

    def __str__(self) -> str:
        return self.text()


def machine_cost(machine, models, rows: int | None = None, width: int | None = None,
                 host_seconds: float | None = None, counts: dict[str, int] | None = None) -> CostReport:
    """The estimate of the machine's steps so far (since the last reset_stats) on ``models``,
    per routine where the routine profile kept steps by kind; or of ``counts`` ({kind: steps},
    a StepCounter's) with the machine's geometry and no routines."""
    ms = as_models(models)
    if not ms:
        raise ModelError(f"no cost model given (available: {', '.join(model_names())})")
    g = geometry_of(machine, rows, width)
    classes = machine_classes(machine)
    words = words_of(classes)
    whole = counts is None
    if whole:
        counts = counts_dict(machine.counts)
    report = CostReport(g, [estimate(m, counts, g, words) for m in ms], host_seconds=host_seconds,
                        steps=sum(counts.values()), classes=classes)
    if not whole:
        return report
    from ..ir.ops import BASE_OPS
    names = [op.name for op in BASE_OPS]
    rows_ = sorted((s for s in machine.routine_profile.routines.values() if s.calls and s.kinds_total is not None),
                   key=lambda s: (-s.steps_total, s.display))
    for s in rows_:
        rc = RoutineCost(s.display, s.where, s.calls, s.time_total)
        own = {n: c for n, c in zip(names, s.kinds_self or []) if c}
        total = {n: c for n, c in zip(names, s.kinds_total) if c}
        rc.self_estimates = [estimate(m, own, g, words) for m in ms]
        rc.total_estimates = [estimate(m, total, g, words) for m in ms]
        report.routines.append(rc)
    return report
