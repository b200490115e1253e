"""GROUPMIN on the emulated device: the NumPy kernel behind the device's word vectors; the groups
and their 1 bits come through host_read, as the CuPy kernel's one transfer."""
from __future__ import annotations

from ..shared import emulated
from . import numpy as kernels
from . import routine


def groupmin_counted(G, K, X_v):
    z, groups, ones = kernels.groupmin_counted(G, K, emulated.as_int(X_v))
    groups, ones = emulated.host_read(groups, ones)
    return emulated.from_int(z, len(X_v)), groups, ones


make = routine(groupmin_counted, emulated.numb, emulated.STORAGE, group_bits_max=64)
