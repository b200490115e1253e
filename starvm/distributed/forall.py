"""A fused `parallel for` (targets/numpy/forall.py, subclassed) on the distributed backend.

The loop runs as one array operation over the iterations on every rank, each on its own rows:
a slice value is a batch of this rank's words of it (``_Local``), a word or a replicated
vector the whole words (``_Vec``). What the base ForallKernel computes locally stays local
(COL read and write, and, or, xor, not); the reductions over rows (SOME, NUMB, =, <> and
X(i) of a slice) become one all-reduction of an array with one entry per iteration. Step
counts are the base kernel's.
"""
from __future__ import annotations

import numpy as np

from ..ir.ops import Node, Op
from ..targets.numpy.forall import ForallKernel, _Vec, _pack, _popcount_rows, _unpack
from ..execution.values import Bits
from .vectors import REPLICATE_MAX, Fill, Shard, _host


class _Local(_Vec):
    """A batch of partitioned vectors: this rank's words of each."""
    __slots__ = ()


class DistributedForall(ForallKernel):

    def _lay(self, n):
        return self.B.layout(n)

    def _reduce(self, arr, op: str, wire=np.int64):
        """An all-reduction of a per-iteration array (or a (1,) one) over the ranks; ``wire``:
        the dtype it travels as (uint8 for bits and truth values)."""
        self.B.bytes_moved[0] += 1
        if not self.B.device_arrays:
            arr = _host(arr)
        arr = self.xp.asarray(arr)
        dtype = arr.dtype
        wired = arr.astype(wire)
        self.B.bytes_moved[1] += wired.nbytes
        return self.xp.asarray(self.B.coll.allreduce(wired, op)).astype(dtype)

    def _local_words(self, v: _Vec) -> _Local:
        """A replicated batch cut to this rank's rows."""
        xp, lay = self.xp, self._lay(v.n)
        nw = (lay.local_n + 63) // 64
        if lay.start % 64 == 0 and (lay.stop % 64 == 0 or lay.stop == v.n):
            return _Local(v.w[:, lay.start // 64: lay.start // 64 + nw], v.n)
        rows = []
        for r in range(v.w.shape[0]):
            bits = _unpack(xp, v.w[r])[lay.start:lay.stop]
            pad = xp.zeros(nw * 64, dtype=bool)
            pad[:bits.size] = bits
            rows.append(_pack(xp, pad))
        return _Local(xp.stack(rows) if rows else xp.zeros((0, nw), dtype=xp.uint64), v.n)

    def vec(self, x):
        if isinstance(x, _Vec):
            return x
        v = x.v
        key = id(x)
        if key in self.words_cache:
            return self.words_cache[key]
        lay = self._lay(x.n)
        if isinstance(v, Fill) and x.n > REPLICATE_MAX:
            v = Shard(self.B.local_part(v, x.n), x.n)
        if isinstance(v, Shard):
            out = _Local(self.B.L.to_words(v.v, lay.local_n)[None, :], x.n)
        else:
            out = _Vec(self.B.to_words(v, x.n)[None, :], x.n)
        self.words_cache[key] = out
        return out

    def _same_form(self, a: _Vec, b: _Vec):
        if isinstance(a, _Local) != isinstance(b, _Local):
            a, b = (a, self._local_words(b)) if isinstance(a, _Local) else (self._local_words(a), b)
        return a, b

    # ---------------------------------------------------------------- statements
    def exec(self, s: Node, mask) -> None:
        if s.op is Op.COL_SET:
            v = self.vec(self.eval(s.src[2], mask))
            if not isinstance(v, _Local):
                v = self._local_words(v)
            return super().exec(_with_value(s, v), mask)
        if s.op is Op.BIT_SET:
            target = self.value(s.src[0].arg)
            if isinstance(target.v, Shard) or (isinstance(target.v, Fill) and target.n > REPLICATE_MAX):
                return self._bit_set_local(s, target, mask)
        return super().exec(s, mask)

    def _bit_set_local(self, s, target, mask):
        xp = self.xp
        j, b = self.bit_set_operands(s, target, mask)
        lay = self._lay(target.n)
        v = target.v if isinstance(target.v, Shard) else Shard(self.B.local_part(target.v, target.n), target.n)
        bits = _unpack(xp, self.B.L.to_words(v.v, lay.local_n))
        jj = xp.broadcast_to(xp.asarray(j, dtype=xp.int64), (self.m,))
        bb = xp.broadcast_to(xp.asarray(b, dtype=bool), (self.m,))
        here = (jj >= lay.start) & (jj < lay.stop)
        if mask is not None:
            here = here & mask
        bits[jj[here] - lay.start] = bb[here]
        target.v = Shard(self.B.L.from_words(_pack(xp, bits), lay.local_n), target.n)

    def assign(self, sym, value, mask, node) -> None:
        if sym.type.is_vector and mask is not None:
            old = self.local.get(sym, self.env.get(sym))
            new = self.vec(value)
            if isinstance(old, Bits) and not isinstance(old, _Vec) and old.n >= 0:
                old = self.vec(old)
            if isinstance(old, _Vec) and old.n == new.n:
                old, new = self._same_form(old, new)
                self.local[sym] = old        # the base kernel merges under the mask in this form
                value = new
        super().assign(sym, value, mask, node)
        out = self.local.get(sym)
        if isinstance(out, _Vec) and isinstance(value, _Local) and not isinstance(out, _Local):
            self.local[sym] = _Local(out.w, out.n)

    # ---------------------------------------------------------------- expressions
    # The base kernel's op -> method table (ForallKernel.eval), with the entries that differ where
    # an operand is this rank's words of a split slice (_Local); the others are the base's.
    def _e_COL_GET(self, e, mask):
        v = super()._e_COL_GET(e, mask)
        return _Local(v.w, v.n)

    _pair = _same_form

    def _e_logic(self, e, mask):
        a, b = self._two_vectors(e, mask)     # this rank's words: no reduction
        return (_Local if isinstance(a, _Local) else _Vec)(self.logic_op[e.op](a.w, b.w), a.n)

    _e_AND = _e_OR = _e_XOR = _e_logic

    def _e_same(self, e, mask):
        a, b = self._two_vectors(e, mask)
        same = (a.w == b.w).all(axis=1)
        if isinstance(a, _Local):
            same = self._reduce(same, "min", np.uint8)
        return self._scalar(same if e.op is Op.EQ else ~same)

    _e_EQ = _e_NOTEQ = _e_same

    # a word operand (replicated): the base's (its operand evaluated once, here)
    def _not(self, e, a, mask):
        xp = self.xp
        if not isinstance(a, _Local):
            return super()._not(e, a, mask)
        self.count(e.op, mask)
        w = ~a.w
        nl = self._lay(a.n).local_n
        if w.shape[1]:
            if nl % 64:
                w[:, -1] &= xp.uint64((1 << (nl % 64)) - 1)
        return _Local(w, a.n)

    def _some(self, e, a, mask):
        if not isinstance(a, _Local):
            return super()._some(e, a, mask)
        self.count(e.op, mask)
        return self._scalar(self._reduce((a.w != 0).any(axis=1), "max", np.uint8))

    def _numb(self, e, a, mask):
        if not isinstance(a, _Local):
            return super()._numb(e, a, mask)
        self.count(e.op, mask)
        return self._scalar(self._reduce(_popcount_rows(self.xp, a.w), "sum"))

    def _bit_get(self, e, v, mask):
        xp = self.xp
        if not isinstance(v, _Local):
            return super()._bit_get(e, v, mask)
        i = self.eval(e.src[1], mask)
        j = self._index(e, i, v.n, "bit", mask)
        self.count(e.op, mask)
        lay = self._lay(v.n)
        jj = xp.broadcast_to(xp.asarray(j, dtype=xp.int64), (max(self.m, v.w.shape[0]),))
        here = (jj >= lay.start) & (jj < lay.stop)
        loc = xp.where(here, jj - lay.start, 0)
        bits = xp.zeros(jj.shape, dtype=xp.int64)
        if v.w.shape[1]:
            words = xp.broadcast_to(v.w, (jj.shape[0], v.w.shape[1]))
            w = xp.take_along_axis(words, (loc >> 6)[:, None], axis=1)[:, 0]
            bits = xp.where(here, ((w >> (loc & 63).astype(xp.uint64)) & xp.uint64(1)).astype(xp.int64), 0)
        out = self._reduce(bits, "max", np.uint8)
        if isinstance(j, int) and v.w.shape[0] == 1:
            return int(out[0])
        return out


def _with_value(s: Node, v) -> Node:
    """COL_SET node whose value is already evaluated (the base kernel evaluates src[2])."""
    return Node(s.op, (s.src[0], s.src[1], Node(Op.CONST, (), v, loc=s.src[2].loc, type=s.src[2].type)),
                s.arg, loc=s.loc, type=getattr(s, "type", None))
