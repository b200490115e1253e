"""`:show T as int`: a table's rows as bits and as unsigned numbers (column 1 most significant)."""
from __future__ import annotations

import io
import random

import pytest

from starvm.ui.repl import Session


@pytest.mark.parametrize("rows, width", [(1, 1), (5, 8), (7, 70), (0, 3)])
def test_show_as_int_prints_each_row_as_its_number(rows, width):
    rng = random.Random(rows * 100 + width)
    values = [rng.randrange(2 ** width) for _ in range(rows)]
    s = Session(backend="numpy", out=io.StringIO())
    assert s.feed(f"var T: table({rows}, {width}); i: integer;") == ""
    for i, v in enumerate(values, 1):
        bits = format(v, f"0{width}b")
        assert s.feed(f"ROW({i}, T) := BITS('{bits}')") == ""
    out = s.feed(":show T as int").splitlines()
    assert out[0] == f"T: table {rows} x {width}"
    body = [line for line in out if "|" in line]
    assert [int(line.rsplit("= ", 1)[1]) for line in body] == values
    for line, v in zip(body, values):     # the bits beside the number are the same row
        drawn = line.split("|", 1)[1].split()[0]
        assert drawn == format(v, f"0{width}b").replace("0", ".")[:128]
    assert "=" not in s.feed(":show T")   # plain :show is unchanged
    assert s.errors == 0
