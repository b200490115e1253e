// GROUPMIN (stdlib/rows.star) on the GPU: the scratch passes, the dedupe's hash tables and the
// sorted path's marks; rows_list and rows_values: native/shared/rows.cu.
// GROUPMIN's passes: warp per word (FOR_WORDS), G's and K's values by load_cols and word_values;
// lanes of one group in a warp combine before their one atomic (a large component holds most arcs).

// Word w of a GROUPMIN pass: each lane's G values g[h] and keys key[h] of its rows w*64 + 32h + lane
// (h = 0, 1): K's value (rowbits < 0), K's value above the row number (rowbits >= 0: the packed
// passes), or the row number itself (K null). G's and K's words are all loaded first. Every lane
// of the warp calls it.
__device__ __forceinline__ void group_word(const u64* G, int gk, const u64* K, int kk, int rowbits, i64 W,
                                           i64 w, int lane, u64 g[2], u64 key[2]) {
    u64 ga, gb, ka = 0ULL, kb = 0ULL;
    load_cols(G, gk, W, w, lane, ga, gb);
    if (K != nullptr) load_cols(K, kk, W, w, lane, ka, kb);
    word_values(ga, gb, gk, lane, g[0], g[1]);
    const u64 r0 = (u64)(w * 64 + lane);
    if (K == nullptr) {
        key[0] = r0;
        key[1] = r0 + 32ULL;
    } else {
        word_values(ka, kb, kk, lane, key[0], key[1]);
        if (rowbits >= 0) {
            key[0] = (key[0] << rowbits) | r0;
            key[1] = (key[1] << rowbits) | (r0 + 32ULL);
        }
    }
}

// gmin[g] = min(gmin[g], the least key among the unit's marked rows of group g): one atomic per
// group in the warp, after a plain read shows it lowers the minimum (the minimum only falls, so
// a stale read only lets an atomic through).
__device__ __forceinline__ void group_min_unit(unsigned int xm, int lane, u64 g, u64 key, u64* gmin) {
    const bool on = (xm >> lane) & 1u;
    if (!on) { g = ~0ULL; key = ~0ULL; }                        // G <= 26 bits: never a group
    const unsigned int peers = __match_any_sync(FULL, g);
    const u64 best = peers_min(key, peers);
    if (on && lane == __ffs(peers) - 1 && best < gmin[g]) atomicMin(&gmin[g], best);
}

// A marking pass's unit: Z's half-word of the unit gets the rows chosen; chosen and ones count
// them and the 1 bits of their G values.
__device__ __forceinline__ void mark_unit(unsigned int* Z32, i64 base, int lane, bool ch, u64 g,
                                          u64& chosen, u64& ones) {
    const unsigned int zb = __ballot_sync(FULL, ch);
    if (lane == 0) Z32[base >> 5] = zb;
    if (ch) {
        chosen += 1ULL;
        ones += __popcll(g);
    }
}

// Pass 1: gmin[g] = the smallest K among the marked rows of group g.
extern "C" __global__ void rows_groupmin_key(const u64* G, int gk, const u64* K, int kk, i64 W,
                                             const u64* X, u64* gmin) {
    const int lane = threadIdx.x & 31;
    FOR_WORDS(w, xw, X, W) {
        if (!xw) continue;
        u64 g[2], kv[2];
        group_word(G, gk, K, kk, -1, W, w, lane, g, kv);
        for (int h = 0; h < 2; ++h) {
            const unsigned int xm = (unsigned int)(xw >> (32 * h));
            if (xm) group_min_unit(xm, lane, g[h], kv[h], gmin);
        }
    }
}

