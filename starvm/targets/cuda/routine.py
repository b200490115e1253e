"""Render a checked routine (IR, with its callees) to the CUDA C of ONE cooperative kernel.

The GPU side of the compiled tier (issue 10, item 2). The kernel's layout of values is
described in ``prelude.py`` (its C in prelude.cu): slices distributed over the grid by word,
words replicated in every thread, tables in global memory, scalars in registers, every thread
running the same scalar control flow. Callees become ``__forceinline__`` device functions,
those on a cycle of calls (recursion, mutual too) ``__noinline__`` ones: every call checks the
recursion limit (E_DEPTH) and each recursive routine's entry the stack room (``stack_room``).
A barrier (``gsync``) stands only where data crosses threads: grid reductions (SOME, NUMB,
FND, STEP, FRST and bit tests of slices), ROW reads after table writes, a slice turned into
a word, and the two ends of a `parallel for`, whose iterations run one per warp.

``RoutineRenderer`` is the base renderer (renderer.py: the op tables, the scalar rules both
CUDA kernels share) with three parts of its own: statements.py, expressions.py and
parallel_for.py; this module holds the routine's device function, the kernel's entry and
the instance (``instance``: the #defines a launch shape gives the template).

Steps are counted per kind at the points targets/numba/kernels.py counts them and every
check runs in the same order with the same error codes, so ``errors.star_error`` maps a
failure (status array + site) to the interpreter's message. A failure inside a `parallel
for` (iterations run at once there) asks the host to restore the tables and run the call
interpreted (``E_RERUN``), which then reports the first failing iteration exactly.

Local tables come from a pool the host sizes (``new_table``: a bump allocator, given back on
return; ``E_POOL`` asks the host for a larger pool and a new launch).

``Unsupported`` names what is not compiled (the routine then runs interpreted):
`parallel for` bodies other than fusable ones without loops or calls, calls inside
expressions to routines with `var` parameters, output or global writes, tables printed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from string import Template

from ...ir.ops import BASE_OPS, STEP_INDEX, Node, Op
from ..layout import E
from ...types import T
from ...ir.walk import callees, direct_globals, walk
from ..common import Compiled, Lowered, Site, Unsupported
from .expressions import Expressions
from .parallel_for import ParallelFor
from .prelude import PRELUDE, cuda_text, defines
from .ranks import instance_defines, prelude as ranks_prelude
from .renderer import CudaRenderer
from .statements import Statements

KERNEL_NAME = "star_routine"
# the kernel's entry: the root's arguments unpacked, its call, the results written back
_ENTRY = Template(cuda_text("routine_kernel.cu"))


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
    pool: bool = False                   # allocates local tables (the kernel takes the pool: E_POOL to grow it)
    recursive: bool = False              # a cycle of calls: the kernel takes the call depth and stack room
    depth: int = 0                       # the longest chain of calls inside (not recursive)
    graph_reads: list = field(default_factory=list)  # GRAPH_N, ... read: the host passes their values (gq)
    part: bool = False                   # a main block's part (ir/main_parts.py): no Star call of its own
    body: Node | None = None             # the root's body
    ranks: bool = False                  # for MPI ranks (ranks.py): instance() takes the rank's #defines
    writes_output: bool = False          # a write call inside (its records go to the host while it runs: out_pub)


class RoutineRenderer(Statements, ParallelFor, Expressions, CudaRenderer):
    """Renders one root routine and the routines it calls."""

    def __init__(self, bodies: dict, ranks: bool = False):
        self.bodies = bodies
        self.ranks = ranks        # a kernel of one MPI rank of several (ranks.py): cross-rank steps posted
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
        self.pool = False         # a local table somewhere: the kernel takes the host's pool
        self.recursive: set = set()   # routines on a cycle of calls (__noinline__ device functions)
        self.protos: list[str] = []   # their prototypes (a call may come before the definition)
        self.graph_reads: list[str] = []   # the graph's scalars read (Op.GRAPH 'n', 'm', ...): c_.gq[i]
        self.ahead: dict = {}     # table -> (loop variable, buffer, phase): COL(j, T) loaded ahead (columns_ahead)
        self.step_taken: dict = {}   # id(STEP node) -> the C name of the position some_step took for it

    def routine_globals(self, pyname: str, _stack=()) -> list:
        if pyname in self._globals:
            return self._globals[pyname]
        _info, body = self.bodies[pyname]
        found = set(direct_globals(body))
        for c in routine_calls(_info, body):
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

    def tmp(self, prefix: str = "t") -> str:
        self.tmpn += 1
        return f"{prefix}{self.tmpn}"

    # ------------------------------------------------------------------ the module
    def render(self, root: str) -> KernelPlan:
        info, _body = self.bodies[root]
        if info is None:
            raise Unsupported("the main block (the GPU tier compiles routines)")
        order, seen, path = [], set(), []
        depth = {}

        def visit(p):
            if p in path:    # a cycle: its routines are device functions of their own (recursion)
                self.recursive.update(path[path.index(p):])
                return
            if p in seen:
                return
            seen.add(p)
            if p not in self.bodies:
                raise Unsupported(f"calls '{p}', which is not compiled")
            path.append(p)
            depth[p] = 0
            for c in routine_calls(*self.bodies[p]):
                visit(c.pyname)
                depth[p] = max(depth[p], depth.get(c.pyname, 0) + 1)
            path.pop()
            order.append(p)
        visit(root)
        if self.ranks and self.recursive:
            raise Unsupported("recursion on GPU ranks (each rank's stack room would be its own)")
        for p in order:
            self.function(p)
        kernel, params, globs, outputs = self.kernel(root)
        # a recursive kernel's status block has room for the call sites of Machine.max_depth calls
        # (MAXD, instance()): the recursion limit, as the CPU tier's status array (kernels.enter)
        deep = "#undef STATUS_SIZE\n#define STATUS_SIZE (S_STACK + MAXD + 1)\n" if self.recursive else ""
        # a local table's slices made words (new_table's check): only where some slice becomes a word
        deep += f"#define AS_WORD_ {int(self.slice_as_word)}\n" if self.pool else ""
        source = (defines(len(BASE_OPS)) + deep + f"#define NYSH {self.nysh}\n"
                  + (ranks_prelude() if self.ranks else PRELUDE) + "\n"
                  + "".join(self.protos) + "\n".join(self.funcs) + "\n" + kernel)
        compiled = {root: Compiled(KERNEL_NAME, info, globs, [g for g in globs if g.type is not T.TABLE])}
        lowered = Lowered(source, compiled, self.sites, self.names, self.strings)
        funcs = "\n".join(self.funcs)      # every barrier is one of these calls (grid-mode reductions: <N, true>)
        # (a write call's, whose full buffer waits for the host; on ranks also the Ctrl-C poll at
        # a tick, a grid reduction there, and the posts' helpers)
        marks = ("gsync", "grid_red", ", true>(", "out_room(") + (("intr_poll(", "rk_gather(", "rk_row_get(") if self.ranks else ())
        free = not any(x in funcs for x in marks)
        return KernelPlan(source, lowered, root, params, globs, outputs, self.literal_bits, self.slice_as_word,
                          self.has_pfor, self.nscr, self.writes_tables, free, self.restartable, self.pool,
                          bool(self.recursive), depth[root], list(self.graph_reads), getattr(info, "part", False),
                          _body, self.ranks, "out_pub(c_" in funcs)

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
        self.pyname = pyname
        if not getattr(info, "part", False):     # a Star call's step (a main block's part is none)
            self.tick(info.node.loc)
        for p in info.params:
            if p.length_of is not None:
                what = f"argument {p.display!r} ({p.type}({p.length_of.display}))"
                x = self.vars[p]
                sid = self.site(p.loc, what=what)
                self.emit(f"if ({x}.n != {self.length_of(p)}) {{ if ({x}.n < 0) UNASSIGNED({sid}, {x}.n); "
                          f"FAIL({sid}, E_CHECK_LEN, {self.length_of(p)}, {x}.n, 0, 0); }}")
        tables = [s for s in locals_ if s.type is T.TABLE]
        if pyname in self.recursive:
            self.stack_room(info)
        if tables:       # local tables: this call's part of the pool, given back on return
            self.emit("const i64 pt0_ = c_.ptop;")
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
        if tables:
            self.emit("c_.ptop = pt0_;")
        inline = "__noinline__" if pyname in self.recursive else "__forceinline__"
        if pyname in self.recursive:
            self.protos.append(f"__device__ __noinline__ void f_{pyname}({', '.join(sig)});\n")
        self.funcs.append(f"__device__ {inline} void f_{c_name(pyname, info)}({', '.join(sig)}) {{\n"
                          + "\n".join(self.lines) + "\n}\n")

    def stack_room(self, info) -> None:
        """At a recursive routine's entry: its frames so far (the distance from the kernel's
        frame, c_.stk0), and one more of their average size, must fit the room the host gave
        (c_.sroom, under the CUDA stack size it set), else the launch stops (E_STACK: Star
        calls deep, bytes they took) and the host launches again with more room, or runs the
        call interpreted where the device has none (cuda_runtime.GpuRoutine.run)."""
        sid = self.site(info.node.loc)
        self.emit("{ char h_ = 0; i64 u_ = (i64)&h_ - c_.stk0; u_ = u_ < 0 ? -u_ : u_; "
                  "i64 d_ = c_.sp - c_.spb > 0 ? c_.sp - c_.spb : 1; "
                  f"if (u_ + u_ / d_ + 512 > c_.sroom) FAIL({sid}, E_STACK, c_.sp, u_, 0, 0); }}")

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
            self.new_table(s)
        elif s.type.is_vector:
            self.emit(f"{self.ctype(s.type)} {v};")
            if s.length_of is not None:
                self.emit(f"{v}.n = {self.length_of(s)}; {self.zero(v, s.type)}")
            else:
                self.emit(f"{v}.n = {-1 - self.name_id(s.display)}; {self.zero(v, s.type)}")
        else:
            raise Unsupported(f"a variable of type {s.type}", s.loc)

    def new_table(self, s) -> None:
        """A local table: its k x W words taken from the pool (a bump allocator every thread
        keeps alike: control flow is uniform), zeroed by the words' owners. Checks as
        kernels.new_table: a negative size first; a pool too small stops the launch (E_POOL,
        its n and k and the words taken: the host grows the pool and launches again; where the
        device has no room for it, the call runs interpreted, which reports it as the
        interpreter does). The launch's shape comes from the arguments: a local table with more
        words to a column than the grid's slices hold, or more columns than a word (a ROW read),
        stops it too (E_POOL, d = 1 or 2), and the host launches again on a shape that holds it.
        The barrier before the zeroing: a table given back earlier in the launch may have had
        these words, written by other threads."""
        if self.ranks:
            raise Unsupported("a local table on GPU ranks (its pool would be each rank's own)", s.loc)
        v = self.vars[s]
        n, k = self.tmp("tn"), self.tmp("tk")
        self.emit(f"i64 {n} = {self.scalar(s.dims[0])};")
        self.emit(f"i64 {k} = {self.scalar(s.dims[1])};")
        sid = self.site(s.loc)
        self.pool = True
        self.emit(f"if ({n} < 0 || {k} < 0) {self.fail(sid, 'E_TABLE_NEG', n, k)}")
        self.emit(f"if (nwords({n}) > 0 && {k} > (c_.pcap - c_.ptop) / nwords({n})) "
                  f"{self.fail(sid, 'E_POOL', n, k, 'c_.ptop')}")
        self.emit(f"if (nwords({n}) > (i64)R * c_.G || (AS_WORD_ && nwords({n}) > KW)) "
                  f"{self.fail(sid, 'E_POOL', n, k, 'c_.ptop', '1')}")
        self.emit(f"if (nwords({k}) > KW) {self.fail(sid, 'E_POOL', n, k, 'c_.ptop', '2')}")
        self.emit(f"Tb {v} = {{c_.pool + c_.ptop, {n}, {k}, nwords({n})}}; c_.ptop += {k} * {v}.W;")
        self.emit("gsync(c_);")
        self.emit(f"for (i64 c2_ = 0; c2_ < {k}; ++c2_) for (i64 w_ = c_.gt; w_ < {v}.W; w_ += c_.G) "
                  f"{v}.d[c2_ * {v}.W + w_] = 0ULL;")
        self.tables_written()

    def zero(self, v: str, t: T) -> str:
        n = "KW" if t is T.WORD else ("R" if self.grid else "RP")
        return f"for (int q_ = 0; q_ < {n}; ++q_) {v}.w[q_] = 0ULL;"

    # ------------------------------------------------------------------ the kernel (its frame: routine_kernel.cu)
    def kernel(self, root: str):
        info, _ = self.bodies[root]
        self.set_mode(True)
        globs = self.routine_globals(root)
        args, body, call = [], [], ["c_"]
        for i, s in enumerate(list(info.params) + globs):
            name = f"a{i}"
            if s.type is T.TABLE:
                args += [f"u64* {name}d", f"i64 {name}n", f"i64 {name}k"]
                words = f"rk_nw({name}n)" if self.ranks else f"nwords({name}n)"    # a rank's block of rows
                body.append(f"Tb {name} = {{{name}d, {name}n, {name}k, {words}}};")
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
        # intr: the host's Ctrl-C flag (page-locked host memory; before io, so the arguments
        # after it keep their places from the end)
        if self.pool:        # before intr: the arguments after it keep their places from the end
            args += ["u64* pool", "i64 pcap"]
            body.append("c_.pool = pool; c_.pcap = pcap; c_.ptop = 0;")
        if self.graph_reads:   # the graph's scalars, read by the host before the launch
            args += ["const i64* gq"]
            body.append("c_.gq = gq;")
        if self.recursive:   # the Star calls in progress outside the kernel, the stack room (stack_room)
            args += ["i64 spbase", "i64 sroom"]
            body.append("char stk_ = 0; c_.stk0 = (i64)&stk_; c_.sroom = sroom; c_.sp = (int)spbase; "
                        "c_.spb = (int)spbase;")
        if self.ranks:       # the mailbox (before intr, as above)
            args += ["i64* mb"]
            body.append("c_.mb = mb;")
        args += ["const i64* intr", "i64* io", "i64* ob", "i64 obcap", "u64* scr", "i64 caps", "i64 left", "u64* vout"]
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
        src = _ENTRY.substitute(name=KERNEL_NAME, args=", ".join(args), nout=len(outputs), root=c_name(root, info),
                                unpack="".join(f"    {b}\n" for b in body), call=", ".join(call),
                                results="".join(f"    {o}\n" for o in out))
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
            self.emit(f"c_.cn[{STEP_INDEX[op]}]++;")
        else:
            self.emit(f"c_.wn[{STEP_INDEX[op]}]++;")

    def tick(self, loc) -> None:
        if not self.grid:
            raise Unsupported("a loop or call inside parallel for (the GPU tier runs its iterations at once)")
        sid = self.site(loc)
        self.emit(f"if (--c_.left < 0) {self.fail(sid, 'E_STEPS')}")
        # Ctrl-C, every POLL_EVERY-th step (prelude.cu: intr_poll), where the CPU tier polls too
        self.emit(f"if ((c_.left & (POLL_EVERY - 1)) == 0 && intr_poll(c_)) {self.fail(sid, 'E_INTERRUPT')}")

    def mismatch(self, sid: str, a: str, b: str) -> None:
        """logic / compare prologue: lengths equal as the interpreter sees them (kernels.same_len)."""
        self.emit(f"if (!({a}.n == {b}.n || ({a}.n < 0 && {b}.n < 0))) {{ {self.unassigned(sid, a)} "
                  f"{self.unassigned(sid, b)} {self.fail(sid, 'E_MISMATCH', f'{a}.n', f'{b}.n')} }}")


def c_name(pyname: str, info) -> str:
    """The device function's name: a main block's part is ``main_part`` whatever its unit's
    number (ir/main_parts.part_name), so its kernel's text, and CuPy's cached binary of it,
    is the same in every machine that loads the program."""
    return "main_part" if getattr(info, "part", False) else pyname


def routine_calls(info, body: Node) -> list:
    """The routines a routine calls: in its body and in its local tables' sizes."""
    out = list(callees(body))
    for s in (info.locals if info is not None else ()):
        for d in getattr(s, "dims", None) or ():
            out += [c for c in callees(d) if all(c.pyname != o.pyname for o in out)]
    return out


