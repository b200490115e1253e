"""Checker: name resolution and type checking of the AST, before anything runs.

``checker.py`` (``Checker``: every expression typed, every name resolved, arity and
``var``-ness checked; ``Environment``: what persists between loads into one machine),
``builtins.py`` (the signatures of the base operations and the other built-in names),
``symbols.py`` (what a name resolves to: ``Symbol``, ``RoutineInfo``) and ``parallel.py``
(the forall rule of `parallel for`, and what a loop writes: ``ForallInfo``).
"""
from .checker import Checker, Environment
from .symbols import Symbol, RoutineInfo

__all__ = ["Checker", "Environment", "Symbol", "RoutineInfo"]
