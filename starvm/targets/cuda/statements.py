"""The GPU tier's statements (a mixin of routine.RoutineRenderer): control flow, assignments,
output records, the base operations that change a variable or a table in place, and calls
to the routine's callees (``__forceinline__`` device functions).

``stmt`` dispatches on the op: a method ``_s_<OP>`` (BLOCK, IF, WHILE, REPEAT, FOR, ASSIGN,
WRITE, PFOR in parallel_for.py), else ``base_stmt`` for the in-place base operations
(``GroupOp.InPlace``), else ``call``. Checks run in the order and with the error codes of
the CPU tier (targets/numba/kernels.py), so jit/errors.py maps a failure unchanged.
"""
from __future__ import annotations

import re

from ... import config
from ...ir.ops import GroupOp, Node, Op
from ...types import T
from ...ir.walk import may_write_tables, small_int, walk, writes_globals, writes_output
from ..common import Unsupported
from .expressions import _fusable, _fused_switch


class Statements:
    # ------------------------------------------------------------------ statements (stmt: _s_<OP>, else base_stmt or call)
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
        elif s.op in _VECTOR_IN_PLACE:
            changed.update(n.arg for n in s.src if n.op is Op.VAR)
        elif s.op is Op.CALL or s.op is Op.PFOR:
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
                if s.op is Op.PFOR:      # its iterations write words other threads own
                    self.before_table_write()
                handler(s)
                if s.op is Op.PFOR:
                    self.tables_written()
            elif s.op in GroupOp.InPlace:
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
        if self.some_step(s):
            return
        self.emit("while (true) {")
        self.ind += 1
        self.emit(f"if (!({self.scalar(cond)})) break;")
        self.tick(s.loc)
        self.block(body)
        self.ind -= 1
        self.emit("}")

    def some_step(self, s) -> bool:
        """`while SOME(X) do begin i := STEP(X); ...` (X a slice): one grid reduction an
        iteration, not two. The first 1 of X, found for SOME, is the one STEP takes: the test
        and the STEP count, check and clear as they would (the tick between them first), so
        steps and failures are those of the two reductions. False (nothing emitted) for other
        loops."""
        cond, body = s.src
        stmts = body.src if body.op is Op.BLOCK else [body]
        if not (self.grid and cond.op is Op.SOME and cond.src[0].op is Op.VAR and cond.src[0].type is T.SLICE
                and stmts):
            return False
        first, sym = stmts[0], cond.src[0].arg
        step = first.src[0] if first.op is Op.ASSIGN and first.src else first
        in_write = first.op is Op.WRITE and _write_takes_step(first, sym)
        if in_write:       # `write(' ', STEP(X))`: what the write prints before STEP reads no X
            step = in_write
        if not (step.op is Op.STEP and step.src[0].op is Op.VAR and step.src[0].arg is sym):
            return False
        x = self.vars[sym]
        if self.rep(x, T.SLICE) is not T.SLICE:
            return False
        N = self.nwords_of(T.SLICE)
        rest = Node(Op.BLOCK, stmts if in_write else stmts[1:], loc=body.loc)
        # (on MPI ranks the next 1 is the ranks' first: one post an iteration, no walk)
        scan = not self.ranks and self.scannable(sym, rest, taken=step)
        if scan:
            # X staged once (a region of its own: the body may stage slices too) and walked by
            # every thread (scan_next), where X's words fit the region; else d_fnd as below
            reg, ok, cw, cv, nw = self.region(), self.tmp("sc"), self.tmp("cw"), self.tmp("cv"), self.tmp("nw")
            self.emit(f"const bool {ok} = SCAN_OK && {x}.n >= 0 && nwords({x}.n) <= c_.caps;")
            self.emit(f"const i64 {nw} = {ok} ? nwords({x}.n) : 0; i64 {cw} = -1; u64 {cv} = 0ULL;")
            # (the barrier before the store: the loop may run again while threads still read
            # the region's words of its last run)
            self.emit(f"if ({ok}) {{ gsync(c_); d_store({reg}, {x}, {self.B}, {self.S}); gsync(c_); }}")
        self.emit("while (true) {")
        self.ind += 1
        sid = self.site(cond.loc, Op.SOME)
        self.count(Op.SOME)
        self.emit(self.unassigned(sid, x))
        f = self.tmp("f")
        if scan:
            self.emit(f"i64 {f} = {ok} ? scan_next({reg}, {nw}, {cw}, {cv}) "
                      f": d_fnd<{N}, {self.GRID}>(c_, {x}, {self.B}, {self.S});")
        else:
            self.emit(f"i64 {f} = d_fnd<{N}, {self.GRID}>(c_, {x}, {self.B}, {self.S});")
        self.emit(f"if ({f} == 0) break;")
        self.tick(s.loc)
        saved = self.stmt_loc
        self.stmt_loc = first.loc or saved
        sid = self.site(step.loc, Op.STEP)
        self.count(Op.STEP)
        self.emit(self.unassigned(sid, x))
        self.emit(f"d_clear_bit({x}, {f}, {self.B}, {self.S});")
        if first.op is Op.ASSIGN:
            self.emit(f"{self.vars[first.arg]} = {f};")
        if in_write:        # the write's STEP(X) is this position (expressions.py: s_reduce)
            self.step_taken[id(step)] = f
        self.stmt_loc = saved
        self.block(rest)
        self.ind -= 1
        self.emit("}")
        return True

    def scannable(self, sym, rest: Node, taken: Node | None = None) -> bool:
        """Does the loop body ``rest`` (after ``i := STEP(X)``) leave X alone, so that the 1s
        still to take are those after the last one taken (scan_next)? Not where it assigns X,
        changes it in place, passes it to a routine (a var parameter may change it), or
        calls anything while X is a global (a callee may change it), nor in a routine on a
        cycle of calls (a nested activation would reuse the loop's scratch region)."""
        if self.pyname in self.recursive:
            return False
        for n in walk(rest):
            if n is taken:
                continue
            if n.op is Op.ASSIGN and n.arg is sym:
                return False
            if n.op in GroupOp.InPlace and any(a.op is Op.VAR and a.arg is sym for a in n.src):
                return False
            if n.op is Op.CALL:
                if any(a.op is Op.VAR and a.arg is sym for a in walk(n)):
                    return False
                if sym.scope == "global" and writes_globals(self.bodies, n.arg[0].pyname):
                    return False
        return True

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
        ahead = self.columns_ahead(var, body) if pivot is None else []
        ph = self.tmp("ph") if ahead else None
        if ahead:
            self.emit(f"int {ph} = PFD;   // columns read ahead: loaded PFD iterations at a time")
            for _t, buf in ahead:
                self.emit(f"u64 {buf}[PFD][R];")
        self.emit(f"for (i64 {it} = {lo}; {it} {cmp} {hi}; {step}{it}) {{")
        self.ind += 1
        self.emit(f"{self.vars[var]} = {it};")
        if ahead:
            self.emit(f"if (PFD > 1 && {ph} == PFD) {{ {ph} = 0;")
            for t, buf in ahead:
                tb = self.vars[t]
                self.emit(f"    cols_ahead<PFD>({buf}, {tb}, {it}, {hi}, {-1 if downto else 1}, c_.gt, c_.G);")
            self.emit("}")
        self.tick(s.loc)
        saved_ahead = self.ahead
        self.ahead = {**self.ahead, **{t: (var, buf, ph) for t, buf in ahead}}
        self.block(body)
        self.ahead = saved_ahead
        if ahead:
            self.emit(f"if (PFD > 1) ++{ph};")
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

    def columns_ahead(self, var, body: Node) -> list:
        """The tables whose column ``var`` the loop body reads (``COL(j, T)`` inside fused slice
        logic), to be loaded PFD iterations ahead (prelude.cu: cols_ahead), so that the loads
        of MATCH's or LESS's columns overlap instead of each waiting for the one before: [(table
        symbol, buffer name)], two tables at most. None where the body may write a table (the
        words loaded ahead would be stale; a table parameter may be another's alias) or assign
        ``var``."""
        if not self.grid or not _fused_switch():
            return []
        if may_write_tables(self.bodies, body):
            return []
        found = []
        for n in walk(body):
            if n.op is Op.ASSIGN and n.arg is var or n.op in GroupOp.ForLoops and n.arg[0] is var:
                return []
            if (n.op is Op.COL_GET and n.src[0].op is Op.VAR and n.src[0].arg is var and n.src[1].op is Op.VAR
                    and n.src[1].arg.type is T.TABLE and n.src[1].arg not in found and n.src[1].arg not in self.ahead):
                found.append(n.src[1].arg)
        return [(t, self.tmp("pf")) for t in found[:2]]

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
            self.before_table_write()
            self.emit(f"for (i64 c2_ = 1; c2_ <= {v}.k; ++c2_) {{ V<R> tc_; d_col_get(tc_, {src}, c2_, c_.gt, c_.G); "
                      f"d_col_set({v}, c2_, tc_, c_.gt, c_.G); }}")
            self.tables_written()
        else:
            self.emit(f"{v} = {self.scalar(value)};")

    def _s_WRITE(self, s):
        if not self.grid:
            raise Unsupported("writeln inside parallel for", s.loc)
        sid = self.site(s.loc)

        def room(m: str):
            # a full buffer: the host writes the finished calls' records meanwhile (out_room),
            # or, where it cannot, gives a larger buffer and launches again (S_A: the words
            # needed so far, S_B = 1: cuda_runtime.GpuRoutine.run)
            self.emit(f"if (c_.op + {m} > c_.obcap) {{ int or_ = out_room(c_, {m}); "
                      f"if (or_ == 2) {self.fail(sid, 'E_INTERRUPT')} "
                      f"if (or_ == 1) {self.fail(sid, 'E_RERUN', f'c_.op + {m}', '1')} }}")

        by_all = 0          # records stored by every thread (a slice's words, a table's)

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
                if self.ranks and self.rep(x, a.type) is T.SLICE:     # the whole slice: all-gathered
                    self.emit(self.unassigned(bid, x))
                    x = self.convert(x, T.SLICE, T.WORD)
                self.emit(self.unassigned(bid, x))
                room(f"2 + nwords({x}.n)")
                self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = 4; c_.ob[c_.op + 1] = {x}.n; }}")
                if self.rep(x, a.type) is T.SLICE:
                    by_all = 1
                    self.emit(f"d_store((u64*)(c_.ob + c_.op + 2), {x}, c_.gt, c_.G);")
                else:
                    self.emit(f"if (c_.gt == 0) for (i64 q_ = 0; q_ < nwords({x}.n); ++q_) "
                              f"c_.ob[c_.op + 2 + q_] = (i64){x}.w[q_];")
                self.emit(f"c_.op += 2 + nwords({x}.n);")
            elif a.type is T.TABLE:
                if self.ranks:
                    raise Unsupported("writing a table on GPU ranks", a.loc)
                t = self.table(a)
                room(f"4 + {t}.k * {t}.W")
                self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = 5; c_.ob[c_.op + 1] = {t}.n; c_.ob[c_.op + 2] = {t}.k; "
                          f"c_.ob[c_.op + 3] = {t}.W; }}")
                by_all = 1
                self.emit("gsync(c_);")     # the words of every column, as the owners last wrote them
                self.emit(f"for (i64 w_ = c_.gt; w_ < {t}.W; w_ += c_.G) for (i64 c2_ = 0; c2_ < {t}.k; ++c2_) "
                          f"c_.ob[c_.op + 4 + c2_ * {t}.W + w_] = (i64)__ldcg({t}.d + c2_ * {t}.W + w_);")
                self.emit(f"c_.op += 4 + {t}.k * {t}.W;")
            else:
                raise Unsupported(f"writing a value of type {a.type}", a.loc)
        room("2")
        self.emit(f"if (c_.gt == 0) {{ c_.ob[c_.op] = 6; c_.ob[c_.op + 1] = {int(bool(s.arg))}; }} c_.op += 2;")
        self.emit(f"out_pub(c_, {by_all});")     # the host may write it while the kernel runs

    def _s_ERROR(self, s):
        # the interpreter's StarRuntimeError(message) at this statement: the host maps E_USER to
        # the message (errors.message), the call stack from the status block; inside parallel
        # for the call runs again interpreted (E_RERUN), which reports the first failing iteration
        self.strings.append(s.arg)
        self.emit(self.fail(self.site(s.loc), "E_USER", str(len(self.strings) - 1)))

    # ------------------------------------------------------------------ base operations as statements
    def base_stmt(self, s: Node) -> None:
        op = s.op
        if op is Op.STEP:
            self.scalar(s)
            return
        if op is Op.SET or op is Op.CLR:
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
            if s.src[0].type is not T.WORD:
                self.rank_local("a slice's bit written", s)
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
            self.before_table_write()
            self.emit(f"d_col_set({t}, {i}, {v}, {self.B}, {self.S});")
            if not self.grid:
                self.col_sets.append((len(self.lines) - 1, t, v))
            self.tables_written()
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
            self.before_table_write()
            self.emit(f"r_row_set({t}, {i}, {v}, c_.gt, c_.G);")
            self.tables_written()
        else:
            raise Unsupported(f"the statement {op.name}", s.loc)

    def var_vector(self, e: Node) -> str:
        """A vector variable changed in place (SET, CLR, STEP, BIT_SET, REP)."""
        if e.op is not Op.VAR:
            raise Unsupported(f"{e.op.name} changed in place", e.loc)
        if not self.grid and e.arg not in self.private:
            raise Unsupported("a parallel for changing a shared vector in place", e.loc)
        return self.vars[e.arg]

    # c_.dirty (prelude.cu), the same in every thread: bit 1, a table written since the last grid
    # barrier; bit 2, a row read. A ROW read reads words other threads own: it waits at a
    # barrier after a write (the owners' words), and a write waits at one after a ROW read (a
    # thread still reading the row would see the new value, and its control flow part from the
    # others'). Where no table was written, ROW reads take no barrier at all.
    def before_table_write(self) -> None:
        if self.grid:
            self.emit("if (c_.dirty & 2) gsync(c_);")

    def tables_written(self) -> None:
        if self.grid:
            self.emit("c_.dirty |= 1;")

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
            if outs:
                raise Unsupported(f"'{info.display}' (it has var parameters) is called inside an expression", e.loc)
            if writes_globals(self.bodies, info.pyname):
                raise Unsupported(f"'{info.display}' (it assigns global variables) is called inside an expression", e.loc)
            if writes_output(self.bodies, info.pyname):
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
        if self.recursive:     # the recursion limit: the call sites' room (kernels.enter)
            self.emit(f"if (c_.sp >= MAXD) FAIL({sid}, E_DEPTH, c_.sp, 0, 0, 0);")
        self.emit(f"if (c_.gt == 0) c_.st[S_STACK + c_.sp] = {sid}; c_.sp++;")
        self.emit(f"f_{info.pyname}({', '.join(['c_'] + args)});")
        self.emit("c_.sp--; if (c_.failed) return;")
        return out


