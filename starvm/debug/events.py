"""Statement events: the machine a debugger or tracer runs on, and what one event tells.

Code compiled with ``Machine._debug_hooks`` set calls ``_dbg()`` before every statement and
before each test of a loop (``_dbg(1)``: the first statement of a routine or main block;
``targets/python/codegen.py``). :class:`EventSource` puts the hook into a machine's namespace and
numbers the events 1, 2, ...; a program is deterministic, so event N of one run is event N
of every run of the same program with the same input (what ``back`` relies on).
Without the flag no hook is generated at all: ordinary runs pay nothing.
"""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass

from ..errors import Loc
from ..runtime.machine import Machine


def debug_machine(**options) -> Machine:
    """A machine whose compiled code reports statement events. ``options``: Machine's
    (backend, graph, max_steps, ...; those this Machine does not take and None values are
    dropped). The compiled tier (``jit=``, when the machine has one) is bypassed, and native
    kernels unless ``native=True``: every routine runs as its Star body, so it can be stepped
    through."""
    known = inspect.signature(Machine.__init__).parameters
    kw = {k: v for k, v in options.items() if k in known and v is not None}
    kw["native"] = bool(options.get("native"))   # on only when asked: a kernel call is one statement
    if "jit" in known:
        kw["jit"] = False
    m = Machine(**kw)
    m._debug_hooks = True
    m.ns["_dbg"] = _no_event
    return m


def _no_event(entry=0):
    return None


def bypass_note(machine: Machine) -> str:
    """What --profile adds while debugging or tracing: what ran differently from star run."""
    if machine.native:
        return ("debugging/tracing: statement events on; the compiled tier was bypassed; native kernels "
                "ran (each call of a routine they replace is one statement)")
    return ("debugging/tracing: every routine ran as its Star body with statement events "
            "(native kernels and the compiled tier were bypassed)")


@dataclass
class StarFrame:
    routine: str          # display name ('main block' for the main block)
    pyname: str           # the generated function's name (r_<name>, main_)
    loc: Loc | None       # where this frame is: the current statement, or the call in progress
    frame: object         # the Python frame of the generated function


class EventSource:
    """Counts the events of one machine and hands each to ``listener(count, frame, entry)``
    (``frame``: the generated function's Python frame). ``muted``: events are not counted
    (expressions the debugger evaluates may call routines)."""

    def __init__(self, machine: Machine, listener):
        self.machine = machine
        self.listener = listener
        self.count = 0
        self.muted = 0
        machine.ns["_dbg"] = self._hook

    def _hook(self, entry=0):
        if self.muted:
            return
        self.count += 1
        self.listener(self.count, sys._getframe(1), entry)


def frame_loc(machine: Machine, frame) -> Loc | None:
    unit = machine.units.get(frame.f_code.co_filename)
    if unit is None:
        return None
    info = unit.lines.get(frame.f_lineno)
    return info.loc if info is not None else None


def is_star_frame(machine: Machine, frame) -> bool:
    return frame.f_code.co_filename in machine.units


def star_stack(machine: Machine, frame, limit: int | None = None) -> list[StarFrame]:
    """The Star frames from ``frame`` outwards, returned outermost first (at most ``limit``
    innermost ones)."""
    out = []
    units = machine.units
    f = frame
    while f is not None and (limit is None or len(out) < limit):
        unit = units.get(f.f_code.co_filename)
        if unit is not None and f.f_code.co_name in unit.routine_names:
            info = unit.lines.get(f.f_lineno)
            out.append(StarFrame(unit.routine_names[f.f_code.co_name], f.f_code.co_name,
                                 info.loc if info else None, f))
        f = f.f_back
    out.reverse()
    return out


def depth(machine: Machine, frame) -> int:
    """How many Star frames are on the stack from ``frame`` outwards."""
    units = machine.units
    d = 0
    while frame is not None:
        if frame.f_code.co_filename in units:
            d += 1
        frame = frame.f_back
    return d


def statement_lines(machine: Machine) -> dict[str, dict[int, str]]:
    """For each Star file: line -> the generated function (routine) holding a statement there."""
    out: dict[str, dict[int, str]] = {}
    for unit in machine.units.values():
        fn = None
        for no, text in enumerate(unit.source.split("\n"), 1):
            if text.startswith("def "):
                fn = text[4:text.index("(")]
                continue
            stripped = text.strip()
            if stripped.startswith("_dbg(") and fn is not None:
                info = unit.lines.get(no)
                if info is not None and info.loc is not None:
                    out.setdefault(info.loc.filename, {}).setdefault(info.loc.line, fn)
    return out


def routine_of(machine: Machine, pyname: str):
    """The RoutineInfo of a generated function name (None for main_)."""
    if pyname.startswith("r_"):
        return machine.env.routines.get(pyname[2:])
    return None
