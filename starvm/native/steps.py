"""The steps a standard-library routine's Star body takes, by formula: what a native kernel
(or a compiled routine) that replaces the body reports, so that a program's step count does
not depend on the route that ran it.

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


def _s(ticks: int = 0, **ops: int) -> Steps:
    return Steps({Op[name]: c for name, c in ops.items()}, ticks)


CALL = _s(ticks=1)      # entering a routine


# ---------------------------------------------------------------- stdlib/search.star
def match(k: int, pattern_ones: int) -> Steps:
    # Z := X; for j := 1 to NCOLS(T) do
    #   if v(j) = 1 then Z := Z and COL(j, T) else Z := Z and not COL(j, T);
    return CALL + _s(ticks=k, BIT_GET=k, COL_GET=k, AND=k, NOT=k - pattern_ones)


def minimum(k: int) -> Steps:
    # Z := X; for j ... begin Y := Z and not COL(j, T); if SOME(Y) then Z := Y; end;
    return CALL + _s(ticks=k, COL_GET=k, NOT=k, AND=k, SOME=k)


def maximum(k: int) -> Steps:
    # Z := X; for j ... begin Y := Z and COL(j, T); if SOME(Y) then Z := Y; end;
    return CALL + _s(ticks=k, COL_GET=k, AND=k, SOME=k)


def hit(k: int) -> Steps:
    # Z := X; for j ... Z := Z and not (COL(j, T) xor COL(j, F));
    return CALL + _s(ticks=k, COL_GET=2 * k, XOR=k, NOT=k, AND=k)


def setmin(k: int) -> Steps:
    # E := X; CLR(Z); for j ... begin A := COL(j, T); B := COL(j, F);
    #   Z := Z or (E and (B and not A)); E := E and not (A xor B); end;
    return CALL + _s(ticks=k, CLR=1, COL_GET=2 * k, NOT=2 * k, AND=3 * k, OR=k, XOR=k)


# ---------------------------------------------------------------- stdlib/graphs.star helpers
def setnum(bits: int) -> Steps:
    # for j := LEN(w) downto 1 do begin w(j) := i mod 2; i := i div 2; end;
    return CALL + _s(ticks=bits, BIT_SET=bits)


def numof(bits: int) -> Steps:
    # s := 0; for j := 1 to LEN(w) do s := s * 2 + w(j); NUMOF := s;
    return CALL + _s(ticks=bits, BIT_GET=bits)


# ---------------------------------------------------------------- stdlib/rows.star
def iota(n: int, k: int) -> Steps:
    # for i := 1 to NROWS(T) do begin SETNUM(i, w); ROW(i, T) := w; end;
    return CALL + (_s(ticks=1, ROW_SET=1) + setnum(k)).times(n)


def move_rows(marked: int, index_bits: int) -> Steps:
    """GATHER and SCATTER (the same steps): ``marked`` rows of X, IX of ``index_bits`` columns.
    Y := X; while SOME(Y) do begin i := STEP(Y);
      ROW(i, R) := ROW(NUMOF(ROW(i, IX)), T);        (SCATTER: ROW(NUMOF(ROW(i, IX)), R) := ROW(i, T))
    end;"""
    per_row = _s(ticks=1, SOME=1, STEP=1, ROW_GET=2, ROW_SET=1) + numof(index_bits)
    return CALL + _s(SOME=1) + per_row.times(marked)


def groupmin(groups: int, group_bits: int, group_ones: int, key_bits: int) -> Steps:
    """``groups``: the distinct G values among the marked rows; ``group_ones``: the 1 bits of
    those values, together (MATCH's NOT steps are their 0 bits).
    Y := X; CLR(Z); while SOME(Y) do begin i := FND(Y); MATCH(G, Y, ROW(i, G), S);
      Y := Y and not S; MIN(K, S, M); Z(FND(M)) := 1; end;"""
    per_group = _s(ticks=1, SOME=1, FND=2, ROW_GET=1, NOT=1, AND=1, BIT_SET=1) + minimum(key_bits)
    matches = match(group_bits, 0).times(groups) + _s(NOT=-group_ones)
    return CALL + _s(CLR=1, SOME=1) + per_group.times(groups) + matches


# ---------------------------------------------------------------- stdlib/warshall.star
def warshall_adapt(n: int, ors: int) -> Steps:
    """``ors``: for every pivot k, the 1s of row k of P just before pivot k (the columns i
    with V(k) = 1), summed.
    for k := 1 to n do parallel for i := 1 to n do begin W := COL(k, P); V := COL(i, P);
      if V(k) = 1 then V := V or W; COL(i, P) := V; end;"""
    return CALL + _s(ticks=2 * n, COL_GET=2 * n * n, BIT_GET=n * n, COL_SET=n * n, OR=ors)
