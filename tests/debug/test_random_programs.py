"""Random valid Star programs (tests/reference/gen.py) under the debugger and the tracer, on
every backend: what they print and the steps they take equal the reference model's (the
statement hooks change nothing), back-then-step is exact at a random event, and the trace
holds one event per debugger event plus the final state."""
from __future__ import annotations

import io
import random

import pytest

from reference.gen import Gen, RandomSource, render
from reference.model import Interp
from starvm.debug import Debugger
from starvm.debug.trace import record
from starvm.ir.ops import BASE_OPS

SEEDS = range(6)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_under_debugger_and_tracer(backend, seed):
    prog = Gen(RandomSource(1000 + seed), 6).program()
    src = render(prog)
    model = Interp(prog)
    want = model.run()
    want_steps = {k: c for k, c in model.counts.items() if c}
    out = io.StringIO()
    with Debugger(src, "fuzz.star", backend=backend, out=out) as d:
        d.start()
        end = d.cont()
        assert end.reason == "finished", end.message
        assert out.getvalue() == want
        assert {op.name: c for op, c in zip(BASE_OPS, d.machine.counts) if c} == want_steps
        final = d.variables()
        if end.event > 2:
            e = random.Random(seed).randint(2, end.event - 1)
            before = d.run_to(e)
            state = d.variables()
            after = d.step()
            state2 = d.variables()
            d.back()
            assert (d.stop.event, d.stop.steps, d.variables()) == (before.event, before.steps, state)
            again = d.step()
            assert (again.event, again.steps, d.variables()) == (after.event, after.steps, state2)
    trace = record(src, "fuzz.star", backend=backend)
    assert trace["end"] == "finished" and len(trace["events"]) == end.event + 1
    assert "".join(t for _, t in trace["output"]) == want
    assert trace["steps"] == want_steps
    assert final  # the globals were read
