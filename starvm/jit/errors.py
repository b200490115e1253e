"""Turn a failure of compiled code (its status array) into the interpreter's StarRuntimeError.

Compiled code stores the failing site, an error code and up to four integers in ``st``
(``kernels.fail``); the texts here are those of ``runtime/ops.py`` and ``execution/limits.py``
word for word, so both tiers print the same message at the same Star position.
"""
from __future__ import annotations

from ..errors import Frame, StarInterrupt, StarRuntimeError
from ..targets.layout import S_A, S_B, S_C, S_CODE, S_D, S_NODE, S_SP, S_STACK, E
from ..targets.common import MISMATCH_TITLES, Lowered, Site


def _index(what: str, i: int, n: int) -> str:
    return f"{what} index {i} out of range 1..{n}" if n else f"{what} index {i} out of range: it has none"


def message(code: int, a: int, b: int, c: int, d: int, site, names: list[str], max_steps,
            strings: list[str] = ()) -> tuple[str, str | None]:
    """(message, hint) for one failure."""
    if code == E.USER:
        return strings[a], None
    if code == E.INTERRUPT:
        return "interrupted", None
    if code == E.UNASSIGNED:
        return f"'{names[-1 - a]}' is used before it is assigned a value", None
    if code == E.BIT_INDEX:
        return _index("bit", a, b), None
    if code == E.BIT_VALUE:
        return f"a bit takes 0 or 1, not {a}", None
    if code == E.MISMATCH:
        return f"length mismatch in {MISMATCH_TITLES[site.op]}: {a} bits and {b} bits", None
    if code == E.TRIM:
        return f"TRIM({a}, {b}, w) needs 1 <= i <= j <= {c} (the length of w)", None
    if code == E.REP_RANGE:
        return f"REP({a}, {b}, v, w) needs 1 <= i <= j <= {c} (the length of w)", None
    if code == E.REP_LEN:
        return f"REP({a}, {b}, v, w) needs v of {b - a + 1} bits, not {c}", None
    if code == E.COL_INDEX:
        return _index("column", a, b), None
    if code == E.COL_SET_LEN:
        return f"COL({a}, T) := ...: the slice has {b} bits but the table has {c} rows", None
    if code == E.ROW_INDEX:
        return _index("row", a, b), None
    if code == E.ROW_SET_LEN:
        return f"ROW({a}, T) := ...: the word has {b} bits but the table has {c} columns", None
    if code == E.ASG_LEN:
        return f"length mismatch in assignment: the variable has {a} bits, the value {b}", None
    if code == E.CHECK_LEN:
        return f"{site.what} must have {a} bits, got {b}", None
    if code == E.TABLE_NEG:
        return f"a table cannot have a negative size: table({a}, {b})", None
    if code == E.TABLE_MEM:
        return f"table({a}, {b}) needs {c} bytes but only {d} bytes of memory are free", None
    if code == E.TABLE_ASSIGN:
        return f"cannot assign a {a} x {b} table to a {c} x {d} one", None
    if code == E.DIV0:
        return "division by zero", None
    if code == E.MOD0:
        return "division by zero (mod)", None
    if code == E.OVERFLOW:
        what = f"-{b}" if c == 1 and a == 0 else f"{a} {('+', '-', '*', 'div')[c]} {b}"
        return (f"integer overflow: {what} does not fit in 64 bits, where the compiled tier computes",
                "run with --jit off (STARVM_JIT=off, Machine(jit='off')): the interpreter's integers are unbounded")
    if code == E.DEPTH:
        return (f"recursion too deep (more than about {site.what} nested Star calls)",
                "raise the limit with STARVM_MAX_DEPTH or Machine(max_depth=N)")
    if code == E.STEPS:
        return (f"step limit reached: more than {max_steps} loop iterations and routine calls",
                "raise the limit with --max-steps N (Machine(max_steps=N)) if the program is meant to run this long")
    raise AssertionError(f"unknown error code {code} from compiled code")


def star_error(st, lowered: Lowered, max_steps, base: int = 0) -> StarRuntimeError:
    """The error compiled code reported, with its position and the compiled part of the Star
    call stack in ``jit_frames`` (Machine._guard puts the interpreted callers before it)."""
    site = lowered.sites[int(st[S_NODE])]
    if int(st[S_CODE]) == E.DEPTH:   # the limit is the room the status array has (buffers.status_array)
        site = Site(site.loc, site.routine, site.op, str(len(st) - S_STACK - 1))
    text, hint = message(int(st[S_CODE]), int(st[S_A]), int(st[S_B]), int(st[S_C]), int(st[S_D]),
                         site, lowered.names, max_steps, lowered.strings)
    err = (StarInterrupt if int(st[S_CODE]) == E.INTERRUPT else StarRuntimeError)(text, site.loc, hint=hint)
    frames = []
    for depth in range(base, int(st[S_SP])):   # below base: the interpreted callers' calls
        call = lowered.sites[int(st[S_STACK + depth])]
        frames.append(Frame(call.routine, call.loc))
    frames.append(Frame(site.routine, site.loc))
    err.jit_frames = frames
    err.deep = int(st[S_CODE]) == E.DEPTH    # Machine._guard shortens the whole stack, as for the interpreter's
    return err


def host_error(err, st, lowered: Lowered, base: int = 0, inner=()):
    """An error the host raised doing a request of compiled code (graph input, a native
    routine's call), given the request's position and the compiled part of the Star call
    stack, as star_error does; ``inner``: the Star frames of interpreted code the request ran
    (a native routine's Star body), innermost last."""
    site = lowered.sites[int(st[S_NODE])]
    inner = list(inner)
    if inner and err.loc is not None:      # raised with its own position (a fused loop's node)
        inner[-1] = Frame(inner[-1].routine, err.loc)
    if err.loc is None:
        err.loc = inner[-1].loc if inner else site.loc
    frames = [Frame(lowered.sites[int(st[S_STACK + d])].routine, lowered.sites[int(st[S_STACK + d])].loc)
              for d in range(base, int(st[S_SP]))]
    err.jit_frames = frames + [Frame(site.routine, site.loc)] + inner
    return err.with_traceback(None)
