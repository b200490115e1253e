"""The embedding API beyond ``Machine.load/run/call``: compiled programs, a mapping of the
globals, per-call step counters.

    prog = starvm.compile(source, "prog.star")   # parsed (and type-checked) once
    m = prog.run()                               # a fresh Machine; or prog.run(machine=m)
    m.globals["n"]                               # read a global; m.globals["n"] = 5 writes one
    with m.counting() as c:                      # the steps of everything inside
        m.call("WARSHALL", 8, P)
    c.stats, m.last_call_stats

Imports run one way: this module imports the machine; the pieces the machine needs live
beside it (``runtime/globals_view.py``: Globals; ``runtime/counters.py``: StepCounter,
steps_between; ``frontend/program.py``: the parsed program, program_ast) and are re-exported here.
"""
from __future__ import annotations

import copy

from . import stdlib
from .check import Checker, Environment
from .errors import Loc, Source, StarTypeError
from .frontend.parser import parse
from .frontend.program import ParsedProgram, program_ast
from .runtime.counters import StepCounter, steps_between
from .runtime.globals_view import Globals
from .runtime.machine import Machine

__all__ = ["Program", "compile", "Globals", "StepCounter", "steps_between", "program_ast"]


class Program(ParsedProgram):
    """A Star text parsed once. Load or run it on any number of machines; each load checks
    and generates code for that machine (its backend, its counters) but does not parse again.

    ``source``, ``filename``; ``has_main``; ``routines`` and ``globals``: the names it declares.
    """

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
    return Machine(**options)


def compile(source: str, filename: str = "<string>", *, check: bool = True) -> Program:  # noqa: A001
    """Parse a Star text once; raises ``StarSyntaxError`` here, not at each run.

    With ``check=True`` (the default) it is also type-checked on its own (the standard library
    available), so ``StarTypeError`` comes here too; pass ``check=False`` for a text that uses
    routines or globals another text loads into the machine first."""
    ast = parse(source, filename)
    if check:
        Checker(Environment(library=stdlib.lookup)).check_program(copy.deepcopy(ast))
    return Program(ast, source, filename)