def _stepped(body: Node) -> list:
    out = []
    for n in walk(body):
        if n.op is Op.STEP and n.src[0].op is Op.VAR and n.src[0].arg not in out:
            out.append(n.src[0].arg)
    return out


def render(bodies: dict, root: str, ranks: bool = False) -> KernelPlan:
    """The kernel template of ``root`` (and its callees); raises Unsupported. ``ranks``: for
    one MPI rank of several (ranks.py), which instance() then needs (rank, size, align)."""
    return RoutineRenderer(bodies, ranks).render(root)


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
    "WARP_ATOMICS": "a grid reduction's atomics one a warp (before: the block's warps reduced in shared memory first)",
    "NO_AHEAD": "a counted loop's COL(j, T) loaded in its iteration (before: PFD iterations' columns at once)",
    "NO_SCAN": "a STEP loop taking one grid reduction an iteration (before: the slice staged and walked by every thread)",
    "ROW_SYNC": "a grid barrier before every ROW read (before: only where a table was written since the last one)",
}


def instance(plan: KernelPlan, R: int, KW: int, RP: int, LB: int = 0, switches=(), MB: int = 0,
             OWNC: int = -1, LANES: int = 32, MAXD: int = 0, ranks: tuple | None = None) -> str:
    """The compilable source for R slice words per thread, KW words per word value, RP
    slice words per lane inside parallel for and (LB > 0) at most LB threads a block, its
    registers limited so that LB fit an SM (only where more than 256 are launched: with
    __launch_bounds__(256) NVRTC gave MIN's body 32 registers and 7.8 KB of spills instead
    of 255 and 1.8 KB); MB > 0 (with LB): registers limited so that MB blocks of LB fit an
    SM. OWNC: the iterations a warp of a pivot loop keeps its own column of in registers
    (keeps_own_columns; -1: as many as 10 words a lane hold, at most 8, none above RP = 6).
    LANES: the lanes an iteration of parallel for runs on (32, 16 or 8; RP words each). ``switches``: names
    of SWITCHES. MAXD: a recursive plan's recursion limit (Machine.max_depth). ``ranks``: (rank,
    ranks, rows a block unit) of a plan rendered for MPI ranks (ranks.py), its own text a rank."""
    if plan.ranks != (ranks is not None):
        raise ValueError("a plan for MPI ranks takes its rank's (rank, size, align), and only it")
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
    return ((instance_defines(*ranks) if ranks is not None else "")
            + f"#define R {R}\n#define KW {KW}\n#define RP {RP}\n#define TPB {LB if LB > 0 else 256}\n"
            f"#define KBOUNDS {bounds}\n#define OWNC {OWNC}\n#define LANES {LANES}\n"
            + "".join(f"#define {name} 1\n" for name in sorted(switches))
            + (f"#define MAXD {MAXD if MAXD > 0 else 4000}\n" if plan.recursive else "") + plan.source)


__all__ = ["E", "KERNEL_NAME", "KernelPlan", "RoutineRenderer", "render", "instance", "Unsupported"]
