"""The GPU tier's expressions (a mixin of routine.RoutineRenderer): the methods the renderer
tables (renderer.CudaRenderer.SCALAR / VECTOR) name, for values held the GPU tier's way, and
slice logic fused word by word.

A value is held as ``rep`` says: a slice spread over the grid (``V<R>``; ``V<RP>`` on the
lanes of a `parallel for` iteration) or a word replicated in every thread (``V<KW>``);
``convert`` turns one into the other. Scalars shared with the fused-loop kernels (constants,
negation, the scalar operators) are the base renderer's.
"""
from __future__ import annotations

from ... import config
from ...ir.main_parts import GRAPH_SCALARS
from ...ir.ops import COMPARE_TEST, LOGIC_SYMBOL, GroupOp, Node, Op
from ...types import T
from ..common import Unsupported

# d_logic's operation number (prelude.cu)
_LOGIC_MODE = {Op.AND: 0, Op.OR: 1, Op.XOR: 2}


class Expressions:
    def rank_local(self, what: str, e: Node) -> None:
        """Inside a `parallel for` on MPI ranks (ranks.py) a step that crosses ranks is not
        compiled: its iterations run at once, and the host serves one post at a time."""
        if self.ranks and not self.grid:
            raise Unsupported(f"{what} inside parallel for on GPU ranks (it crosses ranks)", e.loc)

    def nwords_of(self, t: T) -> str:
        return "KW" if t is T.WORD else ("R" if self.grid else "RP")

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
            if self.ranks:             # the rank's words of it: from the word its block starts at
                self.emit(f"for (int q_ = 0; q_ < {n}; ++q_) {{ i64 w_ = {self.B} + q_ * {self.S}; "
                          f"i64 g_ = w_ + (rk_start({x}.n) >> 6); {o}.w[q_] = (w_ < rk_nw({x}.n) && g_ < KW) ? "
                          f"{x}.w[g_ < KW ? g_ : 0] : 0ULL; }} {o}.n = {x}.n;")
                return o
            self.emit(f"for (int q_ = 0; q_ < {n}; ++q_) {{ i64 w_ = {self.B} + q_ * {self.S}; "
                      f"{o}.w[q_] = (w_ < KW) ? {x}.w[w_ < KW ? w_ : 0] : 0ULL; }} {o}.n = {x}.n;")
            return o
        if not self.grid:
            raise Unsupported("a slice turned into a word inside parallel for")
        self.slice_as_word = True
        o = self.new_vec(T.WORD)
        if self.ranks:                 # every rank's block, all-gathered by the host (one post)
            self.emit(f"rk_gather(c_, {o}, {x});")
            return o
        self.emit(f"d_store(c_.scr, {x}, c_.gt, c_.G); gsync(c_);")
        self.emit(f"{o}.n = {x}.n; for (int q_ = 0; q_ < KW; ++q_) "
                  f"{o}.w[q_] = q_ < nwords({x}.n) ? __ldcg(c_.scr + q_) : 0ULL; gsync(c_);")
        return o

    def vector(self, e: Node, want: T | None = None) -> str:
        x = self._vector(e)
        return self.convert(x, self.rep(x, e.type), want)

    # ------------------------------------------------------------------ vector expressions (VECTOR's methods)
    def v_var(self, e: Node) -> str:
        sym = e.arg
        if not self.grid and sym not in self.private and sym.type is T.SLICE:
            return self.shared_slice(sym)
        return self.vars[sym]

    def v_copy(self, e: Node) -> str:
        x = self.vector(e.src[0])
        sid = self.site(e.loc)
        self.emit(self.unassigned(sid, x))
        return x

    def v_bits(self, e: Node) -> str:
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

    def v_call(self, e: Node) -> str:
        return self.call(e, statement=False)

    def checked_pair(self, e: Node, a: str, b: str) -> str:
        """The prologue of an operation on two vectors: lengths equal (or both unassigned), one
        step counted, both assigned; returns the node's site."""
        sid = self.site(e.loc, e.op)
        self.mismatch(sid, a, b)
        self.count(e.op)
        self.emit(self.unassigned(sid, a))
        self.emit(self.unassigned(sid, b))
        return sid

    def v_logic(self, e: Node) -> str:
        op = e.op
        a = self.vector(e.src[0])
        ra = self.rep(a, e.src[0].type)
        b = self.vector(e.src[1], want=ra)
        self.checked_pair(e, a, b)
        o = self.new_vec(ra)
        if ra is T.WORD:
            self.emit(f"for (int q_ = 0; q_ < KW; ++q_) {o}.w[q_] = {a}.w[q_] {LOGIC_SYMBOL[op]} {b}.w[q_]; {o}.n = {a}.n;")
        else:
            self.emit(f"d_logic({o}, {a}, {b}, {_LOGIC_MODE[op]});")
        return o

    def v_not(self, e: Node) -> str:
        a = self.vector(e.src[0])
        sid = self.site(e.loc, e.op)
        self.count(e.op)
        self.emit(self.unassigned(sid, a))
        ra = self.rep(a, e.src[0].type)
        o = self.new_vec(ra)
        self.emit(f"r_not({o}, {a});" if ra is T.WORD else f"d_not({o}, {a}, {self.B}, {self.S});")
        return o

    def v_col_get(self, e: Node) -> str:
        op = e.op
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

    def v_row_get(self, e: Node) -> str:
        op = e.op
        i = self.val(e.src[0])
        src = e.src[1]
        if not self.grid and src.op is Op.VAR and (src.arg in self.snap_of or src.arg in self.written):
            raise Unsupported("ROW of a table that the parallel for writes", e.loc)
        t = self.table(src)
        sid = self.site(e.loc, op)
        self.emit(f"if (!(0 < {i} && {i} <= {t}.n)) {self.fail(sid, 'E_ROW_INDEX', i, f'{t}.n')}")
        self.count(op)
        self.rank_local("ROW(i, T)", e)
        if self.grid:      # the bits of row i are in every owner's column words: written since the last barrier?
            self.emit("if ((c_.dirty & 1) || ROW_SYNC_) gsync(c_);")
        o = self.new_vec(T.WORD)
        if self.ranks:     # read by its owner, broadcast (one post)
            self.emit(f"rk_row_get(c_, {o}, {t}, {i});")
        else:
            self.emit(f"r_row_get{'_grid' if self.grid else ''}({o}, {t}, {i});")
        if self.grid:      # a write waits for the readers (statements.py: before_table_write)
            self.emit("c_.dirty |= 2;")
        return o

    def v_frst(self, e: Node) -> str:
        x = self.vector(e.src[0])
        sid = self.site(e.loc, e.op)
        self.count(e.op)
        self.emit(self.unassigned(sid, x))
        rx = self.rep(x, e.src[0].type)
        if rx is T.SLICE:
            self.rank_local("FRST of a slice", e)
        o = self.new_vec(rx)
        if rx is T.WORD:
            self.emit(f"{{ i64 p_ = r_fnd({x}, 0); {self.zero(o, T.WORD)} {o}.n = {x}.n; "
                      f"if (p_) r_put({o}, p_ - 1, 1); }}")
        else:
            self.emit(f"{{ i64 p_ = d_fnd<{self.nwords_of(T.SLICE)}, {self.GRID}>(c_, {x}, {self.B}, {self.S}); "
                      f"d_only_bit({o}, {x}, p_, {self.B}, {self.S}); }}")
        return o

    def v_convert(self, e: Node) -> str:
        x = self.vector(e.src[0])
        sid = self.site(e.loc, e.op)
        self.count(e.op)
        self.emit(self.unassigned(sid, x))
        return self.convert(x, self.rep(x, e.src[0].type), T.WORD)

    def v_trim(self, e: Node) -> str:
        i, j = self.val(e.src[0]), self.val(e.src[1])
        w = self.vector(e.src[2], want=T.WORD)
        sid = self.site(e.loc, e.op)
        self.emit(f"if (!(1 <= {i} && {i} <= {j} && {j} <= {w}.n)) {{ {self.unassigned(sid, w)} "
                  f"{self.fail(sid, 'E_TRIM', i, j, f'{w}.n')} }}")
        self.count(e.op)
        o = self.new_vec(T.WORD)
        self.emit(f"r_trim({o}, {w}, {i}, {j});")
        return o

    def v_arith(self, e: Node) -> str:
        op = e.op
        a = self.vector(e.src[0], want=T.WORD)
        b = self.vector(e.src[1], want=T.WORD)
        self.checked_pair(e, a, b)
        o = self.new_vec(T.WORD)
        self.emit(f"r_arith({o}, {a}, {b}, {'true' if op is Op.SUBT else 'false'});")
        return o

    # ------------------------------------------------------------------ scalar expressions (SCALAR's methods)
    def s_var(self, e: Node) -> str:
        return self.vars[e.arg]

    def s_graph(self, e: Node) -> str:
        """GRAPH_N, GRAPH_M, GRAPH_VBITS, GRAPH_WBITS, GRAPH_UNDIRECTED: fixed once the graph is
        read, so the host reads them before the launch (cuda_runtime.GpuRoutine.graph_values)."""
        if e.arg not in GRAPH_SCALARS:
            raise Unsupported(f"GRAPH '{e.arg}' (the host fills tables from the graph)", e.loc)
        if e.arg not in self.graph_reads:
            self.graph_reads.append(e.arg)
        x = f"c_.gq[{self.graph_reads.index(e.arg)}]"
        return f"({x} != 0)" if e.type is T.BOOL else x

    def s_len(self, e: Node) -> str:
        x = self.vector(e.src[0])
        sid = self.site(e.loc)
        self.emit(self.unassigned(sid, x))
        return f"{x}.n"

    def table_of(self, e: Node) -> str:
        """The table a NROWS / NCOLS reads (a snapshot inside parallel for: its original)."""
        snap_of = getattr(self, "snap_of", {})
        return self.table(e) if e.arg not in snap_of else self.vars[snap_of[e.arg]]

    def s_nrows(self, e: Node) -> str:
        return f"{self.table_of(e.src[0])}.n"

    def s_ncols(self, e: Node) -> str:
        return f"{self.table_of(e.src[0])}.k"

    def s_call(self, e: Node) -> str:
        return self.call(e, statement=False)

    def s_bit_get(self, e: Node) -> str:
        op = e.op
        x = self.vector(e.src[0])
        i = self.val(e.src[1])
        sid = self.site(e.loc, op)
        self.emit(f"if (!(0 < {i} && {i} <= {x}.n)) {{ {self.unassigned(sid, x)} "
                  f"{self.fail(sid, 'E_BIT_INDEX', i, f'{x}.n')} }}")
        self.count(op)
        if self.rep(x, e.src[0].type) is T.WORD:
            return f"r_bit({x}, {i} - 1)"
        self.rank_local("a slice's bit", e)
        o = self.tmp("s")
        self.emit(f"i64 {o} = (i64)((d_word_at<{self.nwords_of(T.SLICE)}, {self.GRID}>(c_, {x}, ({i} - 1) >> 6, "
                  f"{self.B}, {self.S}) >> (({i} - 1) & 63)) & 1ULL);")
        return o

    def s_reduce(self, e: Node) -> str:
        op = e.op
        if op is Op.STEP and id(e) in self.step_taken:     # taken by the loop (statements.py: some_step)
            return self.step_taken.pop(id(e))
        if op is Op.STEP:
            x = self.var_vector(e.src[0])
        else:
            x = self.vector(e.src[0])
        sid = self.site(e.loc, op)
        self.count(op)
        self.emit(self.unassigned(sid, x))
        word = self.rep(x, e.src[0].type) is T.WORD
        if not word:
            self.rank_local(f"{op.name} of a slice", e)
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

    def s_compare(self, e: Node) -> str:
        op = e.op
        a = self.vector(e.src[0])
        ra = self.rep(a, e.src[0].type)
        b = self.vector(e.src[1], want=ra)
        self.checked_pair(e, a, b)
        if ra is T.SLICE:
            self.rank_local("a comparison of slices", e)
        o = self.tmp("s")
        if ra is T.WORD:
            self.emit(f"bool {o} = r_cmp({a}, {b}) {COMPARE_TEST[op]};")
        else:
            self.emit(f"bool {o} = d_cmp<{self.nwords_of(T.SLICE)}, {self.GRID}>(c_, {a}, {b}, {self.B}, {self.S}) "
                      f"{COMPARE_TEST[op]};")
        return o

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
            ahead = self.ahead.get(e.src[1].arg)
            if ahead is not None and e.src[0].op is Op.VAR and e.src[0].arg is ahead[0]:
                # the loop's column j, loaded ahead (statements.py: columns_ahead); 0 past the table
                _var, buf, ph = ahead
                return h, lambda q, bare: ([], f"(PFD > 1 ? ahead_word<PFD>({buf}, {ph}, {q}) : "
                                               + (f"ldt({col} + w_))" if bare else f"(w_ < {t}.W ? ldt({col} + w_) : 0ULL))"))
            return h, lambda q, bare: ([], f"ldt({col} + w_)" if bare else f"(w_ < {t}.W ? ldt({col} + w_) : 0ULL)")
        if op is Op.NOT:
            a, word = self._fz(e.src[0], pre)
            sid = self.site(e.loc, op)
            self.count(op)
            self.emit(self.unassigned(sid, a))
            h, nw, m = self.tmp("fn"), self.tmp("fw"), self.tmp("fm")
            self.emit(f"Ln {h}; {h}.n = {a}.n;")
            if self.ranks:        # the rank's block of the slice
                pre.append(f"const i64 {nw} = rk_nw({a}.n); const u64 {m} = rk_tail({a}.n);")
            else:
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
        self.checked_pair(e, a, b)
        h = self.tmp("fn")
        self.emit(f"Ln {h}; {h}.n = {a}.n;")
        c = LOGIC_SYMBOL[op]
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


def _fusable(e: Node) -> bool:
    """A slice expression that fused_slice renders word by word: logic, NOT, copies and COL
    reads of table variables over slice variables (no literal, call, conversion or
    reduction), with at least one operation (a bare variable is a copy)."""
    return e.op is not Op.VAR and e.op is not Op.COPY and _word_wise(e)


def _word_wise(e: Node) -> bool:
    if e.type is not T.SLICE or e.op not in GroupOp.WordWise:
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
