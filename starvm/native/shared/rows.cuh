// Device helpers of the row-move kernels (IOTA, GATHER, SCATTER, GROUPMIN, COMPACT, EXPAND of
// stdlib/rows.star): one CUDA module holds them with every routine's kernels
// (native/shared/cuda_text.py: ROW_MODULE). Tables are k x W uint64 words (column c = row c of
// the array, row r = bit r%64 of word r//64).
typedef unsigned long long u64;
typedef long long i64;
#ifndef WARP_WRITE_BLIND
#define WARP_WRITE_BLIND 0
#endif

// The unsigned number held by row (word w, bit t) of a table of k columns with W words per
// column; column 0 is the most significant bit (k <= 64).
__device__ __forceinline__ u64 row_value(const u64* T, int k, i64 W, i64 w, int t) {
    u64 v = 0ULL;
    for (int c = 0; c < k; ++c)
        v = (v << 1) | ((T[(i64)c * W + w] >> t) & 1ULL);
    return v;
}

// Bit r (0-based row) of one column.
__device__ __forceinline__ u64 bit_at(const u64* col, i64 r) {
    return (col[r >> 6] >> (r & 63)) & 1ULL;
}

// *dst += v summed over the warp, one atomic per warp: every thread of the warp calls it.
__device__ __forceinline__ void warp_add(u64* dst, u64 v) {
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0 && v) atomicAdd(dst, v);
}

// R's word w of every column c: the rows of mask take bit src[t] of T's column c, the others
// keep their bits.
__device__ __forceinline__ void copy_rows(const u64* T, i64 WT, int k, const i64* src, u64 mask,
                                          u64* R, i64 W, i64 w) {
    for (int c = 0; c < k; ++c) {
        const u64* col = T + (i64)c * WT;
        u64 out = 0ULL, m = mask;
        while (m) {
            const int t = __ffsll((long long)m) - 1;
            m &= m - 1;
            out |= bit_at(col, src[t]) << t;
        }
        u64* dst = R + (i64)c * W + w;
        *dst = (*dst & ~mask) | out;
    }
}

#define FULL 0xffffffffu

// Warp helpers. A warp takes 32 consecutive rows base .. base+31 (base a multiple of 32: one
// 32-bit half of a word), row base + l in lane l; every lane of the warp must call them.

// The warp's 32 x 32 bit block turned round: bit j of lane c's x becomes bit c of lane j's result.
// Five butterfly steps, each swapping the off-diagonal s x s blocks of every 2s x 2s block (one
// shuffle each, instead of 32 ballots).
__device__ __forceinline__ unsigned int warp_transpose(unsigned int x, int lane) {
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
        const unsigned int m = s == 16 ? 0x0000FFFFu : s == 8 ? 0x00FF00FFu : s == 4 ? 0x0F0F0F0Fu
                             : s == 2 ? 0x33333333u : 0x55555555u;          // the bits j with (j & s) == 0
        const unsigned int y = __shfl_xor_sync(FULL, x, s);
        x = (lane & s) ? ((x & ~m) | ((y >> s) & m)) : ((x & m) | ((y << s) & ~m));
    }
    return x;
}

// The values of the warp's rows in columns c0 .. c0+kc-1 of a table (kc <= 64, column c0 the
// most significant bit), lane l getting row base + l's: lane c reads column c's half-word once
// and warp_transpose turns the 32 x 32 bit block round (not 32 loads a row).
__device__ __forceinline__ u64 warp_values(const u64* T, int c0, int kc, i64 W, i64 base, int lane) {
    const i64 w = base >> 6;
    const int sh = (int)(base & 63);
    u64 v = 0ULL;
    for (int lo = 0; lo < kc; lo += 32) {
        const int n = min(32, kc - lo);
        const unsigned int x = lane < n ? (unsigned int)(T[(i64)(c0 + lo + lane) * W + w] >> sh) : 0u;
        const unsigned int mine = warp_transpose(x, lane);
        v = (v << n) | (u64)(__brev(mine) >> (32 - n));      // bit c of mine: column lo + c
    }
    return v;
}

