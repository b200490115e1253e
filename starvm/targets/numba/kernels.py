"""The base operations of spec §3 as small Numba functions over packed bit columns.

Generated code (``lower.py``) calls these. Conventions, shared by every function here:

* a vector (slice or word) is a tuple ``(words, n)``: a 1-D C-contiguous uint64 array of
  ⌈n/64⌉ words, bit i of the vector = bit (i-1) % 64 of word (i-1) // 64 (as the NumPy
  backend packs columns), bits past n are 0; ``n < 0`` is an unassigned variable, and
  ``-1 - n`` indexes the module's table of variable names (for the error message);
* a table is a tuple ``(data, n)``: data is the backend's k × ⌈n/64⌉ uint64 array itself
  (written in place), n its number of rows;
* ``cnt`` is the int64 step counter indexed like ``ir/ops.STEP_INDEX``; ``st`` the int64
  status array (``targets/layout.py``); ``nid`` the error site of the calling node.

Every check runs in the order ``runtime/ops.py`` runs it and the step is counted at the
same point, so counts agree with the interpreter even when an operation fails. A failure
writes its code and operands into ``st`` and raises ``JitFault``; the host builds the
interpreter's message from them (``errors.py``).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic
from llvmlite import ir
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.experimental import structref

from ..layout import (E_ASG_LEN, E_BIT_INDEX, E_BIT_VALUE, E_CHECK_LEN, E_COL_INDEX, E_COL_SET_LEN,
                     E_DEPTH, E_DIV0, E_MISMATCH, E_MOD0, E_OVERFLOW, E_REP_LEN, E_REP_RANGE, E_ROW_INDEX, E_ROW_SET_LEN, E_STACK, E_STEPS,
                     E_TABLE_ASSIGN, E_TABLE_MEM, E_TABLE_NEG, E_TRIM, E_UNASSIGNED, E_USER,
                     C_ADD, C_AND, C_BIT_GET, C_BIT_SET, C_CLR, C_COL_GET, C_COL_SET, C_CONVERT, C_EQ, C_FND,
                     C_FRST, C_GREAT, C_GREATEQ, C_LESS, C_LESSEQ, C_NOT, C_NOTEQ, C_NUMB, C_OR, C_REP,
                     C_ROW_GET, C_ROW_SET, C_SET, C_SOME, C_STEP, C_SUBT, C_TRIM, C_XOR, S_A, S_B, S_C,
                     S_CODE, S_D, S_FREE, S_LEFT, S_LOW, S_NODE, S_OUT, S_PFOR, S_ROOM, S_SP, S_STACK)

from ..layout import E_HOST, E_INTERRUPT, E_REQUEST, S_DONE, S_HOST, S_INTR  # interrupts, output, host requests


class _WithoutBlasProbe(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Numba imports numba.np.arraymath at its first compile (or its own cache load) in a
    process; its import-time BLAS probe imports scipy.linalg (0.4 s, a third of the first
    compiled call) only to pick the inner product of np.convolve/np.correlate (a plain loop
    without it). This finder runs that import with the probe's import refused. np.dot and the
    rest of Numba's linear algebra check for BLAS when they are compiled, so they import SciPy
    then as before. It waits for the import instead of importing arraymath here: a routine
    loaded from the cache (cache.load_overload) never imports it."""

    NAME = "numba.np.arraymath"

    def find_spec(self, name, path, target=None):
        if name != self.NAME:
            return None
        sys.meta_path.remove(self)           # once; the finders after it find the module
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or "scipy.linalg" in sys.modules:
            return spec                      # with SciPy's BLAS already imported the probe costs nothing
        self.inner = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self.inner     # as if imported without this finder
        blocked = "scipy.linalg.cython_blas" not in sys.modules
        if blocked:
            sys.modules["scipy.linalg.cython_blas"] = None     # makes that import raise ImportError
        try:
            self.inner.exec_module(module)
        finally:
            if blocked:
                del sys.modules["scipy.linalg.cython_blas"]


if _WithoutBlasProbe.NAME not in sys.modules and not any(isinstance(f, _WithoutBlasProbe) for f in sys.meta_path):
    sys.meta_path.insert(0, _WithoutBlasProbe())

# How generated code reaches a kernel (issue 10: the cost of a cold compile). Numba's
# inline="always" copies the kernel's IR into each call site and runs Numba's passes on it
# again (most of a cold compile); forceinline marks the cached kernel's LLVM function
# alwaysinline instead, and LLVM inlines its bitcode (cached beside its machine code) when it
# links the routine: no Numba work per call site. An array argument of an inlined kernel still
# gets a reference count increment and decrement per call (NRT calls LLVM cannot remove from
# a loop): generated code passes the step counter, the status array and tables borrowed
# (lower.ModuleGen.borrow_arguments), for which they cost nothing. forceinline=False is
# explicit on the others: Numba would otherwise compile a kernel first called from a
# forceinline one with forceinline too (slow paths inlined).
#
# Calls are typed with plain types (``_plain_calls``): Numba types a constant argument as a
# literal (``fail(st, nid, E_STEPS, 0, 0, 0, 0)``: Literal[int](21), Literal[int](0)) and compiles
# a kernel once per combination of constants it is called with (fail 24 times for bfs alone,
# 0.2-0.3 s of CPU each on a cold cache). LLVM still folds the constants where it inlines.
def _plain_calls(dispatcher):
    """The dispatcher, its calls from compiled code typed with their arguments unliteral."""
    numba_template = dispatcher.get_call_template

    def get_call_template(args, kws):
        return numba_template(tuple(types.unliteral(a) for a in args),
                              {k: types.unliteral(v) for k, v in kws.items()})
    dispatcher.get_call_template = get_call_template
    return dispatcher


# Only compiled code calls a kernel (host_kernel: those the host calls too), so none gets
# the CPython and C wrappers Numba makes for a call from Python (a third of a small kernel's
# compile: its typing and lowering, then LLVM).
_COMPILED_ONLY = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True)


def out_of_line(func):
    return _plain_calls(njit(cache=True, forceinline=False, **_COMPILED_ONLY)(func))


def llvm_inline(func):
    return _plain_calls(njit(cache=True, forceinline=True, **_COMPILED_ONLY)(func))


def per_constant(func):
    """out_of_line, compiled once per constant it is called with (logic's kind: a loop over
    words LLVM vectorises per kind, where a kind known only at run time branches in it)."""
    return njit(cache=True, forceinline=False, **_COMPILED_ONLY)(func)


def host_kernel(func):
    """A kernel the host calls as well (call.py, buffers.py): with Numba's wrappers."""
    return _plain_calls(njit(cache=True, forceinline=False)(func))

U0 = np.uint64(0)
U1 = np.uint64(1)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
LOGIC_COUNTERS = np.array([C_AND, C_OR, C_XOR], np.int64)   # cnt index of AND/OR/XOR by kind


class JitFault(Exception):
    """Raised by compiled code; the details are in the status array."""


@out_of_line
def fail(st, nid, code, a, b, c, d):
    st[S_NODE] = nid
    st[S_CODE] = code
    st[S_A] = a
    st[S_B] = b
    st[S_C] = c
    st[S_D] = d
    raise JitFault()


@out_of_line
def unassigned(st, nid, n):
    fail(st, nid, E_UNASSIGNED, n, 0, 0, 0)


# Allocations that generated code makes go through these cached kernels (so did those of
# kernels Numba inlined): np.zeros/np.empty typed inside a routine compile Numba's array-allocation
# overloads (ol_np_zeros, ol_np_empty, ...) again in every process, 0.2-0.9 s of a cold compile.
@out_of_line
def new_words(n):
    return np.empty(n, np.uint64)


@out_of_line
def new_words2(k, n):
    return np.empty((k, n), np.uint64)


@out_of_line
def copy_words(w):
    return w.copy()


@out_of_line
def zero_flags(n):
    return np.zeros(n, np.bool_)


@out_of_line
def zero_ints(n):
    return np.zeros(n, np.int64)


@out_of_line
def nwords(n):
    return (n + 63) >> 6


