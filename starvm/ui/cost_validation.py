"""Each model against a published figure of its source: a Star program of
starvm/costs/validation/'s programs run, and its steps, priced by the model, are set beside the figure
(`star cost --validate`, docs/costs.md, tests/unit/test_costs_validation.py).

A program declares the tables it needs and a parameterless routine MEASURED; its main block,
if any, sets up the data. The counters are reset after the main block, so only MEASURED's
steps are priced. What is compared (``measure`` in the model's [[validation]]):

  time_ns          the model's time for MEASURED, in ns
  energy_pj        the model's dynamic energy for MEASURED, in pJ (static power left out)
  throughput:KIND  operations of KIND x rows / the model's time for them, per second
  warshall         star-unit's COL + ROW steps of WARSHALL against the paper's n + (n + j) + j
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..costs.evaluate import counts_dict, estimate
from ..costs.model import Model, load_model, model_names
from ..costs.operands import machine_classes
from ..costs.run import geometry_of, words_of


@dataclass
class Reproduction:
    model: str
    figure: str
    source: str
    program: str
    published: float
    reproduced: float
    unit: str

    @property
    def error(self) -> float:
        """(reproduced - published) / published, as a fraction."""
        return (self.reproduced - self.published) / self.published

    def line(self) -> str:
        return (f"{self.model}: {self.figure}\n    published {self.published:.6g} {self.unit}, "
                f"reproduced {self.reproduced:.6g} {self.unit} from {self.program}: error {self.error * 100:+.2f}%")


def program_path(name: str) -> Path:
    return Path(str(resources.files("starvm.costs") / "validation" / name))


def _run(program: str, **machine_args):
    from ..runtime.machine import Machine
    m = Machine(out=io.StringIO(), **machine_args)
    m.compile(program_path(program).read_text(), program)   # its declarations, then its main block if any
    if m.has_main:
        m.run_main()
    m.reset_stats()
    m.call("MEASURED")
    return m


def reproduce(model: Model | str, **machine_args) -> list[Reproduction]:
    """Every [[validation]] of the model, run on a Machine(**machine_args)."""
    if isinstance(model, str):
        model = load_model(model)
    out = []
    for v in model.validation:
        m = _run(v["program"], **machine_args)
        counts = counts_dict(m.counts)
        est = estimate(model, counts, geometry_of(m), words_of(machine_classes(m)))
        measure = v.get("measure", "time_ns")
        if measure == "time_ns":
            value = est.time
        elif measure == "energy_pj":
            value = sum(k.energy_pj or 0.0 for k in est.kinds)
        elif measure.startswith("throughput:"):
            kind = est.kind(measure.split(":", 1)[1])
            value = kind.count * est.geometry.rows / (kind.time * 1e-9)
        elif measure == "warshall":
            n, j = counts["COL_GET"], counts.get("STEP", 0)
            published = float(n + (n + j) + j)
            value = float(sum(est.kind(k).time for k in ("COL_GET", "ROW_GET", "ROW_SET") if est.kind(k)))
            v = {**v, "published": published}
        else:
            raise ValueError(f"{model.path}: unknown validation measure {measure!r}")
        out.append(Reproduction(model.name, v["figure"], v["source"], v["program"], float(v["published"]),
                                float(value), v.get("unit", "")))
    return out


def reproduce_all(**machine_args) -> list[Reproduction]:
    return [r for name in model_names() for r in reproduce(name, **machine_args)]