// Pass 2: grow[g] = the first marked row of group g whose K is gmin[g] (in a warp: the lowest
// such lane of the group).
extern "C" __global__ void rows_groupmin_row(const u64* G, int gk, const u64* K, int kk, i64 W,
                                             const u64* X, const u64* gmin, u64* grow) {
    const int lane = threadIdx.x & 31;
    FOR_WORDS(w, xw, X, W) {
        if (!xw) continue;
        u64 g[2], kv[2];
        group_word(G, gk, K, kk, -1, W, w, lane, g, kv);
        for (int h = 0; h < 2; ++h) {
            const unsigned int xm = (unsigned int)(xw >> (32 * h));
            const bool cand = ((xm >> lane) & 1u) && kv[h] == gmin[g[h]];
            const unsigned int cm = __ballot_sync(FULL, cand);
            if (!cm) continue;
            const unsigned int peers = __match_any_sync(FULL, g[h]) & cm;
            const u64 row = (u64)(w * 64 + 32 * h + lane);
            if (cand && lane == __ffs(peers) - 1 && row < grow[g[h]]) atomicMin(&grow[g[h]], row);
        }
    }
}

// Pass 3: Z's bit is 1 for the marked rows chosen for their group (the row that is grow of its
// group); every word of Z is written; stats[0] += the rows chosen (the groups), stats[1] += the
// 1 bits of their G values.
extern "C" __global__ void rows_groupmin_mark(const u64* G, int gk, i64 W, const u64* X,
                                              const u64* grow, u64* Z, u64* stats) {
    const int lane = threadIdx.x & 31;
    unsigned int* Z32 = reinterpret_cast<unsigned int*>(Z);
    u64 chosen = 0ULL, ones = 0ULL;
    FOR_WORDS(w, xw, X, W) {
        if (!xw) {
            if (lane == 0) Z[w] = 0ULL;
            continue;
        }
        u64 g[2], row[2];
        group_word(G, gk, nullptr, 0, -1, W, w, lane, g, row);
        for (int h = 0; h < 2; ++h) {
            const unsigned int xm = (unsigned int)(xw >> (32 * h));
            mark_unit(Z32, w * 64 + 32 * h, lane, ((xm >> lane) & 1u) && grow[g[h]] == row[h], g[h], chosen, ones);
        }
    }
    warp_add(&stats[0], chosen);
    warp_add(&stats[1], ones);
}

// GROUPMIN when K's bits and the row number fit 64 bits together: one number (K above the row)
// per row, so one atomicMin pass finds both the least K and its first row.
// Pass 1: gmin[g] = the least (K << rowbits | row) of the marked rows of group g.
extern "C" __global__ void rows_groupmin_packed(const u64* G, int gk, const u64* K, int kk, i64 W,
                                                const u64* X, int rowbits, u64* gmin) {
    const int lane = threadIdx.x & 31;
    FOR_WORDS(w, xw, X, W) {
        if (!xw) continue;
        u64 g[2], key[2];
        group_word(G, gk, K, kk, rowbits, W, w, lane, g, key);
        for (int h = 0; h < 2; ++h) {
            const unsigned int xm = (unsigned int)(xw >> (32 * h));
            if (xm) group_min_unit(xm, lane, g[h], key[h], gmin);
        }
    }
}

// Pass 2: as rows_groupmin_mark, a row chosen when its packed number is its group's gmin.
extern "C" __global__ void rows_groupmin_mark_packed(const u64* G, int gk, const u64* K, int kk, i64 W,
                                                     const u64* X, int rowbits, const u64* gmin, u64* Z,
                                                     u64* stats) {
    const int lane = threadIdx.x & 31;
    unsigned int* Z32 = reinterpret_cast<unsigned int*>(Z);
    u64 chosen = 0ULL, ones = 0ULL;
    FOR_WORDS(w, xw, X, W) {
        if (!xw) {
            if (lane == 0) Z[w] = 0ULL;
            continue;
        }
        u64 g[2], key[2];
        group_word(G, gk, K, kk, rowbits, W, w, lane, g, key);
        for (int h = 0; h < 2; ++h) {
            const unsigned int xm = (unsigned int)(xw >> (32 * h));
            mark_unit(Z32, w * 64 + 32 * h, lane, ((xm >> lane) & 1u) && gmin[g[h]] == key[h], g[h], chosen, ones);
        }
    }
    warp_add(&stats[0], chosen);
    warp_add(&stats[1], ones);
}