@out_of_line
def tail_mask(n):
    r = n & 63
    if r == 0:
        return ALL
    return (U1 << np.uint64(r)) - U1


@out_of_line
def unset(sid):
    """The value of a bare slice/word variable before its first assignment."""
    return (np.empty(0, np.uint64), np.int64(-1 - sid))


@out_of_line
def no_table():
    """A table argument nobody reads (lower.py's cycle functions: another routine's)."""
    return (np.zeros((0, 0), np.uint64), np.int64(0))


@out_of_line
def vzeros(n):
    return (np.zeros(nwords(n), np.uint64), np.int64(n))


@out_of_line
def bits_const(words, n):
    """A BITS literal: its words are a tuple of uint64 constants (empty for BITS(''))."""
    out = np.zeros(nwords(n), np.uint64)
    for t in range(len(words)):
        out[t] = words[t]
    return (out, np.int64(n))


@out_of_line
def popcount(x):
    x = x - ((x >> U1) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@llvm_inline
def word_op(x, y, kind):
    """x and y, x or y, x xor y: kind 0, 1, 2."""
    if kind == 0:
        return x & y
    if kind == 1:
        return x | y
    return x ^ y


@llvm_inline
def same_len(an, bn):
    """Lengths equal as the interpreter sees them (every unassigned value has length -1)."""
    return an == bn or (an < 0 and bn < 0)


@out_of_line
def mismatch(a, b, st, nid):
    if a[1] < 0:
        unassigned(st, nid, a[1])
    if b[1] < 0:
        unassigned(st, nid, b[1])
    fail(st, nid, E_MISMATCH, a[1], b[1], 0, 0)


# ------------------------------------------------------------------ whole-vector operations
@out_of_line
def op_set(x, cnt, st, nid):
    if x[1] < 0:
        unassigned(st, nid, x[1])
    cnt[C_SET] += 1
    w = x[0]
    for t in range(w.shape[0]):
        w[t] = ALL
    if w.shape[0]:
        w[w.shape[0] - 1] = tail_mask(x[1])


@out_of_line
def op_clr(x, cnt, st, nid):
    if x[1] < 0:
        unassigned(st, nid, x[1])
    cnt[C_CLR] += 1
    w = x[0]
    for t in range(w.shape[0]):
        w[t] = U0


@llvm_inline
def op_bit_get(x, i, cnt, st, nid):
    n = x[1]
    if not (0 < i <= n):
        if n < 0:
            unassigned(st, nid, n)
        fail(st, nid, E_BIT_INDEX, i, n, 0, 0)
    cnt[C_BIT_GET] += 1
    return np.int64((x[0][(i - 1) >> 6] >> np.uint64((i - 1) & 63)) & U1)


@llvm_inline
def op_bit_set(x, i, b, cnt, st, nid):
    n = x[1]
    if not (0 < i <= n):
        if n < 0:
            unassigned(st, nid, n)
        fail(st, nid, E_BIT_INDEX, i, n, 0, 0)
    if b != 0 and b != 1:
        fail(st, nid, E_BIT_VALUE, b, 0, 0, 0)
    cnt[C_BIT_SET] += 1
    m = U1 << np.uint64((i - 1) & 63)
    if b:
        x[0][(i - 1) >> 6] |= m
    else:
        x[0][(i - 1) >> 6] &= ~m


@llvm_inline
def first_one(w):
    for t in range(w.shape[0]):
        if w[t] != U0:
            return t
    return -1


@llvm_inline
def op_fnd(x, cnt, st, nid):
    cnt[C_FND] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    t = first_one(x[0])
    if t < 0:
        return np.int64(0)
    return np.int64(t * 64 + trailing_zeros(x[0][t]) + 1)


@llvm_inline
def op_step(x, cnt, st, nid):
    cnt[C_STEP] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    w = x[0]
    t = first_one(w)
    if t < 0:
        return np.int64(0)
    v = w[t]
    w[t] = v & (v - U1)
    return np.int64(t * 64 + trailing_zeros(v) + 1)


@out_of_line
def op_numb(x, cnt, st, nid):
    cnt[C_NUMB] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    s = 0
    w = x[0]
    for t in range(w.shape[0]):
        s += popcount(w[t])
    return np.int64(s)


@llvm_inline
def op_some(x, cnt, st, nid):
    cnt[C_SOME] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    return first_one(x[0]) >= 0


@out_of_line
def op_convert(x, cnt, st, nid):
    cnt[C_CONVERT] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    return (x[0].copy(), x[1])


@out_of_line
def op_frst(x, cnt, st, nid):
    cnt[C_FRST] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    out = np.zeros(x[0].shape[0], np.uint64)
    t = first_one(x[0])
    if t >= 0:
        v = x[0][t]
        out[t] = v & (~v + U1)
    return (out, x[1])


@out_of_line
def op_not(x, cnt, st, nid):
    cnt[C_NOT] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    w = x[0]
    out = np.empty(w.shape[0], np.uint64)
    for t in range(w.shape[0]):
        out[t] = ~w[t]
    if w.shape[0]:
        out[w.shape[0] - 1] &= tail_mask(x[1])
    return (out, x[1])


@per_constant
def logic(a, b, kind, cnt, st, nid):
    """and / or / xor: kind 0, 1, 2."""
    if not same_len(a[1], b[1]):
        mismatch(a, b, st, nid)
    cnt[LOGIC_COUNTERS[kind]] += 1
    if a[1] < 0:
        unassigned(st, nid, a[1])
    if b[1] < 0:
        unassigned(st, nid, b[1])
    return logic_into(np.empty(a[0].shape[0], np.uint64), a, b, kind)


@out_of_line
def op_and(a, b, cnt, st, nid):
    return logic(a, b, 0, cnt, st, nid)


@out_of_line
def op_or(a, b, cnt, st, nid):
    return logic(a, b, 1, cnt, st, nid)


@out_of_line
def op_xor(a, b, cnt, st, nid):
    return logic(a, b, 2, cnt, st, nid)


# ------------------------------------------------------------------ words: TRIM, REP, compare, arithmetic
@out_of_line
def get_bit(w, p):
    return (w[p >> 6] >> np.uint64(p & 63)) & U1


@out_of_line
def put_bit(w, p, b):
    m = U1 << np.uint64(p & 63)
    if b:
        w[p >> 6] |= m
    else:
        w[p >> 6] &= ~m


@out_of_line
def extract(w, start, m):
    """Bits start .. start+m-1 (0-based) of word array w, as a new array of m bits."""
    out = np.zeros(nwords(m), np.uint64)
    sh = start & 63
    base = start >> 6
    for t in range(out.shape[0]):
        lo = w[base + t] >> np.uint64(sh)
        if sh and base + t + 1 < w.shape[0]:
            lo |= w[base + t + 1] << np.uint64(64 - sh)
        out[t] = lo
    if out.shape[0]:
        out[out.shape[0] - 1] &= tail_mask(m)
    return out


@out_of_line
def op_trim(i, j, w, cnt, st, nid):
    if not (1 <= i <= j <= w[1]):
        if w[1] < 0:
            unassigned(st, nid, w[1])
        fail(st, nid, E_TRIM, i, j, w[1], 0)
    cnt[C_TRIM] += 1
    return (extract(w[0], i - 1, j - i + 1), np.int64(j - i + 1))


@out_of_line
def op_rep(i, j, v, w, cnt, st, nid):
    if not (1 <= i <= j <= w[1]):
        if w[1] < 0:
            unassigned(st, nid, w[1])
        fail(st, nid, E_REP_RANGE, i, j, w[1], 0)
    if v[1] != j - i + 1:
        if v[1] < 0:
            unassigned(st, nid, v[1])
        fail(st, nid, E_REP_LEN, i, j, v[1], 0)
    cnt[C_REP] += 1
    for p in range(j - i + 1):
        put_bit(w[0], i - 1 + p, get_bit(v[0], p))


@out_of_line
def compare(a, b):
    """-1, 0, 1 comparing as unsigned numbers with bit 1 most significant."""
    x, y = a[0], b[0]
    for t in range(x.shape[0]):
        d = x[t] ^ y[t]
        if d != U0:
            low = d & (~d + U1)
            return 1 if x[t] & low else -1
    return 0


@out_of_line
def cmp_prologue(a, b, c, cnt, st, nid):
    if not same_len(a[1], b[1]):
        mismatch(a, b, st, nid)
    cnt[c] += 1
    if a[1] < 0:
        unassigned(st, nid, a[1])
    if b[1] < 0:
        unassigned(st, nid, b[1])


@out_of_line
def op_eq(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_EQ, cnt, st, nid)
    return compare(a, b) == 0


@out_of_line
def op_noteq(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_NOTEQ, cnt, st, nid)
    return compare(a, b) != 0


@out_of_line
def op_less(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_LESS, cnt, st, nid)
    return compare(a, b) < 0


@out_of_line
def op_lesseq(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_LESSEQ, cnt, st, nid)
    return compare(a, b) <= 0


@out_of_line
def op_great(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_GREAT, cnt, st, nid)
    return compare(a, b) > 0


@out_of_line
def op_greateq(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_GREATEQ, cnt, st, nid)
    return compare(a, b) >= 0


@out_of_line
def arith(a, b, sub):
    """a + b or a - b modulo 2^n, bit 1 most significant: the carry runs from bit n to bit 1."""
    n = a[1]
    out = np.zeros(a[0].shape[0], np.uint64)
    carry = U0
    for p in range(n - 1, -1, -1):
        x = get_bit(a[0], p)
        y = get_bit(b[0], p)
        if sub:
            s = x ^ y ^ carry
            carry = (~x & (y | carry) | (y & carry)) & U1
        else:
            s = x ^ y ^ carry
            carry = (x & y) | (carry & (x ^ y))
        if s:
            out[p >> 6] |= U1 << np.uint64(p & 63)
    return (out, n)


@out_of_line
def op_add(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_ADD, cnt, st, nid)
    return arith(a, b, False)


@out_of_line
def op_subt(a, b, cnt, st, nid):
    cmp_prologue(a, b, C_SUBT, cnt, st, nid)
    return arith(a, b, True)


# ------------------------------------------------------------------ tables
@llvm_inline
def op_col_get(i, t, cnt, st, nid):
    words, n = col_ref(i, t, cnt, st, nid)
    return (copy_words(words), n)


@llvm_inline
def op_col_set(i, t, v, cnt, st, nid):
    k = t[0].shape[0]
    if not (0 < i <= k):
        fail(st, nid, E_COL_INDEX, i, k, 0, 0)
    if v[1] != t[1]:
        if v[1] < 0:
            unassigned(st, nid, v[1])
        fail(st, nid, E_COL_SET_LEN, i, v[1], t[1], 0)
    cnt[C_COL_SET] += 1
    col, src = t[0], v[0]
    for w in range(src.shape[0]):
        col[i - 1, w] = src[w]


# the checks and step of ROW(i, T) and ROW(i, T) := w, in runtime/ops.py's order, shared by
# every kernel that reads or writes a row (here, the row caches', copy-on-write, targets/mpi/kernels.py)
@llvm_inline
def row_get_check(i, t, cnt, st, nid):
    if not (0 < i <= t[1]):
        fail(st, nid, E_ROW_INDEX, i, t[1], 0, 0)
    cnt[C_ROW_GET] += 1


@llvm_inline
def row_set_check(i, t, v, cnt, st, nid):
    if not (0 < i <= t[1]):
        fail(st, nid, E_ROW_INDEX, i, t[1], 0, 0)
    k = t[0].shape[0]
    if v[1] != k:
        if v[1] < 0:
            unassigned(st, nid, v[1])
        fail(st, nid, E_ROW_SET_LEN, i, v[1], k, 0)
    cnt[C_ROW_SET] += 1


@out_of_line
def op_row_get(i, t, cnt, st, nid):
    row_get_check(i, t, cnt, st, nid)
    data = t[0]
    k = data.shape[0]
    out = np.zeros(nwords(k), np.uint64)
    w = (i - 1) >> 6
    sh = np.uint64((i - 1) & 63)
    for c in range(k):
        out[c >> 6] |= ((data[c, w] >> sh) & U1) << np.uint64(c & 63)
    return (out, np.int64(k))


@out_of_line
def op_row_set(i, t, v, cnt, st, nid):
    row_set_check(i, t, v, cnt, st, nid)
    data = t[0]
    k = data.shape[0]
    w = (i - 1) >> 6
    sh = np.uint64((i - 1) & 63)
    m = ~(U1 << sh)
    for c in range(k):
        data[c, w] = (data[c, w] & m) | (((v[0][c >> 6] >> np.uint64(c & 63)) & U1) << sh)


@llvm_inline
def copy_into(dst, src):
    """dst[:] = src for word arrays of one length (checked by the caller): a loop, as NumPy's
    slice assignment would bring its broadcasting error path (string formatting, about 1300
    LLVM instructions) into every routine that links this kernel."""
    for t in range(src.shape[0]):
        dst[t] = src[t]


# ------------------------------------------------------------------ uncounted helpers (runtime/ops.make_helpers)
@out_of_line
def asg(old, new, st, nid):
    """Assignment to a vector variable: in place when it holds a value (a `var` parameter
    and the caller's variable share the array, as they share one Bits object)."""
    if old[1] != new[1] and old[1] >= 0:
        if new[1] < 0:
            unassigned(st, nid, new[1])
        fail(st, nid, E_ASG_LEN, old[1], new[1], 0, 0)
    if old[1] >= 0:
        copy_into(old[0], new[0])
        return old
    return new


@out_of_line
def vcopy(x, st, nid):
    if x[1] < 0:
        unassigned(st, nid, x[1])
    return (x[0].copy(), x[1])


@out_of_line
def vsave(x):
    """A private variable's value kept across a `parallel for` (unassigned stays unassigned)."""
    return (x[0].copy(), x[1])


@out_of_line
def vlen(x, st, nid):
    if x[1] < 0:
        unassigned(st, nid, x[1])
    return x[1]


@out_of_line
def check_len(x, n, st, nid):
    if x[1] != n:
        if x[1] < 0:
            unassigned(st, nid, x[1])
        fail(st, nid, E_CHECK_LEN, n, x[1], 0, 0)
    return x


@out_of_line
def new_table(n, k, st, nid):
    if n < 0 or k < 0:
        fail(st, nid, E_TABLE_NEG, n, k, 0, 0)
    if k * nwords(n) * 8 >= (16 << 20) and k * nwords(n) * 8 > st[S_FREE]:
        fail(st, nid, E_TABLE_MEM, n, k, k * nwords(n) * 8, st[S_FREE])
    return (np.zeros((k, nwords(n)), np.uint64), np.int64(n))


@out_of_line
def table_assign(dst, src, st, nid):
    if dst[1] != src[1] or dst[0].shape[0] != src[0].shape[0]:
        fail(st, nid, E_TABLE_ASSIGN, src[1], src[0].shape[0], dst[1], dst[0].shape[0])
    a, b = dst[0], src[0]
    for c in range(a.shape[0]):
        for w in range(a.shape[1]):
            a[c, w] = b[c, w]


@out_of_line
def tsnap(t):
    return (t[0].copy(), t[1])


@out_of_line
def sdiv(a, b, st, nid):
    """Star's div: truncates toward zero. The one quotient past 64 bits, the minimum by -1,
    stops the call as an overflow (the host runs it again interpreted: call.run)."""
    if b == 0:
        fail(st, nid, E_DIV0, 0, 0, 0, 0)
    if b == -1:
        if a == I_MIN:
            fail(st, nid, E_OVERFLOW, a, b, 3, 0)
        return -a
    q = a // b                      # floor (b != -1: it fits), then toward zero
    if q * b != a and (a < 0) != (b < 0):
        q += 1
    return q


@out_of_line
def smod(a, b, st, nid):
    """a - (a div b) * b, which always fits (the minimum mod -1 is 0)."""
    if b == 0:
        fail(st, nid, E_MOD0, 0, 0, 0, 0)
    if b == -1:
        return np.int64(0)
    q = a // b
    if q * b != a and (a < 0) != (b < 0):
        q += 1
    return a - q * b


@llvm_inline
def tick(st, nid):
    """One step of the step limit (loop iterations and routine calls); every POLL_EVERY-th
    also looks for Ctrl-C (interrupt_pending, st[S_INTR])."""
    left = st[S_LEFT] - 1
    st[S_LEFT] = left
    if left < 0:
        fail(st, nid, E_STEPS, 0, 0, 0, 0)
    if (left & (POLL_EVERY - 1)) == 0:
        if interrupt_pending() != 0 or load_relaxed(st, S_INTR) != 0:
            st[S_INTR] = 1
            fail(st, nid, E_INTERRUPT, 0, 0, 0, 0)


@llvm_inline
def tick_out(st, nid):
    """tick, and every POLL_EVERY-th step the finished output lines to the host: in loops
    and routines that write output (lower.py; the others flush before their loops)."""
    tick(st, nid)
    if (st[S_LEFT] & (POLL_EVERY - 1)) == 0:
        flush_output(st, nid)


# ------------------------------------------------------------------ Ctrl-C and streamed output
# Compiled code holds the GIL and runs no Python, so Python's SIGINT handler (the
# KeyboardInterrupt the interpreter stops on) waits until it returns. Instead every
# POLL_EVERY-th step (tick: back edges and calls, where the step limit is checked) looks at
# Python's own record of a SIGINT (PyOS_InterruptOccurred, which takes the signal: Python's
# handler does not run for it later) and at st[S_INTR], which the host sets where the signal
# reached another thread (call.request_stop). Neither touches memory the loop uses, so
# LLVM keeps a loop's step count in a register as before (a call that might write st would
# cost a load and a store of it per iteration: 3x on a scalar loop).
POLL_EVERY = 1024


@intrinsic
def interrupt_pending(typingctx):
    """PyOS_InterruptOccurred() (the caller holds the GIL), declared to touch no memory
    compiled code sees."""
    sig = types.int32()

    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                            "PyOS_InterruptOccurred")
        fn.attributes.add("inaccessiblememonly")
        fn.attributes.add("nounwind")
        return builder.call(fn, [])
    return sig, codegen


