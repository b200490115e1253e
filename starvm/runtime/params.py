"""Program parameters: the values a user gives a program's constants from outside it.

A Star text declares ``const source = 1;`` (an integer or boolean literal) at its top level;
``star run FILE --param source=5`` (``-D source=5``) or ``Machine(params={"source": 5})``
replaces the declared value before the globals are initialised, so a global table's size may
use it too. Nothing in the program may assign a constant (the checker refuses it).

Errors are ``ParamError`` (a ``ValueError``; exit status 2 in the CLI): a NAME=VALUE that does
not parse, a value of the wrong type for its constant, and, when a program with a main block
is loaded, a name that is none of its constants (the message lists them)."""
from __future__ import annotations

import re

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"[+-]?[0-9]+\Z")


class ParamError(ValueError):
    """A parameter that names no constant of the program, or a value it cannot take."""


def parse_assignment(text: str) -> tuple[str, int | bool]:
    """``"source=5"`` -> ``("source", 5)``; ``"DEBUG=true"`` -> ``("DEBUG", True)``."""
    name, eq, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not eq or not name:
        raise ParamError(f"'{text}' is not NAME=VALUE (e.g. --param source=5)")
    if not _NAME.match(name):
        raise ParamError(f"'{name}' is not a Star name (letters, digits and _, not starting with a digit)")
    if _INT.match(value):
        return name, int(value)
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    raise ParamError(f"{name}={value}: the value must be an integer or true/false"
                     if value else f"{name}=: the value is missing (an integer or true/false)")


def normalise(params) -> dict[str, tuple[str, int | bool]]:
    """``Machine(params=...)``: a mapping NAME -> int or bool, as the user wrote the names,
    keyed by the folded name (Star names are case-insensitive)."""
    import numpy as np
    found: dict[str, tuple[str, int | bool]] = {}
    for name, value in dict(params or {}).items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ParamError(f"parameter {name!r} is not a Star name")
        if isinstance(value, (bool, np.bool_)):
            value = bool(value)
        elif isinstance(value, (int, np.integer)):
            value = int(value)
        else:
            raise ParamError(f"parameter '{name}' must be an int or a bool, got {type(value).__name__}")
        key = name.lower()          # Star names are case-insensitive (frontend.parser.fold)
        if key in found:
            raise ParamError(f"parameter '{name}' is given twice")
        found[key] = (name, value)
    return found


def _show(value: int | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _kind(value: int | bool) -> str:
    return "a boolean" if isinstance(value, bool) else "an integer"


def check(params: dict[str, tuple[str, int | bool]], new_globals, all_globals, whole_program: bool) -> None:
    """Before a text's globals are initialised: each given value has its constant's type, and,
    for a program (``whole_program``: the text has a main block), each name is a constant."""
    for sym in new_globals:
        if sym.constant is not None and sym.name in params:
            written, value = params[sym.name]
            if isinstance(value, bool) != isinstance(sym.constant, bool):
                raise ParamError(f"{written}={_show(value)}: the constant '{sym.display}' is "
                                 f"{_kind(sym.constant)}, not {_kind(value)}")
    if not whole_program:
        return
    constants = {s.name: s for s in all_globals if s.constant is not None}
    for name, (written, value) in params.items():
        if name not in constants:
            if constants:
                known = ", ".join(f"{s.display} = {_show(s.constant)}" for s in constants.values())
                raise ParamError(f"{written}={_show(value)}: the program has no constant '{written}' "
                                 f"(its constants: {known})")
            raise ParamError(f"{written}={_show(value)}: the program declares no constants "
                             "(a parameter sets one: const NAME = VALUE; at the top of the program)")


def value_of(params: dict[str, tuple[str, int | bool]], name: str, declared: int | bool) -> int | bool:
    """The value generated code initialises the constant ``name`` (folded) with."""
    given = params.get(name)
    return declared if given is None else given[1]


def params_from_args(args, usage_error) -> dict:
    """--param NAME=VALUE ... as Machine(params=...) takes them; a malformed one is a usage error."""
    params = {}
    for text in getattr(args, "param", None) or []:
        try:
            name, value = parse_assignment(text)
        except ParamError as e:
            raise usage_error(f"--param {e}") from None
        if name.lower() in {n.lower() for n in params}:
            raise usage_error(f"--param {name} is given twice")
        params[name] = value
    return params


def add_param_argument(p) -> None:
    p.add_argument("-D", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="give the program's constant NAME (const NAME = ...;) the integer or true/false VALUE "
                        "instead of its declared one; repeatable")
