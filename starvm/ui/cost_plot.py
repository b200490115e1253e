"""Pictures of cost estimates (matplotlib, optional, as starvm/ui/pictures.py):

  * ``report_png``: time and energy on each model, per routine where the run was profiled
    (``star run --cost M --profile --plot OUT.png``), else per operation kind;
  * ``scaling_png``: time and energy against the table height for a program run at several
    sizes (``star cost FILE --model M --vary N=... --plot OUT.png``).
"""
from __future__ import annotations

from ..ir.ops import OP_TITLES, Op
from .pictures import _save, plt


def _bars(report):
    """(labels, {model: [seconds or steps]}, {model: [joules or None]}): per routine (its
    total) where the report has routines, else per operation kind."""
    if report.routines:
        labels = [r.display for r in report.routines]
        cells = [[(_time(e), e.joules) for e in r.total_estimates] for r in report.routines]
    else:
        kinds = [k.kind for k in report.estimates[0].kinds]
        labels = [OP_TITLES[Op[k]] for k in kinds]
        cells = [[_kind_cell(e, k) for e in report.estimates] for k in kinds]
    times = {e.model.name: [row[j][0] for row in cells] for j, e in enumerate(report.estimates)}
    energies = {e.model.name: [row[j][1] for row in cells] for j, e in enumerate(report.estimates)}
    return labels, times, energies


def _time(e) -> float:
    return e.seconds if e.seconds is not None else e.time


def _kind_cell(e, kind: str):
    k = e.kind(kind)
    t = k.time * 1e-9 if e.model.time_unit == "ns" else k.time
    return t, (None if k.energy_pj is None else k.energy_pj * 1e-12)


def _panels(models):
    """(title, models, which value) per panel: steps of unit-cost models, seconds, joules;
    kept apart so that no axis spans steps and nanoseconds together."""
    steps = [m for m in models if m.time_unit == "step"]
    timed = [m for m in models if m.time_unit != "step"]
    energy = [m for m in models if m.has_energy]
    return [(t, ms, v) for t, ms, v in (("steps (unit-cost models)", steps, "time"), ("time, s", timed, "time"),
                                          ("energy, J", energy, "energy")) if ms]


def report_png(report, path, title: str | None = None) -> str:
    """Horizontal bars per routine (or kind), one bar per model, log scales (the models differ
    by orders of magnitude): a panel of steps, one of time, one of energy."""
    p = plt()
    labels, times, energies = _bars(report)
    every = [e.model.name for e in report.estimates]
    panels = _panels([e.model for e in report.estimates])
    n = len(labels)
    m = max(len(ms) for _t, ms, _v in panels)
    fig, axes = p.subplots(1, len(panels), figsize=(5 * len(panels), max(2.5, 0.3 * n * m + 1.5)), squeeze=False)
    height = 0.8 / m
    for ax, (xlabel, models, which) in zip(axes[0], panels):
        values = times if which == "time" else energies
        for j, model in enumerate(models):
            xs = [v or 0 for v in values[model.name]]
            ax.barh([i + j * height for i in range(n)], xs, height=height, label=model.name,
                    color=f"C{every.index(model.name)}")   # one colour per model in every panel
        ax.set_yticks([i + height * (len(models) - 1) / 2 for i in range(n)], labels, fontsize=8)
        ax.invert_yaxis()
        if any(v for model in models for v in values[model.name]):
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    what = "per routine (with the routines it calls)" if report.routines else "per operation kind"
    fig.suptitle(title or f"estimated cost {what}; {report.geometry.rows} rows x {report.geometry.width} columns",
                 fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    return str(path)


def scaling_png(points, path, title: str | None = None) -> str:
    """``points``: [(label, CostReport)] at growing sizes. Steps, time and energy on each model
    against the table height (rows), log-log; the host's measured time beside the time."""
    p = plt()
    models = [e.model for e in points[0][1].estimates] if points else []
    panels = _panels(models)
    fig, axes = p.subplots(1, len(panels), figsize=(5 * len(panels), 4.2), squeeze=False)
    rows = [r.geometry.rows for _label, r in points]
    for ax, (ylabel, ms, which) in zip(axes[0], panels):
        for model in ms:
            ests = [r[model.name] for _label, r in points]
            ys = [_time(e) for e in ests] if which == "time" else [e.joules for e in ests]
            ax.plot(rows, ys, marker="o", label=model.name, color=f"C{models.index(model)}")
        host = [r.host_seconds for _label, r in points]
        if ylabel.startswith("time") and all(h is not None for h in host):
            ax.plot(rows, host, marker="s", linestyle="--", color="gray", label="host (measured)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("table height (rows)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title or "estimated cost against the table height", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    return str(path)