@intrinsic
def load_relaxed(typingctx, arr, i):
    """arr[i] read anew every time (an atomic load: LLVM does not hoist it out of a loop)."""
    sig = types.int64(arr, i)

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.load_atomic(builder.gep(a.data, [args[1]]), "monotonic", 8)
    return sig, codegen


@intrinsic
def host_call(typingctx, addr, arg):
    """Call the host's function at ``addr``, an ``int64 (*)(int64)`` (a ctypes callback:
    call.OutputSink), with ``arg``; its result (0: done)."""
    sig = types.int64(types.int64, types.int64)

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), [args[1]])
    return sig, codegen


@out_of_line
def flush_output(st, nid):
    """The records of the finished write calls to the host (it moves the rest to the front)."""
    if st[S_HOST] != 0 and st[S_DONE] > 0:
        if host_call(st[S_HOST], st.ctypes.data) != 0:     # the host finds the call by its status array
            fail(st, nid, E_HOST, 0, 0, 0, 0)


# ------------------------------------------------------------------ output records (decoded by call.py)
# ob is an Output holding the int64 record array (``ob.buf``), st[S_OUT] the part in use. A
# helper that needs more room puts a bigger array in the holder (not a returned array: the
# host keeps the holder, so it still has the records when the call then fails). Past
# OUT_CHUNK words the host takes the finished write calls' records instead (flush_output).
OUT_CHUNK = 1 << 15
@structref.register
class OutputType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class Output(structref.StructRefProxy):
    """The host's handle of an output holder (new_output, output_records)."""


