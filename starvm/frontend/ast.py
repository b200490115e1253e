"""The Star abstract syntax tree. Every node carries the ``Loc`` it was parsed from.

Names are stored folded to lower case (Star is case-insensitive) with hyphens turned into
underscores (``WARSHALL-C`` names ``warshall_c``); ``display`` keeps the spelling the user wrote.
The checker fills in ``type`` on expressions and ``ref`` on names and applications.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..errors import Loc
from .deep import deep


@dataclass(eq=False)
class Node:
    loc: Loc


# ---------------- types and declarations ----------------

@dataclass(eq=False)
class TypeSpec(Node):
    kind: str                      # 'integer' | 'boolean' | 'slice' | 'word' | 'table'
    of: Name | None = None         # slice(T) / word(T): the table giving the length
    dims: tuple[Expr, Expr] | None = None   # table(n, k)


@dataclass(eq=False)
class VarDecl(Node):
    name: str
    display: str
    type: TypeSpec
    value: int | bool | None = None   # a program constant (`const n = 5;`): its literal


@dataclass(eq=False)
class Param(Node):
    name: str
    display: str
    type: TypeSpec
    by_ref: bool


@dataclass(eq=False)
class Routine(Node):
    name: str
    display: str
    params: list[Param]
    result: TypeSpec | None        # None for a procedure
    locals: list[VarDecl]
    body: Block

    @property
    def is_function(self) -> bool:
        return self.result is not None


@dataclass(eq=False)
class Program(Node):
    name: str | None
    globals: list[VarDecl]
    routines: list[Routine]
    main: Block | None
    warnings: list = field(default_factory=list)   # StarWarnings the parser found (reported by the checker)
    depth: int = 0                 # levels of nesting of the parse tree (frontend/deep.py)

    def __deepcopy__(self, memo):
        """copy.deepcopy recurses once per nesting level: give it the room deep.py gives the passes."""
        return deep(_copy_fields, self, memo)


def _copy_fields(node, memo):
    new = node.__class__.__new__(node.__class__)
    memo[id(node)] = new
    for name, value in vars(node).items():
        setattr(new, name, copy.deepcopy(value, memo))
    return new


# ---------------- statements ----------------

@dataclass(eq=False)
class Block(Node):
    body: list[Node]


@dataclass(eq=False)
class Assign(Node):
    target: Node                   # Name, or Apply for X(i) / COL(i,T) / ROW(i,T)
    value: Node


@dataclass(eq=False)
class CallStmt(Node):
    name: str
    display: str
    args: list[Node]
    ref: Any = None                # filled by the checker: Routine or builtin name


@dataclass(eq=False)
class If(Node):
    cond: Node
    then: Node | None
    orelse: Node | None


@dataclass(eq=False)
class While(Node):
    cond: Node
    body: Node | None


@dataclass(eq=False)
class Repeat(Node):
    body: list[Node]
    cond: Node


@dataclass(eq=False)
class For(Node):
    var: Name
    start: Node
    stop: Node
    downto: bool
    body: Node | None
    parallel: bool = False


# ---------------- expressions ----------------

@dataclass(eq=False)
class Expr(Node):
    type: Any = field(default=None, init=False)


@dataclass(eq=False)
class Num(Expr):
    value: int = 0


@dataclass(eq=False)
class Str(Expr):
    value: str = ""


@dataclass(eq=False)
class BoolLit(Expr):
    value: bool = False


@dataclass(eq=False)
class Name(Expr):
    name: str = ""
    display: str = ""
    ref: Any = field(default=None, init=False)   # the Symbol it resolves to


@dataclass(eq=False)
class Apply(Expr):
    """``f(args)``: a call, a builtin, or bit access ``Y(i)``; the checker decides which."""
    func: Node = None
    args: list[Node] = field(default_factory=list)
    kind: str | None = field(default=None, init=False)  # 'call' | 'builtin' | 'bit'
    ref: Any = field(default=None, init=False)


@dataclass(eq=False)
class BinOp(Expr):
    op: str = ""                   # + - * div mod and or xor = <> < <= > >=
    left: Node = None
    right: Node = None


@dataclass(eq=False)
class Unary(Expr):
    op: str = ""                   # not, -, +
    operand: Node = None
