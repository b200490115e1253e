"""The embedding API beyond ``Machine.load/run/call``: compiled programs, a mapping of the
globals, per-call step counters.

    prog = starvm.compile(source, "prog.star")   # parsed (and type-checked) once
    m = prog.run()                               # a fresh Machine; or prog.run(machine=m)
    m.globals["n"]                               # read a global; m.globals["n"] = 5 writes one
    with m.counting() as c:                      # the steps of everything inside
        m.call("WARSHALL", 8, P)
    c.stats, m.last_call_stats

This module does not import ``starvm.runtime.machine`` at load time (the machine imports it).
"""
from __future__ import annotations

import copy
from collections.abc import MutableMapping

import numpy as np

from . import stdlib
from .errors import StarTypeError
from .frontend import ast as A
from .frontend.parser import fold, parse
from .types import T

__all__ = ["Program", "compile", "Globals", "StepCounter", "steps_between"]


class Program:
    """A Star text parsed once. Load or run it on any number of machines; each load checks
    and generates code for that machine (its backend, its counters) but does not parse again.

    ``source``, ``filename``; ``has_main``; ``routines`` and ``globals``: the names it declares.
    """

    def __init__(self, ast: A.Program, source: str, filename: str):
        self._ast = ast
        self.source = source
        self.filename = filename

    @property
    def ast(self) -> A.Program:
        """A fresh copy of the parsed program (the checker annotates the tree it is given)."""
        return copy.deepcopy(self._ast)

    @property
    def has_main(self) -> bool:
        return self._ast.main is not None

    @property
    def routines(self) -> list[str]:
        return [r.display for r in self._ast.routines]

    @property
    def globals(self) -> list[str]:
        return [g.display for g in self._ast.globals]

    def __repr__(self) -> str:
        return f"<starvm.Program {self.filename}: {len(self._ast.routines)} routines, " \
               f"{len(self._ast.globals)} globals{', main block' if self.has_main else ''}>"

    def load(self, machine=None, **machine_options):
        """Declare its routines and globals in ``machine`` (default: a new
        ``Machine(**machine_options)``); returns the machine. The main block is not run."""
        machine = _machine(machine, machine_options)
        machine.load_program(self)
        return machine

    def run(self, machine=None, **machine_options):
        """Load it into ``machine`` (default: a new ``Machine(**machine_options)``) and run its
        main block; returns the machine, whose globals hold the results."""
        if not self.has_main:
            from .errors import Loc, Source
            raise StarTypeError("the program has no main block (begin ... end.) to run",
                                Loc(Source(self.filename, self.source), 1, 1))
        machine = _machine(machine, machine_options)
        machine.run(self)
        return machine


def _machine(machine, options):
    if machine is not None:
        if options:
            raise TypeError("give either a machine or Machine options, not both")
        return machine
    from .runtime.machine import Machine
    return Machine(**options)


def compile(source: str, filename: str = "<string>", *, check: bool = True) -> Program:  # noqa: A001
    """Parse a Star text once; raises ``StarSyntaxError`` here, not at each run.

    With ``check=True`` (the default) it is also type-checked on its own (the standard library
    available), so ``StarTypeError`` comes here too; pass ``check=False`` for a text that uses
    routines or globals another text loads into the machine first."""
    ast = parse(source, filename)
    if check:
        from .check import Checker, Environment
        Checker(Environment(library=stdlib.lookup)).check_program(copy.deepcopy(ast))
    return Program(ast, source, filename)


def program_ast(text, filename: str) -> tuple[A.Program, str]:
    """What ``Machine.compile`` parses: a text, or a Program (a copy of its tree, no parsing)."""
    if isinstance(text, Program):
        return text.ast, text.filename
    return parse(text, filename), filename


