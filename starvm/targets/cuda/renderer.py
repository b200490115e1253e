"""The one CUDA renderer: what every CUDA kernel rendered from the IR shares.

Two kinds of kernel are rendered from the same IR, each a subclass of ``CudaRenderer``:

* ``routine.RoutineRenderer`` — the GPU tier: a routine and its callees as ONE cooperative
  kernel (slices spread over the grid, a `parallel for`'s iterations one per group of lanes);
* ``forall.ForallRenderer`` — the CuPy backend: a fusable `parallel for` as one kernel, one
  thread block per iteration.

The expression tables below map an op (or a ``GroupOp``) to the name of the method that
renders it; a subclass overrides the methods whose C differs (how a slice is held, how a
failure leaves the kernel, how a reduction crosses threads) and inherits the rest: scalar
constants, negation, and every scalar operator (logic, comparison, checked arithmetic,
div/mod) are rendered here once, by ``binary`` and ``unary``. An op missing from a table,
or whose method a subclass lacks, is ``Unsupported`` (the caller then runs it another way).

Hooks a subclass provides: ``tmp`` (a fresh C name), ``ctype`` (the C type of a Star type),
``site`` (a failure site number, "0" where none is reported), ``fail`` (the C statement
that leaves on a failure), ``new_scalar`` / ``init_scalar`` / ``decl_inline`` (where a
temporary's declaration goes: inline, or at the top of a kernel that jumps to its end).
"""
from __future__ import annotations

from ...ir.ops import GroupOp, Node, Op
from ..common import Unsupported, check_int64
from ...types import T

# Star's scalar operators that C writes as one operator (and/or on bools short-circuit,
# div/mod and + - * are checked: binary())
SCALAR_C = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "xor": "!="}
# + - * through the prelude's overflow-checked helpers (checked_int.cu); the last item is the
# operator's number in the E_OVERFLOW report (jit/errors.py)
CHECKED = {"+": ("add_ovf", "0"), "-": ("sub_ovf", "1"), "*": ("mul_ovf", "2")}
INT64_MIN = "(-9223372036854775807LL - 1)"     # -2^63 (the literal 9223372036854775808 has no type)


def rule(table: dict, op: Op):
    """The entry of ``table`` for ``op``: its own, else that of a GroupOp holding it."""
    if op in table:
        return table[op]
    for key, value in table.items():
        if isinstance(key, frozenset) and op in key:
            return value
    return None


