"""The CUDA C source of a fused `parallel for` (one kernel per loop), without CuPy.

``cupy_forall.py`` launches these kernels; this module only writes them, so that every
generated kernel can be compiled (NVRTC, tests/unit/test_cuda_sources.py) and its launch
arguments checked on a machine with no GPU and no CuPy. See cupy_forall.py for the scheme:
one thread block per iteration, R words of every slice value per thread, steps counted per
kind and flushed with one atomicAdd each.
"""
from __future__ import annotations

import itertools

import numpy as np

from ...ir.ops import BASE_OPS, Node, Op
from ...ir.ops import STEP_INDEX as IDX
from ...types import T

KERNEL_NAME = "star_forall"
MAX_THREADS = 1024


class Untranslatable(Exception):
    pass


class _Translator:
    """IR of one loop body -> the body of a CUDA kernel (C source lines)."""

    def __init__(self, loop: Node, symbols: list):
        self.var, self.downto, self.info, _snaps = loop.arg
        self.symbols = symbols
        self.decls: list[str] = []
        self.lines: list[str] = []
        self.tmp = itertools.count()
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
                raise Untranslatable(sym)
        for sym in sorted(self.info.private, key=lambda s: s.pyname):
            if sym.type.is_vector:
                self.decls.append(f"unsigned long long pv_{sym.pyname}[R];")
            elif sym.type is T.INT:
                self.decls.append(f"long long ps_{sym.pyname} = 0;")
            elif sym.type is T.BOOL:
                self.decls.append(f"bool ps_{sym.pyname} = false;")
            else:
                raise Untranslatable(sym)

    # ---------------------------------------------------------------- emission helpers
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    def new_vec(self) -> str:
        name = f"v{next(self.tmp)}"
        self.decls.append(f"unsigned long long {name}[R];")
        return name

    def new_scalar(self, ctype: str) -> str:
        name = f"s{next(self.tmp)}"
        self.decls.append(f"{ctype} {name};")
        return name

    def count(self, op: Op) -> None:
        k = IDX[op]
        self.ops_used.add(k)
        self.emit(f"if (threadIdx.x == 0) lc[{k}]++;")

    def fail(self, cond: str) -> None:
        self.emit(f"if ({cond}) {{ if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }}")

    def per_word(self, target: str, expr: str) -> None:
        self.emit(f"for (int r = 0; r < R; ++r) {{ long long w = threadIdx.x + (long long)r * blockDim.x; "
                  f"{target}[r] = (w < W) ? ({expr}) : 0ULL; }}")

    # ---------------------------------------------------------------- statements
    def block(self, node: Node) -> None:
        for s in node.src:
            self.stmt(s)

    def stmt(self, s: Node) -> None:
        op = s.op
        if op is Op.BLOCK:
            self.block(s)
        elif op is Op.IF:
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
        elif op is Op.FOR:
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
        elif op is Op.ASSIGN:
            sym = s.arg
            if sym.type.is_vector:
                v = self.vector(s.src[0])
                self.emit(f"for (int r = 0; r < R; ++r) pv_{sym.pyname}[r] = {v}[r];")
            else:
                self.emit(f"ps_{sym.pyname} = {self.scalar(s.src[0])};")
        elif op is Op.COL_SET:
            i = self.scalar(s.src[0])
            table = s.src[1].arg
            v = self.vector(s.src[2])
            t = self.param_of[table]
            self.fail(f"{i} < 1 || {i} > k_{table.pyname}")
            self.count(Op.COL_SET)
            self.emit(f"for (int r = 0; r < R; ++r) {{ long long w = threadIdx.x + (long long)r * blockDim.x; "
                      f"if (w < W) {t}[({i} - 1) * W + w] = {v}[r]; }}")
        elif op is Op.BIT_SET:
            sym = s.src[0].arg
            i, b = self.scalar(s.src[1]), self.scalar(s.src[2])
            self.fail(f"{i} < 1 || {i} > NBITS || ({b} != 0 && {b} != 1)")
            self.count(Op.BIT_SET)
            if sym in self.info.private:     # the iteration's own words: the thread holding the word
                self.emit(f"{{ long long wb = ({i} - 1) >> 6; unsigned long long m = 1ULL << (({i} - 1) & 63); "
                          f"for (int r = 0; r < R; ++r) if (threadIdx.x + (long long)r * blockDim.x == wb) "
                          f"{{ if ({b}) pv_{sym.pyname}[r] |= m; else pv_{sym.pyname}[r] &= ~m; }} }}")
                return
            p = self.param_of[sym]
            self.emit(f"if (threadIdx.x == 0) {{ unsigned long long m = 1ULL << (({i} - 1) & 63); "
                      f"if ({b}) atomicOr(&{p}[({i} - 1) >> 6], m); else atomicAnd(&{p}[({i} - 1) >> 6], ~m); }}")
        else:
            raise Untranslatable(op)

    # ---------------------------------------------------------------- expressions
    def vector(self, e: Node) -> str:
        """Emit the words of a slice/word value; returns the name of its R-word array."""
        op = e.op
        if op is Op.COPY:
            return self.vector(e.src[0])
        if op is Op.VAR:
            sym = e.arg
            if sym in self.info.private:
                return f"pv_{sym.pyname}"
            if sym.type.is_vector:
                t = self.new_vec()
                self.per_word(t, f"{self.param_of[sym]}[w]")
                return t
            raise Untranslatable(sym)
        if op is Op.COL_GET:
            i = self.scalar(e.src[0])
            table = e.src[1].arg
            self.fail(f"{i} < 1 || {i} > k_{table.pyname}")
            self.count(op)
            t = self.new_vec()
            self.per_word(t, f"{self.param_of[table]}[({i} - 1) * W + w]")
            return t
        if op in (Op.AND, Op.OR, Op.XOR):
            a, b = self.vector(e.src[0]), self.vector(e.src[1])
            self.count(op)
            c = {Op.AND: "&", Op.OR: "|", Op.XOR: "^"}[op]
            t = self.new_vec()
            self.per_word(t, f"{a}[r] {c} {b}[r]")
            return t
        if op is Op.NOT:
            a = self.vector(e.src[0])
            self.count(op)
            t = self.new_vec()
            self.per_word(t, f"~{a}[r] & ((w == W - 1) ? LASTMASK : ~0ULL)")
            return t
        raise Untranslatable(op)

    def scalar(self, e: Node) -> str:
        """Emit what a scalar needs; returns a C expression of it."""
        op = e.op
        if op is Op.CONST:
            if isinstance(e.arg, bool):
                return "true" if e.arg else "false"
            return f"{int(e.arg)}LL"
        if op is Op.VAR:
            sym = e.arg
            if sym is self.var:
                return "v_loop"
            if sym in self.info.private:
                return f"ps_{sym.pyname}"
            return self.param_of[sym]
        if op is Op.NROWS:
            return "NBITS"
        if op is Op.NCOLS:
            return f"k_{e.src[0].arg.pyname}"
        if op is Op.LEN:
            return "NBITS"
        if op is Op.UNARY:
            a = self.scalar(e.src[0])
            return f"(-({a}))" if e.arg == "neg" else f"(!({a}))"
        if op is Op.BINARY:
            return self.binary(e)
        if op is Op.BIT_GET:
            v = self.vector(e.src[0])
            j = self.scalar(e.src[1])
            jj = self.new_scalar("long long")
            self.emit(f"{jj} = {j};")
            self.fail(f"{jj} < 1 || {jj} > NBITS")
            self.count(op)
            out = self.new_scalar("long long")
            self.emit(f"{{ long long bw = ({jj} - 1) >> 6; if (threadIdx.x == bw % blockDim.x) "
                      f"sh_word = {v}[bw / blockDim.x]; }}")
            self.emit("__syncthreads();")
            self.emit(f"{out} = (long long)((sh_word >> (({jj} - 1) & 63)) & 1ULL);")
            self.emit("__syncthreads();")
            return out
        if op is Op.SOME:
            v = self.vector(e.src[0])
            self.count(op)
            out = self.new_scalar("bool")
            self.emit(f"{{ int any = 0; for (int r = 0; r < R; ++r) any |= ({v}[r] != 0ULL); "
                      f"{out} = __syncthreads_or(any) != 0; }}")
            return out
        if op in (Op.EQ, Op.NOTEQ):
            a, b = self.vector(e.src[0]), self.vector(e.src[1])
            self.count(op)
            out = self.new_scalar("bool")
            self.emit(f"{{ int same = 1; for (int r = 0; r < R; ++r) same &= ({a}[r] == {b}[r]); "
                      f"{out} = __syncthreads_and(same) {'!=' if op is Op.EQ else '=='} 0; }}")
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
        raise Untranslatable(op)

    def binary(self, e: Node) -> str:
        o = e.arg
        if o in ("and", "or") and e.type is T.BOOL:
            out = self.new_scalar("bool")
            a = self.scalar(e.src[0])
            self.emit(f"{out} = {a};")
            self.emit(f"if ({'' if o == 'and' else '!'}{out}) {{")     # the right side only if needed
            self.ind += 1
            b = self.scalar(e.src[1])
            self.emit(f"{out} = {b};")
            self.ind -= 1
            self.emit("}")
            return out
        a, b = self.scalar(e.src[0]), self.scalar(e.src[1])
        if o in ("div", "mod"):
            bb = self.new_scalar("long long")
            self.emit(f"{bb} = {b};")
            self.fail(f"{bb} == 0")
            q = f"(({a}) / {bb})"            # C truncates toward zero, as Pascal's div does
            return q if o == "div" else f"(({a}) - {q} * {bb})"
        c = {"+": "+", "-": "-", "*": "*", "=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">",
             ">=": ">=", "xor": "!="}[o]
        return f"(({a}) {c} ({b}))"

    def source(self) -> str:
        self.block(self.loop_body)
        params = ", ".join(["long long start", "long long m", "long long W", "long long NBITS",
                            "unsigned long long LASTMASK", "unsigned long long* counts", "unsigned long long* err"]
                           + self.params)
        flush = "\n".join(f"        if (lc[{k}]) atomicAdd(&counts[{k}], lc[{k}]);" for k in sorted(self.ops_used))
        step = "-" if self.downto else "+"
        return (f'extern "C" __global__ void star_forall({params}) {{\n'
                f"    __shared__ unsigned long long sh_word, sh_count;\n"
                f"    unsigned long long lc[{len(BASE_OPS)}] = {{0}};\n"
                f"    long long v_loop = start {step} (long long)blockIdx.x;\n"
                + "".join(f"    {d}\n" for d in self.decls)
                + "\n".join(self.lines) + "\n"
                + "done:\n    if (threadIdx.x == 0) {\n" + flush + "\n    }\n}\n")


def forall_template(loop: Node, symbols: list) -> str | None:
    """The kernel of a fusable loop with R (words per thread) left as a macro, or None when
    its body has something the translator does not handle (then ForallKernel runs it)."""
    try:
        tr = _Translator(loop, symbols)
        tr.loop_body = loop.src[2]
        return tr.source()
    except Untranslatable:
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
