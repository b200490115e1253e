"""IOTA on the emulated device: the NumPy kernel (its tables are NumPy arrays)."""
from __future__ import annotations

from ..shared.emulated import STORAGE
from . import routine
from .numpy import iota

make = routine(iota, STORAGE)
