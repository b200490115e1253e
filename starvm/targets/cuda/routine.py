"""Lower a checked routine (IR, with its callees) to the CUDA C of ONE cooperative kernel.

The GPU side of the compiled tier (issue 10, item 2). The kernel's layout of values is
described in ``cuda_prelude.py``: slices distributed over the grid by word, words
replicated in every thread, tables in global memory, scalars in registers, every thread
running the same scalar control flow. Callees become ``__forceinline__`` device functions.
A barrier (``gsync``) stands only where data crosses threads: grid reductions (SOME, NUMB,
FND, STEP, FRST and bit tests of slices), ROW reads after table writes, a slice turned into
a word, and the two ends of a `parallel for`, whose iterations run one per warp.

Steps are counted per kind at the points ``kernels.py`` counts them and every check runs in
the same order with the same error codes, so ``errors.star_error`` maps a failure (status
array + site) to the interpreter's message. A failure inside a `parallel for` (iterations
run at once there) asks the host to restore the tables and run the call interpreted
(``E_RERUN``), which then reports the first failing iteration exactly.

``Unsupported`` names what is not compiled (the routine then runs interpreted): local
tables, `parallel for` bodies other than fusable ones without loops or calls, calls inside
expressions to routines with `var` parameters, output or global writes, tables printed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ... import config
from ...ir.ops import BASE_OPS, Node, Op
from ..numpy.forall import fusable
from ...types import T
from .prelude import PRELUDE, defines
from ...jit.layout import E
from ..numba.lower import Compiled, Lowered, Site, Unsupported, callees, check_int64, direct_globals, small_int, walk

KERNEL_NAME = "star_routine"
_IDX = {op: i for i, op in enumerate(BASE_OPS)}
_LOGIC = {Op.AND: 0, Op.OR: 1, Op.XOR: 2}
_CMP = {Op.EQ: "== 0", Op.NOTEQ: "!= 0", Op.LESS: "< 0", Op.LESSEQ: "<= 0", Op.GREAT: "> 0", Op.GREATEQ: ">= 0"}
_SCALAR_C = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "xor": "!="}


@dataclass
class KernelPlan:
    """What the host needs besides the source: capacities the kernel's vectors must cover."""
    source: str                          # the template: R, KW, RP left to #define
    lowered: Lowered                     # sites, names, strings (errors.py), routines
    root: str                            # the routine's pyname
    params: list = field(default_factory=list)       # the root's parameters, in kernel order
    globals: list = field(default_factory=list)      # globals, in kernel order
    outputs: list = field(default_factory=list)      # (symbol, kind) written to res / vout
    literal_bits: int = 0                # the longest BITS literal
    slice_as_word: bool = False          # a slice becomes a word somewhere (words as long as slices)
    has_pfor: bool = False
    scratch_regions: int = 1
    writes_tables: bool = False
    barrier_free: bool = False           # no grid barrier anywhere: blocks need not be resident together
    restartable: bool = False            # may stop on an integer past 64 bits (E_OVERFLOW: runs again interpreted)


