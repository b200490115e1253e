"""A run's estimated time and energy on a device model, from its step counts.

The step counters (``Machine.counts``) hold the base operations by kind, the same on every
route (interpreter, compiled tiers, natives, every backend). A model turns each kind into
device primitives; how many times an array operation is repeated depends on the machine's
geometry: the STAR-machine has one processing element per row, so a slice operation covers
``rows`` (the height of the tallest table the run holds) and passes over the device
``ceil(rows / lanes)`` times; a row (word) operation covers ``width`` bits (the widest
table). and, or, ..., SOME written on words only (operands.py) are the control unit's work.
docs/costs.md says where this is exact and where it is not.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir.ops import BASE_OPS
from .model import Model
from .operands import SHARED


@dataclass(frozen=True)
class Geometry:
    rows: int        # processing elements the run needs: slice length
    width: int       # bits of a row: word length

    def __post_init__(self):
        if self.rows < 1 or self.width < 1:
            raise ValueError(f"a geometry needs rows >= 1 and width >= 1, not {self.rows} x {self.width}")


@dataclass
class KindCost:
    kind: str
    count: int
    time: float                  # in the model's unit (ns or steps), all operations of the kind
    energy_pj: float | None
    on_words: bool = False       # priced as word operations (the program writes the kind on words only)


@dataclass
class Estimate:
    """What one model says about one set of counts."""
    model: Model
    geometry: Geometry
    passes: int
    kinds: list[KindCost]
    background_pj: float | None

    @property
    def time(self) -> float:
        """In the model's unit: nanoseconds, or steps for the unit-cost model."""
        return sum(k.time for k in self.kinds)

    @property
    def seconds(self) -> float | None:
        return self.time * 1e-9 if self.model.time_unit == "ns" else None

    @property
    def energy_pj(self) -> float | None:
        if not self.model.has_energy:
            return None
        dynamic = sum(k.energy_pj or 0.0 for k in self.kinds)
        return dynamic + (self.background_pj or 0.0)

    @property
    def joules(self) -> float | None:
        e = self.energy_pj
        return None if e is None else e * 1e-12

    def kind(self, name: str) -> KindCost | None:
        return next((k for k in self.kinds if k.kind == name), None)


def passes_over(model: Model, rows: int) -> int:
    return 1 if model.lanes == 0 else -(-rows // model.lanes)


def _units(lanes: int, rows: int, bits: int) -> int:
    """Energy units a primitive charges over all passes: ceil(lanes in the pass / bits) each."""
    if lanes == 0 or rows <= lanes:
        return -(-rows // bits)
    full, rest = divmod(rows, lanes)
    return full * -(-lanes // bits) + (-(-rest // bits) if rest else 0)


def _scale(scale: str, g: Geometry) -> int:
    if scale == "width":
        return g.width
    if scale == "width64":
        return -(-g.width // 64)
    if scale == "log2rows":
        return max(1, math.ceil(math.log2(g.rows))) if g.rows > 1 else 1
    return 1


def estimate(model: Model, counts: dict[str, int], geometry: Geometry, words=frozenset()) -> Estimate:
    """The time and energy of ``counts`` ({kind name: operations}, as ``Machine.stats``);
    the kinds in ``words`` (operands.SHARED kinds the program writes on words only) are
    priced as the model's word operations."""
    passes = passes_over(model, geometry.rows)
    kinds = []
    for op in BASE_OPS:
        n = counts.get(op.name, 0)
        if not n:
            continue
        on_words = op.name in words and op in SHARED
        cost = model.words if on_words else model.ops[op.name]
        reps = _scale(cost.scale, geometry)
        on_array = cost.where == "array"
        time = 0.0
        energy = 0.0 if model.has_energy else None
        for pname, uses in cost.uses.items():
            prim = model.primitives[pname]
            lanes_covered = geometry.rows if on_array or prim.per_bit else 1
            per_use_time = prim.time * (lanes_covered if prim.per_bit else (passes if on_array else 1))
            time += uses * per_use_time
            if energy is not None and prim.energy_pj is not None:
                if prim.per_bit:
                    units = lanes_covered
                elif prim.energy_bits and on_array:
                    units = _units(model.lanes, geometry.rows, prim.energy_bits)
                else:
                    units = passes if on_array else 1
                energy += uses * prim.energy_pj * units
        kinds.append(KindCost(op.name, n, n * reps * time, None if energy is None else n * reps * energy, on_words))
    total_ns = sum(k.time for k in kinds)
    background = None
    if model.background_mw is not None and model.time_unit == "ns":
        background = model.background_mw * 1e-3 * total_ns * 1e-9 * 1e12    # mW x ns -> pJ
    return Estimate(model, geometry, passes, kinds, background)


def counts_dict(counts: list[int]) -> dict[str, int]:
    """``Machine.counts`` (indexed like BASE_OPS) as {kind name: operations}."""
    return {op.name: c for op, c in zip(BASE_OPS, counts) if c}
