"""The GPU tier's part of ``Tier.install``: on the CuPy and auto backends, routines become
one CUDA kernel each (targets/cuda/routine.py, cuda_runtime.py) instead of Numba functions.

What it takes: routines that fill no table from the graph, have no native kernel in their
place (compiled callers run a native's Star body in their kernel), call only routines it
takes, and that the renderer accepts (recursion too: device functions of their own); and
the main block's parts (ir/main_parts.py: the runs of statements between graph input, each
a kernel, the graph's scalars its arguments); the others keep their reason for
``--profile``. On ``auto`` a call runs compiled when its tables are on the device; otherwise
it runs interpreted.
"""
from __future__ import annotations

from ..ir.main_parts import MainPart, fills_from_graph, has_loop, loops_over_rows
from ..targets.cuda.routine import render, routine_calls
from .estimate import DEVICE_PRICES, estimator
from ..targets.common import Unsupported


def gpu_available(backend) -> str | None:
    """None when the GPU tier can run on this backend, else why not."""
    cpu = f"the {backend.name} backend keeps tables where the CPU tier does not run"
    if not (backend.gpu or backend.mixed):
        return f"{cpu}, nor the GPU tier"
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            return f"{cpu}, and there is no CUDA device for the GPU tier"
    except Exception as e:  # noqa: BLE001 - no CuPy or no driver: interpreted
        return f"{cpu}, and the GPU tier needs CuPy and a CUDA device ({type(e).__name__})"
    if not backend.gpu:
        return f"{cpu}, and its device is emulated (no GPU): the GPU tier does not run there"
    return None


def install_gpu(tier, candidates: dict, main, recursive, parts: dict | None = None, ranks: bool = False):
    """Put a GpuRoutine in the machine's namespace for each routine the GPU tier takes, and
    for each part of the main block (``parts``: the functions main_ calls, ir/main_parts.py)
    (``recursive``, tier.py's cycles of calls, is not needed since the GPU tier compiles them;
    the argument stays as tier.py and auto_tier.py pass it). ``ranks``: on CuPy ranks of the
    distributed backend (mpi_tier.py), each a RankGpuRoutine (cuda_ranks.py) of a kernel for
    the rank's rows."""
    from .cuda_runtime import GpuRoutine
    routine_class = GpuRoutine
    if ranks:
        from .cuda_ranks import RankGpuRoutine as routine_class
    why_not = gpu_available(tier.context.backend)
    if why_not is not None:
        for info, _ in candidates.values():
            tier.skipped[info.display if info else "main block"] = why_not
        return main
    parts = {p: (MainPart(p, body.loc), body) for p, body in (parts or {}).items()}
    if parts:
        candidates = {p: c for p, c in candidates.items() if c[0] is not None}
        if not any(tier.mode == "on" or has_loop(body) for _i, body in parts.values()):
            tier.skipped["main block"] = "it has no loop: it runs interpreted (its routines compile)"
        candidates.update(parts)
    bodies = {**tier.bodies, **candidates}
    plans, why = {}, {}
    row_natives = set() if tier.mode == "on" else {
        p for p, (info, body) in bodies.items()
        if info is not None and not getattr(info, "part", False) and tier._native(info) and loops_over_rows(body)}
    for pyname, (info, body) in candidates.items():
        if info is not None and tier._native(info):
            why[pyname] = "a native kernel replaces it on this backend"
            continue
        if info is not None and tier.mode != "on" and not has_loop(body):
            continue
        moved = sorted(row_natives & set(_closure_bodies(pyname, bodies, strict=False))) if row_natives else []
        if moved:
            # the native kernel moves every row in a few launches; its Star body, compiled into
            # the kernel, moves them one at a time (a grid barrier each): BORUVKA at R-MAT scale 18
            # took more than 250 s so, against 6 s interpreted around the natives
            why[pyname] = (f"calls {', '.join(bodies[p][0].display for p in moved)}, whose native kernel moves "
                           "rows in a few launches, where compiled into a kernel it would move them one at a time "
                           "(--jit on compiles it)")
            continue
        plan = gpu_plan(pyname, bodies, ranks)
        if isinstance(plan, str):
            why[pyname] = plan
        else:
            plans[pyname] = plan
    for pyname, reason in why.items():
        info = bodies[pyname][0]
        tier.skipped[info.display if info else "main block"] = reason
    for pyname, plan in plans.items():
        info, body = candidates[pyname]
        if pyname not in parts:
            tier.skipped.pop(info.display, None)
        interpreted = tier.context.ns[pyname]
        routine = routine_class(tier, pyname, info.display, interpreted, plan,
                                estimator(info, body, tier, DEVICE_PRICES))
        tier.routines[pyname] = routine
        tier.context.ns[pyname] = routine
    return main


def gpu_plan(pyname: str, bodies: dict, ranks: bool = False):
    """The kernel plan of one routine (with its callees: a native's Star body among them), or
    the reason the GPU tier leaves it interpreted (``--profile``; tests/jit/test_gpu_census.py
    holds the census of the library and the programs). ``ranks``: for MPI ranks (ranks.py)."""
    info, body = bodies[pyname]
    if info is None:
        return "the main block runs in parts on the GPU backends (ir/main_parts.py)"
    if fills_from_graph(body):
        return "fills tables from the graph input (GRAPH_ADJ, GRAPH_EDGES: the host does that)"
    try:
        return render(_closure_bodies(pyname, bodies), pyname, ranks)
    except Unsupported as e:
        return f"uses what the GPU tier does not compile: {e}"
    except (KeyError, AttributeError) as e:
        return f"uses what the GPU tier does not compile: {type(e).__name__} {e}"


def _closure_bodies(root: str, bodies: dict, strict: bool = True) -> dict:
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        if p in out:
            continue
        if p not in bodies:
            if not strict:
                continue
            raise Unsupported(f"calls '{p}', which is not compiled")
        out[p] = bodies[p]
        todo.extend(c.pyname for c in routine_calls(*bodies[p]))
    return out
