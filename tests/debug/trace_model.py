"""A plain-Python reading of a trace (starvm/debug/trace.py): the variables the replay page
shows at event e, in the form Debugger.variables() gives them, for comparing the two."""
from __future__ import annotations


def _apply(value, change):
    if change[1] is None:                      # a whole new value
        return change[3]
    bits = list(value)
    for x in change[1]:
        bits[x] = "1" if bits[x] == "0" else "0"
    return "".join(bits)


def value_at(var: dict, event: int):
    """The variable's (windowed) value at 1-based ``event``: a bit string or a scalar."""
    v = var["init"]
    for c in var["ch"]:
        if c[0] > event:
            break
        v = c[1] if var["t"] in ("integer", "boolean") else _apply(v, c)
    return v


def shape_at(var: dict, event: int) -> tuple[int, int]:
    wr, wc = var.get("wr", 0), var.get("wc", 0)
    for c in var["ch"]:
        if c[0] > event:
            break
        if var["t"] not in ("integer", "boolean") and c[1] is None:
            wr, wc = c[6], c[7]
    return wr, wc


def shown_variables(trace: dict, event: int) -> dict:
    """name -> value as Debugger.variables() names them (globals bare, locals ROUTINE.name)."""
    ev = dict(zip(trace["event_fields"], trace["events"][event - 1]))
    out = {}
    slots = [(name, vid, None) for name, vid in trace["globals"]]
    if ev["frame"] is not None:
        frame = trace["frames"][ev["frame"]]
        slots += [(name, vid, frame["r"]) for name, vid in (frame["v"] or [])]
    for name, vid, routine in slots:
        var = trace["vars"][vid]
        v = value_at(var, event)
        if v is not None and var["t"] == "table":
            wr, wc = shape_at(var, event)
            v = tuple(v[r * wc:(r + 1) * wc] for r in range(wr))
        out[name if routine is None else f"{routine}.{name}"] = v
    return out


def event(trace: dict, number: int) -> dict:
    """Event ``number`` (1-based) as a dict of its fields."""
    return dict(zip(trace["event_fields"], trace["events"][number - 1]))


def changed_bits(trace: dict, vid: int, event: int) -> list[int] | None:
    """The flipped positions the page marks for variable ``vid`` at ``event`` (None: none)."""
    for c in trace["vars"][vid]["ch"]:
        if c[0] == event and c[1] is not None:
            return c[1]
    return None
