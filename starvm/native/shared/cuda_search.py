"""The launch shape of the search kernels (MATCH: match/cuda.py; MIN and MAX: min/cuda.py) and
their compiled instances: C++ templates of cuda_text's "match" and "extreme" modules,
specialised on the columns k (compiled once per k, on first use: cp.RawModule with
name_expressions), so the column loop is unrolled.

Launch shape: BLOCK threads a block, WPT words a thread, column batches of BATCH (0: all k
columns in one batch). bench/check_search_gpu.py times alternatives; set them through
configure()."""
from __future__ import annotations

import cupy as cp

from . import cuda_text

BLOCK = 256
WPT = 1
BATCH = 8
_modules: dict = {}      # (module, device, k, batch, wpt, block) -> {kind: kernel}


def configure(block: int = 256, words_per_thread: int = 1, batch: int = 8) -> None:
    """Set the launch shape of the MATCH/MIN/MAX kernels (bench/check_search_gpu.py)."""
    global BLOCK, WPT, BATCH
    if block % 32 or not 32 <= block <= 1024 or words_per_thread not in (1, 2, 4) or not 0 <= batch <= 64:
        raise ValueError("block: a multiple of 32 in 32..1024; words_per_thread: 1, 2 or 4; batch: 0..64")
    BLOCK, WPT, BATCH = block, words_per_thread, batch


def launch_shape() -> dict:
    return {"block": BLOCK, "words_per_thread": WPT, "batch": BATCH}


def instances(module: str, k: int, templates: dict[str, tuple[str, str]], plain: tuple[str, ...] = ()) -> dict:
    """The kernels of ``module`` for k columns: ``templates`` maps a kind to a template's name
    and its arguments between <k, batch and the launch shape (e.g. {"min": ("extreme_local",
    ", false")}); ``plain``: its extern "C" kernels, by their names."""
    key = (module, cp.cuda.runtime.getDevice(), k, BATCH, WPT, BLOCK)
    fns = _modules.get(key)
    if fns is None:
        names = {}
        for kind, (name, extra) in templates.items():
            names[kind] = f"{name}<{k}, {BATCH}{extra}, {WPT}, {BLOCK}>"
        mod = cp.RawModule(code=cuda_text.source(module), options=cuda_text.TEMPLATE_OPTIONS,
                           name_expressions=list(names.values()))
        fns = {kind: mod.get_function(expr) for kind, expr in names.items()}
        for name in plain:
            fns[name] = mod.get_function(name)
        _modules[key] = fns
    return fns


def words_grid(W: int):
    per_block = BLOCK * WPT
    return (max(1, (W + per_block - 1) // per_block),), (BLOCK,)


def u64(a):
    return a if (a.dtype == cp.uint64 and a.flags.c_contiguous) else cp.ascontiguousarray(a, dtype=cp.uint64)
