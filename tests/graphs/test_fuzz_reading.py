"""Graph-input fuzzing in CI (issue 37): a few hundred mutated graph files of every format and
weight mode (huge numbers, boundary weights 2^63-1 .. 2^64, -2^63, 1e300, nan, inf, byte
order marks, empty, truncated files, bogus headers and .npy headers), edge lists also read
by 3 ranks. Only a graph or one clear error is acceptable; the vectorised and the line
reader must agree, the ranks with one process. The long run is bench/fuzz_graph_input.py."""
from __future__ import annotations

import random

import pytest


from bench.fuzz_graph_input import classify, inputs


@pytest.mark.parametrize("seed", range(3))
def test_graph_inputs_load_or_fail_clearly(seed, tmp_path):
    outcomes = {}
    for i, (fmt, data, mode) in enumerate(inputs(random.Random(1000 + seed), 120)):
        outcome, detail = classify(fmt, data, mode, tmp_path, run_program=i % 4 == 0, ranks=3 if i % 3 == 0 else 0)
        assert outcome in ("ok", "clear_error"), f"input {i} ({fmt}, --weights {mode}): {outcome}: {detail}\n{data!r}"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes.get("ok", 0) >= 10 and outcomes.get("clear_error", 0) >= 10     # both kinds are exercised