structref.define_boxing(OutputType, Output)
# buf: the output records; tabs, rows: the tables of a host request (host_request) while it runs
OUTPUT = OutputType(fields=(("buf", types.int64[::1]), ("tabs", types.UniTuple(types.uint64[:, ::1], 3)),
                            ("rows", types.UniTuple(types.int64, 3))))
# Its type as a plain attribute, not StructRefProxy's property: Numba's dispatcher asks an
# argument for it with PyObject_HasAttr, which drops any exception, so a Ctrl-C whose
# KeyboardInterrupt Python raised in the property (OutputSink.flush typing the holder while a
# compiled call runs) was lost with its signal (interrupts.py). No Python code runs now.
Output._numba_type_ = OUTPUT


# made and read by compiled (cached) functions: a typed container made or read from Python
# compiles Numba's own helpers in every process (seconds)
@host_kernel
def new_output(n):
    ob = structref.new(OUTPUT)
    ob.buf = np.zeros(n, np.int64)
    none = np.zeros((0, 0), np.uint64)
    ob.tabs = (none, none, none)
    ob.rows = (np.int64(0), np.int64(0), np.int64(0))
    return ob


@host_kernel
def output_records(ob):
    return ob.buf


@host_kernel
def request_tables(ob):
    """The tables of the host request in progress and their rows (call.OutputSink.request)."""
    return ob.tabs, ob.rows


# A call of a routine that a native kernel runs (GATHER, GROUPMIN, ...: starvm/native): its
# arguments described in an int64 request array the host reads (call.OutputSink.native):
# a table as (address, columns, words, rows), a vector as (address, words, bits: -1 - name
# index where unassigned), an integer or boolean as itself. Tables and the words of `var`
# vectors are written in place; a `var` vector's new length comes back in its slot.
@out_of_line
def req_new(m):
    return np.zeros(m, np.int64)


@out_of_line
def req_table(rq, i, t):
    rq[i] = t[0].ctypes.data
    rq[i + 1] = t[0].shape[0]
    rq[i + 2] = t[0].shape[1]
    rq[i + 3] = t[1]


@out_of_line
def req_vec(rq, i, v):
    rq[i] = v[0].ctypes.data
    rq[i + 1] = v[0].shape[0]
    rq[i + 2] = v[1]


@out_of_line
def req_int(rq, i, x):
    rq[i] = x


