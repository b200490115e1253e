"""The arrays a compiled call is handed (step counters, status slots, the output holder) and
the loads and limits around Numba's compiler that the host, the background loader and the
compile worker share."""
from __future__ import annotations

import sys
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from ..ir.ops import BASE_OPS
from ..execution.limits import frame_depth
from ..targets.layout import S_STACK, STATUS_SIZE


def counter_array():
    return np.zeros(len(BASE_OPS), np.int64)


def status_array(max_depth: int = STATUS_SIZE - S_STACK - 1):
    """The status slots, then room for max_depth call sites (kernels.enter)."""
    return np.zeros(S_STACK + max_depth + 1, np.int64)


def output_holder():
    """The output records' holder (kernels.Output): compiled code replaces its array when it
    grows it, so the host finds the records even after a failure in the same call. The grown
    array stays for the next calls."""
    from numba import types
    from .cache import compile_overload
    from ..targets.numba.kernels import new_output
    compile_overload(new_output, (types.int64,))    # without it, the first call would start Numba's compiler
    return new_output(1024)


def output_records(ob):
    """The record array an output holder holds now."""
    return records_kernel()(ob)


@lru_cache(maxsize=None)
def records_kernel():
    """kernels.output_records, its one overload loaded once (a call of an overload-less
    dispatcher would start Numba's compiler; loading it again at every call is lock and
    signature work on the path of every compiled call that wrote output)."""
    from .cache import compile_overload
    from ..targets.numba.kernels import OUTPUT, output_records as records
    compile_overload(records, (OUTPUT,))
    return records


# Python frames Numba's compiler may need (typing recurses through callees and kernels): more
# than a Star recursion limit leaves (limits.RecursionLimit)
_COMPILE_FRAMES = 3000


@contextmanager
def room_to_compile():
    """Python's recursion limit raised while Numba compiles: a routine first called deep in
    a Star recursion, or under a small max_depth, must compile as at the top (a RecursionError
    inside Numba's typing also leaves it unable to type the same functions again)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, frame_depth() + _COMPILE_FRAMES))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@lru_cache(maxsize=None)
def request_tables_kernel():
    """kernels.request_tables, loaded once (as records_kernel)."""
    from .cache import compile_overload
    from ..targets.numba.kernels import OUTPUT, request_tables
    compile_overload(request_tables, (OUTPUT,))
    return request_tables


@lru_cache(maxsize=None)
def records_text_kernel():
    """kernels.records_text with its one overload loaded (as records_kernel)."""
    from numba import types
    from .cache import compile_overload
    from ..targets.numba.kernels import records_text
    compile_overload(records_text, (types.int64[::1], types.uint8[::1], types.int64[::1]))
    return records_text
