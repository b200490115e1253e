"""How a graph file's weights become integer codes: ``--weights MODE`` (docs/stdlib.md,
"Weights").

  exact    the weights as written: integers 0 .. 2^64 - 1 (a real written as a whole number,
           1.0 or 3e2, is that integer); anything else is an error naming file:line.
  auto     (the command line's default) exact, except that a file whose weights are not
           such integers still loads: its arcs with weight 1 and the first bad weight's
           error kept (``Graph.meta["weights_error"]``), raised only when the program reads
           weights (GRAPH_EDGES, GRAPH_WBITS). BFS, components and closure read only arcs.
  ignore   every arc has weight 1; the weight fields are not read (a pattern reading).
  round    integers as written; other numbers to the nearest integer, halves to even (the
           value as a 64-bit float).
  scale=K  every weight times K (a number > 0), to the nearest integer, halves to even,
           computed in 64-bit floats (so a result is exact up to 2^53).

The vectorised readers (fast_io.py) and the line reader (io.py) give the same weights: both
read a real as the nearest 64-bit float and round with the same rule (``np.rint`` and
Python's ``round`` both round halves to even); a vectorised reader declines what it cannot
give exactly (a result of 2^53 or more), and the line reader then reads it exactly.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .fields import shown

MAX_WEIGHT = (1 << 64) - 1          # a weight is a code of at most 64 bits (GRAPH_EDGES' W)
FLOAT_EXACT = 1 << 53               # below this every integer is a 64-bit float exactly
MODES = ("auto", "exact", "ignore", "round", "scale=K")
_INT = re.compile(r"[+-]?[0-9]+\Z")     # ASCII digits only (not int()'s '1_000' or other scripts)


@dataclass(frozen=True)
class WeightMode:
    kind: str                       # auto, exact, ignore, round, scale
    factor: float = 1.0             # scale's K

    @property
    def reads(self) -> bool:
        """Are the weight fields read at all?"""
        return self.kind != "ignore"

    @property
    def deferred(self) -> bool:
        """Is a bad weight kept for the program that reads weights, instead of raised now?"""
        return self.kind == "auto"

    @property
    def converts(self) -> bool:
        """Do non-integers become integers (round, scale)?"""
        return self.kind in ("round", "scale")

    def __str__(self) -> str:
        return f"scale={self.factor:g}" if self.kind == "scale" else self.kind


EXACT = WeightMode("exact")


def parse_mode(spec: "str | WeightMode | None", default: str = "exact") -> WeightMode:
    """A WeightMode from 'exact', 'auto', 'ignore', 'round' or 'scale=K'; ValueError otherwise."""
    if isinstance(spec, WeightMode):
        return spec
    text = (spec or default).strip().lower()
    if text in ("auto", "exact", "ignore", "round"):
        return WeightMode(text)
    kind, eq, value = text.partition("=")
    if kind.strip() == "scale" and eq:
        try:
            k = float(value)
        except ValueError:
            k = math.nan
        if not (math.isfinite(k) and k > 0):
            raise ValueError(f"scale=K needs a number K > 0, not '{value.strip()}'")
        return WeightMode("scale", k)
    raise ValueError(f"unknown weight mode '{spec}' (choose from {', '.join(MODES)})")


HINT = "read it with --weights round, --weights scale=K or --weights ignore (docs/stdlib.md, \"Weights\")"


def weight_of_token(tok: str, mode: WeightMode) -> int | str:
    """The integer weight the text ``tok`` stands for under ``mode`` (one that reads weights),
    or the reason it stands for none (a message for GraphFileError)."""
    if _INT.match(tok) and mode.kind != "scale":
        w = int(tok)
    else:
        try:
            if not tok.isascii() or "_" in tok:    # float() would read '1_0' and other scripts' digits
                raise ValueError(tok)
            x = float(tok)
        except ValueError:
            return f"weight must be a number, got '{shown(tok)}'"
        if not math.isfinite(x):
            return f"weight {tok} is not a finite number (weights are integers >= 0)"
        if mode.kind == "scale":
            x *= mode.factor
            if not math.isfinite(x):
                return f"weight {tok} times {mode.factor:g} is not a finite number"
            w = round(x)
        elif mode.kind == "round":
            w = round(x)
        else:
            if x != math.floor(x):
                return f"weight {tok} is not a whole number (weights are integers >= 0)"
            w = int(x)
    if w < 0:
        return f"negative weight {tok} (weights are integers >= 0)"
    if w > MAX_WEIGHT:
        return f"weight {tok} does not fit 64 bits (weights are integers 0 .. 2^64 - 1 = {MAX_WEIGHT})"
    return w


def convert_floats(x: np.ndarray, mode: WeightMode) -> np.ndarray | None:
    """Float weights as int64 codes under ``mode`` where every one is exact and valid, else
    None (the caller reads them one by one to name the bad one or to read a big one exactly)."""
    with np.errstate(invalid="ignore", over="ignore"):
        if mode.kind == "scale":
            x = np.rint(x * mode.factor)
        elif mode.kind == "round":
            x = np.rint(x)
        if x.size and not (np.all(np.isfinite(x)) and np.all(x == np.floor(x)) and x.min() >= 0
                           and x.max() < FLOAT_EXACT):
            return None
    return x.astype(np.int64)
