"""The floors: stdlib/graphs.star's associative routines written by hand in Numba on the
bit-sliced layout (bitslice.py), the same rounds and the same whole-column steps as the Star
routine, each round one compiled loop nest (no Python between rounds). Vertices are rows
0 .. n-1 here (vertex v is row v - 1); the arc tables hold the 1-based vertex numbers as the
Star programs' GRAPH_EDGES tables do. What each returns is what the program prints from."""
from __future__ import annotations

import numpy as np
from numba import njit

from .bitslice import (ALLW, ONE, ZERO, addt, clearbit, compact, expand, first_of_each_key, fnd, full, gather,
                       getbit, groupmin, hit, iota, match, min_rows, nwords, numb, row_get, row_set, scatter,
                       scatter_ones, setbit, setinf, setmin, some, trailing_zeros, wcopy)


@njit(cache=True)
def codebits(x):
    """CODEBITS: the least c >= 1 with 2^c > x."""
    c = 1
    while x > 1:
        c += 1
        x //= 2
    return c


# ------------------------------------------------------------------ adjacency tables (GRAPH_ADJ)
@njit(cache=True)
def adjacency(n, src, dst):
    """GRAPH_ADJ: the n x n table P, column j - 1 holding a 1 at row i - 1 for an arc i -> j."""
    p = np.zeros((n, nwords(n)), np.uint64)
    for e in range(src.shape[0]):
        setbit(p[dst[e] - 1], src[e] - 1)
    return p


@njit(cache=True)
def transpose(p):
    """for j := 1 to n do ROW(j, PT) := CONVERT(COL(j, P)): the set bits of every column moved."""
    n = p.shape[0]
    pt = np.zeros_like(p)
    for j in range(n):
        col = p[j]
        wj, bj = j >> 6, ONE << np.uint64(j & 63)
        for w in range(col.shape[0]):
            m = col[w]
            while m:
                i = w * 64 + np.int64(trailing_zeros(m))
                m &= m - ONE
                pt[i, wj] |= bj
    return pt


@njit(cache=True)
def bfs(n, s, src, dst, b):
    """bfs.star: GRAPH_ADJ(P), then BFS(n, P, s, L) (L: n x b levels, all ones unreached)."""
    pt = transpose(adjacency(n, src, dst))
    nv = nwords(n)
    lv = np.empty((b, nv), np.uint64)
    setinf(lv)
    d = 0
    f = np.zeros(nv, np.uint64)
    setbit(f, s)
    v = f.copy()
    nxt = np.zeros(nv, np.uint64)
    while some(f):
        wcopy(lv, f, d)
        nxt[:] = ZERO
        for w in range(nv):                 # while SOME(F): i := STEP(F); NXT := NXT or COL(i, PT)
            m = f[w]
            while m:
                i = w * 64 + np.int64(trailing_zeros(m))
                m &= m - ONE
                col = pt[i]
                for q in range(nv):
                    nxt[q] |= col[q]
        for q in range(nv):
            f[q] = nxt[q] & ~v[q]
            v[q] |= f[q]
        d += 1
    return lv


@njit(cache=True)
def components(n, src, dst, c):
    """components.star: GRAPH_ADJ(P), P := P or its transpose, then COMPONENTS(n, P, C)
    (C: n x c, every vertex the number of the first vertex of its component)."""
    p = adjacency(n, src, dst)
    pt = transpose(p)
    nv = nwords(n)
    for j in range(n):
        for q in range(nv):
            p[j, q] |= pt[j, q]
    ct = np.zeros((c, nv), np.uint64)
    u = full(n)
    f = np.zeros(nv, np.uint64)
    comp = np.zeros(nv, np.uint64)
    nxt = np.zeros(nv, np.uint64)
    count = 0
    while some(u):
        r = fnd(u)
        f[:] = ZERO
        setbit(f, r)
        comp[:] = f
        while some(f):
            nxt[:] = ZERO
            for w in range(nv):
                m = f[w]
                while m:
                    i = w * 64 + np.int64(trailing_zeros(m))
                    m &= m - ONE
                    col = p[i]
                    for q in range(nv):
                        nxt[q] |= col[q]
            for q in range(nv):
                f[q] = nxt[q] & ~comp[q]
                comp[q] |= f[q]
        wcopy(ct, comp, r + 1)
        for q in range(nv):
            u[q] &= ~comp[q]
        count += 1
    return ct, count