_COUNT = re.compile(r"c_\.(cn|wn)\[\d+\]\+\+;")
# statements that change a vector variable in place (a STEP statement keeps its word's hint itself)
_VECTOR_IN_PLACE = GroupOp.InPlace - GroupOp.Table - {Op.STEP}
_PLAIN = (GroupOp.WordWise - {Op.COPY}) | {Op.CONST}


def _write_takes_step(w: Node, sym) -> Node | None:
    """The argument STEP(X) of a write whose arguments before it neither read X nor call
    anything (so STEP may be taken before them), or None."""
    for a in w.src:
        if a.op is Op.STEP and a.src and a.src[0].op is Op.VAR and a.src[0].arg is sym:
            return a
        if any(n.op is Op.CALL or n.op is Op.STEP or (n.op is Op.VAR and n.arg is sym) for n in walk(a)):
            return None
    return None


def _plain_logic(e: Node, y) -> bool:
    """E of ``Y := E`` is recomputable: vector logic on variables other than Y and COL reads
    whose index is a variable or a constant (no calls, no reductions, no ROW reads)."""
    for n in walk(e):
        if n.op not in _PLAIN or (n.op is Op.VAR and n.arg is y):
            return False
        if n.op is Op.COL_GET and n.src[0].op is not Op.VAR and n.src[0].op is not Op.CONST:
            return False
    return True


