"""The CUDA C of a fused `parallel for` (one kernel per loop, the CuPy backend's), without CuPy.

``backends/cupy_forall.py`` launches these kernels; this module only writes them, so that every
generated kernel can be compiled (NVRTC, tests/unit/test_cuda_sources.py) and its launch
arguments checked on a machine with no GPU and no CuPy. See cupy_forall.py for the scheme:
one thread block per iteration, R words of every slice value per thread, steps counted per
kind and flushed with one atomicAdd each.

``ForallRenderer`` is the base CUDA renderer (renderer.py) in this kernel's mode: it overrides
how values are held (a slice: R words a thread in a register array; scalars declared at the
top, since a failure jumps to the kernel's end), how a failure leaves (a flag, then ForallKernel
reruns the loop and reports it) and the block-wide reductions; the scalar rules (constants,
negation, logic, comparison, checked arithmetic, div/mod) are the base's, the GPU tier's.
The kernel's frame is forall_kernel.cu; every kernel starts with int64.cu and checked_int.cu.
"""
from __future__ import annotations

import itertools
from string import Template

import numpy as np

from ...ir.ops import BASE_OPS, LOGIC_SYMBOL, STEP_INDEX, Node, Op
from ...types import T
from ..common import Unsupported
from .prelude import INT64, cuda_text
from .renderer import CudaRenderer

KERNEL_NAME = "star_forall"
MAX_THREADS = 1024
_FRAME = Template(cuda_text("forall_kernel.cu"))
_FAIL = "{ if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }"


