"""All configuration read from the environment, in one place."""
from __future__ import annotations

import os


def backend_name(explicit: str | None = None) -> str:
    """--backend / Machine(backend=...) first, then STARVM_BACKEND, else numpy."""
    return (explicit or os.environ.get("STARVM_BACKEND") or "numpy").lower()


def debug() -> bool:
    """STARVM_DEBUG=1 shows Python tracebacks of internal errors."""
    return os.environ.get("STARVM_DEBUG", "") not in ("", "0")


def fuse() -> bool:
    """STARVM_FUSE=0 runs `parallel for` loops iteration by iteration (for comparisons)."""
    return os.environ.get("STARVM_FUSE", "1") not in ("0", "")
