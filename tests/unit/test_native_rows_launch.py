"""The CuPy row-move kernels (starvm/native/<routine>/cuda.py) without CuPy or a GPU: against the
stand-in for CuPy (tests/gpu_sources/fake_cupy.py: kernels compiled with NVRTC, each launch's
grid and argument widths checked against the PTX), with a NumPy model of every kernel run at
its launch, the host code of IOTA, GATHER, SCATTER, GROUPMIN (both paths), COMPACT and EXPAND
gives the NumPy kernels' results, launches the kernels named here, and reads the device once
per call (GROUPMIN's sorted path: twice). The models say what each CUDA kernel computes; the
kernels themselves are checked on a GPU (test_native_rows.py's CuPy tests, bench/check_rows_gpu.py)."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_sources import fake_cupy
from gpu_sources.fake_cupy import LAUNCHES, fake_cupy_installed
from starvm.backends import get_backend
from gpu_sources.native_kernels import CUDA_MODULES, Kernels, numpy_rows

NP = get_backend("numpy")
rows_numpy = numpy_rows()


# ---------------------------------------------------------------- NumPy models of the kernels
def _bit(col, r) -> int:
    return (int(col[r >> 6]) >> (r & 63)) & 1


def _set(col, r, b) -> None:
    w = int(col[r >> 6]) & ~(1 << (r & 63)) | (b << (r & 63))
    col[r >> 6] = np.uint64(w)


def _value(T, k, r) -> int:
    v = 0
    for c in range(k):
        v = (v << 1) | _bit(T[c], r)
    return v


EMPTY = (1 << 64) - 1          # an empty slot of the dedupe's hash table: key and row all ones


def _marked(X, W):
    return [w * 64 + t for w in range(W) for t in range(64) if (int(X[w]) >> t) & 1]


def _copy(T, k, R, pairs) -> None:
    for dst, src in pairs:
        for c in range(k):
            _set(R[c], dst, _bit(T[c], src))


def model(launch) -> None:
    a = [np.asarray(x) if isinstance(x, np.ndarray) else x for x in launch.args]
    name = launch.kernel
    if name == "rows_iota":
        T, k, W, n = a
        T[:int(k), :int(W)] = 0                       # whole words: bits past row n are 0
        for r in range(int(n)):
            for c in range(int(k)):
                b = int(k) - 1 - c
                _set(T[c], r, ((r + 1) >> b) & 1 if b < 64 else 0)
    elif name == "rows_check":
        IX, ixk, W, X, limit, stats = a
        rows = _marked(X, int(W))
        stats[0] += np.uint64(len(rows))
        if any(not 1 <= _value(IX, int(ixk), r) <= int(limit) for r in rows):
            stats[1] = np.uint64(1)
    elif name == "rows_check_sliced":                 # the kernel's steps: a word's 64 numbers at once
        IX, ixk, W, X, limit, stats = a
        ixk, limit = int(ixk), int(limit)
        lim = (1 << ixk) - 1 if limit >> ixk else limit
        for w in range(int(W)):
            xw = int(X[w])
            if not xw:
                continue
            gt, eq, nz = 0, M64, 0
            for c in range(ixk):
                col = int(IX[c, w])
                nz |= col
                if (lim >> (ixk - 1 - c)) & 1:
                    eq &= col
                else:
                    gt |= eq & col
                    eq &= ~col & M64
            stats[0] += np.uint64(bin(xw).count("1"))
            if xw & (gt | (~nz & M64)):
                stats[1] = np.uint64(1)
    elif name == "rows_gather":
        T, WT, k, IX, ixk, X, R, W = a
        _copy(T, int(k), R, [(r, _value(IX, int(ixk), r) - 1) for r in _marked(X, int(W))])
    elif name in ("rows_gather_values", "rows_gather_values32", "rows_gather_values_word", "rows_gather_values32_word"):
        vals, k, IX, ixk, X, R, W = a
        for r in _marked(X, int(W)):
            v = int(vals[_value(IX, int(ixk), r) - 1])
            for c in range(int(k)):
                _set(R[c], r, (v >> (int(k) - 1 - c)) & 1)
    elif name == "rows_values32":
        T, k, W, c, vals = a
        for j in range(int(c)):
            vals[j] = np.uint32(_value(T, int(k), j) & 0xFFFFFFFF)
    elif name == "rows_dedupe_insert":                # slot s: tab[2s] the key, tab[2s + 1] its least row
        G, gk, W, X, tab, S = a
        for r in _marked(X, int(W)):
            key = _value(G, int(gk), r)
            s = key % int(S)
            while int(tab[2 * s]) not in (key, EMPTY):   # linear probing (any start: the marks do not depend on it)
                s = (s + 1) % int(S)
            tab[2 * s] = np.uint64(key)
            tab[2 * s + 1] = np.uint64(min(int(tab[2 * s + 1]), r))
    elif name == "rows_dedupe_mark":
        tab, S, Z, stats = a
        for s in range(int(S)):
            if int(tab[2 * s]) != EMPTY:
                _set(Z, int(tab[2 * s + 1]), 1)
                stats[0] += np.uint64(1)
                stats[1] += np.uint64(bin(int(tab[2 * s])).count("1"))
    elif name == "rows_dedupe_insert_packed":         # the kernel's steps, row by row (any order)
        G, gk, W, X, tab, tbits, rowbits, dbits, dmax, A, B, sh, stats = a
        gk, tbits, rowbits, dbits, sh = int(gk), int(tbits), int(rowbits), int(dbits), int(sh)
        r, mask = gk - tbits, (1 << gk) - 1
        for row in _marked(X, int(W)):
            x = (_value(G, gk, row) * int(A)) & mask
            x ^= x >> sh
            x = (x * int(B)) & mask
            top = (x & ((1 << r) - 1)) << (dbits + rowbits) if r else 0
            s, d = x >> r, 0
            while True:
                if d > int(dmax):
                    stats[2] = np.uint64(1)
                    break
                mine = top | (d << rowbits) | row
                assert mine != EMPTY
                old = int(tab[s])
                if old == EMPTY:
                    tab[s] = np.uint64(mine)
                    break
                if old >> rowbits == mine >> rowbits:
                    tab[s] = np.uint64(min(old, mine))
                    break
                s, d = (s + 1) & ((1 << tbits) - 1), d + 1
    elif name == "rows_dedupe_mark_packed":
        tab, gk, tbits, rowbits, dbits, Ainv, Binv, sh, Z, stats = a
        gk, tbits, rowbits, dbits, sh = int(gk), int(tbits), int(rowbits), int(dbits), int(sh)
        r, mask = gk - tbits, (1 << gk) - 1
        for s in range(1 << tbits):
            v = int(tab[s])
            if v == EMPTY:
                continue
            row, d = v & ((1 << rowbits) - 1), (v >> rowbits) & ((1 << dbits) - 1)
            home = (s - d) & ((1 << tbits) - 1)
            x = (home << r) | (v >> (rowbits + dbits)) if r else home
            x = (x * int(Binv)) & mask
            x ^= x >> sh
            x = (x * int(Ainv)) & mask
            _set(Z, row, 1)
            stats[0] += np.uint64(1)
            stats[1] += np.uint64(bin(x).count("1"))
    elif name in ("rows_scatter_win", "rows_scatter_win_warp"):
        IX, ixk, W, X, win = a
        for r in _marked(X, int(W)):
            d = _value(IX, int(ixk), r) - 1
            win[d] = max(int(win[d]), r + 1)
    elif name in ("rows_scatter_write", "rows_scatter_write_warp"):
        T, WT, k, win, nR, R, W = a
        _copy(T, int(k), R, [(d, int(win[d]) - 1) for d in range(int(nR)) if win[d] > 0])
    elif name == "rows_groupmin_key":
        G, gk, K, kk, W, X, gmin = a
        for r in _marked(X, int(W)):
            g = _value(G, int(gk), r)
            gmin[g] = min(int(gmin[g]), _value(K, int(kk), r))
    elif name == "rows_groupmin_row":
        G, gk, K, kk, W, X, gmin, grow = a
        for r in _marked(X, int(W)):
            g = _value(G, int(gk), r)
            if _value(K, int(kk), r) == int(gmin[g]):
                grow[g] = min(int(grow[g]), r)
    elif name == "rows_groupmin_mark":
        G, gk, W, X, grow, Z, stats = a
        Z[:int(W)] = 0
        for r in _marked(X, int(W)):
            g = _value(G, int(gk), r)
            if int(grow[g]) == r:
                _set(Z, r, 1)
                stats[0] += np.uint64(1)
                stats[1] += np.uint64(bin(g).count("1"))
    elif name == "rows_groupmin_packed":
        G, gk, K, kk, W, X, rowbits, gmin = a
        for r in _marked(X, int(W)):
            g = _value(G, int(gk), r)
            gmin[g] = min(int(gmin[g]), (_value(K, int(kk), r) << int(rowbits)) | r)
    elif name == "rows_groupmin_mark_packed":
        G, gk, K, kk, W, X, rowbits, gmin, Z, stats = a
        Z[:int(W)] = 0
        for r in _marked(X, int(W)):
            g = _value(G, int(gk), r)
            if int(gmin[g]) == (_value(K, int(kk), r) << int(rowbits)) | r:
                _set(Z, r, 1)
                stats[0] += np.uint64(1)
                stats[1] += np.uint64(bin(g).count("1"))
    elif name == "rows_popc":
        X, W, counts = a
        for w in range(int(W)):
            counts[w] = bin(int(X[w])).count("1")
    elif name == "rows_list":
        X, W, ends, rows = a
        for j, r in enumerate(_marked(X, int(W))):
            rows[j] = r
    elif name == "rows_values":
        T, k, W, rows, listed, c, vals = a
        for j in range(int(c)):
            vals[j] = np.uint64(_value(T, int(k), int(rows[j]) if listed else j))
    elif name == "rows_group_first":
        g, order, rows, listed, c, Z, stats = a
        for i in range(int(c)):
            v = int(g[order[i]])
            if i == 0 or int(g[order[i - 1]]) != v:
                _set(Z, int(rows[order[i]]) if listed else int(order[i]), 1)
                stats[0] += np.uint64(1)
                stats[1] += np.uint64(bin(v).count("1"))
    elif name == "rows_gather_list":
        T, WT, k, rows, c, R, W = a
        _copy(T, int(k), R, [(j, int(rows[j])) for j in range(int(c))])
    elif name == "rows_expand":
        T, WT, k, X, ends, R, W = a
        _copy(T, int(k), R, [(r, j) for j, r in enumerate(_marked(X, int(W)))])
    elif name == "rows_expand_words":                 # the kernel's steps, thread by thread
        T, WT, k, X, ends, R, W = a
        for w in range(int(W)):
            xw = int(X[w])
            if not xw:
                continue
            m = bin(xw).count("1")
            j0 = int(ends[w]) - m
            ws, sh = j0 >> 6, j0 & 63
            mv = _bit_moves(xw)
            for c in range(int(k)):
                bits = int(T[c, ws]) >> sh
                if sh + m > 64:
                    bits |= (int(T[c, ws + 1]) << (64 - sh)) & M64
                R[c, w] = np.uint64(bits if xw == M64 else (int(R[c, w]) & ~xw) | _expand_bits(bits, xw, mv))
    elif name == "rows_compact_start":
        X, W, ends, start = a
        for w in range(int(W)):
            hi = int(ends[w])
            lo = hi - bin(int(X[w])).count("1")
            d = (lo + 63) >> 6
            if d * 64 < hi:
                start[d] = w
    elif name == "rows_compact_words":
        T, WT, k, X, ends, start, marked, R, W = a
        for d in range(-(-int(marked) // 64)):
            need = min(64, int(marked) - 64 * d)
            keep = 0 if need == 64 else M64 & ~((1 << need) - 1)
            for c in range(int(k)):
                w = int(start[d])
                xw = int(X[w])
                skip = 64 * d - (int(ends[w]) - bin(xw).count("1"))
                assert 0 <= skip < bin(xw).count("1")
                out = got = 0
                while True:
                    if xw:
                        out |= ((_compress_bits(int(T[c, w]), xw, _bit_moves(xw)) >> skip) << got) & M64
                        got += bin(xw).count("1") - skip
                        skip = 0
                        if got >= need:
                            break
                    w += 1
                    xw = int(X[w])
                R[c, d] = np.uint64((int(R[c, d]) & keep) | (out & ~keep & M64))
    else:
        raise AssertionError(f"no model of {name}")


# Hacker's Delight's compress and expand as rows_compact_words and rows_expand_words compute them
M64 = (1 << 64) - 1


def _bit_moves(m):
    mk, mv = (~m << 1) & M64, []
    for i in range(6):
        mp = (mk ^ (mk << 1)) & M64
        for s in (2, 4, 8, 16, 32):
            mp = (mp ^ (mp << s)) & M64
        v = mp & m
        mv.append(v)
        m = ((m ^ v) | (v >> (1 << i))) & M64
        mk &= ~mp & M64
    return mv


def _compress_bits(x, m, mv):
    x &= m
    for i in range(6):
        t = x & mv[i]
        x = ((x ^ t) | (t >> (1 << i))) & M64
    return x


def _expand_bits(x, m, mv):
    for i in range(5, -1, -1):
        t = (x << (1 << i)) & M64
        x = ((x & ~mv[i]) | (t & mv[i])) & M64
    return x & m


def test_compress_and_expand_bits_are_pext_and_pdep():
    """The bit moves of the word kernels against one-bit-at-a-time pext and pdep: masks of every
    density (empty, full), garbage above the low popc(m) bits of expand's input."""
    rng = np.random.default_rng(5)
    for density in (0.0, 0.02, 0.3, 0.5, 0.97, 1.0):
        for _ in range(300):
            m = int(sum(1 << i for i in range(64) if rng.random() < density))
            x = int(rng.integers(0, 1 << 63)) * 2 + int(rng.integers(0, 2))
            pos = [i for i in range(64) if (m >> i) & 1]
            pext = sum(((x >> p) & 1) << j for j, p in enumerate(pos))
            pdep = sum(((x >> j) & 1) << p for j, p in enumerate(pos))
            mv = _bit_moves(m)
            assert _compress_bits(x, m, mv) == pext and _expand_bits(x, m, mv) == pdep