// GROUPMIN of G by G itself (K is G: BORUVKA's dedupe of its edge keys) without a sort: an
// open-addressing hash table of S slots in device memory, slot s = (key, least row) in tab[2s],
// tab[2s+1], both all ones when empty (keys of at most 63 bits are never all ones). The two
// words share a 32-byte sector, so the row's atomic finds the key's line in L2.
__device__ __forceinline__ u64 key_hash(u64 x) {            // splitmix64's finaliser
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27; x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

#define EMPTY_SLOT 0xFFFFFFFFFFFFFFFFULL

// The dedupes' warp per 32 rows: false for a thread whose row X does not mark (or past the
// table); else its row number and key (G's value). The warp leaves together or not at all
// before warp_values, whose shuffles need all 32 lanes.
__device__ __forceinline__ bool marked_key(const u64* G, int gk, i64 W, const u64* X, u64& row, u64& key) {
    const int lane = threadIdx.x & 31;
    const i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) << 5;
    if (base >= W * 64) return false;
    const unsigned int xm = (unsigned int)(X[base >> 6] >> (base & 63));
    if (!xm) return false;
    key = warp_values(G, 0, gk, W, base, lane);
    row = (u64)(base + lane);
    return (xm >> lane) & 1u;
}

// Warp per 32 rows: every marked row finds its key's slot (linear probing from the key's hash
// scaled to 0..S-1; atomicCAS claims an empty one) and atomicMin's its row number into it,
// after a plain read shows it lowers it (a slot's key never changes once set, and its row only
// falls, so a stale read only lets an atomic through).
extern "C" __global__ void rows_dedupe_insert(const u64* G, int gk, i64 W, const u64* X, u64* tab, i64 S) {
    u64 row, key;
    if (!marked_key(G, gk, W, X, row, key)) return;
    i64 s = (i64)__umul64hi(key_hash(key), (u64)S);
    for (;;) {
        u64 k0 = ((volatile u64*)tab)[2 * s];
        if (k0 == EMPTY_SLOT) {
            k0 = atomicCAS(&tab[2 * s], EMPTY_SLOT, key);
            if (k0 == EMPTY_SLOT) k0 = key;                     // claimed
        }
        if (k0 == key) {
            if (row < ((volatile u64*)tab)[2 * s + 1]) atomicMin(&tab[2 * s + 1], row);
            return;
        }
        if (++s == S) s = 0;
    }
}

// Slot per thread (grid-stride): every filled slot's row is its key's first marked row, marked
// in Z (zeroed before); stats[0] += the keys (groups), stats[1] += their 1 bits.
extern "C" __global__ void rows_dedupe_mark(const u64* tab, i64 S, u64* Z, u64* stats) {
    const ulonglong2* slots = reinterpret_cast<const ulonglong2*>(tab);
    u64 chosen = 0ULL, ones = 0ULL;
    for (i64 s = (i64)blockIdx.x * blockDim.x + threadIdx.x; s < S; s += (i64)gridDim.x * blockDim.x) {
        const ulonglong2 e = slots[s];
        if (e.x != EMPTY_SLOT) {
            atomicOr(&Z[e.y >> 6], 1ULL << (e.y & 63));
            chosen += 1ULL;
            ones += __popcll(e.x);
        }
    }
    warp_add(&stats[0], chosen);
    warp_add(&stats[1], ones);
}

// GROUPMIN(G, G, X) by 8-byte slots (DEDUPE_PACKED): a table of S = 2^tbits slots, each one number
// [rem | d | row]: the key's bijective mix x (gk bits) has its top tbits bits as the home slot and
// the other r = gk - tbits as rem, d is the slot's distance from home (linear probing), row the
// least row of the key (rowbits). A slot's rem and d name its key, so one atomicCAS claims an
// empty slot with the row, and an atomicMin of the same number with a smaller row lowers it: one
// atomic a row, not the 16-byte slots' atomicCAS and atomicMin, and 8 bytes a slot, not 16.
// r + dbits + rowbits = 64, d <= dmax < 2^dbits - 1, so a filled slot is never all ones.
__device__ __forceinline__ u64 key_mix(u64 x, u64 M, u64 A, u64 B, int sh) {
    x = (x * A) & M;                       // multiplications by odd A, B: bijections mod 2^gk
    x ^= x >> sh;                          // 2 sh >= gk: its own inverse
    return (x * B) & M;
}