// One lane's row s (any row), columns c0 .. c0+kc-1 (kc <= 64), read bit by bit.
__device__ __forceinline__ u64 lane_value(const u64* T, int c0, int kc, i64 W, i64 s) {
    const i64 w = s >> 6;
    const int t = (int)(s & 63);
    u64 v = 0ULL;
    for (int c = 0; c < kc; ++c)
        v = (v << 1) | ((T[(i64)(c0 + c) * W + w] >> t) & 1ULL);
    return v;
}

// The warp's rows that mask marks (bit l: row base + l) take v's bits in columns c0 .. c0+kc-1
// of R (kc <= 64, bit kc-1 of v into column c0); the other rows keep theirs. warp_transpose makes
// the columns' half-words, lane c writing column c's (32-bit halves: the warp of the word's
// other half writes the other one).
__device__ __forceinline__ void warp_write(u64* R, int c0, int kc, i64 W, i64 base, int lane, u64 v,
                                           unsigned int mask) {
    const i64 w = base >> 6;
    const int half = (int)((base >> 5) & 1);
    unsigned int* R32 = reinterpret_cast<unsigned int*>(R);
    for (int lo = 0; lo < kc; lo += 32) {
        const int n = min(32, kc - lo);
        // this lane's bits of columns lo .. lo+n-1, column lo + c as bit c
        const unsigned int u = (unsigned int)((v >> (kc - lo - n)) & ((1ULL << n) - 1ULL));
        const unsigned int mine = warp_transpose(__brev(u) >> (32 - n), lane);
        if (lane < n) {
            unsigned int* dst = R32 + 2 * ((i64)(c0 + lo + lane) * W + w) + half;
            // WARP_WRITE_BLIND: all 32 rows written without reading the old half-word; measured slower
            // (issue 13: round 2's GATHERs, every row marked, 3.5 -> 8.6 ms), so off by default
            *dst = (WARP_WRITE_BLIND && mask == FULL) ? mine : ((*dst & ~mask) | (mine & mask));
        }
    }
}

// The least of v over the lanes of the warp whose bit is set in peers (every lane calls it).
__device__ __forceinline__ u64 peers_min(u64 v, unsigned int peers) {
    u64 best = v;
    if (__any_sync(FULL, __popc(peers) > 1)) {
        for (int j = 0; j < 32; ++j) {
            const u64 o = __shfl_sync(FULL, v, j);
            if (((peers >> j) & 1u) && o < best) best = o;
        }
    }
    return best;
}

// Rows base .. base+31 of R (all of them) take T's rows s0 .. s0+31: lane c copies column c (and
// c + 32, ...), the 32 bits from s0 on (two words where they straddle one) into R's half-word.
__device__ __forceinline__ void copy_run(const u64* T, i64 WT, int k, i64 s0, u64* R, i64 W, i64 base,
                                         int lane) {
    const i64 ws = s0 >> 6;
    const int sh = (int)(s0 & 63);
    unsigned int* R32 = reinterpret_cast<unsigned int*>(R);
    const i64 dst = 2 * (base >> 6) + ((base >> 5) & 1);
    for (int c = lane; c < k; c += 32) {
        const u64* col = T + (i64)c * WT;
        u64 bits = col[ws] >> sh;
        if (sh > 32) bits |= col[ws + 1] << (64 - sh);       // s0 + 31 < NROWS(T): that word exists
        R32[2 * (i64)c * W + dst] = (unsigned int)bits;
    }
}

// Grid-stride loops over the warps' 32-row units: every lane of a warp has the same base.
#define FOR_UNITS(base, rows) \
    for (i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) << 5; base < (rows); \
         base += ((i64)gridDim.x * blockDim.x))

