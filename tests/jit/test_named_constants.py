"""Integer constants of generated code are module globals (targets/numba/lower.py
named_constants): Numba types a global np.int64 as a constant of type int64, where an
``np.int64(k)`` call in a function is typed and lowered at each use (20-30 % of a compile of
integer and table statements). Nothing here compiles: the differential tests run the code."""
from __future__ import annotations

import ast
import re

from starvm.targets.numba.lower import ModuleGen, named_constants
from test_outline import bodies_of, long_routine

ROUTINE = """
proc R(n: integer; var P: table);
var a, b: integer; V: slice;
begin
  a := -9223372036854775807 - 1; b := n - 5;
  V := COL(1, P);
  if b < -3 then writeln('low ', a) else writeln(b, ' ', NUMB(V));
  error('no')
end;
"""


def test_constants_are_named_once_at_the_top_of_the_module():
    text = "import numpy as np\n\n@njit\ndef f(st):\n    x = g(np.int64(3), np.int64(-7), np.int64(3))\n    return (np.int64(x[0].shape[0]), )\n"
    out = named_constants(text)
    assert out == ("import numpy as np\n_In7 = np.int64(-7)\n_I3 = np.int64(3)\n\n@njit\ndef f(st):\n"
                   "    x = g(_I3, _In7, _I3)\n    return (np.int64(x[0].shape[0]), )\n")
    assert named_constants("def f():\n    return 1\n") == "def f():\n    return 1\n"


def test_a_rendered_module_calls_np_int64_only_on_values():
    source = ModuleGen(bodies_of(ROUTINE + long_routine("LONG", 30))).render(["r_r", "r_long"]).source
    tree = ast.parse(source)
    defs = {n.targets[0].id: n.value for n in tree.body if isinstance(n, ast.Assign)}
    named = {k: v for k, v in defs.items() if re.fullmatch(r"_In?\d+", k)}
    assert len(named) > 20
    # a negated constant is the negative constant (it fits 64 bits: no overflow check to call)
    assert {"_In3", "_In9223372036854775807"} <= set(named) and "ck_neg" not in source
    for name, value in named.items():     # each _I<k> / _In<k> holds np.int64(k) / np.int64(-k)
        k = -int(name[3:]) if name.startswith("_In") else int(name[2:])
        assert ast.unparse(value) == f"np.int64({k})"
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call) and ast.unparse(c.func) == "np.int64"):
            assert not isinstance(call.args[0], ast.Constant), ast.unparse(call)
            assert not (isinstance(call.args[0], ast.UnaryOp) and isinstance(call.args[0].operand, ast.Constant))
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        assert used & set(named)
