"""The arithmetic of the steps a standard-library routine's Star body takes: what a native kernel
(or a compiled routine) that replaces the body reports, so that a program's step count does
not depend on the route that ran it. Each routine's formula lives in its folder
(native/<routine>/__init__.py: ``body_steps``); here are the counts they add up, and the
formulas of the helpers they call (SETNUM, NUMOF of stdlib/graphs.star).

Two counts, as the interpreter keeps them:

  * ``ops``: base operations by kind (``starvm.ir.ops.Op``; ``Machine.counts``, --profile,
    ``counting()``);
  * ``ticks``: loop iterations and routine calls, what --max-steps limits (limits.py): one
    for the call itself, one per iteration of a for / while / repeat body, one per
    `parallel for` statement (fused or not), and those of the routines the body calls.

Each formula follows the Star text of stdlib/*.star line by line (the comment above it quotes
the lines) and takes what the count depends on: the sizes, and for some routines a number
read from the data (how many rows X marks, how many pattern bits are 1, ...). Where the
count depends on intermediate states (WARSHALL-adapt: the ORs of pivot k are the 1s of row
k just before pivot k), the kernel counts them while it runs and passes the total here.
The tests check every formula against the Star body on random inputs, beside the kernels'
result checks (tests/unit/test_native*.py), and whole programs with natives on and off
(tests/unit/test_native_steps.py, the differential fuzzer of tests/reference/).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.ops import Op


@dataclass
class Steps:
    ops: dict = field(default_factory=dict)     # Op -> count
    ticks: int = 0

    def __add__(self, other: "Steps") -> "Steps":
        ops = dict(self.ops)
        for op, c in other.ops.items():
            ops[op] = ops.get(op, 0) + c
        return Steps(ops, self.ticks + other.ticks)

    def times(self, m: int) -> "Steps":
        return Steps({op: c * m for op, c in self.ops.items()}, self.ticks * m)

    def by_name(self) -> dict[str, int]:
        """{kind name: count} for the kinds taken, as ``Machine.stats`` spells them."""
        return {op.name: c for op, c in self.ops.items() if c}


def of(ticks: int = 0, **ops: int) -> Steps:
    """Steps of base operations named by kind: ``of(ticks=1, AND=2)``."""
    return Steps({Op[name]: c for name, c in ops.items()}, ticks)


CALL = of(ticks=1)      # entering a routine


# ---------------------------------------------------------------- stdlib/graphs.star helpers
def setnum(bits: int) -> Steps:
    # for j := LEN(w) downto 1 do begin w(j) := i mod 2; i := i div 2; end;
    return CALL + of(ticks=bits, BIT_SET=bits)


def numof(bits: int) -> Steps:
    # s := 0; for j := 1 to LEN(w) do s := s * 2 + w(j); NUMOF := s;
    return CALL + of(ticks=bits, BIT_GET=bits)