// Grid-stride loops of a warp per 64-row word w (two units): xw holds X's word w, and the next
// step's word is loaded a step ahead, so that its load overlaps this step's loads of the tables
// (one memory latency a step, not two; and a step moves 64 rows, not 32).
#define FOR_WORDS(w, xw, X, W) \
    const i64 step_ = ((i64)gridDim.x * blockDim.x) >> 5; \
    i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; \
    u64 next_ = w < (W) ? (X)[w] : 0ULL; \
    for (u64 xw = 0ULL; w < (W) && ((xw = next_), (next_ = w + step_ < (W) ? (X)[w + step_] : 0ULL), true); \
         w += step_)

// Lane l's raw words (word w) of columns l and l + 32 of a table of kc <= 64 columns (0 past kc):
// a warp loads all of a word's columns at once, before any of them is used.
__device__ __forceinline__ void load_cols(const u64* T, int kc, i64 W, i64 w, int lane, u64& a, u64& b) {
    a = lane < kc ? T[(i64)lane * W + w] : 0ULL;
    b = lane + 32 < kc ? T[(i64)(lane + 32) * W + w] : 0ULL;
}

// The values of word w's 64 rows from load_cols' words: lo for row w*64 + lane, hi for row
// w*64 + 32 + lane (column 0 the most significant bit), as warp_values turns them round.
__device__ __forceinline__ void word_values(u64 a, u64 b, int kc, int lane, u64& lo, u64& hi) {
    lo = hi = 0ULL;
    if (kc <= 0) return;
    const int n0 = min(32, kc);
    lo = (u64)(__brev(warp_transpose((unsigned int)a, lane)) >> (32 - n0));
    hi = (u64)(__brev(warp_transpose((unsigned int)(a >> 32), lane)) >> (32 - n0));
    if (kc > 32) {
        const int n1 = kc - 32;
        lo = (lo << n1) | (u64)(__brev(warp_transpose((unsigned int)b, lane)) >> (32 - n1));
        hi = (hi << n1) | (u64)(__brev(warp_transpose((unsigned int)(b >> 32), lane)) >> (32 - n1));
    }
}

// COMPACT and EXPAND by words (COMPACT_WORDS, compact.cu and expand.cu): a thread per word of R and
// a few of its columns, consecutive threads on consecutive words of a column, so every load and
// store is coalesced (the warp kernels write 4-byte half-words 8 W bytes apart, a transaction
// each). A word's marked bits are packed down or spread out by Hacker's Delight's compress and
// expand (7-4, 7-5: six shift stages whose masks depend on X's word alone, computed once a word).
#define COLS_PER_THREAD 4

__device__ __forceinline__ void bit_moves(u64 m, u64 mv[6]) {
    u64 mk = ~m << 1;                                       // the 0s of m to the right of each bit
#pragma unroll
    for (int i = 0; i < 6; ++i) {
        u64 mp = mk ^ (mk << 1);                            // parallel suffix: their count's bit i
        mp ^= mp << 2; mp ^= mp << 4; mp ^= mp << 8; mp ^= mp << 16; mp ^= mp << 32;
        const u64 v = mp & m;                               // the bits that move 2^i down at stage i
        mv[i] = v;
        m = (m ^ v) | (v >> (1 << i));
        mk &= ~mp;
    }
}

// x's bits at m's 1s, packed to the low end (pext).
__device__ __forceinline__ u64 compress_bits(u64 x, u64 m, const u64 mv[6]) {
    x &= m;
#pragma unroll
    for (int i = 0; i < 6; ++i) {
        const u64 t = x & mv[i];
        x = (x ^ t) | (t >> (1 << i));
    }
    return x;
}

// x's low popc(m) bits spread to m's 1s (pdep).
__device__ __forceinline__ u64 expand_bits(u64 x, u64 m, const u64 mv[6]) {
#pragma unroll
    for (int i = 5; i >= 0; --i) {
        const u64 t = x << (1 << i);
        x = (x & ~mv[i]) | (t & mv[i]);
    }
    return x & m;
}