extern "C" __global__ void rows_dedupe_insert_packed(const u64* G, int gk, i64 W, const u64* X, u64* tab,
                                                     int tbits, int rowbits, int dbits, u64 dmax, u64 A, u64 B,
                                                     int sh, u64* stats) {
    u64 row, key;
    if (!marked_key(G, gk, W, X, row, key)) return;
    const int r = gk - tbits;
    const u64 x = key_mix(key, (1ULL << gk) - 1ULL, A, B, sh);     // gk <= 63
    const u64 top = r ? ((x & ((1ULL << r) - 1ULL)) << (dbits + rowbits)) : 0ULL;
    const u64 S1 = (1ULL << tbits) - 1ULL;
    u64 s = x >> r;
    for (u64 d = 0ULL;; ++d) {
        if (d > dmax) {                     // too far from home: the host takes the 16-byte slots
            stats[2] = 1ULL;
            return;
        }
        const u64 mine = top | (d << rowbits) | row;
        const u64 old = atomicCAS(&tab[s], EMPTY_SLOT, mine);
        if (old == EMPTY_SLOT) return;                                 // claimed, with this row
        if ((old >> rowbits) == (mine >> rowbits)) {                   // the key's slot
            if (mine < old) atomicMin(&tab[s], mine);
            return;
        }
        s = (s + 1ULL) & S1;
    }
}

// Slot per thread (grid-stride): a filled slot's row is its key's first marked row, marked in Z
// (zeroed before); stats[0] += the keys, stats[1] += their 1 bits (the key from home and rem,
// unmixed by the inverses Ainv, Binv).
extern "C" __global__ void rows_dedupe_mark_packed(const u64* tab, int gk, int tbits, int rowbits, int dbits,
                                                   u64 Ainv, u64 Binv, int sh, u64* Z, u64* stats) {
    const i64 S = (i64)1 << tbits;
    const int r = gk - tbits;
    const u64 M = (1ULL << gk) - 1ULL;
    u64 chosen = 0ULL, ones = 0ULL;
    for (i64 s = (i64)blockIdx.x * blockDim.x + threadIdx.x; s < S; s += (i64)gridDim.x * blockDim.x) {
        const u64 v = tab[s];
        if (v == EMPTY_SLOT) continue;
        const u64 row = v & ((1ULL << rowbits) - 1ULL);
        const u64 d = (v >> rowbits) & ((1ULL << dbits) - 1ULL);
        const u64 rem = r ? (v >> (rowbits + dbits)) : 0ULL;
        const u64 home = ((u64)s - d) & (u64)(S - 1);
        u64 x = r ? ((home << r) | rem) : home;
        x = (x * Binv) & M;                                        // key_mix backwards
        x ^= x >> sh;
        x = (x * Ainv) & M;
        atomicOr(&Z[row >> 6], 1ULL << (row & 63));
        chosen += 1ULL;
        ones += __popcll(x);
    }
    warp_add(&stats[0], chosen);
    warp_add(&stats[1], ones);
}

// Positions i < c of the sorted order, a warp of 32 at a time (grid-stride): the first of a run
// of equal G values is its group's chosen row, marked in Z (zeroed before); stats as for
// rows_groupmin_mark (summed per thread, one atomic per warp at the end).
extern "C" __global__ void rows_group_first(const u64* g, const i64* order, const i64* rows, int listed,
                                            i64 c, u64* Z, u64* stats) {
    const int lane = threadIdx.x & 31;
    u64 chosen = 0ULL, ones = 0ULL;
    FOR_UNITS(base, c) {
        const i64 i = base + lane;
        const i64 o = i < c ? order[i] : 0;
        const u64 v = i < c ? g[o] : 0ULL;
        u64 prev = __shfl_up_sync(FULL, v, 1);
        if (lane == 0) prev = i > 0 ? g[order[i - 1]] : ~v;
        if (i < c && prev != v) {
            const i64 r = listed ? rows[o] : o;
            atomicOr(&Z[r >> 6], 1ULL << (r & 63));
            chosen += 1ULL;
            ones += __popcll(v);
        }
    }
    warp_add(&stats[0], chosen);
    warp_add(&stats[1], ones);
}