# ---------------------------------------------------------------------- globals
class Globals(MutableMapping):
    """``machine.globals``: the global variables by name (case-insensitive; ``A-B`` = ``A_B``).

    Reading gives an ``int``, a ``bool``, a :class:`~starvm.BitVector` (slices and words; None
    before the first assignment) or the :class:`~starvm.Table` itself (shared, not copied).
    Writing checks the declared type: ints for ``integer``, bools for ``boolean``; a vector
    or 1-D bool array for ``slice``/``word`` (of the variable's length once it has one);
    a table or 2-D bool array of the declared shape for ``table``, whose bits are copied into
    the existing table (Star code that holds it sees the new bits). Unknown names raise
    ``KeyError``; wrong types ``TypeError``; wrong lengths or shapes ``ValueError``."""

    def __init__(self, machine):
        self._m = machine

    def _sym(self, name: str):
        sym = self._m.env.globals.get(fold(name)) if isinstance(name, str) else None
        if sym is None:
            raise KeyError(name)
        return sym

    def __getitem__(self, name: str):
        from .runtime.values import Unassigned
        value = self._m.ns[self._sym(name).pyname]
        return None if isinstance(value, Unassigned) else self._m._to_python(value)

    def __setitem__(self, name: str, value) -> None:
        from .runtime.values import Bits, Table, host_array
        m, sym = self._m, self._sym(name)
        old = m.ns[sym.pyname]
        what = f"global '{sym.display}' ({sym.type})"
        if sym.type is T.INT:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{what} needs an int, got {type(value).__name__}")
            m.ns[sym.pyname] = int(value)
        elif sym.type is T.BOOL:
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{what} needs a bool, got {type(value).__name__}")
            m.ns[sym.pyname] = bool(value)
        elif sym.type.is_vector:
            if isinstance(value, Bits):
                if getattr(value, "backend", m.backend) is not m.backend:
                    raise TypeError(f"{what}: the vector lives on another machine's backend")
                new = Bits(value.v, value.n)
            else:
                arr = host_array(value)
                if arr.ndim != 1:
                    raise TypeError(f"{what} needs a vector or a 1-D bool array")
                new = m.slice(arr)
                new = Bits(new.v, new.n)
            want = old.n if isinstance(old, Bits) else _declared_length(m, sym)
            if want is not None and want >= 0 and new.n != want:
                raise ValueError(f"{what} has {want} bits, got {new.n}")
            m.ns[sym.pyname] = new
        elif sym.type is T.TABLE:
            if isinstance(value, Table):
                if not m.backend.owns(value):
                    raise TypeError(f"{what}: the table lives on the {value.backend.name} backend")
                src = value
            else:
                arr = host_array(value)
                if arr.ndim != 2:
                    raise TypeError(f"{what} needs a table or a 2-D bool array")
                src = m.table(arr)
            if src.shape != old.shape:
                raise ValueError(f"{what} is {old.n} x {old.k}, got {src.n} x {src.k}")
            if src is not old:
                m.backend.table_copy(old, src)
        else:   # pragma: no cover - no other global types exist
            raise TypeError(f"cannot assign {what}")

    def __delitem__(self, name: str) -> None:
        raise TypeError("a global variable cannot be deleted")

    def __iter__(self):
        return iter([s.display for s in self._m.env.globals.values()])

    def __len__(self) -> int:
        return len(self._m.env.globals)

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and fold(name) in self._m.env.globals

    def __repr__(self) -> str:
        return f"<globals of {self._m!r}: {', '.join(self)}>"


def _declared_length(machine, sym):
    """slice(T) / word(T): T's rows / columns, if T is a global table."""
    if sym.length_of is None:
        return None
    table = machine.ns.get(sym.length_of.pyname)
    if table is None or not hasattr(table, "shape"):
        return None
    return table.n if sym.type is T.SLICE else table.k


# ---------------------------------------------------------------------- counters
def steps_between(before: list[int], after: list[int]) -> dict[str, int]:
    """The steps by operation kind taken between two snapshots of ``Machine.counts``."""
    from .ir.ops import BASE_OPS
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

    def __repr__(self) -> str:
        return f"StepCounter({self.stats})"