# ------------------------------------------------------------------ arc lists (GRAPH_EDGES)
@njit(cache=True)
def dijkstra(n, s, left, right, weight, m):
    """DIJKSTRA: MIN over the unsettled finite rows, MATCH on left for the settled vertex's arcs,
    each arc relaxed with one word ADD, then MATCH(D, UNS, inf) for the next frontier."""
    b = weight.shape[0]
    nv = nwords(n)
    d = np.empty((b, nv), np.uint64)
    setinf(d)
    inf = (np.int64(1) << b) - 1
    row_set(d, s, 0)
    uns = full(n)
    alla = full(m)
    f = np.zeros(nv, np.uint64)
    setbit(f, s)
    ea = np.zeros(alla.shape[0], np.uint64)
    z = np.zeros(nv, np.uint64)
    settled = 0
    while some(f):
        zmin = min_rows(d, f)
        u = fnd(zmin)
        settled += 1
        if u < 0 or settled > n:
            raise RuntimeError("DIJKSTRA: MIN found no unsettled vertex to settle")
        clearbit(uns, u)
        du = row_get(d, u)
        match(left, alla, u + 1, ea)
        for w in range(ea.shape[0]):
            mm = ea[w]
            while mm:
                e = w * 64 + np.int64(trailing_zeros(mm))
                mm &= mm - ONE
                cand = (row_get(weight, e) + du) & inf
                if cand >= du:                      # no overflow
                    t = row_get(right, e) - 1
                    if cand < row_get(d, t):
                        row_set(d, t, cand)
        match(d, uns, inf, z)
        for q in range(nv):
            f[q] = uns[q] & ~z[q]
    return d


@njit(cache=True)
def bellman_ford(n, s, left, right, weight, m):
    """BELLMAN_FORD: per round, MATCH + WCOPY per changed vertex, MATCH for the finite ones, ADDT,
    SETMIN for overflow, then per vertex MATCH on right and MIN of its candidates."""
    b = weight.shape[0]
    nv, mw = nwords(n), nwords(m)
    d = np.empty((b, nv), np.uint64)
    setinf(d)
    dl = np.empty((b, mw), np.uint64)
    setinf(dl)
    sc = np.zeros((b, mw), np.uint64)
    inf = (np.int64(1) << b) - 1
    row_set(d, s, 0)
    alla = full(m)
    ch = np.zeros(nv, np.uint64)
    setbit(ch, s)
    act = np.zeros(mw, np.uint64)
    ea = np.zeros(mw, np.uint64)
    z = np.zeros(mw, np.uint64)
    rnd = 0
    while some(ch):
        if rnd == n:
            raise RuntimeError("BELLMAN_FORD: distances still change after n rounds")
        rnd += 1
        act[:] = ZERO
        for w in range(nv):
            mm = ch[w]
            while mm:
                u = w * 64 + np.int64(trailing_zeros(mm))
                mm &= mm - ONE
                match(left, alla, u + 1, ea)
                wcopy(dl, ea, row_get(d, u))
                for q in range(mw):
                    act[q] |= ea[q]
        match(dl, act, inf, z)
        fin = np.empty(mw, np.uint64)
        for q in range(mw):
            fin[q] = act[q] & ~z[q]
        addt(dl, weight, fin, sc)
        ov = setmin(sc, dl, fin)
        for q in range(mw):
            act[q] = fin[q] & ~ov[q]
        nch = np.zeros(nv, np.uint64)
        if some(act):
            for v in range(n):
                if match(right, act, v + 1, ea):
                    zz = min_rows(sc, ea)
                    cand = row_get(sc, fnd(zz))
                    if cand < row_get(d, v):
                        row_set(d, v, cand)
                        setbit(nch, v)
        ch = nch
    return d


