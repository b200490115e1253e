"""``Machine.globals``: a Star machine's global variables as a mutable mapping (moved here from
starvm/api.py so that the machine does not import the embedding API)."""
from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np

from ..frontend.parser import fold
from ..types import T
from ..execution.values import Bits, Table, Unassigned, host_array


class Globals(MutableMapping):
    """``machine.globals``: the global variables by name (case-insensitive; ``A-B`` = ``A_B``).

    Reading gives an ``int``, a ``bool``, a :class:`~starvm.BitVector` (slices and words; None
    before the first assignment) or the :class:`~starvm.Table` itself (shared, not copied).
    Writing checks the declared type: ints for ``integer``, bools for ``boolean``; a vector
    or 1-D bool array for ``slice``/``word`` (of the variable's length once it has one);
    a table or 2-D bool array of the declared shape for ``table``, whose bits are copied into
    the existing table (Star code that holds it sees the new bits). Unknown names raise
    ``KeyError``; wrong types ``TypeError``; wrong lengths or shapes ``ValueError``."""

    def __init__(self, machine):
        self._m = machine

    def _sym(self, name: str):
        sym = self._m.env.globals.get(fold(name)) if isinstance(name, str) else None
        if sym is None:
            raise KeyError(name)
        return sym

    def __getitem__(self, name: str):
        value = self._m.ns[self._sym(name).pyname]
        return None if isinstance(value, Unassigned) else self._m._to_python(value)

    def __setitem__(self, name: str, value) -> None:
        m, sym = self._m, self._sym(name)
        old = m.ns[sym.pyname]
        what = f"global '{sym.display}' ({sym.type})"
        if sym.type is T.INT:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{what} needs an int, got {type(value).__name__}")
            m.ns[sym.pyname] = int(value)
        elif sym.type is T.BOOL:
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{what} needs a bool, got {type(value).__name__}")
            m.ns[sym.pyname] = bool(value)
        elif sym.type.is_vector:
            if isinstance(value, Bits):
                if getattr(value, "backend", m.backend) is not m.backend:
                    raise TypeError(f"{what}: the vector lives on another machine's backend")
                new = Bits(value.v, value.n)
            else:
                arr = host_array(value)
                if arr.ndim != 1:
                    raise TypeError(f"{what} needs a vector or a 1-D bool array")
                new = m.slice(arr)
                new = Bits(new.v, new.n)
            want = old.n if isinstance(old, Bits) else _declared_length(m, sym)
            if want is not None and want >= 0 and new.n != want:
                raise ValueError(f"{what} has {want} bits, got {new.n}")
            m.ns[sym.pyname] = new
        elif sym.type is T.TABLE:
            if isinstance(value, Table):
                if not m.backend.owns(value):
                    raise TypeError(f"{what}: the table lives on the {value.backend.name} backend")
                src = value
            else:
                arr = host_array(value)
                if arr.ndim != 2:
                    raise TypeError(f"{what} needs a table or a 2-D bool array")
                src = m.table(arr)
            if src.shape != old.shape:
                raise ValueError(f"{what} is {old.n} x {old.k}, got {src.n} x {src.k}")
            if src is not old:
                m.backend.table_copy(old, src)
        else:   # pragma: no cover - no other global types exist
            raise TypeError(f"cannot assign {what}")

    def __delitem__(self, name: str) -> None:
        raise TypeError("a global variable cannot be deleted")

    def __iter__(self):
        return iter([s.display for s in self._m.env.globals.values()])

    def __len__(self) -> int:
        return len(self._m.env.globals)

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and fold(name) in self._m.env.globals

    def __repr__(self) -> str:
        return f"<globals of {self._m!r}: {', '.join(self)}>"


def _declared_length(machine, sym):
    """slice(T) / word(T): T's rows / columns, if T is a global table."""
    if sym.length_of is None:
        return None
    table = machine.ns.get(sym.length_of.pyname)
    if table is None or not hasattr(table, "shape"):
        return None
    return table.n if sym.type is T.SLICE else table.k