class CudaRenderer:
    """Renders one root routine and the routines it calls."""

    def __init__(self, bodies: dict):
        self.bodies = bodies
        self.sites: list[Site] = []
        self.names: list[str] = []
        self.strings: list[str] = []
        self._globals: dict[str, list] = {}
        self.funcs: list[str] = []
        self.reps: dict[str, T] = {}     # C name of a temporary -> how it holds its value
        self.tmpn = 0
        self.literal_bits = 0
        self.slice_as_word = False
        self.has_pfor = False
        self.nscr = 1             # region 0: slice -> word conversions
        self.writes_tables = False
        self.restartable = False  # an integer past 64 bits stops a call (E_OVERFLOW): it runs again interpreted
        self.pfor_n = 0
        self.nysh = 0             # slices kept in shared memory across a barrier (kept_across)

    # ------------------------------------------------------------------ shared with lower.py's numbering
    def routine_globals(self, pyname: str, _stack=()) -> list:
        if pyname in self._globals:
            return self._globals[pyname]
        _info, body = self.bodies[pyname]
        found = set(direct_globals(body))
        for c in callees(body):
            if c.pyname in self.bodies and c.pyname not in _stack and c.pyname != pyname:
                found.update(self.routine_globals(c.pyname, _stack + (pyname,)))
        result = sorted(found, key=lambda s: s.pyname)
        self._globals[pyname] = result
        return result

    def site(self, loc, op: Op | None = None, what: str = "") -> str:
        self.sites.append(Site(loc or self.stmt_loc, self.display, op, what))
        return str(len(self.sites) - 1)

    def name_id(self, display: str) -> int:
        if display not in self.names:
            self.names.append(display)
        return self.names.index(display)

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.ind + text)

    def tmp(self, prefix: str = "t") -> str:
        self.tmpn += 1
        return f"{prefix}{self.tmpn}"

    # ------------------------------------------------------------------ the module
    def render(self, root: str) -> KernelPlan:
        info, _body = self.bodies[root]
        if info is None:
            raise Unsupported("the main block (the GPU tier compiles routines)")
        order, seen, path = [], set(), []

        def visit(p):
            if p in path:    # each thread's stack holds a few calls: recursion stays on the host
                raise Unsupported(f"recursion ('{self.bodies[p][0].display}' calls itself, directly or not): "
                                  f"the GPU tier does not compile it")
            if p in seen:
                return
            seen.add(p)
            if p not in self.bodies:
                raise Unsupported(f"calls '{p}', which is not compiled")
            path.append(p)
            for c in callees(self.bodies[p][1]):
                visit(c.pyname)
            path.pop()
            order.append(p)
        visit(root)
        for p in order:
            self.function(p)
        kernel, params, globs, outputs = self.kernel(root)
        source = (defines(len(BASE_OPS)) + f"#define NYSH {self.nysh}\n" + PRELUDE + "\n" + "\n".join(self.funcs)
                  + "\n" + kernel)
        compiled = {root: Compiled(KERNEL_NAME, info, globs, [g for g in globs if g.type is not T.TABLE])}
        lowered = Lowered(source, compiled, self.sites, self.names, self.strings)
        funcs = "\n".join(self.funcs)      # every barrier is one of these calls (grid-mode reductions: <N, true>)
        free = not any(x in funcs for x in ("gsync", "grid_red", ", true>("))
        return KernelPlan(source, lowered, root, params, globs, outputs, self.literal_bits, self.slice_as_word,
                          self.has_pfor, self.nscr, self.writes_tables, free, self.restartable)

    def ctype(self, t: T, by_ref: bool = False) -> str:
        base = {T.INT: "i64", T.BOOL: "bool", T.SLICE: self.SL, T.WORD: "V<KW>", T.TABLE: "Tb"}.get(t)
        if base is None:
            raise Unsupported(f"a value of type {t}")
        return base + ("&" if by_ref and t is not T.TABLE else "")

    def set_mode(self, grid: bool) -> None:
        self.grid = grid
        self.SL = "V<R>" if grid else "V<RP>"
        self.B, self.S = ("c_.gt", "c_.G") if grid else ("ln_", "LANES")
        self.GRID = "true" if grid else "false"

    def function(self, pyname: str) -> None:
        info, body = self.bodies[pyname]
        self.set_mode(True)
        self.display = info.display
        self.stmt_loc = info.node.loc
        self.vars: dict = {}
        self.lines, self.ind = [], 1
        self.hints: dict = {}
        globs = self.routine_globals(pyname)
        sig = ["Ctx& c_"]
        for i, p in enumerate(info.params):
            self.vars[p] = f"p{i}"
            sig.append(f"{self.ctype(p.type, p.by_ref)} p{i}")
        for i, g in enumerate(globs):
            self.vars[g] = f"g{i}"
            sig.append(f"{self.ctype(g.type, True)} g{i}")
        if info.result is not None:
            sig.append(f"{self.ctype(info.result.type, True)} ret_")
        locals_ = list(info.locals) + ([info.result] if info.result else [])
        for i, s in enumerate(locals_):
            self.vars[s] = f"l{i}"
        self.locals_, self.body, self.again = set(info.locals), body, None
        self.tick(info.node.loc)
        for p in info.params:
            if p.length_of is not None:
                what = f"argument {p.display!r} ({p.type}({p.length_of.display}))"
                x = self.vars[p]
                sid = self.site(p.loc, what=what)
                self.emit(f"if ({x}.n != {self.length_of(p)}) {{ if ({x}.n < 0) UNASSIGNED({sid}, {x}.n); "
                          f"FAIL({sid}, E_CHECK_LEN, {self.length_of(p)}, {x}.n, 0, 0); }}")
        for s in locals_:
            self.declare(s)
        for x in _stepped(body):
            if x.type is T.WORD:
                h = self.tmp("h")
                self.hints[x] = h
                self.emit(f"i64 {h} = 0;")
        self.block(body)
        if info.result is not None:
            self.emit(f"ret_ = {self.vars[info.result]};")
        self.funcs.append(f"__device__ __forceinline__ void f_{pyname}({', '.join(sig)}) {{\n"
                          + "\n".join(self.lines) + "\n}\n")

    def length_of(self, sym) -> str:
        t = self.vars[sym.length_of]
        return f"{t}.n" if sym.type is T.SLICE else f"{t}.k"

    def declare(self, s) -> None:
        v = self.vars[s]
        if s.type is T.INT:
            self.emit(f"i64 {v} = 0;")
        elif s.type is T.BOOL:
            self.emit(f"bool {v} = false;")
        elif s.type is T.TABLE:
            raise Unsupported("a local table (the GPU tier does not allocate tables)", s.loc)
        elif s.type.is_vector:
            self.emit(f"{self.ctype(s.type)} {v};")
            if s.length_of is not None:
                self.emit(f"{v}.n = {self.length_of(s)}; {self.zero(v, s.type)}")
            else:
                self.emit(f"{v}.n = {-1 - self.name_id(s.display)}; {self.zero(v, s.type)}")
        else:
            raise Unsupported(f"a variable of type {s.type}", s.loc)

    def zero(self, v: str, t: T) -> str:
        n = "KW" if t is T.WORD else ("R" if self.grid else "RP")
        return f"for (int q_ = 0; q_ < {n}; ++q_) {v}.w[q_] = 0ULL;"

    # ------------------------------------------------------------------ the kernel
    def kernel(self, root: str):
        info, _ = self.bodies[root]
        self.set_mode(True)
        globs = self.routine_globals(root)
        args, body, call = [], [], ["c_"]
        for i, s in enumerate(list(info.params) + globs):
            name = f"a{i}"
            if s.type is T.TABLE:
                args += [f"u64* {name}d", f"i64 {name}n", f"i64 {name}k"]
                body.append(f"Tb {name} = {{{name}d, {name}n, {name}k, nwords({name}n)}};")
            elif s.type is T.SLICE:
                args += [f"const u64* {name}w", f"i64 {name}n"]
                body.append(f"V<R> {name}; d_load({name}, {name}w, {name}n, c_.gt, c_.G);")
            elif s.type is T.WORD:
                args += [f"const u64* {name}w", f"i64 {name}n"]
                body.append(f"V<KW> {name}; {name}.n = {name}n; for (int q_ = 0; q_ < KW; ++q_) "
                            f"{name}.w[q_] = q_ < nwords({name}n) ? __ldcg({name}w + q_) : 0ULL;")
            elif s.type is T.INT:
                args.append(f"i64 {name}")
            elif s.type is T.BOOL:
                args.append(f"i64 {name}i")
                body.append(f"bool {name} = {name}i != 0;")
            else:
                raise Unsupported(f"a parameter of type {s.type}")
            call.append(name)
        outputs = []
        if info.result is not None:
            body.append(f"{self.ctype(info.result.type)} rv_; rv_.n = 0;" if info.result.type.is_vector
                        else f"{self.ctype(info.result.type)} rv_ = 0;")
            call.append("rv_")
            outputs.append(("rv_", info.result))
        for i, p in enumerate(info.params):
            if p.by_ref and p.type is not T.TABLE:
                outputs.append((f"a{i}", p))
        for j, g in enumerate(globs):
            if g.type is not T.TABLE:
                outputs.append((f"a{len(info.params) + j}", g))
        # io: one block holding status | counts | results | barrier counter | reduction ring
        # (cuda_runtime.io_block; one argument instead of five: each costs the launch time)
        args += ["i64* io", "i64* ob", "i64 obcap", "u64* scr", "i64 caps", "i64 left", "u64* vout"]
        out = []
        for j, (name, s) in enumerate(outputs):
            if s.type.is_vector:
                out.append(f"if (c_.gt == 0) res[{j}] = {name}.n;")
                if s.type is T.SLICE:
                    out.append(f"d_store(vout + {j} * caps, {name}, c_.gt, c_.G);")
                else:
                    out.append(f"if (c_.gt == 0) for (i64 q_ = 0; q_ < nwords({name}.n); ++q_) "
                               f"vout[{j} * caps + q_] = {name}.w[q_];")
            else:
                out.append(f"if (c_.gt == 0) res[{j}] = (i64){name};")
        src = (f'extern "C" __global__ void KBOUNDS {KERNEL_NAME}({", ".join(args)}) {{\n'
               "    Ctx c_;\n"
               f"    i64* st = io; i64* cnt = io + STATUS_SIZE; i64* res = io + STATUS_SIZE + NKINDS;\n"
               f"    u64* bar = (u64*)(io + STATUS_SIZE + NKINDS + {len(outputs)}); u64* red = bar + 1;\n"
               "    c_.st = st; c_.cnt = cnt; c_.ob = ob; c_.obcap = obcap; c_.red = red; c_.bar = bar; c_.scr = scr;\n"
               "    c_.caps = caps; c_.gt = (i64)blockIdx.x * blockDim.x + threadIdx.x; c_.G = (i64)gridDim.x * blockDim.x;\n"
               "    c_.left = left; c_.op = 0; c_.sp = 0; c_.failed = 0; c_.ri = 0; c_.gen = 0u; c_.nb = 0ULL;\n"
               "#pragma unroll\n    for (int k_ = 0; k_ < NKINDS; ++k_) { c_.cn[k_] = 0; c_.wn[k_] = 0; }\n"
               + "".join(f"    {b}\n" for b in body)
               + f"    f_{root}({', '.join(call)});\n"
               "    if ((threadIdx.x & (LANES - 1)) == 0) {     // each group's parallel-for steps, once per call\n"
               "#pragma unroll\n        for (int k_ = 0; k_ < NKINDS; ++k_) if (c_.wn[k_]) atomicAdd((u64*)&cnt[k_], (u64)c_.wn[k_]);\n"
               "    }\n"
               "    if (c_.gt == 0) {\n"
               "#pragma unroll\n        for (int k_ = 0; k_ < NKINDS; ++k_) if (c_.cn[k_]) atomicAdd((u64*)&cnt[k_], (u64)c_.cn[k_]);\n"
               "        st[S_LEFT] = c_.left; st[S_OUT] = c_.op;\n"
               "    }\n"
               "    if (c_.failed) return;\n"
               + "".join(f"    {o}\n" for o in out)
               + "}\n")
        return src, list(info.params), globs, [(s, j) for j, (_n, s) in enumerate(outputs)]

    # ------------------------------------------------------------------ checks and counts
    def fail(self, sid: str, code: int | str, a="0", b="0", c="0", d="0") -> str:
        if self.grid:
            return f"FAIL({sid}, {code}, {a}, {b}, {c}, {d})"
        return f"{{ wf_ = 1; goto {self.pend}; }}"

    def unassigned(self, sid: str, x: str) -> str:
        return f"if ({x}.n < 0) {self.fail(sid, 'E_UNASSIGNED', f'{x}.n')}"

    def count(self, op: Op) -> None:
        if self.grid:
            self.emit(f"c_.cn[{_IDX[op]}]++;")
        else:
            self.emit(f"c_.wn[{_IDX[op]}]++;")

    def tick(self, loc) -> None:
        if not self.grid:
            raise Unsupported("a loop or call inside parallel for (the GPU tier runs its iterations at once)")
        sid = self.site(loc)
        self.emit(f"if (--c_.left < 0) {self.fail(sid, 'E_STEPS')}")

    def mismatch(self, sid: str, a: str, b: str) -> None:
        """logic / compare prologue: lengths equal as the interpreter sees them (kernels.same_len)."""
        self.emit(f"if (!({a}.n == {b}.n || ({a}.n < 0 && {b}.n < 0))) {{ {self.unassigned(sid, a)} "
                  f"{self.unassigned(sid, b)} {self.fail(sid, 'E_MISMATCH', f'{a}.n', f'{b}.n')} }}")

    # ------------------------------------------------------------------ statements
    def block(self, node: Node) -> None:
        stmts = node.src
        for k, s in enumerate(stmts):
            again = None
            if self.grid and k + 1 < len(stmts) and self.kept_across(s, stmts[k + 1]):
                plain = _plain_logic(s.src[0], s.arg)
                # each word of Y, as it is computed, ORed into SOME's accumulator and put in
                # the block's shared memory until the branch (YSH), so no word of Y need be
                # kept in registers (MIN's body: Z and Y together spilled)
                self.nysh += 1
                ysh, acc = f"ysh{self.nysh}_", self.tmp("acc")
                self.emit(f"__shared__ u64 {ysh}[YSH ? R * TPB : 1]; u64 {acc} = 0ULL;")
                self.sink = (ysh, acc, "YSH && !RECOMPUTE" if plain else "YSH")
                at = len(self.lines)
                self.stmt(s)
                self.sink = None
                # the assignment's code once more, its steps not counted again (its checks
                # pass again: the same values), where E can be computed again (RECOMPUTE)
                lines = ([line.strip() for line in self.lines[at:] if not _COUNT.match(line.strip())]
                         if plain else None)
                again = (s.arg, lines, ysh, acc)
            else:
                self.stmt(s)
            self.reset_hints(s)
            self.again = again          # for the next statement only (_s_IF)

    def kept_across(self, s: Node, nxt: Node) -> bool:
        """``Y := E; if SOME(Y) then ...`` with Y a local slice read nowhere else than in that
        condition and branch and assigned nowhere else: Y's words need not stay in registers
        across SOME's barrier. They go to the block's shared memory (each thread its own
        words; YSH, where R words of every thread of a block fit 32 KB), or, with E plain
        vector logic on other variables and COL reads and under the switch RECOMPUTE, the
        branch computes Y from E again (the same values: only the barrier lies between)."""
        if s.op is not Op.ASSIGN or s.arg.type is not T.SLICE or s.arg not in self.locals_ \
                or nxt.op is not Op.IF:
            return False
        cond, then, _orelse = nxt.src
        y = s.arg
        if not (cond.op is Op.SOME and cond.src[0].op is Op.VAR and cond.src[0].arg is y):
            return False
        allowed = {id(n) for n in walk(cond)} | {id(n) for n in walk(then)}
        for n in walk(self.body):
            if n.op is Op.VAR and n.arg is y and id(n) not in allowed:
                return False
            if n.op is Op.ASSIGN and n.arg is y and n is not s:
                return False
        return any(n.op is Op.VAR and n.arg is y for n in walk(then))

    def reset_hints(self, s: Node) -> None:
        if not self.hints:
            return
        changed = set()
        if s.op is Op.ASSIGN:
            changed.add(s.arg)
        elif s.op in (Op.SET, Op.CLR, Op.BIT_SET, Op.REP):
            changed.update(n.arg for n in s.src if n.op is Op.VAR)
        elif s.op in (Op.CALL, Op.PFOR):
            changed.update(self.hints)
        for x in changed:
            if x in self.hints:
                self.emit(f"{self.hints[x]} = 0;")

    def stmt(self, s: Node) -> None:
        saved = self.stmt_loc
        self.stmt_loc = s.loc or saved
        try:
            handler = getattr(self, "_s_" + s.op.name, None)
            if handler is not None:
                handler(s)
            elif s.op in (Op.SET, Op.CLR, Op.BIT_SET, Op.REP, Op.COL_SET, Op.ROW_SET, Op.STEP):
                self.base_stmt(s)
            elif s.op is Op.CALL:
                self.call(s, statement=True)
            else:
                raise Unsupported(f"the statement {s.op.name}", s.loc)
        finally:
            self.stmt_loc = saved

    def _s_BLOCK(self, s):
        self.block(s)

    def _s_IF(self, s):
        cond, then, orelse = s.src
        again, self.again = getattr(self, "again", None), None
        if again is not None and cond.op is Op.SOME and cond.src[0].op is Op.VAR and cond.src[0].arg is again[0]:
            self.some_acc = (again[0], again[3])
        self.emit(f"if ({self.scalar(cond)}) {{")
        self.some_acc = None
        self.ind += 1
        if again is not None and cond.op is Op.SOME and cond.src[0].op is Op.VAR and cond.src[0].arg is again[0]:
            y, lines, ysh, _acc = again
            self.emit(f"{{   // {y.display} again (block(): not kept in registers across the barrier)")
            if lines is not None:
                self.lines.append("#if RECOMPUTE")
                for line in lines:
                    self.emit("    " + line)
                self.lines.append("#elif YSH")
            else:
                self.lines.append("#if YSH")
            self.emit(f"    for (int q_ = 0; q_ < R; ++q_) {self.vars[y]}.w[q_] = {ysh}[q_ * TPB + threadIdx.x];")
            self.lines.append("#endif")
            self.emit("}")
        self.block(then)
        self.ind -= 1
        if orelse.src:
            self.emit("} else {")
            self.ind += 1
            self.block(orelse)
            self.ind -= 1
        self.emit("}")

    def _s_WHILE(self, s):
        cond, body = s.src
        self.emit("while (true) {")
        self.ind += 1
        self.emit(f"if (!({self.scalar(cond)})) break;")
        self.tick(s.loc)
        self.block(body)
        self.ind -= 1
        self.emit("}")

    def _s_REPEAT(self, s):
        body, cond = s.src
        self.emit("while (true) {")
        self.ind += 1
        self.tick(s.loc)
        self.block(body)
        saved = self.stmt_loc
        self.stmt_loc = cond.loc or saved
        self.emit(f"if ({self.scalar(cond)}) break;")
        self.stmt_loc = saved
        self.ind -= 1
        self.emit("}")

    def _s_FOR(self, s):
        var, downto = s.arg[0], s.arg[1]
        start, stop, body = s.src
        lo, hi, it = self.tmp("lo"), self.tmp("hi"), self.tmp("it")
        self.emit(f"i64 {lo} = {self.scalar(start)};")
        self.emit(f"i64 {hi} = {self.scalar(stop)};")
        # the interpreter counts past the largest (smallest) integer; the loop stops there as an
        # overflow (the call runs again interpreted) instead of wrapping around
        if not small_int(stop):
            edge = "(-9223372036854775807LL - 1)" if downto else "9223372036854775807LL"
            self.restartable = True
            self.emit(f"if ({hi} == {edge} && {lo} {'>=' if downto else '<='} {hi}) "
                      f"{self.fail(self.site(s.loc), 'E_OVERFLOW', hi, '1', '1' if downto else '0')}")
        stmts = body.src if body.op is Op.BLOCK else [body]
        pivot = None
        if (self.grid and len(stmts) == 1 and stmts[0].op is Op.PFOR
                and config.gpu_pivot_loop()):
            pivot = {"pfor": stmts[0], "var": var, "downto": downto, "eligible": False, "first": lo}
        at = len(self.lines)
        saved, self.pivot = getattr(self, "pivot", None), pivot
        cmp, step = (">=", "--") if downto else ("<=", "++")
        self.emit(f"for (i64 {it} = {lo}; {it} {cmp} {hi}; {step}{it}) {{")
        self.ind += 1
        self.emit(f"{self.vars[var]} = {it};")
        self.tick(s.loc)
        self.block(body)
        if pivot is not None and pivot["eligible"]:
            self.emit("pp_ ^= 1;")
        self.ind -= 1
        self.emit("}")
        self.pivot = saved
        if pivot is not None and pivot["eligible"]:
            # one barrier a pivot (see _s_PFOR): the first pivot's columns copied before the loop,
            # the last pivot's writes and failures passed through one barrier after it
            pro = ["{ int wf_ = 0; int pp_ = 0;     // a pivot loop: one barrier a pivot"] + pivot["prologue"]
            self.lines[at:at] = ["    " * self.ind + line for line in pro]
            self.emit("if (gsync_or(c_, wf_)) FAIL(0, E_RERUN, 0, 0, 0, 0);")
            self.emit("}")

    def _s_ASSIGN(self, s):
        sym, value = s.arg, s.src[0]
        if not self.grid and sym not in self.private:
            raise Unsupported("a parallel for assigning a shared variable", s.loc)
        v = self.vars[sym]
        if sym.type.is_vector:
            sink, self.sink = getattr(self, "sink", None), None
            if self.grid and sym.type is T.SLICE and _fusable(value) and _fused_switch():
                x = self.fused_slice(value, sink)
            else:
                x = self.vector(value, want=sym.type)
                if sink is not None:
                    self.emit(self.sink_loop(x, sink))
            sid = self.site(s.loc)
            self.emit(f"if ({v}.n != {x}.n && {v}.n >= 0) {{ {self.unassigned(sid, x)} "
                      f"{self.fail(sid, 'E_ASG_LEN', f'{v}.n', f'{x}.n')} }}")
            self.emit(f"{v} = {x};")
        elif sym.type is T.TABLE:
            if not self.grid:
                raise Unsupported("a table assignment inside parallel for", s.loc)
            src = self.table(value)
            sid = self.site(s.loc)
            self.writes_tables = True
            self.emit(f"if ({v}.n != {src}.n || {v}.k != {src}.k) "
                      f"{self.fail(sid, 'E_TABLE_ASSIGN', f'{src}.n', f'{src}.k', f'{v}.n', f'{v}.k')}")
            self.emit(f"for (i64 c2_ = 1; c2_ <= {v}.k; ++c2_) {{ V<R> tc_; d_col_get(tc_, {src}, c2_, c_.gt, c_.G); "
                      f"d_col_set({v}, c2_, tc_, c_.gt, c_.G); }}")
        else:
            self.emit(f"{v} = {self.scalar(value)};")

    def _s_WRITE(self, s):
        if not self.grid:
            raise Unsupported("writeln inside parallel for", s.loc)
        sid = self.site(s.loc)

        def room(m: str):
            self.emit(f"if (c_.op + {m} > c_.obcap) {self.fail(sid, 'E_RERUN')}")

        for a in s.src:
            if a.type is T.STR:
                self.strings.append(a.arg)
                room("2")
                self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = 1; c_.ob[c_.op + 1] = {len(self.strings) - 1}; }} c_.op += 2;")
            elif a.type in (T.INT, T.BOOL):
                x = self.scalar(a)
                kind = 2 if a.type is T.INT else 3
                room("2")
                self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = {kind}; c_.ob[c_.op + 1] = (i64)({x}); }} c_.op += 2;")
            elif a.type.is_vector:
                x = self.vector(a)
                bid = self.site(a.loc)
                self.emit(self.unassigned(bid, x))
                room(f"2 + nwords({x}.n)")
                self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = 4; c_.ob[c_.op + 1] = {x}.n; }}")
                if self.rep(x, a.type) is T.SLICE:
                    self.emit(f"d_store((u64*)(c_.ob + c_.op + 2), {x}, c_.gt, c_.G);")
                else:
                    self.emit(f"if (c_.gt == 0) for (i64 q_ = 0; q_ < nwords({x}.n); ++q_) "
                              f"c_.ob[c_.op + 2 + q_] = (i64){x}.w[q_];")
                self.emit(f"c_.op += 2 + nwords({x}.n);")
            elif a.type is T.TABLE:
                t = self.table(a)
                room(f"4 + {t}.k * {t}.W")
                self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = 5; c_.ob[c_.op + 1] = {t}.n; c_.ob[c_.op + 2] = {t}.k; "
                          f"c_.ob[c_.op + 3] = {t}.W; }}")
                self.emit("gsync(c_);")     # the words of every column, as the owners last wrote them
                self.emit(f"for (i64 w_ = c_.gt; w_ < {t}.W; w_ += c_.G) for (i64 c2_ = 0; c2_ < {t}.k; ++c2_) "
                          f"c_.ob[c_.op + 4 + c2_ * {t}.W + w_] = (i64)__ldcg({t}.d + c2_ * {t}.W + w_);")
                self.emit(f"c_.op += 4 + {t}.k * {t}.W;")
            else:
                raise Unsupported(f"writing a value of type {a.type}", a.loc)
        room("2")
        self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = 6; c_.ob[c_.op + 1] = {int(bool(s.arg))}; }} c_.op += 2;")

    # ------------------------------------------------------------------ slice logic fused word by word
    @staticmethod
    def sink_loop(x: str, sink) -> str:
        ysh, acc, cond = sink
        return (f"for (int q_ = 0; q_ < R; ++q_) {{ {acc} |= {x}.w[q_]; "
                f"if ({cond}) {ysh}[q_ * TPB + threadIdx.x] = {x}.w[q_]; }}")

    def fused_slice(self, e: Node, sink=None) -> str:
        """A slice expression of logic, NOT and COL reads (``_fusable``) as ONE loop over the
        thread's words, no vector per operation: the checks and step counts first, in the
        order and with the sites that ``vector`` gives them, then each word computed from its
        operands' words, and the operand of an AND that reads memory read only where the other
        operand's word is not zero (the word is 0 either way; reads have no other effect).
        So ``Y := Z and not COL(j, T)`` reads the words of column j only where Z has rows
        left, and holds no copy of the column (registers: MIN's body at R = 64 spilled with
        one). The switch UNFUSED keeps the code of before beside it, for measuring."""
        out = self.tmp("f")
        self.emit(f"V<R> {out};")
        self.lines.append("#if UNFUSED")
        self.emit(f"{out} = {self.vector(e, want=T.SLICE)};")
        if sink is not None:
            self.emit(self.sink_loop(out, sink))
        self.lines.append("#else")
        pre: list[str] = []
        holder, word = self._fz(e, pre)
        self.emit(f"{out}.n = {holder}.n;")
        self.emit("{")
        for line in pre:
            self.emit("    " + line)
        # the thread's first word and the stride, opaque to the compiler: it computes each
        # word's index again here instead of keeping R of them across the loop (MIN's body at
        # R = 64: spilled to local memory)
        self.emit("    const i64 gt_ = opaque(c_.gt), G_ = opaque(c_.G);")
        self.emit("#pragma unroll")
        self.emit("    for (int q_ = 0; q_ < R; ++q_) { i64 w_ = gt_ + (i64)q_ * G_;")
        stmts, expr = word("q_", False)
        for line in stmts:
            self.emit("        " + line)
        self.emit(f"        {out}.w[q_] = {expr};")
        if sink is not None:     # SOME's OR and the shared copy of each word as it is made
            ysh, acc, cond = sink
            self.emit(f"        {acc} |= {out}.w[q_]; if ({cond}) {ysh}[q_ * TPB + threadIdx.x] = {out}.w[q_];")
        self.emit("    }")
        self.emit("}")
        self.lines.append("#endif")
        self.reps[out] = T.SLICE
        return out

    def _fz(self, e: Node, pre: list):
        """Checks and counts of ``e`` (emitted now, as ``_vector`` emits them); returns the
        name of something whose ``.n`` is e's length and ``word(q, bare)``: (statements,
        expression) giving e's word q of this thread (``w_`` its index in the slice). With
        ``bare`` the word is ANDed with a non-zero word of an operand of the same length
        (the checks above made every length in the expression equal): then w_ is inside the
        slice and the bits past its length are 0 in that word, so loads need no bounds test
        and NOT no tail mask."""
        op = e.op
        if op is Op.VAR:
            x = self.vars[e.arg]
            return x, lambda q, bare: ([], f"{x}.w[{q}]")
        if op is Op.COPY:
            x, word = self._fz(e.src[0], pre)
            sid = self.site(e.loc)
            self.emit(self.unassigned(sid, x))
            return x, word
        if op is Op.COL_GET:
            i = self.val(e.src[0])
            sid = self.site(e.loc, op)
            t = self.table(e.src[1])
            self.emit(f"if (!(0 < {i} && {i} <= {t}.k)) {self.fail(sid, 'E_COL_INDEX', i, f'{t}.k')}")
            self.count(op)
            h, col = self.tmp("fn"), self.tmp("fc")
            self.emit(f"Ln {h}; {h}.n = {t}.n;")
            pre.append(f"const u64* {col} = {t}.d + ({i} - 1) * {t}.W;")
            return h, lambda q, bare: ([], f"ldt({col} + w_)" if bare else f"(w_ < {t}.W ? ldt({col} + w_) : 0ULL)")
        if op is Op.NOT:
            a, word = self._fz(e.src[0], pre)
            sid = self.site(e.loc, op)
            self.count(op)
            self.emit(self.unassigned(sid, a))
            h, nw, m = self.tmp("fn"), self.tmp("fw"), self.tmp("fm")
            self.emit(f"Ln {h}; {h}.n = {a}.n;")
            pre.append(f"const i64 {nw} = nwords({a}.n); const u64 {m} = tailm({a}.n);")

            def neg(q, bare):
                stmts, x = word(q, bare)
                if bare:
                    return stmts, f"(~{x})"
                return stmts, f"(w_ < {nw} ? (~{x} & (w_ == {nw} - 1 ? {m} : ALL)) : 0ULL)"
            return h, neg
        # AND, OR, XOR
        a, wa = self._fz(e.src[0], pre)
        b, wb = self._fz(e.src[1], pre)
        sid = self.site(e.loc, op)
        self.mismatch(sid, a, b)
        self.count(op)
        self.emit(self.unassigned(sid, a))
        self.emit(self.unassigned(sid, b))
        h = self.tmp("fn")
        self.emit(f"Ln {h}; {h}.n = {a}.n;")
        c = {Op.AND: "&", Op.OR: "|", Op.XOR: "^"}[op]
        loads_a, loads_b = _reads_memory(e.src[0]), _reads_memory(e.src[1])
        if op is Op.AND and (loads_a or loads_b):
            first, second = (wb, wa) if loads_a and not loads_b else (wa, wb)
            x, o = self.tmp("fx"), self.tmp("fo")

            def both(q, bare):
                s1, x1 = first(q, bare)
                s2, x2 = second(q, True)     # x != 0 here: x's zeros mask the rest
                return (s1 + [f"u64 {x} = {x1}; u64 {o} = 0ULL;",
                              f"if ({x} != 0ULL) {{ {' '.join(s2)} {o} = {x} & {x2}; }}"], o)
            return h, both

        def plain(q, bare):
            s1, x1 = wa(q, bare)
            s2, x2 = wb(q, bare)
            return s1 + s2, f"({x1} {c} {x2})"
        return h, plain

    # ------------------------------------------------------------------ parallel for: one warp per iteration
    def _s_PFOR(self, s):
        if not self.grid:
            raise Unsupported("a parallel for inside a parallel for", s.loc)
        if not fusable(s):
            raise Unsupported("a parallel for whose body is not fusable (forall.fusable)", s.loc)
        var, downto, info, snaps = s.arg
        self.has_pfor = True
        self.tick(s.loc)
        a, b, m = self.tmp("pa"), self.tmp("pb"), self.tmp("pm")
        self.emit(f"i64 {a} = {self.scalar(s.src[0])};")
        self.emit(f"i64 {b} = {self.scalar(s.src[1])};")
        self.emit(f"i64 {m} = {f'{a} - {b}' if downto else f'{b} - {a}'} + 1;")
        self.emit(f"if ({m} > 0) {{")
        self.ind += 1
        # the body, rendered first: it says which columns of the snapshots and which shared
        # slices it reads (those go through scratch regions, written before the barrier)
        outer = (self.lines, self.ind, self.vars, self.hints)
        self.pfor_n += 1
        self.pend = f"pend{self.pfor_n}_"
        self.lines, self.ind = [], 2
        self.vars = dict(self.vars)
        self.hints = {}
        self.private = info.private
        self.snap_of = {snap: orig for orig, snap in snaps.items()}
        self.loop_var = var
        pivot = getattr(self, "pivot", None)
        self.pivoting = pivot is not None and pivot["pfor"] is s
        self.pre: list[str] = []          # grid-mode lines before the barrier
        self.spilled: dict = {}           # shared slice symbol -> region
        self.precopied: dict = {}         # (snapshot, index text) -> _Precopy
        self.col_sets: list = []          # (line number in the body, table, vector) of COL(i, T) := v
        self.written: set = set()         # tables written so far in the body (textual order)
        self.own_cols: dict = {}          # table (C name) -> the iteration's own column, read by the body
        self.set_mode(False)
        lv = self.tmp("lv")
        self.vars[var] = lv
        decls = []
        for p in sorted(info.private, key=lambda x: x.pyname):
            if p is var:
                continue
            name = self.tmp("pv")
            self.vars[p] = name
            if p.type.is_vector:
                decls.append(f"{self.ctype(p.type)} {name}; {name}.n = {-1 - self.name_id(p.display)}; "
                             f"{self.zero(name, p.type)}")
            elif p.type in (T.INT, T.BOOL):
                decls.append(f"{self.ctype(p.type)} {name} = 0;")
            else:
                raise Unsupported(f"a private {p.type} in parallel for", s.loc)
        self.block(s.src[2])
        body = self.lines
        self.skip_unchanged_stores(body)
        self.set_mode(True)
        self.lines, self.ind, self.vars, self.hints = outer
        pivot_mode = self.pivoting and not self.spilled and all(
            pc.sym is pivot["var"] for pc in self.precopied.values())
        self.pivoting = False
        if pivot_mode:
            pivot["eligible"] = True
            pivot["prologue"] = [f"if (1 <= {pivot['first']} && {pivot['first']} <= {pc.t}.k) {{ V<R> cp_; "
                                 f"d_col_get(cp_, {pc.t}, {pivot['first']}, c_.gt, c_.G); "
                                 f"d_store({pc.buf('0')}, cp_, c_.gt, c_.G); }}" for pc in self.precopied.values()]
            nx = f"{self.vars[pivot['var']]} {'-' if pivot['downto'] else '+'} 1"
            # a column is written only by its own iteration (COL(e, T) := with e the index),
            # so pivot k+1's column is final when iteration k+1 of this loop has run: its warp
            # copies it (and each write of it) to the other buffer, read after the next barrier
            # (a write through another table parameter counts where both are one table)
            for line_no, t, v in self.col_sets:
                stores = [f"if ({lv} == nx_{'' if pc.t == t else f' && {t}.d == {pc.t}.d'}) "
                          f"d_store({pc.buf('1 - pp_')}, {v}, ln_, LANES);" for pc in self.precopied.values()]
                body[line_no] = body[line_no] + " " + " ".join(stores)
            self.emit("if (gsync_or(c_, wf_)) FAIL(0, E_RERUN, 0, 0, 0, 0);")
            self.emit(f"{{ i64 ln_ = threadIdx.x & (LANES - 1); i64 nx_ = {nx};")
        else:
            for line in self.pre:
                self.emit(line)
            self.emit("gsync(c_);")
            self.emit("{ int wf_ = 0; i64 ln_ = threadIdx.x & (LANES - 1);")
        self.ind += 1
        for pc in self.precopied.values():     # the same columns for every iteration: loaded once a block
            self.emit(f"V<RP> {pc.name}; d_load_block({pc.name}, {pc.buf('pp_') if pivot_mode else pc.region}, "
                      f"{pc.t}.n, ln_, LANES);")
        if pivot_mode:
            inside = (f"({b} <= nx_ && nx_ <= {a})" if downto else f"({a} <= nx_ && nx_ <= {b})")
            for pc in self.precopied.values():
                copy = (f"{{ V<RP> cq_; d_col_get(cq_, {pc.t}, nx_, ln_, LANES); "
                        f"d_store({pc.buf('1 - pp_')}, cq_, ln_, LANES); }}")
                self.emit(f"if (!{inside} && c_.gt / LANES == 0 && 1 <= nx_ && nx_ <= {pc.t}.k) {copy}")
        # the own columns the body reads, loaded at the top of the iteration (no other
        # iteration writes them; skip_unchanged_stores compares against them). Batches of a
        # warp's iterations with their columns loaded together, the first batch's before the
        # pivot column, measured slower (H100 at 7892b5c, WARSHALL-adapt n = 5000: batches of
        # 2 and 3 4.09 and 4.15 us a pivot against 3.94 with batches of 1; n = 16384, 2: 11.4
        # against 8.8; at d769c33 this loop 3.68 and 8.61)
        cached = pivot_mode and self.keeps_own_columns(s)
        if cached:
            # the warp's iterations' own columns kept in registers from pivot to pivot
            # (keeps_own_columns): a start other than the one they were loaded under moves
            # iterations between warps, so then every slot is loaded again
            pivot["prologue"].append("V<RP> occ_[OWNC > 0 ? OWNC : 1]; i64 ocv_[OWNC > 0 ? OWNC : 1]; "
                                     "i64 oca_ = OC_NONE;")
            self.lines.append("#if OWNC > 0")
            self.emit(f"if ({a} != oca_) {{")
            self.emit("    oca_ = {a};".replace("{a}", a))
            self.emit("#pragma unroll")
            self.emit("    for (int j_ = 0; j_ < OWNC; ++j_) ocv_[j_] = OC_NONE;")
            self.emit("}")
            self.emit("i64 it_ = c_.gt / LANES;")
            self.emit("#pragma unroll")
            self.emit("for (int j_ = 0; j_ < OWNC; ++j_) {")
            self.ind += 1
            self.emit(f"if (it_ >= {m}) break;")
            self.iteration(a, downto, lv, decls, body, pivot_mode, slot="j_")
            self.emit("it_ += c_.G / LANES;")
            self.ind -= 1
            self.emit("}")
            self.emit("for (; it_ < " + m + "; it_ += c_.G / LANES) {")
            self.lines.append("#else")
        self.emit("for (i64 it_ = c_.gt / LANES; it_ < " + m + "; it_ += c_.G / LANES) {")
        if cached:
            self.lines.append("#endif")
        self.ind += 1
        self.iteration(a, downto, lv, decls, body, pivot_mode)
        self.ind -= 1
        self.emit("}")
        self.emit(f"{self.pend}:")
        if pivot_mode:      # checked at the next barrier; the host also sees it if a step limit comes first
            self.emit("if (wf_) c_.red[9] = 1ULL;")
        else:
            self.emit("if (grid_red(c_, wf_ ? 1ULL : 0ULL, 0)) FAIL(0, E_RERUN, 0, 0, 0, 0);")
        self.ind -= 1
        self.emit("}")
        if var not in info.private:
            self.emit(f"{self.vars[var]} = {b};")
        if pivot_mode:      # no iteration: the next pivot's columns copied by their owners after a barrier
            self.ind -= 1
            self.emit("} else {")
            self.ind += 1
            self.emit("if (gsync_or(c_, wf_)) FAIL(0, E_RERUN, 0, 0, 0, 0);")
            self.emit(f"i64 nx_ = {nx};")
            for pc in self.precopied.values():
                self.emit(f"if (1 <= nx_ && nx_ <= {pc.t}.k) {{ V<R> cp_; d_col_get(cp_, {pc.t}, nx_, c_.gt, c_.G); "
                          f"d_store({pc.buf('1 - pp_')}, cp_, c_.gt, c_.G); }}")
        self.ind -= 1
        self.emit("}")

    def iteration(self, a: str, downto: bool, lv: str, decls: list, body: list, pivot_mode: bool,
                  slot: str | None = None) -> None:
        """One iteration of a parallel for (the loop variable ``lv`` from ``it_``): its own
        columns loaded (from slot ``slot`` of the warp's kept columns where it holds them),
        the next pivot's column copied by its owner, the private variables, the body."""
        self.emit(f"i64 {lv} = {a} {'-' if downto else '+'} it_;")
        for t, oc in self.own_cols.items():
            load = f"if (1 <= {lv} && {lv} <= {t}.k) d_col_get({oc}, {t}, {lv}, ln_, LANES);"
            if slot is None:
                self.emit(f"V<RP> {oc}; {load}")
            else:
                self.emit(f"V<RP>& {oc} = occ_[{slot}]; if (ocv_[{slot}] != {lv}) {{ ocv_[{slot}] = {lv}; {load} }}")
        if pivot_mode:
            for pc in self.precopied.values():
                if pc.t in self.own_cols:     # the owner's column is its own column: no second load
                    self.emit(f"if ({lv} == nx_ && 1 <= nx_ && nx_ <= {pc.t}.k) "
                              f"d_store({pc.buf('1 - pp_')}, {self.own_cols[pc.t]}, ln_, LANES);")
                else:
                    self.emit(f"if ({lv} == nx_ && 1 <= nx_ && nx_ <= {pc.t}.k) {{ V<RP> cq_; "
                              f"d_col_get(cq_, {pc.t}, nx_, ln_, LANES); d_store({pc.buf('1 - pp_')}, cq_, ln_, LANES); }}")
        for d in decls:
            self.emit(d)
        self.lines.extend(body)

    def keeps_own_columns(self, s: Node) -> bool:
        """A pivot loop's parallel for may keep each iteration's own column in registers from
        one pivot to the next: it reads the own column of one table and writes no other (a
        column is written only by its own iteration, so the warp's copy is what memory holds;
        a second table written may be the same one under another name), and its bounds call
        nothing (nothing else runs between its pivots). Switch OWN_LOADS: loaded every pivot."""
        if len(self.own_cols) != 1 or not {t for _line, t, _v in self.col_sets} <= set(self.own_cols):
            return False
        return not any(n.op is Op.CALL for e in s.src[:2] for n in walk(e))

    def skip_unchanged_stores(self, body: list) -> None:
        """COL(i, T) := v of a body that reads its own column of T and writes no other table
        stores only the words that differ from what the column holds (the batch's copy,
        then the last value stored): no other iteration writes column i, so memory holds
        exactly that copy. With a second table written (maybe the same one under another
        name) the copy could be stale, so every word is stored then."""
        tables = {t for _line, t, _v in self.col_sets}
        if len(tables) != 1:
            return
        t = tables.pop()
        if t not in self.own_cols:
            return
        oc = self.own_cols[t]
        for line_no, _t, v in self.col_sets:
            plain = f"d_col_set({t}, {self.vars[self.loop_var]}, {v}, ln_, LANES);"
            assert plain in body[line_no], body[line_no]
            body[line_no] = body[line_no].replace(
                plain, f"d_col_set_changed({t}, {self.vars[self.loop_var]}, {v}, {oc}, ln_, LANES); {oc} = {v};")

    def region(self) -> str:
        self.nscr += 1
        return f"(c_.scr + {self.nscr - 1} * c_.caps)"

    # ------------------------------------------------------------------ base operations as statements
    def base_stmt(self, s: Node) -> None:
        op = s.op
        if op is Op.STEP:
            self.scalar(s)
            return
        if op in (Op.SET, Op.CLR):
            x = self.var_vector(s.src[0])
            sid = self.site(s.loc, op)
            self.emit(self.unassigned(sid, x))
            self.count(op)
            if op is Op.CLR:
                self.emit(f"for (int q_ = 0; q_ < {self.nwords_of(s.src[0].type)}; ++q_) {x}.w[q_] = 0ULL;")
            elif s.src[0].type is T.WORD:
                self.emit(f"r_set({x});")
            else:
                self.emit(f"d_set({x}, {self.B}, {self.S});")
        elif op is Op.BIT_SET:
            x = self.var_vector(s.src[0])
            i, bit = self.val(s.src[1]), self.val(s.src[2])
            sid = self.site(s.loc, op)
            self.emit(f"if (!(0 < {i} && {i} <= {x}.n)) {{ {self.unassigned(sid, x)} "
                      f"{self.fail(sid, 'E_BIT_INDEX', i, f'{x}.n')} }}")
            self.emit(f"if ({bit} != 0 && {bit} != 1) {self.fail(sid, 'E_BIT_VALUE', bit)}")
            self.count(op)
            if s.src[0].type is T.WORD:
                self.emit(f"r_put({x}, {i} - 1, {bit});")
            else:
                self.emit(f"d_put_bit({x}, {i}, {bit}, {self.B}, {self.S});")
        elif op is Op.REP:
            i, j = self.val(s.src[0]), self.val(s.src[1])
            v = self.vector(s.src[2], want=T.WORD)
            w = self.var_vector(s.src[3])
            if s.src[3].type is not T.WORD:
                raise Unsupported("REP on a slice", s.loc)
            sid = self.site(s.loc, op)
            self.emit(f"if (!(1 <= {i} && {i} <= {j} && {j} <= {w}.n)) {{ {self.unassigned(sid, w)} "
                      f"{self.fail(sid, 'E_REP_RANGE', i, j, f'{w}.n')} }}")
            self.emit(f"if ({v}.n != {j} - {i} + 1) {{ {self.unassigned(sid, v)} "
                      f"{self.fail(sid, 'E_REP_LEN', i, j, f'{v}.n')} }}")
            self.count(op)
            self.emit(f"for (i64 q_ = 0; q_ < {j} - {i} + 1; ++q_) r_put({w}, {i} - 1 + q_, r_bit({v}, q_));")
        elif op is Op.COL_SET:
            i = self.val(s.src[0])
            t = self.table(s.src[1], write=True)
            if not self.grid and not (s.src[0].op is Op.VAR and s.src[0].arg is self.loop_var):
                raise Unsupported("a parallel for writing COL(e, T) with e other than its index", s.loc)
            v = self.vector(s.src[2], want=T.SLICE)
            if not self.grid:
                self.written.add(s.src[1].arg)
            sid = self.site(s.loc, op)
            self.emit(f"if (!(0 < {i} && {i} <= {t}.k)) {self.fail(sid, 'E_COL_INDEX', i, f'{t}.k')}")
            self.emit(f"if ({v}.n != {t}.n) {{ {self.unassigned(sid, v)} "
                      f"{self.fail(sid, 'E_COL_SET_LEN', i, f'{v}.n', f'{t}.n')} }}")
            self.count(op)
            self.emit(f"d_col_set({t}, {i}, {v}, {self.B}, {self.S});")
            if not self.grid:
                self.col_sets.append((len(self.lines) - 1, t, v))
        elif op is Op.ROW_SET:
            if not self.grid:
                raise Unsupported("ROW(i, T) := ... inside parallel for", s.loc)
            i = self.val(s.src[0])
            t = self.table(s.src[1], write=True)
            v = self.vector(s.src[2], want=T.WORD)
            sid = self.site(s.loc, op)
            self.emit(f"if (!(0 < {i} && {i} <= {t}.n)) {self.fail(sid, 'E_ROW_INDEX', i, f'{t}.n')}")
            self.emit(f"if ({v}.n != {t}.k) {{ {self.unassigned(sid, v)} "
                      f"{self.fail(sid, 'E_ROW_SET_LEN', i, f'{v}.n', f'{t}.k')} }}")
            self.count(op)
            self.emit(f"r_row_set({t}, {i}, {v}, c_.gt, c_.G);")
        else:
            raise Unsupported(f"the statement {op.name}", s.loc)

    def nwords_of(self, t: T) -> str:
        return "KW" if t is T.WORD else ("R" if self.grid else "RP")

    def var_vector(self, e: Node) -> str:
        """A vector variable changed in place (SET, CLR, STEP, BIT_SET, REP)."""
        if e.op is not Op.VAR:
            raise Unsupported(f"{e.op.name} changed in place", e.loc)
        if not self.grid and e.arg not in self.private:
            raise Unsupported("a parallel for changing a shared vector in place", e.loc)
        return self.vars[e.arg]

    def table(self, e: Node, write: bool = False) -> str:
        if e.op is not Op.VAR or e.arg.type is not T.TABLE:
            raise Unsupported(f"the table expression {e.op.name}", e.loc)
        if write:
            self.writes_tables = True
        return self.vars[e.arg]

    # ------------------------------------------------------------------ calls
    def call(self, e: Node, statement: bool) -> str:
        if not self.grid:
            raise Unsupported("a call inside parallel for", e.loc)
        info, outs = e.arg
        if info.pyname not in self.bodies:
            raise Unsupported(f"calls '{info.display}', which is not compiled", e.loc)
        if not statement:
            from ..numba.lower import _writes_globals, _writes_output
            if outs:
                raise Unsupported(f"'{info.display}' (it has var parameters) is called inside an expression", e.loc)
            if _writes_globals(self.bodies, info.pyname):
                raise Unsupported(f"'{info.display}' (it assigns global variables) is called inside an expression", e.loc)
            if _writes_output(self.bodies, info.pyname):
                raise Unsupported(f"'{info.display}' (it writes output) is called inside an expression", e.loc)
        args = []
        for a, p in zip(e.src, info.params):
            if p.type is T.TABLE:
                args.append(self.table(a))
            elif p.by_ref:
                if a.op is not Op.VAR:
                    raise Unsupported("a var argument that is not a variable", a.loc)
                args.append(self.vars[a.arg])
            elif p.type.is_vector:
                args.append(self.vector(a, want=p.type))
            else:
                args.append(self.scalar(a))
        args += [self.vars[g] for g in self.routine_globals(info.pyname)]
        out = None
        if info.result is not None:
            out = self.tmp("r")
            self.emit(f"{self.ctype(info.result.type)} {out};" if info.result.type.is_vector
                      else f"{self.ctype(info.result.type)} {out} = 0;")
            args.append(out)
        sid = self.site(e.loc)
        self.emit(f"if (c_.gt == 0) c_.st[S_STACK + c_.sp] = {sid}; c_.sp++;")
        self.emit(f"f_{info.pyname}({', '.join(['c_'] + args)});")
        self.emit("c_.sp--; if (c_.failed) return;")
        return out

    # ------------------------------------------------------------------ expressions
    def val(self, e: Node) -> str:
        """A scalar evaluated once into a temporary (operands used several times)."""
        x = self.scalar(e)
        if x.isidentifier() or x.lstrip("-").rstrip("L").isdigit():
            return x
        t = self.tmp("s")
        self.emit(f"{self.ctype(e.type)} {t} = {x};")
        return t

    def new_vec(self, t: T) -> str:
        name = self.tmp("v")
        self.emit(f"{self.ctype(t)} {name};")
        self.reps[name] = t
        return name

    def rep(self, x: str, fallback: T) -> T:
        """How the value named x is held: T.SLICE (spread over the grid) or T.WORD (in every
        thread); a BITS literal is a word even where the checker typed it a slice."""
        return self.reps.get(x, fallback)

    def convert(self, x: str, have: T, want: T) -> str:
        if want is None or have is want or not (have.is_vector and want.is_vector):
            return x
        if want is T.SLICE:            # a word's words, each owner takes its own
            o = self.new_vec(T.SLICE)
            n = "R" if self.grid else "RP"
            self.emit(f"for (int q_ = 0; q_ < {n}; ++q_) {{ i64 w_ = {self.B} + q_ * {self.S}; "
                      f"{o}.w[q_] = (w_ < KW) ? {x}.w[w_ < KW ? w_ : 0] : 0ULL; }} {o}.n = {x}.n;")
            return o
        if not self.grid:
            raise Unsupported("a slice turned into a word inside parallel for")
        self.slice_as_word = True
        o = self.new_vec(T.WORD)
        self.emit(f"d_store(c_.scr, {x}, c_.gt, c_.G); gsync(c_);")
        self.emit(f"{o}.n = {x}.n; for (int q_ = 0; q_ < KW; ++q_) "
                  f"{o}.w[q_] = q_ < nwords({x}.n) ? __ldcg(c_.scr + q_) : 0ULL; gsync(c_);")
        return o

    def vector(self, e: Node, want: T | None = None) -> str:
        x = self._vector(e)
        return self.convert(x, self.rep(x, e.type), want)

    def _vector(self, e: Node) -> str:
        op = e.op
        if op is Op.VAR:
            sym = e.arg
            if not self.grid and sym not in self.private and sym.type is T.SLICE:
                return self.shared_slice(sym)
            return self.vars[sym]
        if op is Op.COPY:
            x = self.vector(e.src[0])
            sid = self.site(e.loc)
            self.emit(self.unassigned(sid, x))
            return x
        if op is Op.BITS:
            self.literal_bits = max(self.literal_bits, len(e.arg))
            words = [0] * ((len(e.arg) + 63) // 64)
            for i, c in enumerate(e.arg):
                if c == "1":
                    words[i >> 6] |= 1 << (i & 63)
            o = self.new_vec(T.WORD)
            self.emit(f"{o}.n = {len(e.arg)}; {self.zero(o, T.WORD)}")
            for i, w in enumerate(words):
                if w:
                    self.emit(f"{o}.w[{i}] = {w}ULL;")
            return o
        if op is Op.CALL:
            return self.call(e, statement=False)
        if op in (Op.AND, Op.OR, Op.XOR):
            a = self.vector(e.src[0])
            ra = self.rep(a, e.src[0].type)
            b = self.vector(e.src[1], want=ra)
            sid = self.site(e.loc, op)
            self.mismatch(sid, a, b)
            self.count(op)
            self.emit(self.unassigned(sid, a))
            self.emit(self.unassigned(sid, b))
            o = self.new_vec(ra)
            if ra is T.WORD:
                c = {Op.AND: "&", Op.OR: "|", Op.XOR: "^"}[op]
                self.emit(f"for (int q_ = 0; q_ < KW; ++q_) {o}.w[q_] = {a}.w[q_] {c} {b}.w[q_]; {o}.n = {a}.n;")
            else:
                self.emit(f"d_logic({o}, {a}, {b}, {_LOGIC[op]});")
            return o
        if op is Op.NOT:
            a = self.vector(e.src[0])
            sid = self.site(e.loc, op)
            self.count(op)
            self.emit(self.unassigned(sid, a))
            ra = self.rep(a, e.src[0].type)
            o = self.new_vec(ra)
            self.emit(f"r_not({o}, {a});" if ra is T.WORD else f"d_not({o}, {a}, {self.B}, {self.S});")
            return o
        if op is Op.COL_GET:
            i = self.val(e.src[0])
            sid = self.site(e.loc, op)
            src = e.src[1]
            if not self.grid and src.op is Op.VAR and src.arg in self.snap_of:
                return self.snapshot_col(e, i, sid)
            t = self.table(src)
            self.emit(f"if (!(0 < {i} && {i} <= {t}.k)) {self.fail(sid, 'E_COL_INDEX', i, f'{t}.k')}")
            self.count(op)
            o = self.new_vec(T.SLICE)
            self.emit(f"d_col_get({o}, {t}, {i}, {self.B}, {self.S});")
            return o
        if op is Op.ROW_GET:
            i = self.val(e.src[0])
            src = e.src[1]
            if not self.grid and src.op is Op.VAR and (src.arg in self.snap_of or src.arg in self.written):
                raise Unsupported("ROW of a table that the parallel for writes", e.loc)
            t = self.table(src)
            sid = self.site(e.loc, op)
            self.emit(f"if (!(0 < {i} && {i} <= {t}.n)) {self.fail(sid, 'E_ROW_INDEX', i, f'{t}.n')}")
            self.count(op)
            if self.grid:
                self.emit("gsync(c_);")      # the bits of row i are in every owner's column words
            o = self.new_vec(T.WORD)
            self.emit(f"r_row_get{'_grid' if self.grid else ''}({o}, {t}, {i});")
            return o
        if op is Op.FRST:
            x = self.vector(e.src[0])
            sid = self.site(e.loc, op)
            self.count(op)
            self.emit(self.unassigned(sid, x))
            rx = self.rep(x, e.src[0].type)
            o = self.new_vec(rx)
            if rx is T.WORD:
                self.emit(f"{{ i64 p_ = r_fnd({x}, 0); {self.zero(o, T.WORD)} {o}.n = {x}.n; "
                          f"if (p_) r_put({o}, p_ - 1, 1); }}")
            else:
                self.emit(f"{{ i64 p_ = d_fnd<{self.nwords_of(T.SLICE)}, {self.GRID}>(c_, {x}, {self.B}, {self.S}); "
                          f"d_only_bit({o}, {x}, p_, {self.B}, {self.S}); }}")
            return o
        if op is Op.CONVERT:
            x = self.vector(e.src[0])
            sid = self.site(e.loc, op)
            self.count(op)
            self.emit(self.unassigned(sid, x))
            return self.convert(x, self.rep(x, e.src[0].type), T.WORD)
        if op is Op.TRIM:
            i, j = self.val(e.src[0]), self.val(e.src[1])
            w = self.vector(e.src[2], want=T.WORD)
            sid = self.site(e.loc, op)
            self.emit(f"if (!(1 <= {i} && {i} <= {j} && {j} <= {w}.n)) {{ {self.unassigned(sid, w)} "
                      f"{self.fail(sid, 'E_TRIM', i, j, f'{w}.n')} }}")
            self.count(op)
            o = self.new_vec(T.WORD)
            self.emit(f"r_trim({o}, {w}, {i}, {j});")
            return o
        if op in (Op.ADD, Op.SUBT):
            a = self.vector(e.src[0], want=T.WORD)
            b = self.vector(e.src[1], want=T.WORD)
            sid = self.site(e.loc, op)
            self.mismatch(sid, a, b)
            self.count(op)
            self.emit(self.unassigned(sid, a))
            self.emit(self.unassigned(sid, b))
            o = self.new_vec(T.WORD)
            self.emit(f"r_arith({o}, {a}, {b}, {'true' if op is Op.SUBT else 'false'});")
            return o
        raise Unsupported(f"the vector expression {op.name}", e.loc)

    def shared_slice(self, sym) -> str:
        """A slice of the routine read inside parallel for: stored by its owners before the
        barrier, loaded by every warp."""
        if sym not in self.spilled:
            reg = self.region()
            self.spilled[sym] = reg
            gv = self.vars_outer(sym)
            self.pre.append(f"if ({gv}.n >= 0) d_store({reg}, {gv}, c_.gt, c_.G);")
        o = self.new_vec(T.SLICE)
        self.emit(f"d_load({o}, {self.spilled[sym]}, {self.vars_outer(sym)}.n, ln_, LANES);")
        return o

    def vars_outer(self, sym) -> str:
        return self.vars[sym]

    def snapshot_col(self, e: Node, i: str, sid: str) -> str:
        """COL(e, T) of the table as it was before the loop: the iteration's own column (not
        written yet by this iteration: read live), or a column chosen before the loop
        (copied to a scratch region before the barrier)."""
        snap = e.src[1].arg
        orig = self.snap_of[snap]
        t = self.vars[orig]
        idx = e.src[0]
        self.emit(f"if (!(0 < {i} && {i} <= {t}.k)) {self.fail(sid, 'E_COL_INDEX', i, f'{t}.k')}")
        self.count(Op.COL_GET)
        o = self.new_vec(T.SLICE)
        if idx.op is Op.VAR and idx.arg is self.loop_var:
            if orig in self.written:
                raise Unsupported("a parallel for reading its own column after writing it", e.loc)
            if t not in self.own_cols:
                self.own_cols[t] = self.tmp("oc")
            self.emit(f"{o} = {self.own_cols[t]};")     # loaded at the top of the iteration (_s_PFOR)
            return o
        if not _invariant(idx, self.private, self.loop_var):
            raise Unsupported("a parallel for reading a column that depends on the iteration", e.loc)
        key = (snap, idx.arg if idx.op is Op.VAR else repr(idx.arg))
        if key not in self.precopied:
            if idx.op not in (Op.VAR, Op.CONST):
                raise Unsupported("a parallel for reading a column at a computed index", e.loc)
            reg = self.region()
            if self.pivoting:        # a second region: the pivot loop's other buffer
                self.nscr += 1
            ix = self.vars[idx.arg] if idx.op is Op.VAR else f"{int(idx.arg)}LL"
            pc = _Precopy(self.tmp("sn"), reg, self.nscr - (2 if self.pivoting else 1), t,
                          idx.arg if idx.op is Op.VAR else None)
            self.precopied[key] = pc
            self.pre.append(f"if (1 <= {ix} && {ix} <= {t}.k) {{ V<R> cp_; d_col_get(cp_, {t}, {ix}, c_.gt, c_.G); "
                            f"d_store({reg}, cp_, c_.gt, c_.G); }}")
        self.emit(f"{o} = {self.precopied[key].name};")
        return o

    def scalar(self, e: Node) -> str:
        op = e.op
        if op is Op.CONST:
            if isinstance(e.arg, bool):
                return "true" if e.arg else "false"
            if isinstance(e.arg, int):
                check_int64(e)
                return "(-9223372036854775807LL - 1)" if e.arg == -(1 << 63) else f"{e.arg}LL"
            raise Unsupported(f"the constant {e.arg!r}", e.loc)
        if op is Op.VAR:
            return self.vars[e.arg]
        if op is Op.BINARY:
            return self.binary(e)
        if op is Op.UNARY:
            a = self.val(e.src[0])
            if e.arg == "neg":
                sid = self.site(e.loc)
                self.restartable = True
                self.emit(f"if ({a} == (-9223372036854775807LL - 1)) {self.fail(sid, 'E_OVERFLOW', '0', a, '1')}")
                return f"(-{a})"
            return f"(!{a})"
        if op is Op.LEN:
            x = self.vector(e.src[0])
            sid = self.site(e.loc)
            self.emit(self.unassigned(sid, x))
            return f"{x}.n"
        if op is Op.NROWS:
            return f"{self.table(e.src[0]) if e.src[0].arg not in getattr(self, 'snap_of', {}) else self.vars[self.snap_of[e.src[0].arg]]}.n"
        if op is Op.NCOLS:
            return f"{self.table(e.src[0]) if e.src[0].arg not in getattr(self, 'snap_of', {}) else self.vars[self.snap_of[e.src[0].arg]]}.k"
        if op is Op.CALL:
            return self.call(e, statement=False)
        if op is Op.BIT_GET:
            x = self.vector(e.src[0])
            i = self.val(e.src[1])
            sid = self.site(e.loc, op)
            self.emit(f"if (!(0 < {i} && {i} <= {x}.n)) {{ {self.unassigned(sid, x)} "
                      f"{self.fail(sid, 'E_BIT_INDEX', i, f'{x}.n')} }}")
            self.count(op)
            if self.rep(x, e.src[0].type) is T.WORD:
                return f"r_bit({x}, {i} - 1)"
            o = self.tmp("s")
            self.emit(f"i64 {o} = (i64)((d_word_at<{self.nwords_of(T.SLICE)}, {self.GRID}>(c_, {x}, ({i} - 1) >> 6, "
                      f"{self.B}, {self.S}) >> (({i} - 1) & 63)) & 1ULL);")
            return o
        if op in (Op.FND, Op.STEP, Op.NUMB, Op.SOME):
            if op is Op.STEP:
                x = self.var_vector(e.src[0])
            else:
                x = self.vector(e.src[0])
            sid = self.site(e.loc, op)
            self.count(op)
            self.emit(self.unassigned(sid, x))
            word = self.rep(x, e.src[0].type) is T.WORD
            o = self.tmp("s")
            N = self.nwords_of(T.SLICE)
            acc = getattr(self, "some_acc", None)
            if op is Op.SOME and acc is not None and e.src[0].op is Op.VAR and e.src[0].arg is acc[0]:
                # the OR of Y's words, made as Y was (block()): only the reduction's barrier here
                self.emit(f"bool {o} = grid_red(c_, {acc[1]} != 0ULL ? 1ULL : 0ULL, 0) != 0ULL;")
            elif op is Op.SOME:
                self.emit(f"bool {o} = {f'r_some({x})' if word else f'd_some<{N}, {self.GRID}>(c_, {x})'};")
            elif op is Op.NUMB:
                self.emit(f"i64 {o} = {f'r_numb({x})' if word else f'd_numb<{N}, {self.GRID}>(c_, {x})'};")
            elif word:
                h = self.hints.get(e.src[0].arg) if op is Op.STEP else None
                self.emit(f"i64 {o} = r_fnd({x}, {h or 0});")
                if op is Op.STEP:
                    self.emit(f"if ({o}) r_put({x}, {o} - 1, 0);")
                    if h:
                        self.emit(f"{h} = {o} ? ({o} - 1) >> 6 : nwords({x}.n);")
            else:
                self.emit(f"i64 {o} = d_fnd<{N}, {self.GRID}>(c_, {x}, {self.B}, {self.S});")
                if op is Op.STEP:
                    self.emit(f"d_clear_bit({x}, {o}, {self.B}, {self.S});")
            return o
        if op in _CMP:
            a = self.vector(e.src[0])
            ra = self.rep(a, e.src[0].type)
            b = self.vector(e.src[1], want=ra)
            sid = self.site(e.loc, op)
            self.mismatch(sid, a, b)
            self.count(op)
            self.emit(self.unassigned(sid, a))
            self.emit(self.unassigned(sid, b))
            o = self.tmp("s")
            if ra is T.WORD:
                self.emit(f"bool {o} = r_cmp({a}, {b}) {_CMP[op]};")
            else:
                self.emit(f"bool {o} = d_cmp<{self.nwords_of(T.SLICE)}, {self.GRID}>(c_, {a}, {b}, {self.B}, {self.S}) "
                          f"{_CMP[op]};")
            return o
        raise Unsupported(f"the expression {op.name}", e.loc)

    def binary(self, e: Node) -> str:
        o = e.arg
        if o in ("and", "or") and e.type is T.BOOL:
            out = self.tmp("s")
            a = self.scalar(e.src[0])
            self.emit(f"bool {out} = {a};")
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
                self.emit(f"if ({b} == -1 && {a} == (-9223372036854775807LL - 1)) "
                          f"{self.fail(sid, 'E_OVERFLOW', a, b, '3')}")
                return q
            return f"({b} == -1 ? 0LL : ({a} - {q} * {b}))"
        if o in ("+", "-", "*"):
            sid = self.site(e.loc)
            r = self.tmp("s")
            fn, c = {"+": ("add_ovf", "0"), "-": ("sub_ovf", "1"), "*": ("mul_ovf", "2")}[o]
            self.restartable = True
            self.emit(f"i64 {r}; if ({fn}({a}, {b}, {r})) {self.fail(sid, 'E_OVERFLOW', a, b, c)}")
            return r
        return f"({a} {_SCALAR_C[o]} {b})"


@dataclass
class _Precopy:
    """A column of a snapshot read by every iteration of a parallel for (COL(k, S), k not the
    iteration's index): copied to scratch before the loop's barrier, loaded once a warp."""
    name: str            # the warp's copy (V<RP>)
    region: str          # its scratch region (C expression)
    index: int           # the region's number (a pivot loop uses it and the next one)
    t: str               # the table's C name
    sym: object          # the index variable (None for a constant)

    def buf(self, parity: str) -> str:
        return f"(c_.scr + ({self.index} + {parity}) * c_.caps)"


_COUNT = re.compile(r"c_\.(cn|wn)\[\d+\]\+\+;")
_FUSED_OPS = (Op.VAR, Op.COPY, Op.NOT, Op.AND, Op.OR, Op.XOR, Op.COL_GET)


def _fusable(e: Node) -> bool:
    """A slice expression that fused_slice renders word by word: logic, NOT, copies and COL
    reads of table variables over slice variables (no literal, call, conversion or
    reduction), with at least one operation (a bare variable is a copy)."""
    return e.op not in (Op.VAR, Op.COPY) and _word_wise(e)


def _word_wise(e: Node) -> bool:
    if e.type is not T.SLICE or e.op not in _FUSED_OPS:
        return False
    if e.op is Op.VAR:
        return e.arg.type is T.SLICE
    if e.op is Op.COL_GET:      # its index is a scalar, evaluated before the words
        return e.src[1].op is Op.VAR and e.src[1].arg.type is T.TABLE
    return all(_word_wise(s) for s in e.src)


def _reads_memory(e: Node) -> bool:
    """e (a _word_wise expression) loads table words."""
    return e.op is Op.COL_GET or (e.op is not Op.VAR and any(_reads_memory(s) for s in e.src))


def _fused_switch() -> bool:
    """STARVM_GPU_FUSE=0 renders slice logic op by op only (the code of before, no #if)."""
    return config.gpu_fuse()
_PLAIN = (Op.VAR, Op.NOT, Op.AND, Op.OR, Op.XOR, Op.COL_GET, Op.CONST)


def _plain_logic(e: Node, y) -> bool:
    """E of ``Y := E`` is recomputable: vector logic on variables other than Y and COL reads
    whose index is a variable or a constant (no calls, no reductions, no ROW reads)."""
    for n in walk(e):
        if n.op not in _PLAIN or (n.op is Op.VAR and n.arg is y):
            return False
        if n.op is Op.COL_GET and n.src[0].op not in (Op.VAR, Op.CONST):
            return False
    return True


def _invariant(e: Node, private, loop_var) -> bool:
    if e.op is Op.VAR:
        return e.arg is not loop_var and e.arg not in private
    if e.op is Op.CONST:
        return True
    return False


def _stepped(body: Node) -> list:
    out = []
    for n in walk(body):
        if n.op is Op.STEP and n.src[0].op is Op.VAR and n.src[0].arg not in out:
            out.append(n.src[0].arg)
    return out


def render(bodies: dict, root: str) -> KernelPlan:
    """The kernel template of ``root`` (and its callees); raises Unsupported."""
    return CudaRenderer(bodies).render(root)


# what the switches of instance() bring back, for measuring what their replacements saved
SWITCHES = {
    "GEN_BARRIER": "the grid barrier of before: a generation word released by the last arrival",
    "STORE_ALL": "every word of COL(i, T) := v stored inside parallel for",
    "WARP_LOADS": "each warp loading the columns every iteration reads from L2 itself",
    "RECOMPUTE": "Y of `Y := E; if SOME(Y) then` computed again in the branch, not kept across the barrier",
    "UNFUSED": "slice logic computed operation by operation into whole vectors (every word of a COL read loaded)",
    "NO_YSH": "Y of `Y := E; if SOME(Y) then` kept in registers across the barrier also where shared memory holds it",
    "FENCE_BARRIER": "the grid barrier's arrival and spin with full fences (before: no release/acquire forms)",
    "OWN_LOADS": "a pivot loop's iterations loading their own columns from L2 at every pivot (none kept in registers)",
}


def instance(plan: KernelPlan, R: int, KW: int, RP: int, LB: int = 0, switches=(), MB: int = 0,
             OWNC: int = -1, LANES: int = 32) -> str:
    """The compilable source for R slice words per thread, KW words per word value, RP
    slice words per lane inside parallel for and (LB > 0) at most LB threads a block, its
    registers limited so that LB fit an SM (only where more than 256 are launched: with
    __launch_bounds__(256) NVRTC gave MIN's body 32 registers and 7.8 KB of spills instead
    of 255 and 1.8 KB); MB > 0 (with LB): registers limited so that MB blocks of LB fit an
    SM. OWNC: the iterations a warp of a pivot loop keeps its own column of in registers
    (keeps_own_columns; -1: as many as 10 words a lane hold, at most 8, none above RP = 6).
    LANES: the lanes an iteration of parallel for runs on (32, 16 or 8; RP words each). ``switches``: names
    of SWITCHES."""
    bounds = (f"__launch_bounds__({LB}, {MB})" if MB > 0 else f"__launch_bounds__({LB})") if LB > 0 else ""
    if LANES not in (8, 16, 32):
        raise ValueError(f"LANES must be 8, 16 or 32, not {LANES}")
    unknown = set(switches) - set(SWITCHES)
    if unknown:
        raise ValueError(f"unknown switches {sorted(unknown)}")
    if OWNC < 0:      # a pivot loop's own columns kept a group: up to 10 words a lane (OWNC * RP)
        # (H100, WARSHALL-adapt n = 5000 on 32 lanes, RP = 4: 3 kept 3.36 us a pivot, 4 3.42,
        # none 3.70; RP = 3: 3 kept 2.76, 4 2.84; on 16 lanes, RP = 5: 2 kept 2.58, 1 3.00,
        # none 3.19; n = 16384, RP = 8: 2 kept 9.12, none 8.99, more spill)
        OWNC = min(8, 10 // RP) if RP <= 6 else 0
    return (f"#define R {R}\n#define KW {KW}\n#define RP {RP}\n#define TPB {LB if LB > 0 else 256}\n"
            f"#define KBOUNDS {bounds}\n#define OWNC {OWNC}\n#define LANES {LANES}\n"
            + "".join(f"#define {name} 1\n" for name in sorted(switches)) + plan.source)


__all__ = ["E", "KERNEL_NAME", "KernelPlan", "CudaRenderer", "render", "instance", "Unsupported"]
