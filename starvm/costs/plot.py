"""Pictures of cost estimates (matplotlib, optional, as starvm/pictures.py):

  * ``report_png``: time and energy on each model, per routine where the run was profiled
    (``star run --cost M --profile --plot OUT.png``), else per operation kind;
  * ``scaling_png``: time and energy against the table height for a program run at several
    sizes (``star cost FILE --model M --vary N=... --plot OUT.png``).
"""
from __future__ import annotations

from ..ir.ops import OP_TITLES, Op
from ..pictures import _save, plt


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


def report_png(report, path, title: str | None = None) -> str:
    """Two panels of horizontal bars, time and energy, one group per routine (or kind), one
    bar per model, log scales (the models differ by orders of magnitude)."""
    p = plt()
    labels, times, energies = _bars(report)
    models = [e.model for e in report.estimates]
    n, m = len(labels), len(models)
    fig, axes = p.subplots(1, 2, figsize=(12, max(2.5, 0.35 * n * m + 1.5)))
    height = 0.8 / max(m, 1)
    for ax, values, xlabel in ((axes[0], times, "time, s (steps for a unit-cost model)"),
                               (axes[1], energies, "energy, J")):
        for j, model in enumerate(models):
            ys = [i + j * height for i in range(n)]
            xs = [v if v else 0 for v in values[model.name]]
            if not any(xs):
                continue
            ax.barh(ys, xs, height=height, label=model.name)
        ax.set_yticks([i + height * (m - 1) / 2 for i in range(n)], labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower right")
    what = "per routine" if report.routines else "per operation kind"
    fig.suptitle(title or f"estimated time and energy {what} ({report.geometry.rows} rows x "
                          f"{report.geometry.width} columns)", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    return str(path)


def scaling_png(points, path, title: str | None = None) -> str:
    """``points``: [(label, CostReport)] at growing sizes. Time and energy on each model
    against the table height (rows), log-log."""
    p = plt()
    fig, axes = p.subplots(1, 2, figsize=(11, 4.2))
    names = [e.model.name for e in points[0][1].estimates] if points else []
    rows = [r.geometry.rows for _label, r in points]
    for name in names:
        ests = [r[name] for _label, r in points]
        t = [_time(e) for e in ests]
        axes[0].plot(rows, t, marker="o", label=name + (" (steps)" if ests[0].model.time_unit == "step" else ""))
        if ests[0].model.has_energy:
            axes[1].plot(rows, [e.joules for e in ests], marker="o", label=name)
    host = [r.host_seconds for _label, r in points]
    if all(h is not None for h in host):
        axes[0].plot(rows, host, marker="s", linestyle="--", color="gray", label="host (measured)")
    for ax, ylabel in ((axes[0], "time, s (steps for a unit-cost model)"), (axes[1], "energy, J")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("table height (rows)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        if ax.lines:
            ax.legend(fontsize=8)
    fig.suptitle(title or "estimated time and energy against the table height", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    return str(path)