class CudaRenderer:
    """The IR -> CUDA C renderer both kernels are: dispatch by table, shared scalar rules."""

    # an expression with a scalar value: op -> method
    SCALAR = {
        Op.CONST: "s_const", Op.VAR: "s_var", Op.BINARY: "binary", Op.UNARY: "unary",
        Op.LEN: "s_len", Op.NROWS: "s_nrows", Op.NCOLS: "s_ncols", Op.CALL: "s_call",
        Op.BIT_GET: "s_bit_get", GroupOp.Reduction: "s_reduce", GroupOp.Compare: "s_compare",
        Op.GRAPH: "s_graph",
    }
    # an expression with a slice or word value: op -> method
    VECTOR = {
        Op.VAR: "v_var", Op.COPY: "v_copy", Op.BITS: "v_bits", Op.CALL: "v_call",
        GroupOp.BinaryLogic: "v_logic", Op.NOT: "v_not", Op.COL_GET: "v_col_get",
        Op.ROW_GET: "v_row_get", Op.FRST: "v_frst", Op.CONVERT: "v_convert", Op.TRIM: "v_trim",
        GroupOp.Arith: "v_arith",
    }
    SCALAR_WHAT = "the expression"           # how Unsupported names an expression not rendered
    VECTOR_WHAT = "the vector expression"

    lines: list[str]
    ind: int
    restartable = False     # the kernel may stop on an integer past 64 bits (E_OVERFLOW)

    # ------------------------------------------------------------------ emission
    def emit(self, text: str) -> None:
        self.lines.append("    " * self.ind + text)

    def dispatch(self, table: dict, what: str, e: Node):
        name = rule(table, e.op)
        method = getattr(self, name, None) if name else None
        if method is None:
            raise Unsupported(f"{what} {e.op.name}", e.loc)
        return method(e)

    def scalar(self, e: Node) -> str:
        """Emit what a scalar needs; returns a C expression of it."""
        return self.dispatch(self.SCALAR, self.SCALAR_WHAT, e)

    def _vector(self, e: Node) -> str:
        """Emit a slice or word value; returns the C name that holds it."""
        return self.dispatch(self.VECTOR, self.VECTOR_WHAT, e)

    def val(self, e: Node) -> str:
        """A scalar evaluated once into a temporary (operands used several times)."""
        x = self.scalar(e)
        if x.isidentifier() or x.lstrip("-").rstrip("L").isdigit():
            return x
        t = self.new_scalar(self.ctype(e.type))
        self.init_scalar(self.ctype(e.type), t, x)
        return t

    # ------------------------------------------------------------------ hooks (the defaults: the GPU tier's)
    def new_scalar(self, ctype: str) -> str:
        return self.tmp("s")

    def init_scalar(self, ctype: str, name: str, expr: str) -> None:
        self.emit(f"{ctype} {name} = {expr};")

    def decl_inline(self, ctype: str, name: str) -> str:
        """The declaration written where a temporary assigned by a call is made ('' where
        new_scalar declared it already)."""
        return f"{ctype} {name}; "

    # ------------------------------------------------------------------ scalar rules both kernels share
    def s_const(self, e: Node) -> str:
        if isinstance(e.arg, bool):
            return "true" if e.arg else "false"
        if isinstance(e.arg, int):
            check_int64(e)
            return INT64_MIN if e.arg == -(1 << 63) else f"{e.arg}LL"
        raise Unsupported(f"the constant {e.arg!r}", e.loc)

    def unary(self, e: Node) -> str:
        a = self.val(e.src[0])
        if e.arg == "neg":
            sid = self.site(e.loc)
            self.restartable = True
            self.emit(f"if ({a} == {INT64_MIN}) {self.fail(sid, 'E_OVERFLOW', '0', a, '1')}")
            return f"(-{a})"
        return f"(!{a})"

    def binary(self, e: Node) -> str:
        o = e.arg
        if o in ("and", "or") and e.type is T.BOOL:
            out = self.new_scalar("bool")
            a = self.scalar(e.src[0])
            self.init_scalar("bool", out, a)
            self.emit(f"if ({'' if o == 'and' else '!'}{out}) {{")      # the right side only if needed
            self.ind += 1
            b = self.scalar(e.src[1])
            self.emit(f"{out} = {b};")
            self.ind -= 1
            self.emit("}")
            return out
        a, b = self.val(e.src[0]), self.val(e.src[1])
        if o in ("div", "mod"):
            sid = self.site(e.loc)
            self.emit(f"if ({b} == 0) {self.fail(sid, 'E_DIV0' if o == 'div' else 'E_MOD0')}")
            q = f"({a} / {b})"            # C truncates toward zero, as Star's div does
            if o == "div":                # the minimum div -1 is past 64 bits (and undefined in C)
                self.restartable = True
                self.emit(f"if ({b} == -1 && {a} == {INT64_MIN}) "
                          f"{self.fail(sid, 'E_OVERFLOW', a, b, '3')}")
                return q
            return f"({b} == -1 ? 0LL : ({a} - {q} * {b}))"
        if o in CHECKED:
            sid = self.site(e.loc)
            ctype = self.ctype(T.INT)
            r = self.new_scalar(ctype)
            fn, c = CHECKED[o]
            self.restartable = True
            self.emit(f"{self.decl_inline(ctype, r)}if ({fn}({a}, {b}, {r})) {self.fail(sid, 'E_OVERFLOW', a, b, c)}")
            return r
        return f"({a} {SCALAR_C[o]} {b})"
