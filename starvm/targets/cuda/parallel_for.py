"""The GPU tier's `parallel for` (a mixin of routine.RoutineRenderer): the iterations run
one per group of lanes (a warp, or 16 or 8 lanes), between two grid barriers; a pivot loop
(a `for` whose body is one `parallel for`) keeps one barrier a pivot.

Only fusable bodies (targets/numpy/forall.fusable) without loops or calls are rendered; the
pre-loop snapshots become the live tables (the iteration's own column) or scratch copies
made before the barrier (columns every iteration reads); a failure raises E_RERUN, so the
host restores the tables and runs the call interpreted, which reports the first failing
iteration exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir.ops import Node, Op
from ...types import T
from ...ir.walk import walk
from ..common import Unsupported
from ..numpy.forall import fusable


class ParallelFor:
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
            if idx.op is not Op.VAR and idx.op is not Op.CONST:
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


def _invariant(e: Node, private, loop_var) -> bool:
    if e.op is Op.VAR:
        return e.arg is not loop_var and e.arg not in private
    if e.op is Op.CONST:
        return True
    return False