@pytest.fixture
def rc(monkeypatch):
    with fake_cupy_installed(monkeypatch, *CUDA_MODULES) as (cp, shared, *routines):
        fake_cupy.ON_LAUNCH.append(model)
        # cupy.argsort is a stable sort (its documentation); NumPy's default is not
        monkeypatch.setattr(cp, "argsort", lambda a: fake_cupy._dev(np.argsort(np.asarray(a), kind="stable")),
                            raising=False)
        reads = []
        real = shared.read
        monkeypatch.setattr(shared, "read", lambda s: reads.append(1) or real(s))
        rows = Kernels((shared, *routines))
        rows.reads = reads
        yield rows


class Dev:
    """A table as the CUDA kernels see it (the data on the stand-in's 'device')."""
    def __init__(self, bits: np.ndarray):
        self.n, self.k = bits.shape
        self.data = fake_cupy._dev(NP.table(self.n, self.k, bits).data.copy())

    def bools(self):
        return NP.table_to_bools(NP._wrap(np.ascontiguousarray(np.asarray(self.data)), self.n, self.k))


class Host:
    def __init__(self, bits: np.ndarray):
        self.n, self.k = bits.shape
        self.data = NP.table(self.n, self.k, bits).data.copy()

    def bools(self):
        return NP.table_to_bools(NP._wrap(self.data, self.n, self.k))


