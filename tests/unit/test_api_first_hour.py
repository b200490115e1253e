"""The Python API's messages as a first hour meets them (issue 37): Machine.table given 1-D
numbers points at table_from_ints; Machine.call of an unknown routine names it as written."""
from __future__ import annotations

import numpy as np
import pytest

import starvm


@pytest.mark.parametrize("data", [[3, 5, 7], np.arange(4), np.array([1, 0, 1], dtype=np.uint8)])
def test_table_of_1d_numbers_points_at_table_from_ints(backend, data):
    m = starvm.Machine(backend=backend)
    with pytest.raises(ValueError) as e:
        m.table(data)
    assert str(e.value) == ("a table needs a 2-D array, got 1-D; for numbers, one per row, "
                            "use Machine.table_from_ints(values, width)")
    t = m.table_from_ints(np.asarray(data), 3)            # what the hint says works
    assert t.to_ints().tolist() == list(np.asarray(data))


def test_table_of_1d_bools_points_at_slice(backend):
    m = starvm.Machine(backend=backend)
    bits = np.array([True, False, True])
    with pytest.raises(ValueError, match=r"for a slice use Machine.slice\(bits\), for a one-column table "
                                         r"table\(bits\[:, None\]\)"):
        m.table(bits)
    assert m.table(bits[:, None]).shape == (3, 1) and m.slice(bits).to_numpy().tolist() == bits.tolist()


def test_table_of_3d_has_no_hint():
    with pytest.raises(ValueError, match=r"^a table needs a 2-D array, got 3-D$"):
        starvm.Machine(backend="numpy").table(np.zeros((2, 2, 2), dtype=bool))


@pytest.mark.parametrize("name", ["NOPE", "Warshall-X", "my_Routine"])
def test_unknown_routine_is_named_as_written(name):
    m = starvm.Machine(backend="numpy")
    with pytest.raises(starvm.StarTypeError) as e:
        m.call(name)
    assert e.value.message == f"unknown routine '{name}'"


def test_known_routines_still_found_whatever_the_case():
    m = starvm.Machine(backend="numpy")
    m.load("function Twice(n: integer): integer; begin Twice := 2 * n end;")
    assert m.call("TWICE", 21) == 42 and m.call("twice", 1) == 2
    P = m.table(np.eye(3, dtype=bool))
    m.call("warshall-c", 3, P)                             # the library's WARSHALL-C, any case
