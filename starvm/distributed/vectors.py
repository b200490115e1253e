"""The distributed backend's vector forms besides a plain (replicated) local vector."""
from __future__ import annotations

import numpy as np

REPLICATE_MAX = 1 << 16  # a Fill that must take a form is replicated up to this many bits


class Shard:
    """This rank's block of an n-bit partitioned vector (``v``: a vector of the local backend)."""
    __slots__ = ("v", "n")

    def __init__(self, v, n: int):
        self.v = v
        self.n = n


class Fill:
    """n zeros or n ones, not yet stored in either form."""
    __slots__ = ("bit", "n")

    def __init__(self, bit: int, n: int):
        self.bit = bit
        self.n = n


def _host(a):
    """A NumPy array of a NumPy or CuPy array (host staging of device data)."""
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)
