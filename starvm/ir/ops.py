"""The IR of Star: one opcode enum, one node dataclass.

A program lowers to a tree of ``Node``s. Statements and expressions are both nodes;
``src`` holds the operands, ``arg`` the static detail (a Symbol, a routine, an operator),
``type`` the static type, ``loc`` the Star source position the node came from.

The base operations of spec §3 (``BASE_OPS``) are the machine's steps: each one is one
primitive of the backend protocol (``starvm/backends/base.py``), runs through one function
of ``starvm/runtime/ops.py`` and is counted by kind (spec §6).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import Any

from ..errors import Loc
from ..types import T


class Op(Enum):
    # ---- base operations of the STAR-machine (spec §3): counted steps ----
    SET = auto()        # src: (VAR,)                 all bits 1
    CLR = auto()        # src: (VAR,)                 all bits 0
    BIT_GET = auto()    # src: (vec, i)               Y(i)
    BIT_SET = auto()    # src: (VAR, i, b)            Y(i) := b
    FND = auto()        # src: (vec,)
    STEP = auto()       # src: (VAR,)
    NUMB = auto()       # src: (vec,)
    CONVERT = auto()    # src: (vec,)
    FRST = auto()       # src: (vec,)
    SOME = auto()       # src: (vec,)
    AND = auto()        # src: (vec, vec)
    OR = auto()
    XOR = auto()
    NOT = auto()        # src: (vec,)
    TRIM = auto()       # src: (i, j, w)
    REP = auto()        # src: (i, j, v, VAR w)
    EQ = auto()         # src: (v, w)     also = on two slices
    NOTEQ = auto()      #                 also <> on two slices
    LESS = auto()
    LESSEQ = auto()
    GREAT = auto()
    GREATEQ = auto()
    ADD = auto()        # src: (v, w)
    SUBT = auto()
    COL_GET = auto()    # src: (i, TABLE)
    COL_SET = auto()    # src: (i, TABLE, slice)
    ROW_GET = auto()    # src: (i, TABLE)
    ROW_SET = auto()    # src: (i, TABLE, word)

    # ---- values ----
    CONST = auto()      # arg: int | bool | str
    BITS = auto()       # arg: '0'/'1' string, bit 1 first
    VAR = auto()        # arg: Symbol                 read a variable
    COPY = auto()       # src: (vec,)                 a vector variable's value, unshared
    BINARY = auto()     # arg: operator; src: (a, b)  scalar arithmetic / comparison / logic
    UNARY = auto()      # arg: 'neg' | 'not'
    LEN = auto()        # src: (vec,)
    NROWS = auto()      # src: (TABLE,)
    NCOLS = auto()      # src: (TABLE,)
    CALL = auto()       # arg: (RoutineInfo, out-targets); src: arguments

    # ---- statements ----
    ASSIGN = auto()     # arg: Symbol; src: (value,)
    WRITE = auto()      # arg: newline?; src: values
    BLOCK = auto()      # src: statements
    IF = auto()         # src: (cond, then BLOCK, else BLOCK)
    WHILE = auto()      # src: (cond, body BLOCK)
    REPEAT = auto()     # src: (body BLOCK, cond)
    FOR = auto()        # arg: (Symbol, downto); src: (start, stop, body BLOCK)
    PFOR = auto()       # arg: (Symbol, downto, ForallInfo, snapshot symbols); src: (start, stop, body)
    ERROR = auto()      # arg: the message                stop with a Star runtime error

    # ---- graph input (starvm/graphs/star.py): not a machine step ----
    GRAPH = auto()      # arg: 'n' | 'm' | 'vbits' | 'wbits' | 'adj' | 'edges'; src: the tables filled


BASE_OPS: tuple[Op, ...] = tuple(op for op in Op if op.value <= Op.ROW_SET.value)

# Where a base operation's count lives in every step-counter array (Machine.counts, the
# compiled tiers' cnt arrays, the CUDA kernels' counters): its position in BASE_OPS.
STEP_INDEX: dict[Op, int] = {op: i for i, op in enumerate(BASE_OPS)}


class GroupOp:
    """Named sets of opcodes, as tinygrad's ``GroupOp``: every consumer (renderers, tiers,
    cost models, the checker of fused loops) imports these and re-declares none
    (tests/unit/test_op_groups.py fails on an op set listed anywhere else)."""
    Base = frozenset(BASE_OPS)
    # vector logic: a result word is a bitwise function of the operand words
    BinaryLogic = frozenset({Op.AND, Op.OR, Op.XOR})
    Logic = BinaryLogic | {Op.NOT}
    # compare two words (or slices, for EQ / NOTEQ) and give a bool
    Compare = frozenset({Op.EQ, Op.NOTEQ, Op.LESS, Op.LESSEQ, Op.GREAT, Op.GREATEQ})
    Arith = frozenset({Op.ADD, Op.SUBT})
    # two operands of one length: "length mismatch in ..." when they differ
    SameLength = BinaryLogic | Compare | Arith
    # reductions of a vector that host control flow reads as a scalar
    Search = frozenset({Op.FND, Op.STEP, Op.NUMB, Op.SOME, Op.FRST, Op.CONVERT})
    # a vector reduced to a scalar (on a device: a reduction over the threads holding its words)
    Reduction = frozenset({Op.FND, Op.STEP, Op.NUMB, Op.SOME})
    # what a renderer for a device must bring back to the host to branch on
    HostReading = frozenset({Op.FND, Op.STEP, Op.NUMB, Op.SOME, Op.CONVERT, Op.BIT_GET})
    # operations whose operand may be a slice or a word (costs/operands.py prices them by it)
    SliceOrWord = Logic | {Op.SET, Op.CLR, Op.FND, Op.STEP, Op.NUMB, Op.FRST, Op.SOME}
    Word = frozenset({Op.TRIM, Op.REP}) | Compare | Arith
    TableRead = frozenset({Op.COL_GET, Op.ROW_GET})
    TableWrite = frozenset({Op.COL_SET, Op.ROW_SET})
    Table = TableRead | TableWrite
    Row = frozenset({Op.ROW_GET, Op.ROW_SET})
    # = and <> also compare two slices (the other comparisons take words)
    SliceCompare = frozenset({Op.EQ, Op.NOTEQ})
    # a table's dimensions: sizes known when it is made, never past 64 bits
    Sizes = frozenset({Op.NROWS, Op.NCOLS})
    # slice expressions a renderer computes word by word, each word from its operands' words
    WordWise = Logic | {Op.VAR, Op.COPY, Op.COL_GET}
    # base operations that change their first operand (a variable or a table) in place
    InPlace = frozenset({Op.SET, Op.CLR, Op.BIT_SET, Op.REP, Op.COL_SET, Op.ROW_SET, Op.STEP})
    # values written in the text: nothing to compute
    Literals = frozenset({Op.CONST, Op.BITS})
    # statements whose sources are expressions (an if's: its condition; a loop's body is a
    # BLOCK): what a renderer may compute one operation per line first (targets/numba/lower.py)
    WithExpressions = frozenset({Op.ASSIGN, Op.WRITE, Op.IF, Op.WHILE, Op.REPEAT, Op.CALL}) | InPlace
    Values = frozenset({Op.CONST, Op.BITS, Op.VAR, Op.COPY, Op.BINARY, Op.UNARY, Op.LEN,
                        Op.NROWS, Op.NCOLS, Op.CALL})
    # loops with a loop variable (arg[0]) and bounds (src[0], src[1]); loops on a condition
    ForLoops = frozenset({Op.FOR, Op.PFOR})
    CondLoops = frozenset({Op.WHILE, Op.REPEAT})
    Loops = ForLoops | CondLoops
    Compound = Loops | {Op.IF}
    Control = Compound | {Op.BLOCK, Op.ERROR}
    Statements = Control | {Op.ASSIGN, Op.WRITE, Op.GRAPH}
    # what a fused `parallel for` (all iterations at once) evaluates, and which of those may
    # stand as statements of its body
    Fusable = frozenset({
        Op.CONST, Op.VAR, Op.BINARY, Op.UNARY, Op.BLOCK, Op.IF, Op.FOR, Op.ASSIGN, Op.COPY,
        Op.COL_GET, Op.COL_SET, Op.BIT_GET, Op.BIT_SET, Op.AND, Op.OR, Op.XOR, Op.NOT,
        Op.SOME, Op.NUMB, Op.EQ, Op.NOTEQ, Op.LEN, Op.NROWS, Op.NCOLS, Op.BITS})
    FusableStatements = frozenset({Op.BLOCK, Op.IF, Op.FOR, Op.ASSIGN, Op.COL_SET, Op.BIT_SET})


# The operator of a bitwise logic op, the same in Python, NumPy and C.
LOGIC_SYMBOL: dict[Op, str] = {Op.AND: "&", Op.OR: "|", Op.XOR: "^"}
# A comparison as a test of a three-way compare result c (c < 0, c == 0, c > 0).
COMPARE_TEST: dict[Op, str] = {Op.EQ: "== 0", Op.NOTEQ: "!= 0", Op.LESS: "< 0", Op.LESSEQ: "<= 0",
                               Op.GREAT: "> 0", Op.GREATEQ: ">= 0"}

# The one vocabulary of step kinds readers see: `star run --profile`, the REPL's :stats and
# :profile on, the debugger and the docs' cost formulas (docs/language.md lists it). The paper's
# Table 1 writes get_row / set_row. Machine.stats keeps the Op names as its keys (COL_GET ...).
OP_TITLES: dict[Op, str] = {
    Op.SET: "SET", Op.CLR: "CLR", Op.BIT_GET: "bit read", Op.BIT_SET: "bit write",
    Op.FND: "FND", Op.STEP: "STEP", Op.NUMB: "NUMB", Op.CONVERT: "CONVERT", Op.FRST: "FRST",
    Op.SOME: "SOME", Op.AND: "and", Op.OR: "or", Op.XOR: "xor", Op.NOT: "not", Op.TRIM: "TRIM",
    Op.REP: "REP", Op.EQ: "EQ", Op.NOTEQ: "NOTEQ", Op.LESS: "LESS", Op.LESSEQ: "LESSEQ",
    Op.GREAT: "GREAT", Op.GREATEQ: "GREATEQ", Op.ADD: "ADD", Op.SUBT: "SUBT",
    Op.COL_GET: "COL read", Op.COL_SET: "COL write", Op.ROW_GET: "ROW read (get_row)",
    Op.ROW_SET: "ROW write (set_row)",
}


@dataclass(eq=False, slots=True)
class Node:
    op: Op
    src: tuple[Node, ...] = ()
    arg: Any = None
    type: T | None = None
    loc: Loc | None = None

    def __repr__(self) -> str:
        inner = ", ".join(repr(s) for s in self.src)
        arg = "" if self.arg is None else f" {self.arg!r}"
        return f"{self.op.name}{arg}({inner})"