@njit(cache=True)
def prim(n, left, right, weight, m):
    """PRIM: LI / RI by MATCH on left and right per joined vertex, CR := LI xor RI, MIN of the
    weights over CR, the first such edge joins; the next tree from FND(not VIN)."""
    mw, nv = nwords(m), nwords(n)
    tr = np.zeros(mw, np.uint64)
    li = np.zeros(mw, np.uint64)
    ri = np.zeros(mw, np.uint64)
    cr = np.zeros(mw, np.uint64)
    z = np.zeros(mw, np.uint64)
    alla = full(m)
    allv = full(n)
    vin = np.zeros(nv, np.uint64)
    joined = 0
    while numb(vin) < n:
        notv = np.empty(nv, np.uint64)
        for q in range(nv):
            notv[q] = ~vin[q] & allv[q]
        u = fnd(notv)
        while True:
            joined += 1
            if joined > n:
                raise RuntimeError("PRIM: more than n vertices joined the trees")
            setbit(vin, u)
            match(left, alla, u + 1, z)
            for q in range(mw):
                li[q] |= z[q]
            match(right, alla, u + 1, z)
            anyc = ZERO
            for q in range(mw):
                ri[q] |= z[q]
                cr[q] = li[q] ^ ri[q]
                anyc |= cr[q]
            u = -1
            if anyc:
                e = fnd(min_rows(weight, cr))
                setbit(tr, e)
                if getbit(li, e):
                    u = row_get(right, e) - 1
                else:
                    u = row_get(left, e) - 1
            if u < 0:
                break
    return tr


@njit(cache=True)
def kruskal(n, left, right, weight, m):
    """KRUSKAL: MIN selects every remaining edge of the least weight; each one taken top-down
    joins two labels of C (n x c) when they differ, relabelled at once by MATCH + WCOPY."""
    c = left.shape[0]
    mw = nwords(m)
    ct = iota(n, c)
    vs = full(n)
    y = np.zeros(vs.shape[0], np.uint64)
    tr = np.zeros(mw, np.uint64)
    rem = full(m)
    count = 0
    while some(rem) and count < n - 1:
        z = min_rows(weight, rem)
        for q in range(mw):
            rem[q] &= ~z[q]
        for w in range(mw):
            mm = z[w]
            while mm:
                e = w * 64 + np.int64(trailing_zeros(mm))
                mm &= mm - ONE
                lu = row_get(ct, row_get(left, e) - 1)
                lv = row_get(ct, row_get(right, e) - 1)
                if lu != lv:
                    setbit(tr, e)
                    count += 1
                    match(ct, vs, lv, y)
                    wcopy(ct, y, lu)
    return tr


@njit(cache=True)
def bfs_adapt(n, s, left, right, m, b):
    """BFS-adapt: BFS_LEVELS on the live arcs (a narrow frontier by MATCH on left per vertex and
    its arcs' heads one at a time, a wide one by GATHER of the frontier and SCATTER to the heads),
    and BFS_LIVE: once at most half the rows are live, left and right compacted to them."""
    nv = nwords(n)
    lv = np.empty((b, nv), np.uint64)
    setinf(lv)
    d = 0
    f = np.zeros(nv, np.uint64)
    setbit(f, s)
    v = f.copy()
    rows = m
    live_rows = full(m)
    while True:                               # one BFS_LEVELS call on tables of `rows` rows
        mw = nwords(rows)
        lvs = live_rows
        live = numb(lvs)
        a = np.zeros(mw, np.uint64)
        ea = np.zeros(mw, np.uint64)
        shrink = False
        while some(f) and not shrink:
            wcopy(lv, f, d)
            a[:] = ZERO
            g = np.zeros(nv, np.uint64)
            if numb(f) * rows <= 64 * live:   # narrow: MATCH on left per frontier vertex
                for w in range(nv):
                    mm = f[w]
                    while mm:
                        u = w * 64 + np.int64(trailing_zeros(mm))
                        mm &= mm - ONE
                        match(left, lvs, u + 1, ea)
                        for q in range(mw):
                            a[q] |= ea[q]
                for w in range(mw):          # their heads, one arc at a time
                    mm = a[w]
                    while mm:
                        e = w * 64 + np.int64(trailing_zeros(mm))
                        mm &= mm - ONE
                        setbit(g, row_get(right, e) - 1)
            else:                             # wide: GATHER the frontier by left, SCATTER ones by right
                for w in range(mw):
                    mm = lvs[w]
                    hitw = ZERO
                    while mm:
                        t = trailing_zeros(mm)
                        mm &= mm - ONE
                        e = w * 64 + np.int64(t)
                        if getbit(f, row_get(left, e) - 1):
                            hitw |= ONE << np.uint64(t)
                    a[w] = hitw
                scatter_ones(right, a, g)
            for q in range(nv):
                f[q] = g[q] & ~v[q]
                v[q] |= f[q]
            d += 1
            for q in range(mw):
                lvs[q] &= ~a[q]
            live = numb(lvs)
            shrink = live > 0 and 2 * live <= rows
        if not (shrink and some(f)):
            break
        left = compact(left, lvs, live)        # BFS_LIVE
        right = compact(right, lvs, live)
        rows = live
        live_rows = full(live)
    return lv


