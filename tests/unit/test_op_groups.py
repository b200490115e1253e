"""ir/ops.py owns the vocabulary of opcodes: every named set of opcodes (GroupOp), the
step-index map (STEP_INDEX) and the shared op maps (LOGIC_SYMBOL, COMPARE_TEST, OP_TITLES)
are declared there once, and no other module lists a set of opcodes of its own."""
from __future__ import annotations

import ast
from pathlib import Path

from starvm.ir.ops import BASE_OPS, COMPARE_TEST, LOGIC_SYMBOL, OP_TITLES, STEP_INDEX, GroupOp, Op

ROOT = Path(__file__).resolve().parents[2] / "starvm"
OWNER = ROOT / "ir" / "ops.py"
SHARED_MAPS = {"LOGIC_SYMBOL": LOGIC_SYMBOL, "COMPARE_TEST": COMPARE_TEST, "OP_TITLES": OP_TITLES}


def _op_name(node: ast.AST) -> str | None:
    """'AND' for an expression `Op.AND`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Op":
        return node.attr
    return None


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            ops = [_op_name(e) for e in node.elts]
            if sum(o is not None for o in ops) >= 2:
                found.append(f"{where}: a set of opcodes {sorted(o for o in ops if o)}; use a GroupOp")
        elif isinstance(node, ast.Dict):
            keys = [_op_name(k) for k in node.keys if k is not None]
            if sum(k is not None for k in keys) < 2:
                continue
            values = [v.value if isinstance(v, ast.Constant) else None for v in node.values]
            pairs = {Op[k]: v for k, v in zip(keys, values) if k}
            for name, shared in SHARED_MAPS.items():
                if all(shared.get(op) == v for op, v in pairs.items()):
                    found.append(f"{where}: re-declares part of {name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "enumerate":
            if node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "BASE_OPS":
                found.append(f"{where}: enumerate(BASE_OPS) re-declares STEP_INDEX")
    return found


def test_no_module_but_ir_ops_lists_a_set_of_opcodes():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path != OWNER:
            found += _violations(path)
    assert not found, "\n".join(found)


def test_the_checker_catches_what_it_is_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from starvm.ir.ops import Op, BASE_OPS\n"
                   "A = op in (Op.AND, Op.OR)\n"
                   "B = {Op.AND: '&', Op.OR: '|'}\n"
                   "C = {op: i for i, op in enumerate(BASE_OPS)}\n"
                   "D = {Op.COL_GET: 'op_col_get_asg', Op.AND: 'op_and_asg'}\n")
    global ROOT
    old, ROOT = ROOT, tmp_path
    try:
        found = _violations(bad)
    finally:
        ROOT = old
    assert len(found) == 3, found     # a renderer's own op -> template table (D) is allowed


def test_groups_are_consistent():
    assert GroupOp.Base == set(BASE_OPS)
    assert STEP_INDEX == {op: i for i, op in enumerate(BASE_OPS)}  # noqa: the one allowed place
    assert GroupOp.Logic | GroupOp.Compare | GroupOp.Arith | GroupOp.Search | GroupOp.Table \
        | {Op.SET, Op.CLR, Op.BIT_GET, Op.BIT_SET, Op.TRIM, Op.REP} == GroupOp.Base
    assert GroupOp.InPlace <= GroupOp.Base and GroupOp.HostReading <= GroupOp.Base
    assert GroupOp.FusableStatements <= GroupOp.Fusable
    assert set(LOGIC_SYMBOL) == GroupOp.BinaryLogic and set(COMPARE_TEST) == GroupOp.Compare
    assert set(OP_TITLES) == GroupOp.Base
