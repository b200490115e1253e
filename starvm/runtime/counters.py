"""Per-call step counters: the steps by operation kind between two snapshots of
``Machine.counts`` (moved here from starvm/api.py so that the machine does not import it)."""
from __future__ import annotations

from ..ir.ops import BASE_OPS


def steps_between(before: list[int], after: list[int]) -> dict[str, int]:
    """The steps by operation kind taken between two snapshots of ``Machine.counts``."""
    return {op.name: a - b for op, a, b in zip(BASE_OPS, after, before) if a != b}


class StepCounter:
    """``with machine.counting() as c:`` — the steps taken inside the block, by operation
    kind (``c.stats``, live while inside, fixed at exit) and in all (``c.total``). Counting
    does not disturb the machine's own cumulative ``stats``."""

    def __init__(self, machine):
        self._m = machine
        self._before: list[int] | None = None
        self._result: dict[str, int] = {}

    def __enter__(self) -> "StepCounter":
        self._before = list(self._m.counts)
        self._result = {}
        return self

    def __exit__(self, *exc) -> None:
        self._result = steps_between(self._before, self._m.counts)
        self._before = None

    @property
    def stats(self) -> dict[str, int]:
        if self._before is not None:
            return steps_between(self._before, self._m.counts)
        return dict(self._result)

    @property
    def total(self) -> int:
        return sum(self.stats.values())

    def cost(self, model, rows: int | None = None, width: int | None = None):
        """The estimated time and energy of the block's steps on device models (starvm/costs):
        as ``Machine.cost``, for these steps only."""
        from ..costs import machine_cost
        return machine_cost(self._m, model, rows=rows, width=width, counts=self.stats)

    def __repr__(self) -> str:
        return f"StepCounter({self.stats})"