@njit(cache=True)
def boruvka_rounds(n, limit, l, r, k, o, t2, t2rows, rows, rnd):
    """BORUVKA_ROUNDS and BORUVKA_LIVE as one loop: rounds of GROUPMIN, SCATTER hooks and
    pointer jumping on the live arcs, and once at most half the rows are live the contracted
    graph (its live components renumbered, its live arcs compacted). The rounds so far."""
    while True:
        c = l.shape[0]
        ident = iota(n, c)
        comp = ident.copy()
        vs = full(n)
        a = full(rows)
        picked = np.zeros(a.shape[0], np.uint64)
        cl = l.copy()
        cr = r.copy()
        pp = np.zeros_like(l)
        p2 = np.zeros_like(ident)
        shrink = False
        first = True
        live = 0
        while True:
            if first:
                first = False
            else:
                gather(comp, l, a, cl)
                gather(comp, r, a, cr)
            z = hit(cl, cr, a)
            for q in range(a.shape[0]):
                a[q] &= ~z[q]
            live = numb(a)
            if live > 0 and 2 * live <= rows:
                shrink = True
            elif live > 0:
                rnd += 1
                if rnd > limit:
                    raise RuntimeError("BORUVKA: more than CODEBITS(n) rounds")
                z = groupmin(cl, k, a, n)
                p = iota(n, c)
                scatter(cr, cl, z, p)
                gather(p, cr, z, pp)
                mm = hit(pp, cl, z)
                lo = setmin(cl, cr, mm)
                for q in range(a.shape[0]):
                    picked[q] |= z[q] & ~(mm[q] & ~lo[q])
                scatter(cl, cl, lo, p)
                ch = hit(p, ident, vs)
                merged = False
                for q in range(vs.shape[0]):
                    if vs[q] & ~ch[q]:
                        merged = True
                if not merged:
                    raise RuntimeError("BORUVKA: a round merged no components")
                jumps = 0
                while True:                   # pointer jumping until P stays
                    gather(p, p, vs, p2)
                    ch = hit(p, p2, vs)
                    p[:, :] = p2
                    jumps += 1
                    moved = False
                    for q in range(vs.shape[0]):
                        if vs[q] & ~ch[q]:
                            moved = True
                    if moved and jumps > limit:
                        raise RuntimeError("BORUVKA: pointer jumping did not settle")
                    if not moved:
                        break
                gather(p, comp, vs, p2)
                comp[:, :] = p2
            if live == 0 or shrink:
                break
        if rows == t2rows:
            t2[:] = picked
        else:
            scatter_ones(o, picked, t2)
        if not shrink:
            return rnd
        livec = np.zeros(vs.shape[0], np.uint64)      # BORUVKA_LIVE
        scatter_ones(cl, a, livec)
        n2 = numb(livec)
        dd = compact(ident, livec, n2)
        j = iota(n2, codebits(n2))
        mp = np.zeros((j.shape[0], nwords(n)), np.uint64)
        scatter(j, dd, full(n2), mp)
        cl3 = compact(cl, a, live)
        cr3 = compact(cr, a, live)
        k = compact(k, a, live)
        o = compact(o, a, live)
        all3 = full(live)
        l = np.zeros((j.shape[0], all3.shape[0]), np.uint64)
        r = np.zeros_like(l)
        gather(mp, cl3, all3, l)
        gather(mp, cr3, all3, r)
        n, rows = n2, live


