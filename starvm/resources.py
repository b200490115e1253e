"""Where the grammar and the standard library live.

In an installed wheel they are ``starvm/grammar`` and ``starvm/stdlib`` (copied in at build
time, see pyproject.toml); in a checkout or an editable install they are the top-level
``grammar/`` and ``stdlib/`` folders beside the package.
"""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"starvm installation is incomplete: no '{name}' folder near {_PKG}")


def grammar_path() -> Path:
    return _find("grammar") / "star.lark"


def stdlib_dir() -> Path:
    return _find("stdlib")


def data_dir() -> Path:
    """The bundled graphs (top-level data/, starvm/data in a wheel): starvm.graphs.bundled()."""
    return _find("data")
