"""The static types of Star values."""
from __future__ import annotations

from enum import Enum


class T(Enum):
    INT = "integer"
    BOOL = "boolean"
    SLICE = "slice"
    WORD = "word"
    TABLE = "table"
    STR = "string"
    VOID = "nothing"

    @property
    def is_vector(self) -> bool:
        return self in (T.SLICE, T.WORD)

    def __str__(self) -> str:
        return self.value
