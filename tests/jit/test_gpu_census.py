"""The GPU tier's census (issue 31 item 1): which routines of the library (stdlib/*.star) and of
the shipped programs (programs/*.star) the GPU tier compiles into one kernel, decided as
``cuda_tier.install_gpu`` decides (``gpu_plan``: the renderer, the main block, graph input),
with no GPU. A native kernel's routine is counted by its Star body: compiled callers run that body
in their kernel, interpreted callers keep the native. REFUSED lists the routines still left
interpreted, with the start of their reason; it shrinks as the tier learns, and
docs/architecture.md gives the same table.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from gpu_sources.corpus import routine_bodies
from starvm.jit.cuda_tier import gpu_plan
from starvm.targets.cuda.routine import KernelPlan

ROOT = Path(__file__).resolve().parents[2]

# routine -> the start of the reason it is left interpreted (none since the pool and recursion)
REFUSED: dict[str, str] = {}


@lru_cache(maxsize=None)
def census() -> tuple:
    """(file:routine, KernelPlan or the reason) for every routine defined in stdlib/*.star
    and programs/*.star."""
    out = []
    files = sorted((ROOT / "stdlib").glob("*.star")) + sorted((ROOT / "programs").glob("*.star"))
    for path in files:
        name = str(path.relative_to(ROOT))
        text = path.read_text()
        if "proc" not in text.lower() and "function" not in text.lower():
            continue        # a main block only (the GPU tier leaves main blocks interpreted)
        bodies = routine_bodies(text, name)
        for pyname, (info, _body) in sorted(bodies.items()):
            if info is None or not (info.node.loc and info.node.loc.filename == name):
                continue
            out.append((f"{name}:{info.display}", gpu_plan(pyname, bodies)))
    return tuple(out)


def test_the_gpu_tier_compiles_every_routine_but_those_listed():
    refused = {where: plan for where, plan in census() if isinstance(plan, str)}
    assert sorted(refused) == sorted(REFUSED), "the census changed: update REFUSED and docs/architecture.md"
    for where, why in refused.items():
        assert why.startswith(REFUSED[where]), (where, why)
    accepted = [where for where, plan in census() if isinstance(plan, KernelPlan)]
    # the library's 44 routines and the 3 programs that define their own
    assert len(accepted) + len(refused) == 47
    assert "stdlib/rows.star:GROUPMIN" in accepted      # its ERROR statement compiles
    assert "stdlib/graphs.star:DIJKSTRA" in accepted    # its local table comes from the pool
    assert "stdlib/graphs.star:BORUVKA" in accepted     # its callees recurse


def test_recursive_routines_are_device_functions_of_their_own():
    plans = dict(census())
    rounds = plans["stdlib/graphs.star:BORUVKA_ROUNDS"]
    assert rounds.recursive and rounds.pool
    assert "__noinline__ void f_r_boruvka_rounds(" in rounds.source
    assert not plans["stdlib/search.star:MIN"].recursive and not plans["stdlib/search.star:MIN"].pool
    assert "__noinline__" not in plans["stdlib/search.star:MIN"].source
