"""The text of a cost estimate: `star run --cost`, `:cost` in the REPL, ``CostReport.text()``,
and the model list of `star cost --list`."""
from __future__ import annotations

from ..ir.ops import BASE_OPS, OP_TITLES
from .evaluate import Estimate
from .model import Model, load_model, model_names

_PREFIX = [(1e0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f")]


def si(value: float | None, unit: str) -> str:
    """3 significant digits with an SI prefix: 4.95 us, 60.5 nJ; 'n/a' for None."""
    if value is None:
        return "n/a"
    if value == 0:
        return f"0 {unit}"
    for scale, prefix in _PREFIX:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def time_text(e: Estimate) -> str:
    if e.model.time_unit == "step":
        return f"{e.time:.0f} steps"
    return si(e.seconds, "s")


def energy_text(e: Estimate) -> str:
    return si(e.joules, "J")


def report_text(report) -> str:
    g = report.geometry
    host = f"; host run {report.host_seconds:.4f} s measured" if report.host_seconds is not None else ""
    lines = [f"estimated cost on device models ({report.steps} STAR-machine steps; {g.rows} rows x {g.width} "
             f"columns: the tallest and the widest table{host})"]
    head = f"{'model':<20}{'passes':>8}{'time':>14}{'energy':>12}{'static':>12}  device"
    lines += [head, "-" * len(head)]
    for e in report.estimates:
        static = si(e.background_pj * 1e-12, "J") if e.background_pj is not None else "-"
        lines.append(f"{e.model.name:<20}{e.passes:>8}{time_text(e):>14}{energy_text(e):>12}{static:>12}  {e.model.title}")
    kinds = [op for op in BASE_OPS if any(e.kind(op.name) for e in report.estimates)]
    if kinds:
        lines += ["", "time by operation kind (share of each model's time)"]
        head = f"{'operation':<22}{'count':>10}" + "".join(f"{e.model.name[:18]:>20}" for e in report.estimates)
        lines += [head, "-" * len(head)]
        for op in kinds:
            first = report.estimates[0].kind(op.name)
            title = OP_TITLES[op] + (" (words)" if first.on_words else "")
            row = f"{title:<22}{first.count:>10}"
            for e in report.estimates:
                k = e.kind(op.name)
                share = k.time / e.time * 100 if e.time else 0.0
                row += f"{_time_of(e, k.time):>12} {share:>5.1f}% "
            lines.append(row.rstrip())
    if report.routines:
        lines += ["", "per routine (total: with the routines it calls), time / energy on each model"]
        head = f"{'calls':>8}{'host, s':>10}" + "".join(f"{e.model.name[:22]:>24}" for e in report.estimates) + "  routine"
        lines += [head, "-" * len(head)]
        for r in report.routines:
            row = f"{r.calls:>8}{r.host_seconds:>10.4f}"
            for e in r.total_estimates:
                row += f"{time_text(e) + ' / ' + energy_text(e):>24}"
            lines.append(f"{row}  {r.display} ({r.where})")
    missing = [e.model.name for e in report.estimates if not e.model.has_energy]
    notes = []
    ran = {k.kind for e in report.estimates for k in e.kinds}
    both = [OP_TITLES[op] for op in BASE_OPS if report.classes.get(op.name) == "both" and op.name in ran]
    if both:
        notes.append(f"{', '.join(both)}: written on slices and on words; priced as slice operations "
                     "(an upper bound)")
    if any(k.on_words for e in report.estimates for k in e.kinds):
        notes.append("(words): the program applies that kind to words only: priced as control-unit work")
    if missing:
        notes.append(f"no energy figures in {', '.join(missing)} (see star cost --list)")
    if any(e.background_pj for e in report.estimates):
        notes.append("energy includes the static part (the device's background power for the time)")
    notes.append("estimates from the step counts and the geometry; docs/costs.md says what each model leaves out")
    lines += [""] + [f"note: {n}" for n in notes]
    return "\n".join(lines)


def _time_of(e: Estimate, t: float) -> str:
    return f"{t:.0f} st" if e.model.time_unit == "step" else si(t * 1e-9, "s")


def list_text(verbose: bool = False) -> str:
    """`star cost --list`: each shipped model, what it is, its sources."""
    lines = []
    for name in model_names():
        m: Model = load_model(name)
        lanes = "unbounded" if m.lanes == 0 else f"{m.lanes}"
        energy = "time and energy" if m.has_energy else "time only"
        lines.append(f"{m.name}: {m.title}")
        lines.append(f"    family: {m.family}; {lanes} rows per pass; {energy}")
        lines.append(f"    tables taller than the device: {m.large_tables}")
        for s in m.sources:
            lines.append(f"    source: {s}")
        if verbose:
            for v in m.validation:
                lines.append(f"    reproduces: {v.get('figure')} ({v.get('source')})")
            for item in m.leaves_out:
                lines.append(f"    leaves out: {item}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
