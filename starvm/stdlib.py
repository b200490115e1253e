"""The standard library: Star sources in ``stdlib/``, loaded on demand by routine name."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .frontend import ast as A
from .frontend.parser import fold, parse
from .resources import stdlib_dir

_DECL = re.compile(r"^\s*(?:proc|procedure|function)\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*-\s*[A-Za-z_][A-Za-z0-9_]*)*)",
                   re.IGNORECASE | re.MULTILINE)


@lru_cache(maxsize=1)
def index() -> dict[str, Path]:
    """Routine name -> the library file declaring it."""
    out: dict[str, Path] = {}
    for path in sorted(stdlib_dir().glob("*.star")):
        for m in _DECL.finditer(path.read_text()):
            out.setdefault(fold(re.sub(r"\s+", "", m.group(1))), path)
    return out


def _parse_file(path: Path) -> A.Program:
    return parse(path.read_text(), filename=f"stdlib/{path.name}")


def lookup(name: str) -> list[A.Routine] | None:
    """All routines of the library file that declares ``name`` (they may call each other)."""
    path = index().get(name)
    if path is None:
        return None
    return list(_parse_file(path).routines)
