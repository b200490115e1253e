"""The CUDA modules of the native kernels, composed from the .cu files shipped in the package
(starvm/native/**/*.cu, package data): which files, in which order, make each module that
CuPy compiles. Reads text only (no CuPy), so tests compile every module with NVRTC without a
GPU (tests/gpu_sources/corpus.py).

The row moves share one module (one compile for IOTA, GATHER, SCATTER, GROUPMIN, COMPACT and
EXPAND): the shared device helpers and kernels first, then each routine's own kernels."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]          # starvm/native

# module name -> its files (relative to starvm/native), concatenated in this order
MODULES: dict[str, tuple[str, ...]] = {
    "rows": ("shared/rows.cuh", "shared/rows.cu", "iota/iota.cu", "gather/gather.cu", "scatter/scatter.cu",
             "groupmin/groupmin.cu", "compact/compact.cu", "expand/expand.cu"),
    "match": ("shared/search.cuh", "match/match.cu"),
    "extreme": ("shared/search.cuh", "min/extreme.cu"),
    "hit": ("hit/hit.cu",),
    "setmin": ("setmin/setmin.cu",),
    "warshall_adapt": ("warshall_adapt/warshall_adapt.cu",),
}
# the modules of C++ templates, compiled per instance (name expressions) with this option
TEMPLATE_OPTIONS = ("-std=c++14",)
TEMPLATED = ("match", "extreme")

_EXTERN = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(')


@lru_cache(maxsize=None)
def source(module: str) -> str:
    """The CUDA source of one module."""
    return "".join((HERE / f).read_text() for f in MODULES[module])


def kernel_names(module: str) -> tuple[str, ...]:
    """The extern "C" kernels of a module, in source order."""
    return tuple(_EXTERN.findall(source(module)))