@njit(cache=True)
def boruvka(n, left, right, weight, m):
    """BORUVKA: the keys (weight, smaller end, larger end), one row of every edge (GROUPMIN of
    the keys by themselves), the symmetric list of those edges (BORUVKA_EDGES: COMPACT and
    EXPAND), its rounds, and the chosen edges back on the input's rows."""
    nc, nb = left.shape[0], weight.shape[0]
    mw = nwords(m)
    alla = full(m)
    lo1 = setmin(left, right, alla)
    kk = np.zeros((nb + 2 * nc, mw), np.uint64)
    kk[:nb] = weight
    for j in range(nc):
        for q in range(mw):
            y, z = left[j, q], right[j, q]
            f = (y & lo1[q]) | (z & ~lo1[q] & alla[q])
            kk[nb + j, q] = f
            kk[nb + nc + j, q] = f ^ y ^ z
    u = first_of_each_key(kk, alla)
    mu = numb(u)
    # BORUVKA_EDGES
    m2 = 2 * mu
    first = np.zeros(nwords(m2), np.uint64)
    for i in range(mu):
        setbit(first, i)
    second = full(m2)
    for q in range(second.shape[0]):
        second[q] &= ~first[q]
    l2 = compact(left, u, m2)
    r2 = compact(right, u, m2)
    expand(r2, second, l2)
    expand(l2, second, r2)
    ku = compact(kk, u, mu)
    k2 = np.zeros((kk.shape[0], nwords(m2)), np.uint64)
    expand(ku, first, k2)
    expand(ku, second, k2)
    o2 = iota(m2, codebits(m2))
    t2 = np.zeros(nwords(m2), np.uint64)
    boruvka_rounds(n, codebits(n), l2, r2, k2, o2, t2, m2, m2, 0)
    t2t = t2.reshape(1, t2.shape[0])
    g1 = compact(t2t, second, mu)
    x1 = g1[0].copy()
    g1 = compact(t2t, first, mu)
    for q in range(g1.shape[1]):
        g1[0, q] |= x1[q]
    tm = np.zeros((1, mw), np.uint64)
    expand(g1, u, tm)
    return tm[0]


@njit(cache=True)
def tree_weight(tr, weight):
    """The program's loop: NUMB(Tr), and the sum of NUMOF(ROW(e, W)) over its rows."""
    total = 0
    for w in range(tr.shape[0]):
        mm = tr[w]
        while mm:
            e = w * 64 + np.int64(trailing_zeros(mm))
            mm &= mm - ONE
            total += row_get(weight, e)
    return numb(tr), total


@njit(cache=True)
def bellman_ford_adapt(n, s, left, right, weight, m):
    """BELLMAN_FORD-adapt: per round, the arcs leaving a changed vertex (GATHER), their
    candidates (GATHER of D by left, ADDT, SETMIN for overflow), the least into each head
    (GROUPMIN by right), those improving it (GATHER, SETMIN) written into D (SCATTER)."""
    b = weight.shape[0]
    nv, mw = nwords(n), nwords(m)
    d = np.empty((b, nv), np.uint64)
    setinf(d)
    row_set(d, s, 0)
    dl = np.zeros((b, mw), np.uint64)
    sc = np.zeros((b, mw), np.uint64)
    dr = np.zeros((b, mw), np.uint64)
    alla = full(m)
    ch = np.zeros(nv, np.uint64)
    setbit(ch, s)
    rnd = 0
    while some(ch):
        if rnd == n:
            raise RuntimeError("BELLMAN_FORD-adapt: distances still change after n rounds")
        rnd += 1
        act = np.zeros(mw, np.uint64)         # GATHER(CHT, left, ALL, CHL)
        for w in range(mw):
            mm = alla[w]
            hitw = ZERO
            while mm:
                t = trailing_zeros(mm)
                mm &= mm - ONE
                if getbit(ch, row_get(left, w * 64 + np.int64(t)) - 1):
                    hitw |= ONE << np.uint64(t)
            act[w] = hitw
        gather(d, left, act, dl)
        addt(dl, weight, act, sc)
        ov = setmin(sc, dl, act)
        for q in range(mw):
            act[q] &= ~ov[q]
        z = groupmin(right, sc, act, n)
        gather(d, right, z, dr)
        imp = setmin(sc, dr, z)
        scatter(sc, right, imp, d)
        ch = np.zeros(nv, np.uint64)
        scatter_ones(right, imp, ch)
    return d
