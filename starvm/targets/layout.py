"""Shared numbering between generated code, the kernels and the host: the status array's
slots, the step counter's indices and the error codes."""
from __future__ import annotations

from ..ir.ops import STEP_INDEX

# the int64 status array `st` of one compiled call
S_NODE, S_CODE, S_A, S_B, S_C, S_D = 0, 1, 2, 3, 4, 5   # the failure: site, code, operands
S_LEFT = 6      # steps left before the step limit (loop iterations and routine calls)
S_FREE = 7      # free memory in bytes (a local table larger than it is refused)
S_SP = 8        # depth of the Star call stack inside compiled code
S_OUT = 9       # int64 words of output records written so far (kernels.out_*)
S_PFOR = 10     # `parallel for` loops in progress (a failure inside one: the call runs again interpreted)
S_ROOM = 11     # bytes of machine stack compiled calls may take (kernels.enter; call.run sets it)
S_LOW = 12      # the lowest stack address they may reach (set by the first kernels.enter)
S_INTR = 13     # nonzero: stop (Ctrl-C); set by the host (interrupts.py), read at kernels.poll
S_DONE = 14     # words of output records up to the end of the last finished write call
S_HOST = 15     # the address of the host's output flush (call.OutputSink), 0: none
S_STACK = 16    # the call sites of that stack
STATUS_SIZE = S_STACK + 256

# step counter indices: C_<OP> = ir/ops.STEP_INDEX[Op.<OP>] for every base operation (C_SET,
# C_COL_GET, ...), module-level ints because Numba freezes a kernel's globals as constants
globals().update({f"C_{op.name}": index for op, index in STEP_INDEX.items()})


class E:
    """Error codes written to st[S_CODE]; errors.py turns each into the interpreter's message."""
    UNASSIGNED = 1     # a: the value's length (-1 - index into the module's names)
    BIT_INDEX = 2      # a: i, b: n
    BIT_VALUE = 3      # a: b
    MISMATCH = 4       # a, b: the two lengths
    TRIM = 5           # i, j, n
    REP_RANGE = 6      # i, j, n
    REP_LEN = 7        # i, j, len(v)
    COL_INDEX = 8      # i, k
    COL_SET_LEN = 9    # i, len(v), n
    ROW_INDEX = 10     # i, n
    ROW_SET_LEN = 11   # i, len(w), k
    ASG_LEN = 12       # old, new
    CHECK_LEN = 13     # expected, got
    TABLE_NEG = 14     # n, k
    TABLE_MEM = 15     # n, k, bytes needed, bytes free
    TABLE_ASSIGN = 16  # src n, src k, dst n, dst k
    DIV0 = 17
    MOD0 = 18
    STEPS = 19


# the same codes as plain module constants (compiled code cannot read class attributes)
E_UNASSIGNED, E_BIT_INDEX, E_BIT_VALUE, E_MISMATCH = E.UNASSIGNED, E.BIT_INDEX, E.BIT_VALUE, E.MISMATCH
E_TRIM, E_REP_RANGE, E_REP_LEN, E_COL_INDEX = E.TRIM, E.REP_RANGE, E.REP_LEN, E.COL_INDEX
E_COL_SET_LEN, E_ROW_INDEX, E_ROW_SET_LEN, E_ASG_LEN = E.COL_SET_LEN, E.ROW_INDEX, E.ROW_SET_LEN, E.ASG_LEN
E_CHECK_LEN, E_TABLE_NEG, E_TABLE_MEM, E_TABLE_ASSIGN = E.CHECK_LEN, E.TABLE_NEG, E.TABLE_MEM, E.TABLE_ASSIGN
E_DIV0, E_MOD0, E_STEPS = E.DIV0, E.MOD0, E.STEPS
E_OVERFLOW = 20    # a, b: the operands, c: 0 + / 1 - / 2 * / 3 div
E.OVERFLOW = E_OVERFLOW
E_DEPTH = 21       # more nested calls than the status array has room for (Machine.max_depth)
E.DEPTH = E_DEPTH
E_USER = 22        # the ERROR statement; a: its message's index in the module's strings
E.USER = E_USER
E_STACK = 23       # the machine stack's room (S_ROOM) is used up; a: Star calls deep, b: bytes they took
E.STACK = E_STACK
# failures that are no error of the program: the host runs the call again, interpreted (or
# compiled on a larger stack), from the state saved at its entry (call.JitRoutine.run)
RESTART_CODES = (E_OVERFLOW, E_STACK)
E_INTERRUPT = 30   # Ctrl-C (kernels.poll): the interpreter's "interrupted" at the loop or call
E.INTERRUPT = E_INTERRUPT
E_HOST = 31        # the host's output flush raised (call.OutputSink keeps the exception)
E.HOST = E_HOST
E_REQUEST = 32     # not a failure: while the host does a request of compiled code (kernels.host_request)
E.REQUEST = E_REQUEST
