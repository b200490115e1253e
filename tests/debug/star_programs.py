"""Star programs and plain-Python models shared by the debugger and trace tests."""
from __future__ import annotations

import numpy as np

from listings import LISTING_2


def random_digraph(n: int, seed: int, p: float | None = None) -> np.ndarray:
    rng = np.random.default_rng([seed, n])
    adj = rng.random((n, n)) < (p if p is not None else 2.0 / n)
    np.fill_diagonal(adj, False)
    return adj


def warshall_c_program(adj: np.ndarray) -> str:
    """Listing 2 and a main block that fills P row by row and calls it."""
    n = len(adj)
    rows = "\n".join(f"  ROW({i + 1}, P) := BITS('{''.join('1' if b else '0' for b in adj[i])}');"
                     for i in range(n) if adj[i].any())
    return f"{LISTING_2}\nvar P: table({n}, {n});\nbegin\n{rows}\n  WARSHALL-C({n}, P);\n  writeln(NUMB(COL(1, P)));\nend.\n"


def line_of(text: str, fragment: str, nth: int = 0) -> int:
    """The 1-based line of the nth line containing ``fragment``."""
    hits = [i + 1 for i, line in enumerate(text.split("\n")) if fragment in line]
    return hits[nth]


def closure(adj: np.ndarray) -> np.ndarray:
    """Transitive closure by repeated boolean squaring (independent of any Warshall)."""
    r = adj.copy()
    while True:
        nxt = r | ((r.astype(np.int64) @ r.astype(np.int64)) > 0)
        if (nxt == r).all():
            return r
        r = nxt


def warshall_c_inner_visits(adj: np.ndarray) -> list[tuple[int, int]]:
    """A plain-Python WARSHALL-C: the (k, i) pairs for which `COL(i, P) := V` runs, in order."""
    P = adj.copy()
    n = len(P)
    out = []
    for k in range(n):
        x = P[k].copy()
        W = P[:, k].copy()
        for i in np.flatnonzero(x):
            P[:, i] |= W
            out.append((k + 1, int(i) + 1))
    return out


RECURSIVE = """\
function FIB(n: integer): integer;
var a, b: integer;
begin
  if n < 2 then FIB := n
  else
  begin
    a := FIB(n - 1);
    b := FIB(n - 2);
    FIB := a + b;
  end;
end;

proc MARK(d: integer; var X: slice);
begin
  if d > 0 then
  begin
    X(d) := 1;
    MARK(d - 1, X);
  end;
end;

var r: integer; X: slice;
begin
  X := BITS('00000000');
  r := FIB(6);
  MARK(5, X);
  writeln(r, ' ', X);
end.
"""

LOOP_FOREVER = """\
var n: integer;
begin
  n := 0;
  while true do n := n + 1;
end.
"""