class ForallRenderer(CudaRenderer):
    """IR of one loop body -> the CUDA kernel running one iteration per thread block."""

    def __init__(self, loop: Node, symbols: list):
        self.var, self.downto, self.info, _snaps = loop.arg
        self.loop_body = loop.src[2]
        self.symbols = symbols
        self.decls: list[str] = []
        self.lines: list[str] = []
        self.tmpc = itertools.count()
        self.ind = 1
        self.ops_used: set[int] = set()
        self.params: list[str] = []
        self.param_of: dict = {}
        for sym in symbols:
            if sym in self.info.private:
                continue
            if sym.type is T.TABLE:
                self.param_of[sym] = f"tb_{sym.pyname}"
                self.params += [f"unsigned long long* tb_{sym.pyname}", f"long long k_{sym.pyname}"]
            elif sym.type.is_vector:
                self.param_of[sym] = f"sv_{sym.pyname}"
                self.params.append(f"unsigned long long* sv_{sym.pyname}")
            elif sym.type is T.INT:
                self.param_of[sym] = f"os_{sym.pyname}"
                self.params.append(f"long long os_{sym.pyname}")
            elif sym.type is T.BOOL:
                self.param_of[sym] = f"os_{sym.pyname}"
                self.params.append(f"int os_{sym.pyname}")
            else:
                raise Unsupported(f"a shared {sym.type}")
        for sym in sorted(self.info.private, key=lambda s: s.pyname):
            if sym.type.is_vector:
                self.decls.append(f"unsigned long long pv_{sym.pyname}[R];")
            elif sym.type is T.INT:
                self.decls.append(f"long long ps_{sym.pyname} = 0;")
            elif sym.type is T.BOOL:
                self.decls.append(f"bool ps_{sym.pyname} = false;")
            else:
                raise Unsupported(f"a private {sym.type}")

    # ---------------------------------------------------------------- the base renderer's hooks
    def tmp(self, prefix: str) -> str:
        return f"{prefix}{next(self.tmpc)}"

    def ctype(self, t: T) -> str:
        return "bool" if t is T.BOOL else "long long"

    def new_scalar(self, ctype: str) -> str:
        """A temporary declared at the top of the kernel (a failure jumps over the body)."""
        name = self.tmp("s")
        self.decls.append(f"{ctype} {name};")
        return name

    def init_scalar(self, ctype: str, name: str, expr: str) -> None:
        self.emit(f"{name} = {expr};")

    def decl_inline(self, ctype: str, name: str) -> str:
        return ""

    def site(self, loc, op: Op | None = None, what: str = "") -> str:
        return "0"          # no site: the loop reruns on ForallKernel, which reports the error

    def fail(self, sid: str, code: str = "", *args) -> str:
        return _FAIL

    # ---------------------------------------------------------------- emission helpers
    def fail_if(self, cond: str) -> None:
        self.emit(f"if ({cond}) {_FAIL}")

    def new_vec(self) -> str:
        name = self.tmp("v")
        self.decls.append(f"unsigned long long {name}[R];")
        return name

    def count(self, op: Op) -> None:
        k = STEP_INDEX[op]
        self.ops_used.add(k)
        self.emit(f"if (threadIdx.x == 0) lc[{k}]++;")

    def per_word(self, target: str, expr: str) -> None:
        self.emit(f"for (int r = 0; r < R; ++r) {{ long long w = threadIdx.x + (long long)r * blockDim.x; "
                  f"{target}[r] = (w < W) ? ({expr}) : 0ULL; }}")

    # ---------------------------------------------------------------- statements
    def block(self, node: Node) -> None:
        for s in node.src:
            self.stmt(s)

    def stmt(self, s: Node) -> None:
        handler = getattr(self, "_s_" + s.op.name, None)
        if handler is None:
            raise Unsupported(f"the statement {s.op.name}")
        handler(s)

    def _s_BLOCK(self, s: Node) -> None:
        self.block(s)

    def _s_IF(self, s: Node) -> None:
        c = self.scalar(s.src[0])
        self.emit(f"if ({c}) {{")
        self.ind += 1
        self.block(s.src[1])
        self.ind -= 1
        if s.src[2].src:
            self.emit("} else {")
            self.ind += 1
            self.block(s.src[2])
            self.ind -= 1
        self.emit("}")

    def _s_FOR(self, s: Node) -> None:
        var, downto = s.arg
        a, b = self.scalar(s.src[0]), self.scalar(s.src[1])
        lo, hi = self.new_scalar("long long"), self.new_scalar("long long")
        self.emit(f"{lo} = {a}; {hi} = {b};")
        v = f"ps_{var.pyname}"
        if downto:
            self.emit(f"for ({v} = {lo}; {v} >= {hi}; --{v}) {{")
        else:
            self.emit(f"for ({v} = {lo}; {v} <= {hi}; ++{v}) {{")
        self.ind += 1
        self.block(s.src[2])
        self.ind -= 1
        self.emit("}")

    def _s_ASSIGN(self, s: Node) -> None:
        sym = s.arg
        if sym.type.is_vector:
            v = self.vector(s.src[0])
            self.emit(f"for (int r = 0; r < R; ++r) pv_{sym.pyname}[r] = {v}[r];")
        else:
            self.emit(f"ps_{sym.pyname} = {self.scalar(s.src[0])};")

    def _s_COL_SET(self, s: Node) -> None:
        i = self.scalar(s.src[0])
        table = s.src[1].arg
        v = self.vector(s.src[2])
        t = self.param_of[table]
        self.fail_if(f"{i} < 1 || {i} > k_{table.pyname}")
        self.count(Op.COL_SET)
        self.emit(f"for (int r = 0; r < R; ++r) {{ long long w = threadIdx.x + (long long)r * blockDim.x; "
                  f"if (w < W) {t}[({i} - 1) * W + w] = {v}[r]; }}")

    def _s_BIT_SET(self, s: Node) -> None:
        sym = s.src[0].arg
        i, b = self.scalar(s.src[1]), self.scalar(s.src[2])
        self.fail_if(f"{i} < 1 || {i} > NBITS || ({b} != 0 && {b} != 1)")
        self.count(Op.BIT_SET)
        if sym in self.info.private:     # the iteration's own words: the thread holding the word
            self.emit(f"{{ long long wb = ({i} - 1) >> 6; unsigned long long m = 1ULL << (({i} - 1) & 63); "
                      f"for (int r = 0; r < R; ++r) if (threadIdx.x + (long long)r * blockDim.x == wb) "
                      f"{{ if ({b}) pv_{sym.pyname}[r] |= m; else pv_{sym.pyname}[r] &= ~m; }} }}")
            return
        p = self.param_of[sym]
        self.emit(f"if (threadIdx.x == 0) {{ unsigned long long m = 1ULL << (({i} - 1) & 63); "
                  f"if ({b}) atomicOr(&{p}[({i} - 1) >> 6], m); else atomicAnd(&{p}[({i} - 1) >> 6], ~m); }}")

    # ---------------------------------------------------------------- vector expressions (VECTOR's methods)
    def vector(self, e: Node) -> str:
        """Emit the words of a slice/word value; returns the name of its R-word array."""
        return self._vector(e)

    def v_copy(self, e: Node) -> str:
        return self.vector(e.src[0])

    def v_var(self, e: Node) -> str:
        sym = e.arg
        if sym in self.info.private:
            return f"pv_{sym.pyname}"
        if sym.type.is_vector:
            t = self.new_vec()
            self.per_word(t, f"{self.param_of[sym]}[w]")
            return t
        raise Unsupported(f"the vector {sym.display}")

    def v_col_get(self, e: Node) -> str:
        i = self.scalar(e.src[0])
        table = e.src[1].arg
        self.fail_if(f"{i} < 1 || {i} > k_{table.pyname}")
        self.count(e.op)
        t = self.new_vec()
        self.per_word(t, f"{self.param_of[table]}[({i} - 1) * W + w]")
        return t

    def v_logic(self, e: Node) -> str:
        a, b = self.vector(e.src[0]), self.vector(e.src[1])
        self.count(e.op)
        t = self.new_vec()
        self.per_word(t, f"{a}[r] {LOGIC_SYMBOL[e.op]} {b}[r]")
        return t

    def v_not(self, e: Node) -> str:
        a = self.vector(e.src[0])
        self.count(e.op)
        t = self.new_vec()
        self.per_word(t, f"~{a}[r] & ((w == W - 1) ? LASTMASK : ~0ULL)")
        return t

    # ---------------------------------------------------------------- scalar expressions (SCALAR's methods)
    def s_var(self, e: Node) -> str:
        sym = e.arg
        if sym is self.var:
            return "v_loop"
        if sym in self.info.private:
            return f"ps_{sym.pyname}"
        return self.param_of[sym]

    def s_nrows(self, e: Node) -> str:
        return "NBITS"

    def s_ncols(self, e: Node) -> str:
        return f"k_{e.src[0].arg.pyname}"

    def s_len(self, e: Node) -> str:
        return "NBITS"

    def s_bit_get(self, e: Node) -> str:
        v = self.vector(e.src[0])
        j = self.scalar(e.src[1])
        jj = self.new_scalar("long long")
        self.emit(f"{jj} = {j};")
        self.fail_if(f"{jj} < 1 || {jj} > NBITS")
        self.count(e.op)
        out = self.new_scalar("long long")
        self.emit(f"{{ long long bw = ({jj} - 1) >> 6; if (threadIdx.x == bw % blockDim.x) "
                  f"sh_word = {v}[bw / blockDim.x]; }}")
        self.emit("__syncthreads();")
        self.emit(f"{out} = (long long)((sh_word >> (({jj} - 1) & 63)) & 1ULL);")
        self.emit("__syncthreads();")
        return out

    def s_reduce(self, e: Node) -> str:
        """SOME and NUMB over the block's words (FND and STEP are not fusable)."""
        op = e.op
        if op is Op.SOME:
            v = self.vector(e.src[0])
            self.count(op)
            out = self.new_scalar("bool")
            self.emit(f"{{ int any = 0; for (int r = 0; r < R; ++r) any |= ({v}[r] != 0ULL); "
                      f"{out} = __syncthreads_or(any) != 0; }}")
            return out
        if op is Op.NUMB:
            v = self.vector(e.src[0])
            self.count(op)
            out = self.new_scalar("long long")
            self.emit("if (threadIdx.x == 0) sh_count = 0ULL;")
            self.emit("__syncthreads();")
            self.emit(f"{{ unsigned long long c = 0; for (int r = 0; r < R; ++r) c += __popcll({v}[r]); "
                      "atomicAdd(&sh_count, c); }")
            self.emit("__syncthreads();")
            self.emit(f"{out} = (long long)sh_count;")
            self.emit("__syncthreads();")
            return out
        raise Unsupported(f"the expression {op.name}")

    def s_compare(self, e: Node) -> str:
        """= and <> of slices: every word equal, over the block (the other comparisons are of
        words, not fusable)."""
        op = e.op
        if op is not Op.EQ and op is not Op.NOTEQ:
            raise Unsupported(f"the expression {op.name}")
        a, b = self.vector(e.src[0]), self.vector(e.src[1])
        self.count(op)
        out = self.new_scalar("bool")
        self.emit(f"{{ int same = 1; for (int r = 0; r < R; ++r) same &= ({a}[r] == {b}[r]); "
                  f"{out} = __syncthreads_and(same) {'!=' if op is Op.EQ else '=='} 0; }}")
        return out

    # ---------------------------------------------------------------- the kernel
    def source(self) -> str:
        self.block(self.loop_body)
        params = ", ".join(["long long start", "long long m", "long long W", "long long NBITS",
                            "unsigned long long LASTMASK", "unsigned long long* counts", "unsigned long long* err"]
                           + self.params)
        flush = "\n".join(f"        if (lc[{k}]) atomicAdd(&counts[{k}], lc[{k}]);" for k in sorted(self.ops_used))
        body = "".join(f"    {d}\n" for d in self.decls) + "\n".join(self.lines)
        return INT64 + _FRAME.substitute(params=params, nkinds=len(BASE_OPS), step="-" if self.downto else "+",
                                         body=body, flush=flush)