def dev_vec(bits):
    return fake_cupy._dev(np.frombuffer(NP.from_bools(bits).to_bytes(max(1, (bits.size + 63) // 64) * 8, "little"),
                                        dtype=np.uint64).copy()[:(bits.size + 63) // 64])


def host_vec(bits) -> int:
    return NP.from_bools(bits)


def codes(rng, n, width, hi):
    v = rng.integers(1, hi + 1, n)
    return ((v[:, None] >> np.arange(width - 1, -1, -1)) & 1).astype(bool)


def launched():
    names = [lc.kernel for lc in LAUNCHES]
    LAUNCHES.clear()
    return names


@pytest.mark.parametrize("words", [1, 0])
@pytest.mark.parametrize("n,k", [(1, 1), (65, 3), (130, 64), (200, 70)])
def test_gather_and_scatter(rc, monkeypatch, words, n, k):
    monkeypatch.setattr(rc, "GATHER_WORDS", words)
    w = "_word" if words else ""
    rng = np.random.default_rng(n + k)
    m_rows = max(1, n // 2)
    c = max(1, m_rows.bit_length())
    T, IX, X, R0 = rng.random((m_rows, k)) < 0.5, codes(rng, n, c, m_rows), rng.random(n) < 0.5, rng.random((n, k)) < .5
    d, h = Dev(R0), Host(R0)
    rc.reads.clear()
    check = "rows_check_sliced" if rc.CHECK_SLICED else "rows_check"
    plan, marked = rc.decode(Dev(IX), dev_vec(X), m_rows)
    rc.gather_apply(Dev(T), Dev(IX), plan, dev_vec(X), d)
    rows_numpy.gather(Host(T), Host(IX), host_vec(X), h)
    assert marked == int(X.sum()) and len(rc.reads) == 1
    assert launched() == [check] + (["rows_values32", "rows_gather_values32" + w] if k <= rc.GATHER_NARROW_COLS
                                           else ["rows_values", "rows_gather_values" + w] if k <= 64 else ["rows_gather"])
    assert np.array_equal(d.bools(), h.bools())
    T2, R1 = rng.random((n, k)) < 0.5, rng.random((m_rows, k)) < 0.5
    d, h = Dev(R1), Host(R1)
    rc.scatter(Dev(T2), Dev(IX), dev_vec(X), d)
    rows_numpy.scatter(Host(T2), Host(IX), host_vec(X), h)
    assert launched() == [check, "rows_scatter_win_warp", "rows_scatter_write_warp"]
    assert np.array_equal(d.bools(), h.bools())


@pytest.mark.parametrize("sliced", [1, 0])
def test_out_of_range_is_unusual_before_any_write(rc, monkeypatch, sliced):
    monkeypatch.setattr(rc, "CHECK_SLICED", sliced)
    check = "rows_check_sliced" if sliced else "rows_check"
    IX = codes(np.random.default_rng(1), 70, 8, 200)       # names rows up to 200 of a 60-row T
    with pytest.raises(rc.Unusual):
        rc.decode(Dev(IX), dev_vec(np.ones(70, bool)), 60)
    assert launched() == [check]


@pytest.mark.parametrize("sliced", [1, 0])
def test_check_at_the_edges_of_the_range(rc, monkeypatch, sliced):
    """decode's range check (the bit-sliced comparison's model runs its steps): numbers equal to
    the limit, one above it, 0, unmarked bad rows, limits at and above the widest code."""
    monkeypatch.setattr(rc, "CHECK_SLICED", sliced)
    rng = np.random.default_rng(2)
    for width, limit in ((3, 5), (3, 7), (3, 100), (8, 200), (8, 255), (8, 1), (10, 513), (1, 1)):
        top = min(limit, (1 << width) - 1)
        for n in (1, 64, 130):
            nums = rng.integers(1, top + 1, n)
            nums[rng.integers(0, n)] = top
            ok_x = rng.random(n) < 0.7
            as_codes = lambda v: ((v[:, None] >> np.arange(width - 1, -1, -1)) & 1).astype(bool)   # noqa: E731
            assert rc.decode(Dev(as_codes(nums)), dev_vec(ok_x), limit)[1] == int(ok_x.sum())
            for bad in ([0] + ([top + 1] if top + 1 < (1 << width) else [])):
                wrong = nums.copy()
                i = int(rng.integers(0, n))
                wrong[i] = bad
                x = ok_x.copy()
                x[i] = False                         # unmarked: fine
                assert rc.decode(Dev(as_codes(wrong)), dev_vec(x), limit)[1] == int(x.sum())
                x[i] = True
                with pytest.raises(rc.Unusual):
                    rc.decode(Dev(as_codes(wrong)), dev_vec(x), limit)


@pytest.mark.parametrize("n,gk,kk", [(1, 3, 1), (65, 10, 7), (300, 20, 64), (70, 40, 7), (300, 64, 64), (200, 33, 3)])
def test_groupmin_both_paths(rc, n, gk, kk):
    rng = np.random.default_rng([n, gk, kk])
    G = codes(rng, n, gk, min(max(1, n // 8), (1 << min(gk, 62)) - 1))
    K = rng.random((n, kk)) < 0.3
    for density in (0.0, 0.1, 1.0):            # 1.0: every row marked, no list
        X = rng.random(n) < density
        for same in (False, True):                   # K is G itself: BORUVKA's dedupe
            Gd = Dev(G)
            Kd, Kh = (Gd, None) if same else (Dev(K), Host(K))
            Gh = Host(G)
            rc.reads.clear()
            z, groups, ones = rc.groupmin_counted(Gd, Kd, dev_vec(X))
            zh, gh, oh = rows_numpy.groupmin_counted(Gh, Gh if same else Kh, host_vec(X))
            got = int.from_bytes(np.asarray(z).tobytes(), "little")
            assert (got, groups, ones) == (zh, gh, oh)
            names = launched()
            if gk <= rc.GROUP_BITS_SCRATCH and rc.packed_row_bits(n, G.shape[1] if same else kk):
                assert names == ["rows_groupmin_packed", "rows_groupmin_mark_packed"]
                assert len(rc.reads) == 1
            elif gk <= rc.GROUP_BITS_SCRATCH:
                assert names == ["rows_groupmin_key", "rows_groupmin_row", "rows_groupmin_mark"]
                assert len(rc.reads) == 1
            elif same and gk <= rc.DEDUPE_BITS_MAX:     # BORUVKA's dedupe: a hash table, no sort
                packed = rc.dedupe_packing(n, gk, int(X.sum())) is not None
                assert names == ["rows_popc"] + ([] if not X.any() else
                                                 ["rows_dedupe_insert_packed", "rows_dedupe_mark_packed"] if packed else
                                                 ["rows_dedupe_insert", "rows_dedupe_mark"])
            elif X.all():                        # no list of rows
                assert names == ["rows_popc", "rows_values"] + ["rows_values"] * (not same) + ["rows_group_first"]
            elif X.any():
                assert names[:3] == ["rows_popc", "rows_popc", "rows_list"] and names[-1] == "rows_group_first"
                assert len(rc.reads) == 1         # the marked count is the other read (numb)


@pytest.mark.parametrize("probes", [1 << 20, 1, 0])
@pytest.mark.parametrize("n,gk,distinct", [(1, 27, 1), (100, 27, 30), (300, 53, 300), (200, 40, 7), (130, 33, 130),
                                           (70, 63, 20)])
def test_dedupe_by_packed_slots(rc, monkeypatch, probes, n, gk, distinct):
    """GROUPMIN(G, G, X) by 8-byte slots (models run the kernels' steps: the key's mix, its home,
    the packed slot, the unmixing): equal to the NumPy kernel; keys too far from home (probes: 1,
    0) hand over to the 16-byte slots; 63-bit keys of 70 rows leave too few distance bits."""
    monkeypatch.setattr(rc, "DEDUPE_PROBES_MAX", probes)
    rng = np.random.default_rng([n, gk, distinct])
    vals = rng.integers(0, 1 << min(gk, 62), distinct, dtype=np.uint64) << np.uint64(gk - min(gk, 62))
    G = ((vals[rng.integers(0, distinct, n)][:, None] >> np.arange(gk - 1, -1, -1, dtype=np.uint64)) & 1).astype(bool)
    for X in (np.ones(n, bool), rng.random(n) < 0.5):
        launched()
        Gd, Gh = Dev(G), Host(G)
        z, groups, ones = rc.groupmin_counted(Gd, Gd, dev_vec(X))
        assert (int.from_bytes(np.asarray(z).tobytes(), "little"), groups, ones) == \
            rows_numpy.groupmin_counted(Gh, Gh, host_vec(X))
        names = launched()
        if not X.any():
            assert names == ["rows_popc"]
            continue
        pk = rc.dedupe_packing(n, gk, int(X.sum()))
        assert names[:3] == ["rows_popc"] + (["rows_dedupe_insert_packed", "rows_dedupe_mark_packed"] if pk else
                                             ["rows_dedupe_insert", "rows_dedupe_mark"])
        assert names[3:] in ([], ["rows_dedupe_insert", "rows_dedupe_mark"])
        if pk and probes == 1 << 20:
            assert len(names) == 3                  # no key that far: no second table
        if (n, distinct, probes) == (300, 300, 0) and X.all():
            assert len(names) == 5                  # 300 keys, 512 slots, no step from home allowed: a collision
    assert rc.dedupe_packing(70, 63, 70) is None and rc.dedupe_packing(128311246, 53, 128311246) == (28, 27, 12)


@pytest.mark.parametrize("words", [1, 0])
@pytest.mark.parametrize("n,k,density", [(1, 1, 0.4), (65, 3, 0.4), (200, 70, 0.4), (130, 5, 1.0),
                                         (300, 9, 0.9), (700, 6, 0.2), (1000, 2, 0.005)])
def test_compact_and_expand(rc, monkeypatch, words, n, k, density):
    """Both paths (COMPACT_WORDS; the word path's COMPACT only where X marks 1 row in
    COMPACT_WORDS_SHARE or more, else the list): the word kernels' models run their steps thread
    by thread."""
    monkeypatch.setattr(rc, "COMPACT_WORDS", words)
    rng = np.random.default_rng([n, k])
    T, X = rng.random((n, k)) < 0.5, rng.random(n) < density
    X[0] = True
    c = int(X.sum())
    assert rc.numb(dev_vec(X)) == c
    R0 = rng.random((c + 5, k)) < 0.5
    R = Dev(R0)
    launched()
    rc.compact(Dev(T), dev_vec(X), R, c)
    by_words = words and rc.COMPACT_WORDS_SHARE * c >= n
    assert launched() == (["rows_popc", "rows_compact_start", "rows_compact_words"] if by_words else
                          ["rows_popc", "rows_list", "rows_gather_list"])
    want = R0.copy()
    want[:c] = T[X]
    assert np.array_equal(R.bools(), want)
    S = Dev(T)                                       # in place: the rows come from a copy of T
    rc.compact(S, dev_vec(X), S, c)
    want = T.copy()
    want[:c] = T[X]
    assert np.array_equal(S.bools(), want)
    E0 = rng.random((n, k)) < 0.5
    E = Dev(E0)
    launched()
    rc.expand(Dev(want[:c].copy()), dev_vec(X), E, c)
    assert launched() == ["rows_popc", "rows_expand_words" if words else "rows_expand"]
    want_e = E0.copy()
    want_e[X] = T[X]
    assert np.array_equal(E.bools(), want_e)


def test_iota(rc):
    d, h = Dev(np.ones((130, 9), bool)), Host(np.ones((130, 9), bool))
    rc.iota(d)
    rows_numpy.iota(h)
    assert launched() == ["rows_iota"] and np.array_equal(d.bools(), h.bools())
