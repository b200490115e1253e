"""What every compiled target's renderer shares with the tiers that run it: ``Unsupported``
(what a renderer refuses: the routine runs interpreted), the error ``Site`` table that failing
compiled code indexes (jit/errors.py turns a site into the interpreter's message),
``Compiled`` / ``Lowered`` (a rendered module and its entries) and the 64-bit constant check."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..check.symbols import RoutineInfo, Symbol
from ..errors import Loc
from ..ir.ops import OP_TITLES, GroupOp, Node, Op

# the title runtime/ops.py uses in "length mismatch in ..." messages (jit/errors.py)
MISMATCH_TITLES = {op: OP_TITLES[op] for op in GroupOp.SameLength}


class Unsupported(Exception):
    """The routine uses something the compiled tier does not compile; str(e) says what."""

    def __init__(self, why: str, loc: Loc | None = None):
        super().__init__(f"{why} (at {loc})" if loc else why)


def check_int64(e: Node) -> None:
    """A constant past 64 bits is Unsupported (the routine runs interpreted, exactly)."""
    if not -(1 << 63) <= e.arg < (1 << 63):
        big = e.arg if e.arg.bit_length() < 256 else f"of {e.arg.bit_length()} bits"   # str() stops at 4300 digits
        raise Unsupported(f"the integer {big} does not fit 64 bits", e.loc)


@dataclass
class Site:
    loc: Loc | None
    routine: str            # the Star routine's display name ("main block")
    op: Op | None = None    # the failing node's opcode (for the message's title)
    what: str = ""          # extra text (a parameter's description)


@dataclass
class Compiled:
    """What the host needs to call one compiled routine."""
    func: str                            # the Python function name in the module
    info: RoutineInfo | None             # None: the main block
    globals: list[Symbol]                # extra arguments, in order
    returned_globals: list[Symbol]       # non-table globals among them, returned in order
    writes_tables: bool = True           # it or a routine it calls may write a table in place
    restartable: bool = True             # it may stop to run again from its entry (ModuleGen.restartable)


@dataclass
class Lowered:
    source: str
    routines: dict[str, Compiled]        # Star pyname (or "main_") -> its function
    sites: list[Site] = field(default_factory=list)
    names: list[str] = field(default_factory=list)     # unassigned values' variable names
    strings: list[str] = field(default_factory=list)   # string constants of writeln