@out_of_line
def req_room(v, bits):
    """A `var` vector's value in words of its own, room for ``bits`` bits (its words may be
    another variable's too: the host writes the result into these)."""
    src = v[0]
    w = np.zeros(max((bits + 63) // 64, src.shape[0]), np.uint64)
    if v[1] >= 0:
        for t in range(src.shape[0]):     # a loop: slice assignment compiles NumPy's broadcasting
            w[t] = src[t]                 # and its error message (Numba's unicode support, 2-3 s of CPU)
    return (w, v[1])


@out_of_line
def req_back(rq, i, v):
    """A `var` vector after the host's call: its words (written in place), its new length."""
    return (v[0], rq[i + 2])


@out_of_line
def host_native(ob, st, nid, rq, args):
    """Ask the host to run a native routine's call described by ``rq`` (above). ``args``: the
    arguments themselves, held here so that their words live until the host has run (Numba
    frees an array after its last use, which would be req_table's or req_vec's)."""
    if st[S_HOST] == 0:
        fail(st, nid, E_HOST, 0, 0, 0, 0)
    st[S_NODE] = nid
    st[S_A] = rq.ctypes.data
    st[S_B] = rq.shape[0]
    st[S_CODE] = E_REQUEST
    failed = host_call(st[S_HOST], st.ctypes.data)
    if failed != 0:
        fail(st, nid, E_HOST, 0, 0, 0, 0)
    st[S_CODE] = 0


@out_of_line
def host_request(ob, st, nid, t0, t1, t2):
    """What compiled code asks the host to do (graph input: GRAPH_ADJ, GRAPH_N, ...): the site
    ``nid`` says what, on the tables t0..t2 (``(data, n)``; unused ones repeat t0); the host
    puts an integer result in st[S_A]. Output written before it goes first."""
    if st[S_HOST] == 0:
        fail(st, nid, E_HOST, 0, 0, 0, 0)
    none = np.zeros((0, 0), np.uint64)
    ob.tabs = (t0[0], t1[0], t2[0])
    ob.rows = (t0[1], t1[1], t2[1])
    st[S_NODE] = nid
    st[S_CODE] = E_REQUEST
    failed = host_call(st[S_HOST], st.ctypes.data)
    ob.tabs = (none, none, none)
    if failed != 0:
        fail(st, nid, E_HOST, 0, 0, 0, 0)
    st[S_CODE] = 0
    return st[S_A]


@out_of_line
def int_width(v):
    """Characters of str(v)."""
    u = np.uint64(v) if v >= 0 else np.uint64(0) - np.uint64(v)
    w = 1 if v >= 0 else 2
    while u >= np.uint64(10):
        u //= np.uint64(10)
        w += 1
    return w


@out_of_line
def put_int(out, q, v):
    """str(v) into out from q; returns the end."""
    u = np.uint64(v) if v >= 0 else np.uint64(0) - np.uint64(v)
    end = q + int_width(v)
    if v < 0:
        out[q] = 45
    r = end
    while True:
        r -= 1
        out[r] = np.uint8(48 + u % np.uint64(10))
        u //= np.uint64(10)
        if u == np.uint64(0):
            break
    return end


# bytes, not str: iterating a str in compiled code compiles Numba's unicode support (2-3 s of CPU)
TRUE_BYTES = np.frombuffer(b"true", np.uint8)
FALSE_BYTES = np.frombuffer(b"false", np.uint8)


@host_kernel
def records_text(recs, sbytes, soffs):
    """The UTF-8 text of the finished write calls among output records (kernels.out_*), as
    the interpreter prints them; the records of an unfinished one print nothing. ``sbytes``
    holds the module's strings one after another, string i at soffs[i]:soffs[i + 1]."""
    n = recs.shape[0]
    size, end, end_size, p = 0, 0, 0, 0
    while p < n:                          # the size first, up to the last finished call
        kind = recs[p]
        if kind == 1:
            size += soffs[recs[p + 1] + 1] - soffs[recs[p + 1]]
            p += 2
        elif kind == 2:
            size += int_width(recs[p + 1])
            p += 2
        elif kind == 3:
            size += 4 if recs[p + 1] else 5
            p += 2
        elif kind == 4:
            size += recs[p + 1]
            p += 2 + (recs[p + 1] + 63) // 64
        elif kind == 5:
            rows, k = recs[p + 1], recs[p + 2]
            size += rows * k + max(rows - 1, 0)
            p += 4 + k * recs[p + 3]
        else:
            size += 1 if recs[p + 1] else 0
            p += 2
            end, end_size = p, size
    out = np.empty(end_size, np.uint8)
    q, p = 0, 0
    while p < end:
        kind = recs[p]
        if kind == 1:
            for b in range(soffs[recs[p + 1]], soffs[recs[p + 1] + 1]):
                out[q] = sbytes[b]
                q += 1
            p += 2
        elif kind == 2:
            q = put_int(out, q, recs[p + 1])
            p += 2
        elif kind == 3:
            word = TRUE_BYTES if recs[p + 1] else FALSE_BYTES
            for c in word:
                out[q] = c
                q += 1
            p += 2
        elif kind == 4:
            bits = recs[p + 1]
            for i in range(bits):
                out[q] = 48 + ((np.uint64(recs[p + 2 + i // 64]) >> np.uint64(i % 64)) & U1)
                q += 1
            p += 2 + (bits + 63) // 64
        elif kind == 5:
            rows, k, nw = recs[p + 1], recs[p + 2], recs[p + 3]
            for r in range(rows):
                if r:
                    out[q] = 10
                    q += 1
                for c in range(k):
                    w = np.uint64(recs[p + 4 + c * nw + r // 64])
                    out[q] = 48 + ((w >> np.uint64(r % 64)) & U1)
                    q += 1
            p += 4 + k * nw
        else:
            if recs[p + 1]:
                out[q] = 10
                q += 1
            p += 2
    return out


@out_of_line
def out_room(ob, st, m):
    """The record array with room for m more words."""
    buf = ob.buf
    p = st[S_OUT]
    if p + m <= buf.shape[0]:
        return buf
    if buf.shape[0] >= OUT_CHUNK and st[S_DONE] > 0 and st[S_HOST] != 0:
        flush_output(st, 0)      # bounded memory: the finished lines go first (site 0: E_HOST has none)
        p = st[S_OUT]
        if p + m <= buf.shape[0]:
            return buf
    bigger = np.zeros(max(2 * buf.shape[0], p + m), np.int64)
    for q in range(p):
        bigger[q] = buf[q]
    ob.buf = bigger
    return bigger


@out_of_line
def out_pair(ob, st, a, b):
    buf = out_room(ob, st, 2)
    p = st[S_OUT]
    buf[p] = a
    buf[p + 1] = b
    st[S_OUT] = p + 2


@out_of_line
def out_str(ob, st, sid):
    out_pair(ob, st, 1, sid)


@out_of_line
def out_int(ob, st, v):
    out_pair(ob, st, 2, v)


@out_of_line
def out_bool(ob, st, v):
    out_pair(ob, st, 3, 1 if v else 0)


@out_of_line
def out_bits(ob, st, x, nid):
    if x[1] < 0:
        unassigned(st, nid, x[1])
    w = x[0]
    buf = out_room(ob, st, 2 + w.shape[0])
    p = st[S_OUT]
    buf[p] = 4
    buf[p + 1] = x[1]
    for t in range(w.shape[0]):
        buf[p + 2 + t] = np.int64(w[t])
    st[S_OUT] = p + 2 + w.shape[0]


@out_of_line
def out_table(ob, st, t):
    data = t[0]
    k, nw = data.shape[0], data.shape[1]
    buf = out_room(ob, st, 4 + k * nw)
    p = st[S_OUT]
    buf[p] = 5
    buf[p + 1] = t[1]
    buf[p + 2] = k
    buf[p + 3] = nw
    q = p + 4
    for c in range(k):
        for w in range(nw):
            buf[q] = np.int64(data[c, w])
            q += 1
    st[S_OUT] = q


@out_of_line
def out_end(ob, st, newline):
    out_pair(ob, st, 6, 1 if newline else 0)
    st[S_DONE] = st[S_OUT]


# ------------------------------------------------------------------ calls
@intrinsic
def stack_address(typingctx):
    """An address in the caller's machine stack frame (a byte of it)."""
    sig = types.int64()

    def codegen(context, builder, sig, args):
        slot = cgutils.alloca_once(builder, ir.IntType(8))
        return builder.ptrtoint(slot, ir.IntType(64))
    return sig, codegen


@llvm_inline
def enter(st, site):
    """Push a call site on the Star call stack (read back only when something fails);
    returns st, so that it can stand as the callee's argument: f(..., enter(st, 7), ...).
    The stack has room for Machine.max_depth calls (buffers.status_array): the recursion limit.
    The machine stack has room for st[S_ROOM] bytes below the first call: past them the call
    stops (E_STACK) before the thread's stack overflows, and the host runs it again on a
    larger one (call.run), so a deep recursion the limit allows never ends in a signal."""
    sp = st[S_SP]
    if sp >= st.shape[0] - S_STACK - 1:
        fail(st, site, E_DEPTH, sp, 0, 0, 0)
    here = stack_address()
    if st[S_LOW] == 0:
        st[S_LOW] = here - st[S_ROOM]
        st[S_D] = here                     # the first call's frame (E_STACK's measure)
    elif here < st[S_LOW]:
        fail(st, site, E_STACK, sp, st[S_D] - here, 0, st[S_D])
    st[S_STACK + sp] = site
    st[S_SP] = sp + 1
    return st


@llvm_inline
def leave(st, value):
    """Pop the call site; returns the callee's result: leave(st, f(...))."""
    st[S_SP] -= 1
    return value


# ------------------------------------------------------------------ assignments fused with their value
# `V := COL(i, P)`, `V := V or W`, ...: the same checks and counts as the operation followed
# by asg(), but the value is written straight into the variable's words when it holds a
# value already, so the loop of WARSHALL-C allocates nothing.
@llvm_inline
def asg_check(old, n, st, anid):
    if old[1] != n and old[1] >= 0:
        fail(st, anid, E_ASG_LEN, old[1], n, 0, 0)
    return old[1] >= 0


@llvm_inline
def op_col_get_asg(old, i, t, cnt, st, nid, anid):
    k = t[0].shape[0]
    if not (0 < i <= k):
        fail(st, nid, E_COL_INDEX, i, k, 0, 0)
    cnt[C_COL_GET] += 1
    if asg_check(old, t[1], st, anid):
        dst, data = old[0], t[0]
        for w in range(dst.shape[0]):
            dst[w] = data[i - 1, w]
        return old
    return (copy_words(t[0][i - 1]), t[1])


@out_of_line
def op_row_get_asg(old, i, t, cnt, st, nid, anid):
    if old[1] >= 0 and 0 < i <= t[1]:
        k = t[0].shape[0]
        cnt[C_ROW_GET] += 1
        asg_check(old, k, st, anid)
        out = old[0]
        for q in range(out.shape[0]):
            out[q] = U0
        data = t[0]
        w = (i - 1) >> 6
        sh = np.uint64((i - 1) & 63)
        for c in range(k):
            out[c >> 6] |= ((data[c, w] >> sh) & U1) << np.uint64(c & 63)
        return old
    return asg(old, op_row_get(i, t, cnt, st, nid), st, anid)


@llvm_inline
def logic_asg(old, a, b, kind, cnt, st, nid, anid):
    if not same_len(a[1], b[1]):
        mismatch(a, b, st, nid)
    cnt[LOGIC_COUNTERS[kind]] += 1
    if a[1] < 0:
        unassigned(st, nid, a[1])
    if b[1] < 0:
        unassigned(st, nid, b[1])
    into = asg_check(old, a[1], st, anid)
    out = old[0] if into else new_words(a[0].shape[0])
    logic_into(out, a, b, kind)
    return old if into else (out, a[1])


# the checks and steps of a logic expression that lower.word_wise_assign computes in one loop
# over words: each as its kernel makes them (op_col_get, op_not, logic, asg), without the words
@llvm_inline
def col_ref(i, t, cnt, st, nid):
    """COL(i, T)'s check and step; T's column itself (no copy) and its length."""
    k = t[0].shape[0]
    if not (0 < i <= k):
        fail(st, nid, E_COL_INDEX, i, k, 0, 0)
    cnt[C_COL_GET] += 1
    return t[0][i - 1], t[1]


@llvm_inline
def ck_not(n, cnt, st, nid):
    cnt[C_NOT] += 1
    if n < 0:
        unassigned(st, nid, n)
    return n


@llvm_inline
def ck_logic(an, bn, kind, cnt, st, nid):
    if not same_len(an, bn):
        if an < 0:
            unassigned(st, nid, an)
        if bn < 0:
            unassigned(st, nid, bn)
        fail(st, nid, E_MISMATCH, an, bn, 0, 0)
    cnt[LOGIC_COUNTERS[kind]] += 1
    if an < 0:
        unassigned(st, nid, an)
    if bn < 0:
        unassigned(st, nid, bn)
    return an


@llvm_inline
def asg_words(old, n, st, anid):
    """The words a value of length n goes into: the variable's own (asg's check), or new ones."""
    if asg_check(old, n, st, anid):
        return old[0]
    return new_words(nwords(n))


@llvm_inline
def clear_tail(out, n):
    if out.shape[0]:
        out[out.shape[0] - 1] &= tail_mask(n)


@llvm_inline
def logic_into(out, a, b, kind):
    x, y = a[0], b[0]
    for t in range(x.shape[0]):
        out[t] = word_op(x[t], y[t], kind)
    return (out, a[1])


@llvm_inline
def op_and_asg(old, a, b, cnt, st, nid, anid):
    return logic_asg(old, a, b, 0, cnt, st, nid, anid)


@llvm_inline
def op_or_asg(old, a, b, cnt, st, nid, anid):
    return logic_asg(old, a, b, 1, cnt, st, nid, anid)


@llvm_inline
def op_xor_asg(old, a, b, cnt, st, nid, anid):
    return logic_asg(old, a, b, 2, cnt, st, nid, anid)


@llvm_inline
def vcopy_asg(old, x, st, nid, anid):
    if x[1] < 0:
        unassigned(st, nid, x[1])
    if asg_check(old, x[1], st, anid):
        copy_into(old[0], x[0])
        return old
    return (copy_words(x[0]), x[1])


# ------------------------------------------------------------------ integers
# Star's integers are unbounded; compiled code computes in 64 bits and stops (E_OVERFLOW)
# where a result would not fit, rather than wrap: the host then runs the call again on the
# interpreter from the state saved at its entry (call.JitRoutine.run), which computes the
# exact value.
I_MIN = np.int64(-(1 << 63))
I_MAX = np.int64((1 << 63) - 1)


@llvm_inline
def ck_add(a, b, st, nid):
    # the sum in unsigned (wrapping, so LLVM cannot assume it does not overflow), then signs
    r = np.int64(np.uint64(a) + np.uint64(b))
    if ((a ^ r) & (b ^ r)) < 0:
        fail(st, nid, E_OVERFLOW, a, b, 0, 0)
    return r


@llvm_inline
def ck_sub(a, b, st, nid):
    r = np.int64(np.uint64(a) - np.uint64(b))
    if ((a ^ b) & (a ^ r)) < 0:
        fail(st, nid, E_OVERFLOW, a, b, 1, 0)
    return r


@out_of_line
def mul_fits(a, b):
    """Does a * b fit in 64 bits (checked in unsigned arithmetic)?"""
    if a == 0 or b == 0:
        return True
    negative = (a < 0) != (b < 0)
    limit = np.uint64(1 << 63) if negative else np.uint64((1 << 63) - 1)
    ua = np.uint64(-(a + 1)) + U1 if a < 0 else np.uint64(a)
    ub = np.uint64(-(b + 1)) + U1 if b < 0 else np.uint64(b)
    return ua <= limit // ub


@llvm_inline
def ck_mul(a, b, st, nid):
    if (a > 0x7FFFFFFF or a < -0x7FFFFFFF or b > 0x7FFFFFFF or b < -0x7FFFFFFF) and not mul_fits(a, b):
        fail(st, nid, E_OVERFLOW, a, b, 2, 0)
    return np.int64(np.uint64(a) * np.uint64(b))


@llvm_inline
def ck_neg(a, st, nid):
    if a == I_MIN:
        fail(st, nid, E_OVERFLOW, 0, a, 1, 0)
    return -a


@llvm_inline
def loop_end_up(a, b, st, nid):
    """b + 1, the end of range() for `for i := a to b`; past 64 bits (b the largest integer,
    or more iterations than int64 counts) the call stops as an overflow."""
    if b >= a and (b == I_MAX or np.uint64(b) - np.uint64(a) >= np.uint64(I_MAX)):
        fail(st, nid, E_OVERFLOW, b, 1, 0, 0)
    return b + 1


@llvm_inline
def loop_end_down(a, b, st, nid):
    """b - 1, the end of range() for `for i := a downto b` (as loop_end_up)."""
    if a >= b and (b == I_MIN or np.uint64(a) - np.uint64(b) >= np.uint64(I_MAX)):
        fail(st, nid, E_OVERFLOW, b, 1, 1, 0)
    return b - 1


# ------------------------------------------------------------------ two loops of WARSHALL-C in one pass
@llvm_inline
def op_step_h(x, h, cnt, st, nid):
    """STEP(x) where h[0] says how many leading words of x are known to be 0 (generated code
    resets it whenever x may change otherwise): a `while i > 0 do ... i := STEP(x)` loop
    scans x once instead of once per step."""
    cnt[C_STEP] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    w = x[0]
    for t in range(h[0], w.shape[0]):
        v = w[t]
        if v != U0:
            w[t] = v & (v - U1)
            h[0] = t
            return np.int64(t * 64 + trailing_zeros(v) + 1)
    h[0] = w.shape[0]
    return np.int64(0)


@llvm_inline
def col_rmw(v, i, t, w, kind, cnt, st, sites):
    """V := COL(i, T); V := V op W; COL(i, T) := V in one pass over the words, when nothing
    can fail; else the three statements one by one (which then fail where they should).
    sites: the COL read, its assignment, the op, its assignment, the COL write."""
    data, n = t[0], t[1]
    if 0 < i <= data.shape[0] and v[1] == n and w[1] == n:
        cnt[C_COL_GET] += 1
        cnt[LOGIC_COUNTERS[kind]] += 1
        cnt[C_COL_SET] += 1
        dst, src = v[0], w[0]
        r = i - 1
        for q in range(dst.shape[0]):     # kind is a constant where this is inlined
            x = word_op(data[r, q], src[q], kind)
            dst[q] = x
            data[r, q] = x
        return v
    return col_rmw_steps(v, i, t, w, kind, cnt, st, sites)


@out_of_line
def col_rmw_steps(v, i, t, w, kind, cnt, st, sites):
    """col_rmw's three statements one by one (out of line: the rare path)."""
    v = op_col_get_asg(v, i, t, cnt, st, sites[0], sites[1])
    v = logic_asg(v, v, w, kind, cnt, st, sites[2], sites[3])
    op_col_set(i, t, v, cnt, st, sites[4])
    return v


@llvm_inline
def op_some_h(x, h, cnt, st, nid):
    """SOME(x) for a STEPped x: its first h[0] words are known to be 0 (op_step_h), so a
    `while SOME(X) do ... i := STEP(X)` loop scans X once, not once per step."""
    cnt[C_SOME] += 1
    if x[1] < 0:
        unassigned(st, nid, x[1])
    w = x[0]
    for t in range(h[0], w.shape[0]):
        if w[t] != U0:
            h[0] = t
            return True
    h[0] = w.shape[0]
    return False


# ------------------------------------------------------------------ rows kept as words (lower._row_cached)
# In a routine that changes a table T only by ROW(i, T) := w and calls nothing, compiled code
# keeps T's rows as words beside its columns (rc = (rows, valid)): row i is gathered from the
# k columns once, at its first ROW; later ROW reads copy its ceil(k/64) words, and a ROW write
# stores the words and flips only the column bits that change. The columns stay current, so
# every other read of T (COL, an alias of T, output, an error) sees what the interpreter's does.
@out_of_line
def rc_new(t):
    return (np.empty((t[1], nwords(t[0].shape[0])), np.uint64), np.zeros(t[1], np.bool_))


@out_of_line
def rc_gather(rc, t, r):
    """Row r (0-based) gathered from the k columns into rc's words."""
    rows, valid = rc
    data = t[0]
    k = data.shape[0]
    w = r >> 6
    sh = np.uint64(r & 63)
    for q in range(rows.shape[1]):
        x = U0
        base = q * 64
        for b in range(min(64, k - base)):
            x |= ((data[base + b, w] >> sh) & U1) << np.uint64(b)
        rows[r, q] = x
    valid[r] = True


@llvm_inline
def rc_flip(t, r, q, d):
    """Flip bit r of the columns 64q + (the 1s of d): the columns follow a changed row word."""
    data = t[0]
    k = data.shape[0]
    w = r >> 6
    bit = U1 << np.uint64(r & 63)
    while d != U0:
        c = q * 64 + trailing_zeros(d)
        if c < k:                  # bits past a word's length are 0; never write past the table
            data[c, w] ^= bit
        d &= d - U1


@out_of_line
def rc_forget(rc):
    """Every row gathered again at its next ROW (the columns changed behind the cache: rb_flush)."""
    rc[1][:] = False


@out_of_line
def op_row_get_rc(i, t, rc, cnt, st, nid):
    row_get_check(i, t, cnt, st, nid)
    rows, valid = rc
    if not valid[i - 1]:
        rc_gather(rc, t, i - 1)
    return (rows[i - 1].copy(), np.int64(t[0].shape[0]))


@out_of_line
def op_row_get_asg_rc(old, i, t, rc, cnt, st, nid, anid):
    if old[1] >= 0 and 0 < i <= t[1]:
        k = t[0].shape[0]
        cnt[C_ROW_GET] += 1
        asg_check(old, k, st, anid)
        rows, valid = rc
        r = i - 1
        if not valid[r]:
            rc_gather(rc, t, r)
        out = old[0]
        for q in range(out.shape[0]):
            out[q] = rows[r, q]
        return old
    return asg(old, op_row_get_rc(i, t, rc, cnt, st, nid), st, anid)


@out_of_line
def op_row_set_rc(i, t, v, rc, cnt, st, nid):
    row_set_check(i, t, v, cnt, st, nid)
    rows, valid = rc
    r = i - 1
    if not valid[r]:
        rc_gather(rc, t, r)
    src = v[0]
    for q in range(rows.shape[1]):
        x = src[q]
        d = rows[r, q] ^ x
        if d != U0:
            rc_flip(t, r, q, d)
            rows[r, q] = x


@llvm_inline
def row_rmw_rc(v, i, t, rc, w, kind, cnt, st, sites):
    """v := ROW(i, T); v := v op w; ROW(i, T) := v in one pass over the row's words when
    nothing can fail; else the three statements one by one (sites as col_rmw's)."""
    k = t[0].shape[0]
    if 0 < i <= t[1] and v[1] == k and w[1] == k:
        cnt[C_ROW_GET] += 1
        cnt[LOGIC_COUNTERS[kind]] += 1
        cnt[C_ROW_SET] += 1
        rows, valid = rc
        r = i - 1
        if not valid[r]:
            rc_gather(rc, t, r)
        dst, src = v[0], w[0]
        for q in range(dst.shape[0]):
            old = rows[r, q]
            x = word_op(old, src[q], kind)
            dst[q] = x
            if x != old:
                rc_flip(t, r, q, old ^ x)
                rows[r, q] = x
        return v
    return row_rmw_steps(v, i, t, rc, w, kind, cnt, st, sites)


@out_of_line
def row_rmw_steps(v, i, t, rc, w, kind, cnt, st, sites):
    """row_rmw_rc's three statements one by one (out of line: the rare path)."""
    v = op_row_get_asg_rc(v, i, t, rc, cnt, st, sites[0], sites[1])
    v = logic_asg(v, v, w, kind, cnt, st, sites[2], sites[3])
    op_row_set_rc(i, t, v, rc, cnt, st, sites[4])
    return v


# ------------------------------------------------------------------ row writes in blocks of 64 (lower.row_blocked)
# ROW(i, T) := w flips one bit in each of T's k columns: k words a stride apart, so n row writes
# in a loop (a transposition: ROW(j, PT) := CONVERT(COL(j, P))) touch n * k cache lines. Where
# a loop writes T only that way and reads nothing of T, compiled code keeps the rows written
# in one block of 64 rows (one word of every column) as words (rb = (rows, block, mask)) and
# writes the block into the columns when a row of another block comes, after the loop, and
# before an error leaves the loop (lower.py's try), so T is as the interpreter leaves it
# wherever anyone can look. The checks and steps stay at each ROW write (row_set_check).
@out_of_line
def rb_new(t):
    return (np.empty((64, nwords(t[0].shape[0])), np.uint64), np.full(1, -1, np.int64), np.zeros(1, np.uint64))


@out_of_line
def op_row_set_rb(i, t, v, rb, cnt, st, nid):
    row_set_check(i, t, v, cnt, st, nid)
    rows, block, mask = rb
    r = i - 1
    if block[0] != r >> 6:
        rb_flush(rb, t)
        block[0] = r >> 6
    slot = r & 63
    src = v[0]
    for q in range(rows.shape[1]):
        rows[slot, q] = src[q]
    mask[0] |= U1 << np.uint64(slot)


@llvm_inline
def transpose64(a):
    """a[c] bit s := a[s] bit c, for a 64x64 bit block (bit 0 the least significant)."""
    j = 32
    m = np.uint64(0x00000000FFFFFFFF)
    while j != 0:
        sj = np.uint64(j)
        for k in range(64):
            if k & j == 0:
                x = ((a[k] >> sj) ^ a[k + j]) & m
                a[k + j] ^= x
                a[k] ^= x << sj
        j >>= 1
        m ^= m << np.uint64(j)


@out_of_line
def rb_flush(rb, t):
    """The rows held in rb into T's columns (word `block` of each); rb then holds none."""
    rows, block, mask = rb
    m = mask[0]
    if m == U0:
        return
    data = t[0]
    k = data.shape[0]
    w = block[0]
    if m & (m - U1) == U0:          # one row: its bits one by one (op_row_set's loop)
        r = trailing_zeros(m)
        sh = np.uint64(r)
        keep = ~m
        for c in range(k):
            data[c, w] = (data[c, w] & keep) | (((rows[r, c >> 6] >> np.uint64(c & 63)) & U1) << sh)
    else:
        keep = ~m
        a = np.empty(64, np.uint64)
        for q in range(rows.shape[1]):
            for s in range(64):
                a[s] = rows[s, q]       # rows not in the mask hold stale words: masked below
            transpose64(a)
            base = q * 64
            for c in range(min(64, k - base)):
                data[base + c, w] = (data[base + c, w] & keep) | (a[c] & m)
    mask[0] = U0


# ------------------------------------------------------------------ parallel for without a snapshot of the table
# A `parallel for` writes only COL(i, T) in iteration i (check/parallel.py), and its reads of
# T must see T as before the loop. Instead of copying T before the loop, the first write that
# changes column c saves c's old words in sv[c] (dirty[c] set); reads of the snapshot take
# sv[c] where dirty[c], else T's column itself. A private variable assigned COL(e, T) holds a
# view of that column (no copy); before it is changed in place it gets its own words (own),
# and a view of a column that a write has just saved follows the old words (cow_repoint).
# The tables end as the iteration-by-iteration run leaves them, also when an iteration fails.
@llvm_inline
def cow_source(t, sv, dirty, r):
    if dirty[r]:
        return sv[r]
    return t[0][r]


@llvm_inline
def cow_col_get(i, t, sv, dirty, cnt, st, nid):
    k = t[0].shape[0]
    if not (0 < i <= k):
        fail(st, nid, E_COL_INDEX, i, k, 0, 0)
    cnt[C_COL_GET] += 1
    return (cow_source(t, sv, dirty, i - 1), t[1])


@out_of_line
def view_fail(old, i, t, cnt, st, nid, anid):
    """The failing cow_view_asg, out of line: its checks and count in op_col_get_asg's order."""
    k = t[0].shape[0]
    if not (0 < i <= k):
        fail(st, nid, E_COL_INDEX, i, k, 0, 0)
    cnt[C_COL_GET] += 1
    fail(st, anid, E_ASG_LEN, old[1], t[1], 0, 0)


@llvm_inline
def cow_view_asg(old, i, t, sv, dirty, cnt, st, nid, anid):
    """V := COL(i, T) of the snapshot, as op_col_get_asg checks and counts it; V becomes a view."""
    if not (0 < i <= t[0].shape[0]) or (old[1] != t[1] and old[1] >= 0):
        view_fail(old, i, t, cnt, st, nid, anid)
    cnt[C_COL_GET] += 1
    return (cow_source(t, sv, dirty, i - 1), t[1])


@out_of_line
def cow_row_get(i, t, sv, dirty, cnt, st, nid):
    row_get_check(i, t, cnt, st, nid)
    data = t[0]
    k = data.shape[0]
    out = np.zeros(nwords(k), np.uint64)
    w = (i - 1) >> 6
    sh = np.uint64((i - 1) & 63)
    for c in range(k):
        word = sv[c, w] if dirty[c] else data[c, w]
        out[c >> 6] |= ((word >> sh) & U1) << np.uint64(c & 63)
    return (out, np.int64(k))


@llvm_inline
def same_words(a, b):
    return a.shape[0] == b.shape[0] and (a.shape[0] == 0 or a.ctypes.data == b.ctypes.data)


@llvm_inline
def cow_col_set(i, t, v, sv, dirty, cnt, st, nid):
    """COL(i, T) := V inside the loop: op_col_set's checks and count; the old words are saved
    the first time the column changes."""
    k = t[0].shape[0]
    if not (0 < i <= k):
        fail(st, nid, E_COL_INDEX, i, k, 0, 0)
    if v[1] != t[1]:
        if v[1] < 0:
            unassigned(st, nid, v[1])
        fail(st, nid, E_COL_SET_LEN, i, v[1], t[1], 0)
    cnt[C_COL_SET] += 1
    r = i - 1
    col, src = t[0][r], v[0]
    if same_words(col, src):
        return
    if not dirty[r]:
        q = 0
        while q < src.shape[0] and src[q] == col[q]:
            q += 1
        if q == src.shape[0]:
            return
        for w in range(col.shape[0]):
            sv[r, w] = col[w]
        dirty[r] = True
    for w in range(src.shape[0]):
        col[w] = src[w]


@llvm_inline
def cow_repoint(u, i, t, sv, dirty):
    """A view of column i of T, once a write saved its old words, reads them from sv."""
    if u[1] >= 0 and 0 < i <= t[0].shape[0] and dirty[i - 1] and same_words(u[0], t[0][i - 1]) \
            and u[0].shape[0] > 0:
        return (sv[i - 1], u[1])
    return u


@llvm_inline
def own(v, b, keep):
    """v with words of its own (b, allocated once per loop) before it is changed in place;
    keep: copy its words there (else the change overwrites them all)."""
    w = v[0]
    if v[1] < 0 or w.shape[0] == 0:
        return v, b
    if b.shape[0] == w.shape[0] and w.ctypes.data == b.ctypes.data:
        return v, b
    if b.shape[0] != w.shape[0]:
        b = new_words(w.shape[0])
    if keep:
        for t in range(w.shape[0]):
            b[t] = w[t]
    return (b, v[1]), b


@intrinsic
def borrow(typingctx, arr):
    """The same array without its reference count: views of it cost no atomic operations.
    Only for arrays that live longer than every use of the result (keep_alive)."""
    sig = arr(arr)

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, value=args[0])
        out = context.make_array(sig.return_type)(context, builder)
        cgutils.copy_struct(out, src)
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()
    return sig, codegen


@out_of_line
def keep_alive(a):
    """Used after a loop that used borrow(a), so that a is not freed before the loop ends."""
    return a.shape[0]


@out_of_line
def cow_presave(t, sv, dirty, e):
    """Before the loop: the column of an index the body does not change, kept as it is."""
    if 0 < e <= t[0].shape[0] and not dirty[e - 1]:
        col = t[0][e - 1]
        for w in range(col.shape[0]):
            sv[e - 1, w] = col[w]
        dirty[e - 1] = True


@llvm_inline
def direct_col_set(i, t, v, cnt, st, nid):
    """COL(i, T) := V where no read of the snapshot can see column i after this write
    (lower._direct_reads): op_col_set without saving the old words."""
    k = t[0].shape[0]
    if not (0 < i <= k):
        fail(st, nid, E_COL_INDEX, i, k, 0, 0)
    if v[1] != t[1]:
        if v[1] < 0:
            unassigned(st, nid, v[1])
        fail(st, nid, E_COL_SET_LEN, i, v[1], t[1], 0)
    cnt[C_COL_SET] += 1
    col, src = t[0][i - 1], v[0]
    if same_words(col, src):
        return
    for w in range(src.shape[0]):
        col[w] = src[w]


@llvm_inline
def detach(u, b, i, t, v):
    """Before COL(i, T) := v changes column i: a view u of it gets the old words of its own."""
    if u[1] >= 0 and 0 < i <= t[0].shape[0] and u[0].shape[0] > 0:
        col = t[0][i - 1]
        if same_words(u[0], col) and not same_words(v[0], col):
            return own(u, b, True)
    return u, b
