"""What a name resolves to: a variable (Symbol) or a routine (RoutineInfo)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Loc
from ..frontend import ast as A
from ..types import T


@dataclass(eq=False)
class Symbol:
    name: str                      # folded name
    display: str                   # as the user wrote it
    type: T
    scope: str                     # 'global' | 'local' | 'param' | 'result' | 'snapshot'
    loc: Loc | None = None
    by_ref: bool = False           # a `var` parameter
    readonly: bool = False         # a table parameter without `var`
    constant: int | bool | None = None  # a program constant (`const n = 5;`): its declared value
    spec: A.TypeSpec | None = None # declared type (length source for slice(T)/word(T), table dims)
    length_of: Symbol | None = None  # slice(T)/word(T): the table T
    pyname: str = ""               # identifier in the generated Python code
    dims: tuple | None = None      # table(n, k): the sizes lowered to IR (set by lowering)

    def __repr__(self) -> str:
        return f"Symbol({self.display}: {self.type})"


@dataclass(eq=False)
class RoutineInfo:
    name: str
    display: str
    node: A.Routine
    params: list[Symbol] = field(default_factory=list)
    locals: list[Symbol] = field(default_factory=list)
    result: Symbol | None = None   # functions only
    pyname: str = ""

    @property
    def is_function(self) -> bool:
        return self.result is not None

    @property
    def out_params(self) -> list[Symbol]:
        """`var` parameters copied back to the caller (tables are shared, never copied)."""
        return [p for p in self.params if p.by_ref and p.type is not T.TABLE]
