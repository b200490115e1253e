"""Checker: name resolution and type checking of the AST, before anything runs."""
from .checker import Checker, Environment
from .symbols import Symbol, RoutineInfo

__all__ = ["Checker", "Environment", "Symbol", "RoutineInfo"]