def forall_template(loop: Node, symbols: list) -> str | None:
    """The kernel of a fusable loop with R (words per thread) left as a macro, or None when
    its body has something the translator does not handle (then ForallKernel runs it)."""
    try:
        return ForallRenderer(loop, symbols).source()
    except Unsupported:
        return None


def kernel_source(template: str, R: int) -> str:
    """The compilable source for R words per thread."""
    return f"#define R {R}\n" + template


def launch_shape(n: int) -> tuple[int, int, int]:
    """(W words per slice, threads per block, R words per thread) for slices of n bits."""
    W = (n + 63) // 64
    threads = min(MAX_THREADS, max(32, ((W + 31) // 32) * 32))
    R = (W + threads - 1) // threads
    return W, threads, R


def launch_args(start: int, m: int, n: int, W: int, status, param_order: list, info, env: dict):
    """The kernel's arguments in the order of its parameters, and the (vector, device copy)
    pairs of the slices the loop writes bit by bit (the copies are passed, and kept after
    a successful launch). ``status`` is the device array [error flag, steps by kind]."""
    args = [np.int64(start), np.int64(m), np.int64(W), np.int64(n),
            np.uint64((1 << (n % 64)) - 1 if n % 64 else (1 << 64) - 1), status[1:], status[:1]]
    shared_bits = []
    for sym in param_order:
        v = env[sym]
        if sym.type is T.TABLE:
            args += [v.data, np.int64(v.k)]
        elif sym.type.is_vector:
            if sym in info.shared_bits:        # written bit by bit: a device copy
                words = v.v.copy()
                shared_bits.append((v, words))
                args.append(words)
            else:
                args.append(v.v)
        elif sym.type is T.BOOL:
            args.append(np.int32(bool(v)))
        else:
            args.append(np.int64(v))
    return args, shared_bits
