"""IOTA, GATHER, SCATTER, GROUPMIN, COMPACT and EXPAND of stdlib/rows.star on the GPU: a few
plain kernels.

Tables are k x W uint64 device arrays (column c = row c of the array, row r = bit r%64 of
word r//64); row numbers in an index table are unsigned, column 1 the most significant bit.

Most kernels are *warp kernels*: a warp takes 32 consecutive rows (one 32-bit half of a word),
a row per lane. Rows' values (an index, a group, a key: up to 64 columns) are read with
``warp_values``: lane c loads column c's half-word and five shuffle steps turn the 32 x 32 bit
block round (``warp_transpose``), so every lane holds its row's number; results go back the
same way (``warp_write``: lane c writes column c's half-word, merged under the mask of the rows
that change). No thread keeps a 64-entry array, and no two warps write the same 32 bits. The
kernels that sum counters loop over the rows (grid-stride) and add once per warp at the end.
Issue 13's profile (bench/profile_boruvka.py, R-MAT scale 22 on an H100) took BORUVKA from
0.40 s to 0.14 s with them; the per-thread word loops they replace are still used by SCATTER
and by GATHER's column path.

  IOTA      thread per (word, column): column c holds bit k-1-c of the row numbers, in closed
            form (the low 6 bits repeat every word; above them one bit of the word number).
  GATHER    rows_check (warp per 64-row word of IX, FOR_WORDS: lane c loads column c's whole
            word, X's next word is loaded a step ahead): counts the marked rows and flags a row
            number out of 1..NROWS(T); the host reads both in one transfer (the call's only
            synchronisation) and runs the Star body when the flag is set, before anything
            is written. Then, for T of at most 64 columns and at most 64 rows per moved row,
            rows_values reads every row of T as a number (one pass over T) and
            rows_gather_values (warp kernel over R) decodes
            IX's row numbers of the marked rows, loads one number per row and deals its
            bits out to R's columns, merged with R's old words under X's mask: one random load
            per moved row (BORUVKA's GATHER of the vertex labels by the arcs: 128 M loads at
            R-MAT scale 22, not 128 M x 23); for T of at most 32 columns the numbers are 4 bytes
            (rows_values32, rows_gather_values32: 16 MB for 4 M labels, which L2 holds);
            otherwise rows_gather, column by column.
  SCATTER   rows_check as for GATHER (limit NROWS(R)); rows_scatter_win_warp (warp per word of
            IX, FOR_WORDS): atomicMax of the source row into win[target] (init -1), so the largest i
            wins as in the Star body (32-bit: 1 + the row, 0 for none; an IX of 2^32 - 1 rows or
            more runs the Star body); rows_scatter_write_warp (warp per 32 rows of R): the rows
            that have a winner take T's row at the winner (lane_value, warp_write). SCATTER_WARP
            = 0 selects the thread-per-word kernels they replace (rows_scatter_win/_write).
  GROUPMIN  with NCOLS(G) <= 26 (a scratch of 2^NCOLS(G) entries), warp kernels (a warp per
            64-row word, FOR_WORDS, as rows_check): the lanes of
            one group in a warp combine first (__match_any_sync, then the least value over
            the peers) and one lane does the atomic, after a plain read shows it lowers the
            minimum (a large component holds most arcs: one address for them all). When K's
            bits and the row number fit 64 bits together, pass 1 atomicMin of K << rowbits
            | row into gmin[G] and pass 2 marks the rows equal to their group's gmin; else
            pass 1 atomicMin of K into gmin[G] (init all ones), pass 2 atomicMin of the row
            number into grow[G] among the marked rows whose K equals gmin[G], pass 3 Z's bit
            is 1 for the rows that are grow of their group. The last pass counts the groups
            and the 1 bits of their G values (the step report), read in one transfer. G grouped
            by itself (K is G) of up to 63 bits (BORUVKA's dedupe of its 53-bit edge keys): a hash
            table in device memory, no sort, one transfer besides the marked count. Where the
            bits fit (DEDUPE_PACKED), 2^tbits >= 1.5 per marked row slots of 8 bytes, one number
            [rem | distance from home | row] a slot (the key's bijective mix: home slot and rem),
            so rows_dedupe_insert_packed claims a slot with one atomicCAS and lowers its row with
            an atomicMin of the same number, and rows_dedupe_mark_packed unmixes the keys for the
            count of their 1 bits; else (or a key more than DEDUPE_PROBES_MAX slots from home)
            1.5 slots of 16 bytes, key and least row, per marked row (rows_dedupe_insert: linear
            probing, atomicCAS of the key, atomicMin of the row; rows_dedupe_mark). Other wide groups (up
            to 64 bits) list the marked rows
            (rows_list), read their G (and K) values (rows_values), sort them stably by G and
            K (cupy.argsort: one radix sort of G when K is G, of one combined number when G
            and K fit 64 bits, else two) and mark the first row of every group
            (rows_group_first, which also counts): two transfers (the marked count, the counts).
            With every row marked (BORUVKA's dedupe) the list is the rows themselves: none is
            made. Device memory: about 8 bytes a marked row for G's values, 8 for the order,
            16 for the sort's buffers (and 8 for the list, 8 for K's values when they are needed).
  COMPACT   by words (COMPACT_WORDS, when X marks at least 1 row in 64): from the inclusive
            prefix sum of the words' popcounts (rows_popc + cupy.cumsum), rows_compact_start
            finds the word of T where each 64 rows of the result begin, and rows_compact_words
            (a thread per word of R and 4 columns) packs the marked bits of T's words down
            (Hacker's Delight's compress) and appends them: T read once and R written once,
            every access coalesced. Sparser X: rows_list, the marked rows of T in order, and
            rows_gather_list (warp kernel over R) takes T's rows at the list (32 rows from a
            run of 32 rows of T: a shifted copy, copy_run). The marked count comes from the
            routine (compact_routines.py), which reads it once.
  EXPAND    rows_expand_words (a thread per word of R and a few columns): the m marked rows
            of word w take rows j0 .. j0+m-1 of T (j0 from the prefix sum), at most two words
            of T's column, spread to the marked positions (expand); COMPACT_WORDS = 0: the warp
            kernel rows_expand.

Unusual arguments (see rows_numpy.py; also empty tables or zero columns here) run the Star
body. Results equal the NumPy kernels' and the Star bodies' bit for bit
(tests/unit/test_native_rows.py, tests/unit/test_compaction.py, bench/check_rows_gpu.py).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from .rows_routines import Unusual, factories

_SRC = r"""
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

// Thread (x: word w, y: column c): T's column c, word w, holds bit b = k-1-c of the row numbers
// w*64 + t + 1 (t = 0..63), in closed form: below bit 6 the word is the same for every w (t + 1 <= 64
// never reaches bit 6 of w*64 except at t = 63, where bits 0..5 of 64 are 0); from bit 6 on, rows
// t < 63 hold bit b-6 of w and row t = 63 (the row number (w+1)*64) bit b-6 of w+1.
__constant__ u64 IOTA_LOW[6] = {0x5555555555555555ULL, 0x6666666666666666ULL, 0x7878787878787878ULL,
                                0x7F807F807F807F80ULL, 0x7FFF80007FFF8000ULL, 0x7FFFFFFF80000000ULL};
extern "C" __global__ void rows_iota(u64* T, int k, i64 W, i64 n) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    const i64 left = n - w * 64;                       // rows of this word that exist
    const u64 live = left >= 64 ? ~0ULL : ((1ULL << left) - 1ULL);
    for (int c = blockIdx.y; c < k; c += gridDim.y) {
        const int b = k - 1 - c;
        u64 out = 0ULL;
        if (b < 6)
            out = IOTA_LOW[b];
        else if (b < 64)
            out = ((((u64)w >> (b - 6)) & 1ULL) ? 0x7FFFFFFFFFFFFFFFULL : 0ULL)
                | ((((u64)(w + 1) >> (b - 6)) & 1ULL) << 63);
        T[(i64)c * W + w] = out & live;
    }
}

// Warp per word of IX (FOR_WORDS): stats[0] += the rows X marks; stats[1] = 1 when a marked
// row's number is not in 1..limit. Writes nothing else.
extern "C" __global__ void rows_check(const u64* IX, int ixk, i64 W, const u64* X, i64 limit, u64* stats) {
    const int lane = threadIdx.x & 31;
    u64 marked = 0ULL;
    bool bad = false;
    FOR_WORDS(w, xw, X, W) {
        if (!xw) continue;
        u64 a, b, lo, hi;
        load_cols(IX, ixk, W, w, lane, a, b);
        word_values(a, b, ixk, lane, lo, hi);                       // ixk <= 63: fits an i64
        if ((xw >> lane) & 1ULL) {
            marked += 1ULL;
            if (lo < 1ULL || lo > (u64)limit) bad = true;
        }
        if ((xw >> (lane + 32)) & 1ULL) {
            marked += 1ULL;
            if (hi < 1ULL || hi > (u64)limit) bad = true;
        }
    }
    if (bad) stats[1] = 1ULL;
    warp_add(&stats[0], marked);
}

// rows_check bit-sliced (CHECK_SLICED): a thread per word of IX (grid-stride), no transposes: the
// 64 rows' numbers are compared with limit column by column (gt: above limit's bits so far, eq:
// equal to them), and a number is 0 where no column has a 1. Coalesced loads, a few operations a
// column.
extern "C" __global__ void rows_check_sliced(const u64* IX, int ixk, i64 W, const u64* X, i64 limit, u64* stats) {
    const u64 lim = ((u64)limit >> ixk) ? ((1ULL << ixk) - 1ULL) : (u64)limit;   // ixk <= 63
    u64 marked = 0ULL;
    bool bad = false;
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < W; w += (i64)gridDim.x * blockDim.x) {
        const u64 xw = X[w];
        if (!xw) continue;
        u64 gt = 0ULL, eq = ~0ULL, nz = 0ULL;
        for (int c = 0; c < ixk; ++c) {
            const u64 col = IX[(i64)c * W + w];
            nz |= col;
            if ((lim >> (ixk - 1 - c)) & 1ULL) {
                eq &= col;
            } else {
                gt |= eq & col;
                eq &= ~col;
            }
        }
        marked += (u64)__popcll(xw);
        if (xw & (gt | ~nz)) bad = true;
    }
    if (bad) stats[1] = 1ULL;
    warp_add(&stats[0], marked);
}

// Thread per word w of R (R and IX have the same rows): the rows X marks take the row of T
// their IX names (checked by rows_check), column by column.
extern "C" __global__ void rows_gather(const u64* T, i64 WT, int k, const u64* IX, int ixk,
                                       const u64* X, u64* R, i64 W) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    const u64 xm = X[w];
    if (!xm) return;
    i64 src[64];
    for (u64 m = xm; m; m &= m - 1) {
        const int t = __ffsll((long long)m) - 1;
        src[t] = (i64)row_value(IX, ixk, W, w, t) - 1;
    }
    copy_rows(T, WT, k, src, xm, R, W, w);
}

// rows_gather for T of at most 64 columns, from vals[r] = the value of T's row r (rows_values
// with every row listed): one load per moved row instead of one per row and column (the
// bit-sliced columns of T put a row's bits in k different places: k random loads). Warp per
// 32 rows of R: IX's row numbers by warp_values, R's columns by warp_write.
template <typename V>
__device__ __forceinline__ void gather_values(const V* __restrict__ vals, int k, const u64* IX, int ixk,
                                              const u64* X, u64* R, i64 W) {
    const int lane = threadIdx.x & 31;
    const i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) << 5;
    if (base >= W * 64) return;
    const unsigned int xm = (unsigned int)(X[base >> 6] >> (base & 63));
    if (!xm) return;
    const u64 ix = warp_values(IX, 0, ixk, W, base, lane);
    const u64 v = ((xm >> lane) & 1u) ? (u64)vals[ix - 1] : 0ULL;
    warp_write(R, 0, k, W, base, lane, v, xm);
}

extern "C" __global__ void rows_gather_values(const u64* vals, int k, const u64* IX, int ixk,
                                              const u64* X, u64* R, i64 W) {
    gather_values(vals, k, IX, ixk, X, R, W);
}

// rows_gather_values for T of at most 32 columns: 4-byte numbers, half the footprint of the
// random loads (T's rows at R-MAT scale 22: 16 MB, which stays in L2; 8-byte ones did not).
extern "C" __global__ void rows_gather_values32(const unsigned int* __restrict__ vals, int k, const u64* IX, int ixk,
                                                const u64* X, u64* R, i64 W) {
    gather_values(vals, k, IX, ixk, X, R, W);
}

// The inverse of word_values: from lane l's values lo (row w*64 + l) and hi (row w*64 + 32 + l) of
// kc <= 64 columns, lane c gets column c's word (a) and column c + 32's (b), row w*64 + t as bit t.
__device__ __forceinline__ void word_columns(u64 lo, u64 hi, int kc, int lane, u64& a, u64& b) {
    const int n0 = min(32, kc);
    const int s0 = kc - n0;                                 // columns 0 .. n0-1: v's top n0 bits
    const u64 m0 = (1ULL << n0) - 1ULL;
    a = (u64)(warp_transpose(__brev((unsigned int)((lo >> s0) & m0)) >> (32 - n0), lane))
      | ((u64)(warp_transpose(__brev((unsigned int)((hi >> s0) & m0)) >> (32 - n0), lane)) << 32);
    b = 0ULL;
    if (kc > 32) {
        const int n1 = kc - 32;
        const u64 m1 = (1ULL << n1) - 1ULL;
        b = (u64)(warp_transpose(__brev((unsigned int)(lo & m1)) >> (32 - n1), lane))
          | ((u64)(warp_transpose(__brev((unsigned int)(hi & m1)) >> (32 - n1), lane)) << 32);
    }
}

// GATHER by values a warp per 64-row word of R (GATHER_WORDS): as gather_values, but IX's and R's
// columns are read and written as whole 8-byte words (half the transactions of the 32-row warps),
// and R's old words are loaded with IX's, before the dependent loads of the values (R-MAT scale 22
// on the H100: BORUVKA's 23 GATHERs 12.2 -> 8.3 ms).
template <typename V>
__device__ __forceinline__ void gather_values_word(const V* __restrict__ vals, int k, const u64* IX, int ixk,
                                                   const u64* X, u64* R, i64 W) {
    const int lane = threadIdx.x & 31;
    const i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (w >= W) return;
    const u64 xw = X[w];
    if (!xw) return;
    u64 a, b, r0 = 0ULL, r1 = 0ULL, lo, hi;
    load_cols(IX, ixk, W, w, lane, a, b);
    // full words are stored without reading them: 23 GATHERs of BORUVKA at R-MAT scale 22 on the
    // H100 took 6.2 ms so against 8.3 (unlike warp_write's half-words, WARP_WRITE_BLIND)
    if (xw != ~0ULL) load_cols(R, k, W, w, lane, r0, r1);
    word_values(a, b, ixk, lane, lo, hi);
    const u64 vlo = ((xw >> lane) & 1ULL) ? (u64)vals[lo - 1ULL] : 0ULL;
    const u64 vhi = ((xw >> (lane + 32)) & 1ULL) ? (u64)vals[hi - 1ULL] : 0ULL;
    word_columns(vlo, vhi, k, lane, a, b);
    if (lane < k) R[(i64)lane * W + w] = (r0 & ~xw) | (a & xw);
    if (lane + 32 < k) R[(i64)(lane + 32) * W + w] = (r1 & ~xw) | (b & xw);
}

extern "C" __global__ void rows_gather_values_word(const u64* vals, int k, const u64* IX, int ixk,
                                                   const u64* X, u64* R, i64 W) {
    gather_values_word(vals, k, IX, ixk, X, R, W);
}

extern "C" __global__ void rows_gather_values32_word(const unsigned int* __restrict__ vals, int k, const u64* IX,
                                                     int ixk, const u64* X, u64* R, i64 W) {
    gather_values_word(vals, k, IX, ixk, X, R, W);
}

// Thread per word w of IX: win[target] = 1 + the largest marked row naming that target (0:
// none; 32 bits, so IX has fewer than 2^32 - 1 rows).
extern "C" __global__ void rows_scatter_win(const u64* IX, int ixk, i64 W, const u64* X, unsigned int* win) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    for (u64 m = X[w]; m; m &= m - 1) {
        const int t = __ffsll((long long)m) - 1;
        const i64 d = (i64)row_value(IX, ixk, W, w, t) - 1;
        atomicMax(&win[d], (unsigned int)(w * 64 + t + 1));
    }
}

// Thread per word w of R: the rows d of the word with a winner (win[d] > 0) take T's row
// win[d] - 1, column by column; the other rows keep R's old bits.
extern "C" __global__ void rows_scatter_write(const u64* T, i64 WT, int k, const unsigned int* win,
                                              i64 nR, u64* R, i64 W) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    u64 mask = 0ULL;
    i64 src[64];
    for (int t = 0; t < 64; ++t) {
        const i64 d = w * 64 + t;
        if (d < nR && win[d] > 0u) {
            mask |= 1ULL << t;
            src[t] = (i64)win[d] - 1;
        }
    }
    if (!mask) return;
    copy_rows(T, WT, k, src, mask, R, W, w);
}

// SCATTER as warp kernels (SCATTER_WARP). Warp per word of IX (FOR_WORDS): win[target] = 1 + the
// largest marked row naming that target, as rows_scatter_win, the row numbers by word_values.
extern "C" __global__ void rows_scatter_win_warp(const u64* IX, int ixk, i64 W, const u64* X, unsigned int* win) {
    const int lane = threadIdx.x & 31;
    FOR_WORDS(w, xw, X, W) {
        if (!xw) continue;
        u64 a, b, lo, hi;
        load_cols(IX, ixk, W, w, lane, a, b);
        word_values(a, b, ixk, lane, lo, hi);
        if ((xw >> lane) & 1ULL) atomicMax(&win[lo - 1ULL], (unsigned int)(w * 64 + lane + 1));
        if ((xw >> (lane + 32)) & 1ULL) atomicMax(&win[hi - 1ULL], (unsigned int)(w * 64 + 32 + lane + 1));
    }
}

// Warp per 32 rows of R: the rows with a winner take T's row win[d] - 1 (each lane reads its
// source row bit by bit, 64 columns at a time; warp_write merges under the winners' mask).
extern "C" __global__ void rows_scatter_write_warp(const u64* T, i64 WT, int k, const unsigned int* win,
                                                   i64 nR, u64* R, i64 W) {
    const int lane = threadIdx.x & 31;
    const i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) << 5;
    if (base >= W * 64) return;
    const i64 d = base + lane;
    const unsigned int src = d < nR ? win[d] : 0u;
    const unsigned int mask = __ballot_sync(FULL, src > 0u);
    if (!mask) return;
    for (int c0 = 0; c0 < k; c0 += 64) {
        const int kc = min(64, k - c0);
        const u64 v = src ? lane_value(T, c0, kc, WT, (i64)src - 1) : 0ULL;
        warp_write(R, c0, kc, W, base, lane, v, mask);
    }
}

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

// Thread per word: counts[w] = the rows word w of X marks.
extern "C" __global__ void rows_popc(const u64* X, i64 W, i64* counts) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w < W) counts[w] = __popcll(X[w]);
}

// Thread per row r of X: a marked row goes to rows[ends[w] - popc(X[w]) + the marked rows below
// it in its word], so rows lists every marked row in order (ends: the inclusive prefix sum of
// the popcounts).
extern "C" __global__ void rows_list(const u64* X, i64 W, const i64* ends, i64* rows) {
    const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= W * 64) return;
    const i64 w = r >> 6;
    const int t = (int)(r & 63);
    const u64 xw = X[w];
    if ((xw >> t) & 1ULL)
        rows[ends[w] - __popcll(xw) + __popcll(xw & ((1ULL << t) - 1ULL))] = r;
}

// Thread per listed row j < c: vals[j] = the value of row rows[j] of T (k <= 64 columns);
// listed = 0: every row is listed, row j itself (no list), read a warp of rows at a time.
extern "C" __global__ void rows_values(const u64* T, int k, i64 W, const i64* rows, int listed, i64 c,
                                       u64* vals) {
    const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (listed) {
        if (j < c) vals[j] = lane_value(T, 0, k, W, rows[j]);
        return;
    }
    const i64 base = j & ~31LL;
    if (base >= c) return;
    const u64 v = warp_values(T, 0, k, W, base, threadIdx.x & 31);
    if (j < c) vals[j] = v;
}

// rows_values with every row listed, for T of at most 32 columns: 4-byte numbers.
extern "C" __global__ void rows_values32(const u64* T, int k, i64 W, i64 c, unsigned int* vals) {
    const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 base = j & ~31LL;
    if (base >= c) return;
    const u64 v = warp_values(T, 0, k, W, base, threadIdx.x & 31);
    if (j < c) vals[j] = (unsigned int)v;
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

// Warp per 32 rows j < c of R: they take T's rows rows[j], 64 columns at a time (each lane reads
// its source row bit by bit; warp_write makes R's half-words).
extern "C" __global__ void rows_gather_list(const u64* T, i64 WT, int k, const i64* rows, i64 c,
                                            u64* R, i64 W) {
    const int lane = threadIdx.x & 31;
    const i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) << 5;
    if (base >= c) return;
    const i64 left = c - base;
    const unsigned int mask = left >= 32 ? FULL : ((1u << left) - 1u);
    const i64 j = base + lane;
    const i64 s = j < c ? rows[j] : 0;
    const i64 s0 = __shfl_sync(FULL, s, 0);
    if (__all_sync(FULL, j < c && s == s0 + lane)) {          // a run of 32 rows of T
        copy_run(T, WT, k, s0, R, W, base, lane);
        return;
    }
    for (int c0 = 0; c0 < k; c0 += 64) {
        const int kc = min(64, k - c0);
        const u64 v = j < c ? lane_value(T, c0, kc, WT, s) : 0ULL;
        warp_write(R, c0, kc, W, base, lane, v, mask);
    }
}

// Warp per 32 rows of R: the j-th marked row of R (0-based, j from the inclusive prefix sum ends
// of the popcounts) takes row j of T; the rows X does not mark keep their bits.
extern "C" __global__ void rows_expand(const u64* T, i64 WT, int k, const u64* X, const i64* ends,
                                       u64* R, i64 W) {
    const int lane = threadIdx.x & 31;
    const i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) << 5;
    if (base >= W * 64) return;
    const i64 w = base >> 6;
    const u64 xw = X[w];
    const unsigned int xm = (unsigned int)(xw >> (base & 63));
    if (!xm) return;
    const int t = (int)(base & 63) + lane;
    const bool on = (xm >> lane) & 1u;
    const i64 j = ends[w] - __popcll(xw) + __popcll(xw & ((1ULL << t) - 1ULL));
    if (xm == FULL) {                       // 32 marked rows: T's rows j0 .. j0+31, a shifted copy
        copy_run(T, WT, k, __shfl_sync(FULL, j, 0), R, W, base, lane);
        return;
    }
    for (int c0 = 0; c0 < k; c0 += 64) {
        const int kc = min(64, k - c0);
        const u64 v = on ? lane_value(T, c0, kc, WT, j) : 0ULL;
        warp_write(R, c0, kc, W, base, lane, v, xm);
    }
}

// COMPACT and EXPAND by words (COMPACT_WORDS): a thread per word of R and a few of its columns,
// consecutive threads on consecutive words of a column, so every load and store is coalesced
// (the warp kernels above write 4-byte half-words 8 W bytes apart, a transaction each). A
// word's marked bits are packed down or spread out by Hacker's Delight's compress and expand
// (7-4, 7-5: six shift stages whose masks depend on X's word alone, computed once a word).
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

// Thread (x: word w of R, y: a group of columns c = y, y + gridDim.y, ...): X's m marked rows of
// word w take T's rows j0 .. j0+m-1 (j0 = ends[w] - m): at most two words of T's column, shifted,
// then spread to the marked positions; the rows X does not mark keep their bits.
extern "C" __global__ void rows_expand_words(const u64* T, i64 WT, int k, const u64* X, const i64* ends,
                                             u64* R, i64 W) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    const u64 xw = X[w];
    if (!xw) return;
    const int m = __popcll(xw);
    const i64 j0 = ends[w] - m;
    const i64 ws = j0 >> 6;
    const int sh = (int)(j0 & 63);
    const bool two = sh + m > 64;                           // sh > 0 then; row j0+m-1 < NROWS(T)
    u64 mv[6];
    bit_moves(xw, mv);
    for (int c = blockIdx.y; c < k; c += gridDim.y) {
        const u64* col = T + (i64)c * WT;
        u64 bits = col[ws] >> sh;
        if (two) bits |= col[ws + 1] << (64 - sh);
        u64* dst = R + (i64)c * W + w;
        *dst = xw == ~0ULL ? bits : ((*dst & ~xw) | expand_bits(bits, xw, mv));
    }
}

// Thread per word w of X: start[d] = w for the word d of COMPACT's result whose first row (the
// marked row 64 d, counting from 0) is one of word w's marked rows (one d at most per word).
extern "C" __global__ void rows_compact_start(const u64* X, i64 W, const i64* ends, i64* start) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    const i64 hi = ends[w];
    const i64 lo = hi - __popcll(X[w]);
    const i64 d = (lo + 63) >> 6;
    if (d * 64 < hi) start[d] = w;
}

// Thread (x: word d of R's rows 0 .. marked-1, y: columns y + gridDim.y * (0 .. COLS_PER_THREAD-1)):
// R's rows 64 d .. take the marked rows 64 d .. of T, from word start[d] of T on: each word's marked
// bits packed down (compress_bits, the first word's lower marked rows skipped) and appended, until
// 64 rows or the last marked row; rows from marked on keep their bits. Visits about 64 / (the
// marked share) words of T: the host takes this path only when X marks at least 1 row in 64.
extern "C" __global__ void rows_compact_words(const u64* T, i64 WT, int k, const u64* X, const i64* ends,
                                              const i64* start, i64 marked, u64* R, i64 W) {
    const i64 d = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (d * 64 >= marked) return;
    const i64 left = marked - d * 64;
    const int need = left >= 64 ? 64 : (int)left;
    const u64 keep = need == 64 ? 0ULL : (~0ULL << need);   // R's rows from marked on
    for (int c0 = blockIdx.y; c0 < k; c0 += gridDim.y * COLS_PER_THREAD) {
        int cs[COLS_PER_THREAD];
        u64 out[COLS_PER_THREAD];
#pragma unroll
        for (int j = 0; j < COLS_PER_THREAD; ++j) {
            cs[j] = c0 + j * gridDim.y;
            out[j] = 0ULL;
        }
        i64 w = start[d];
        u64 xw = X[w];
        int skip = (int)(d * 64 - (ends[w] - __popcll(xw)));   // 0 <= skip < popc(xw)
        int got = 0;
        for (;;) {
            if (xw) {
                u64 mv[6];
                bit_moves(xw, mv);
#pragma unroll
                for (int j = 0; j < COLS_PER_THREAD; ++j)
                    if (cs[j] < k)                             // got < need <= 64
                        out[j] |= (compress_bits(T[(i64)cs[j] * WT + w], xw, mv) >> skip) << got;
                got += __popcll(xw) - skip;
                skip = 0;
                if (got >= need) break;
            }
            xw = X[++w];                                        // marked rows remain: the word exists
        }
#pragma unroll
        for (int j = 0; j < COLS_PER_THREAD; ++j)
            if (cs[j] < k) {
                u64* dst = R + (i64)cs[j] * W + d;
                *dst = keep ? ((*dst & keep) | (out[j] & ~keep)) : out[j];
            }
    }
}
"""

_BLOCK = 256
_MAX_GRID_Y = 65535
GROUP_BITS_SCRATCH = 26      # up to here GROUPMIN's kernels use a scratch of 2^NCOLS(G) entries
GROUP_BITS_MAX = 64          # wider groups are sorted

_STRIDE_BLOCKS = 2048       # grid-stride kernels (the ones that sum counters): 16 K warps, one atomic each
_NAMES = ("rows_iota", "rows_check", "rows_gather", "rows_gather_values", "rows_scatter_win", "rows_scatter_write",
          "rows_groupmin_key", "rows_groupmin_row", "rows_groupmin_mark", "rows_groupmin_packed",
          "rows_groupmin_mark_packed", "rows_popc", "rows_list",
          "rows_values", "rows_group_first", "rows_gather_list", "rows_expand",
          "rows_dedupe_insert", "rows_dedupe_mark", "rows_values32", "rows_gather_values32",
          "rows_scatter_win_warp", "rows_scatter_write_warp", "rows_expand_words", "rows_compact_start",
          "rows_compact_words", "rows_gather_values_word", "rows_gather_values32_word", "rows_check_sliced",
          "rows_dedupe_insert_packed", "rows_dedupe_mark_packed")
_modules: dict = {}          # (device, WARP_WRITE_BLIND) -> {kernel name: kernel}
WARP_WRITE_BLIND = 0        # 1: warp_write stores full half-words without reading them (an A/B switch)


def _kernels() -> dict:
    key = (cp.cuda.runtime.getDevice(), int(WARP_WRITE_BLIND))
    fns = _modules.get(key)
    if fns is None:
        mod = cp.RawModule(code=_SRC, options=(f"-DWARP_WRITE_BLIND={key[1]}",))
        fns = _modules[key] = {name: mod.get_function(name) for name in _NAMES}
    return fns


def _grid(count: int, cols: int = 1):
    return (max(1, -(-count // _BLOCK)), max(1, min(cols, _MAX_GRID_Y))), (_BLOCK,)


def _rows_grid(rows: int):
    """Thread per row (warps of 32 rows), ``rows`` rounded up to whole blocks."""
    return (max(1, -(-rows // _BLOCK)),), (_BLOCK,)


def _stride_grid(rows: int):
    """A grid-stride kernel over ``rows`` rows, a warp per 32 rows a step."""
    return (max(1, min(_STRIDE_BLOCKS, -(-rows // _BLOCK))),), (_BLOCK,)


def _word_grid(words: int):
    """A FOR_WORDS kernel over ``words`` words: a warp per word a step."""
    return _stride_grid(32 * words)


def _u64(a):
    return a if (a.dtype == cp.uint64 and a.flags.c_contiguous) else cp.ascontiguousarray(a, dtype=cp.uint64)


def _read(stats) -> tuple[int, ...]:
    """The call's one device-to-host transfer: a few counters."""
    return tuple(int(x) for x in stats.get())


# ---------------------------------------------------------------- kernels
def iota(T) -> None:
    W = T.data.shape[1]
    _kernels()["rows_iota"](*_grid(W, T.k), (T.data, np.int32(T.k), np.int64(W), np.int64(T.n)))


def decode(IX, X_v, limit: int):
    """(the marked rows as the plan, the marked rows); Unusual when a marked row names one
    outside 1..limit (nothing written). The kernels that move the rows read IX themselves."""
    W = IX.data.shape[1]
    stats = cp.zeros(2, dtype=cp.uint64)
    if CHECK_SLICED:
        _kernels()["rows_check_sliced"](*_stride_grid(W), (_u64(IX.data), np.int32(IX.k), np.int64(W), _u64(X_v),
                                                           np.int64(limit), stats))
    else:
        _kernels()["rows_check"](*_word_grid(W), (_u64(IX.data), np.int32(IX.k), np.int64(W), _u64(X_v),
                                                  np.int64(limit), stats))
    marked, bad = _read(stats)
    if bad or IX.n >= (1 << 32) - 1:       # SCATTER's winners are 32-bit row numbers
        raise Unusual
    return marked, marked


def gather_apply(T, IX, plan, X_v, R) -> None:
    fns = _kernels()
    W = R.data.shape[1]
    # T's rows as numbers first (one pass over T), then one load per moved row; unless T is
    # far larger than what moves (plan: the marked rows), when the column path reads less
    # GATHER_WORDS: a warp per 64-row word of R (whole 8-byte words), else per 32 rows
    suffix, grid = ("_word", _rows_grid(W * 32)) if GATHER_WORDS else ("", _rows_grid(W * 64))
    if T.k <= GATHER_NARROW_COLS and T.n <= 64 * max(plan, 1):
        vals = cp.empty(T.n, dtype=cp.uint32)
        fns["rows_values32"](*_grid(T.n), (_u64(T.data), np.int32(T.k), np.int64(T.data.shape[1]), np.int64(T.n),
                                           vals))
        fns["rows_gather_values32" + suffix](*grid, (vals, np.int32(T.k), _u64(IX.data), np.int32(IX.k),
                                                     _u64(X_v), R.data, np.int64(W)))
        return
    if T.k <= 64 and T.n <= 64 * max(plan, 1):
        vals = cp.empty(T.n, dtype=cp.uint64)
        none = cp.zeros(1, dtype=cp.int64)
        fns["rows_values"](*_grid(T.n), (_u64(T.data), np.int32(T.k), np.int64(T.data.shape[1]), none, np.int32(0),
                                         np.int64(T.n), vals))
        fns["rows_gather_values" + suffix](*grid, (vals, np.int32(T.k), _u64(IX.data), np.int32(IX.k), _u64(X_v),
                                                   R.data, np.int64(W)))
        return
    fns["rows_gather"](*_grid(W), (_u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                   _u64(IX.data), np.int32(IX.k), _u64(X_v), R.data, np.int64(W)))


def scatter_apply(T, IX, plan, X_v, R) -> None:
    fns = _kernels()
    win = cp.zeros(R.n, dtype=cp.uint32)
    WI = IX.data.shape[1]
    W = R.data.shape[1]
    if SCATTER_WARP:
        fns["rows_scatter_win_warp"](*_word_grid(WI), (_u64(IX.data), np.int32(IX.k), np.int64(WI), _u64(X_v), win))
        fns["rows_scatter_write_warp"](*_rows_grid(W * 64), (_u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                                             win, np.int64(R.n), R.data, np.int64(W)))
        return
    fns["rows_scatter_win"](*_grid(WI), (_u64(IX.data), np.int32(IX.k), np.int64(WI), _u64(X_v), win))
    fns["rows_scatter_write"](*_grid(W), (_u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k),
                                          win, np.int64(R.n), R.data, np.int64(W)))


def gather(T, IX, X_v, R) -> None:
    gather_apply(T, IX, decode(IX, X_v, T.n)[0], X_v, R)


def scatter(T, IX, X_v, R) -> None:
    scatter_apply(T, IX, decode(IX, X_v, R.n)[0], X_v, R)


def _ends(X_v, W: int):
    """The inclusive prefix sum of the popcounts of X's words (int64, one per word)."""
    counts = cp.zeros(W, dtype=cp.int64)
    _kernels()["rows_popc"](*_grid(W), (_u64(X_v), np.int64(W), counts))
    return cp.cumsum(counts)


def _list(X_v, W: int, c: int):
    """The c marked rows of X, in order (int64)."""
    ends = _ends(X_v, W)
    rows = cp.empty(max(c, 1), dtype=cp.int64)
    _kernels()["rows_list"](*_rows_grid(W * 64), (_u64(X_v), np.int64(W), ends, rows))
    return rows


def numb(X_v) -> int:
    W = X_v.size
    return int(_ends(X_v, W)[-1]) if W else 0


DEDUPE_BITS_MAX = 63        # GROUPMIN(G, G, X) by a hash table up to here (a key is never all ones)
GATHER_NARROW_COLS = 32     # GATHER's row values as 4-byte numbers up to here, else 8 bytes
SCATTER_WARP = 1            # SCATTER by the warp kernels (0: the thread-per-word ones)
DEDUPE_SLOTS_X16 = 24       # the dedupe's hash slots per 16 marked rows (24: load at most 2/3)
GATHER_WORDS = 1            # GATHER by values a warp per 64-row word (0: per 32 rows)
CHECK_SLICED = 1            # GATHER's and SCATTER's check bit-sliced, a thread per word (0: warp transposes)


DEDUPE_PACKED = 1           # the dedupe's slots as one 8-byte number where it fits (0: key and row, 16 bytes)
DEDUPE_PROBES_MAX = 1 << 20  # a key further than this from its home slot: the 16-byte slots instead
_MIX_A, _MIX_B = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB     # splitmix64's odd multipliers


def dedupe_packing(n: int, gk: int, c: int):
    """(tbits, rowbits, dbits) of the 8-byte slots for c marked rows of n, keys of gk bits, or None
    when the distance field would have fewer than 8 bits (the 16-byte slots then)."""
    want = c * max(16, DEDUPE_SLOTS_X16) // 16 + 32
    tbits = min(gk, max(5, (want - 1).bit_length()))   # 2^tbits >= want, or a slot for every key
    rowbits = max(1, (n - 1).bit_length())
    dbits = 64 - (gk - tbits) - rowbits
    return (tbits, rowbits, dbits) if dbits >= 8 else None


def _groupmin_packed(G, X_v, c, Z):
    """_groupmin_hashed by 8-byte slots (rows_dedupe_insert_packed, rows_dedupe_mark_packed);
    None where it does not fit or a key lands too far from home (nothing returned written)."""
    pk = dedupe_packing(G.n, G.k, c)
    if pk is None:
        return None
    tbits, rowbits, dbits = pk
    fns = _kernels()
    W = G.data.shape[1]
    gk = G.k
    m = (1 << gk) - 1
    a, b = (_MIX_A & m) | 1, (_MIX_B & m) | 1
    ainv, binv = pow(a, -1, 1 << gk), pow(b, -1, 1 << gk)
    sh = (gk + 1) // 2
    dmax = min((1 << dbits) - 2, DEDUPE_PROBES_MAX)
    tab = cp.full(1 << tbits, np.iinfo(np.uint64).max, dtype=cp.uint64)
    stats = cp.zeros(3, dtype=cp.uint64)
    fns["rows_dedupe_insert_packed"](*_rows_grid(W * 64), (_u64(G.data), np.int32(gk), np.int64(W), _u64(X_v), tab,
                                                            np.int32(tbits), np.int32(rowbits), np.int32(dbits),
                                                            np.uint64(dmax), np.uint64(a), np.uint64(b), np.int32(sh),
                                                            stats))
    fns["rows_dedupe_mark_packed"](*_stride_grid(1 << tbits), (tab, np.int32(gk), np.int32(tbits), np.int32(rowbits),
                                                                np.int32(dbits), np.uint64(ainv), np.uint64(binv),
                                                                np.int32(sh), Z, stats))
    del tab
    groups, ones, far = _read(stats)
    if far:
        return None
    return Z, groups, ones


def _groupmin_hashed(G, X_v):
    """GROUPMIN(G, G, X): the first marked row of every distinct G value, from a hash table of
    the keys (about 1.5 slots of 16 bytes per marked row, or 2^tbits of 8 bytes) instead of a
    sort of them."""
    fns = _kernels()
    W = G.data.shape[1]
    Z = cp.zeros(W, dtype=cp.uint64)
    c = numb(X_v)
    if not c:
        return Z, 0, 0
    if DEDUPE_PACKED:
        got = _groupmin_packed(G, X_v, c, Z)
        if got is not None:
            return got
        Z = cp.zeros(W, dtype=cp.uint64)
    slots = c * max(16, DEDUPE_SLOTS_X16) // 16 + 32      # at least c + 32: never full
    tab = cp.full(2 * slots, np.iinfo(np.uint64).max, dtype=cp.uint64)   # every slot empty: key and row all ones
    fns["rows_dedupe_insert"](*_rows_grid(W * 64), (_u64(G.data), np.int32(G.k), np.int64(W), _u64(X_v), tab,
                                                     np.int64(slots)))
    stats = cp.zeros(2, dtype=cp.uint64)
    fns["rows_dedupe_mark"](*_stride_grid(slots), (tab, np.int64(slots), Z, stats))
    del tab
    groups, ones = _read(stats)
    return Z, groups, ones


def _groupmin_sorted(G, K, X_v):
    """GROUPMIN for any group width: the marked rows sorted stably by G and K; the first row
    of every group is its chosen one."""
    from .rows_numpy import group_order
    fns = _kernels()
    W = G.data.shape[1]
    Z = cp.zeros(W, dtype=cp.uint64)
    c = numb(X_v)
    if not c:
        return Z, 0, 0
    listed = c < G.n                 # every row marked (BORUVKA's dedupe): no list of rows
    rows = _list(X_v, W, c) if listed else cp.zeros(1, dtype=cp.int64)

    def values(T):
        v = cp.empty(c, dtype=cp.uint64)
        fns["rows_values"](*_grid(c), (_u64(T.data), np.int32(T.k), np.int64(W), rows, np.int32(listed),
                                       np.int64(c), v))
        return v
    g = values(G)
    key = None if G.data is K.data else values(K)
    order = group_order(g, key, G.k, K.k, xp=cp)
    del key
    stats = cp.zeros(2, dtype=cp.uint64)
    fns["rows_group_first"](*_stride_grid(c), (g, order, rows, np.int32(listed), np.int64(c), Z, stats))
    groups, ones = _read(stats)
    return Z, groups, ones


def groupmin_counted(G, K, X_v):
    """(Z, the groups, the 1 bits of the groups' G values)."""
    if G.k > GROUP_BITS_SCRATCH:
        if G.data is K.data and G.k <= DEDUPE_BITS_MAX:
            return _groupmin_hashed(G, X_v)
        return _groupmin_sorted(G, K, X_v)
    fns = _kernels()
    W = G.data.shape[1]
    groups = 1 << G.k
    gmin = cp.full(groups, np.iinfo(np.uint64).max, dtype=cp.uint64)
    Gd, Kd, Xd = _u64(G.data), _u64(K.data), _u64(X_v)
    grid, block = _word_grid(W)
    Z = cp.empty(W, dtype=cp.uint64)
    stats = cp.zeros(2, dtype=cp.uint64)
    rowbits = packed_row_bits(G.n, K.k)
    if rowbits:            # K and the row in one number: one atomic pass, then the marks
        fns["rows_groupmin_packed"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd,
                                                  np.int32(rowbits), gmin))
        fns["rows_groupmin_mark_packed"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd,
                                                       np.int32(rowbits), gmin, Z, stats))
    else:
        grow = cp.full(groups, np.iinfo(np.uint64).max, dtype=cp.uint64)
        fns["rows_groupmin_key"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd, gmin))
        fns["rows_groupmin_row"](grid, block, (Gd, np.int32(G.k), Kd, np.int32(K.k), np.int64(W), Xd, gmin, grow))
        fns["rows_groupmin_mark"](grid, block, (Gd, np.int32(G.k), np.int64(W), Xd, grow, Z, stats))
    found, ones = _read(stats)
    return Z, found, ones


def packed_row_bits(n: int, key_bits: int) -> int:
    """The bits of a row number 0..n-1 when they fit beside a key of key_bits in 64 bits (GROUPMIN's
    one-pass path), else 0."""
    rowbits = max(1, (n - 1).bit_length())
    return rowbits if key_bits + rowbits <= 64 else 0


def groupmin(G, K, X_v):
    return groupmin_counted(G, K, X_v)[0]


# ---------------------------------------------------------------- routines
def _is_table(t) -> bool:
    d = getattr(t, "data", None)
    return isinstance(d, cp.ndarray) and d.dtype == cp.uint64 and d.flags.c_contiguous and d.ndim == 2


def _vec_ok(x, n: int) -> bool:
    return getattr(x, "n", -1) == n and isinstance(getattr(x, "v", None), cp.ndarray) \
        and x.v.shape == ((n + 63) // 64,)


make_iota, make_gather, make_scatter, make_groupmin = factories(
    iota, decode, gather_apply, scatter_apply, groupmin_counted, numb, is_table=_is_table, vec_ok=_vec_ok,
    nonempty=True, group_bits_max=GROUP_BITS_MAX)


# ---------------------------------------------------------------- COMPACT and EXPAND
COMPACT_WORDS = 1           # COMPACT and EXPAND by words (0: the warp kernels, rows_gather_list and rows_expand)
COMPACT_WORDS_SHARE = 8     # COMPACT by words where X marks at least 1 row in this many (else the list)


def _col_groups(k: int, per_thread: int) -> int:
    """The grid's y: column groups of ``per_thread`` columns (thread y takes y, y + groups, ...)."""
    return max(1, min(-(-k // per_thread), _MAX_GRID_Y))


def compact(T, X_v, R, marked: int) -> None:
    """The marked rows of T, in order, into rows 1..marked of R (R may be T)."""
    if not marked:
        return
    fns = _kernels()
    WT = T.data.shape[1]
    # in place: threads would read words others write, so the rows come from a copy
    source = T.data.copy() if R is T else T.data
    W = R.data.shape[1]
    # a result word walks ~64 / (marked share) words of T: R-MAT scale 22 on the H100, 2% marked
    # (BORUVKA_LIVE) took 1.6 ms by words against 0.8 by the list, 50% 0.6 ms against 2.5
    if COMPACT_WORDS and COMPACT_WORDS_SHARE * marked >= T.n:
        ends = _ends(X_v, WT)
        D = -(-marked // 64)
        start = cp.empty(D, dtype=cp.int64)
        fns["rows_compact_start"](*_grid(WT), (_u64(X_v), np.int64(WT), ends, start))
        grid, block = _grid(D, _col_groups(T.k, 4))         # 4: COLS_PER_THREAD
        fns["rows_compact_words"](grid, block, (_u64(source), np.int64(WT), np.int32(T.k), _u64(X_v), ends, start,
                                                np.int64(marked), R.data, np.int64(W)))
        return
    rows = _list(X_v, WT, marked)
    fns["rows_gather_list"](*_rows_grid(marked), (_u64(source), np.int64(WT), np.int32(T.k), rows,
                                                  np.int64(marked), R.data, np.int64(W)))


def expand(T, X_v, R, marked: int) -> None:
    """Rows 1..marked of T back to the marked rows of R, in order."""
    if not marked:
        return
    W = R.data.shape[1]
    ends = _ends(X_v, W)
    if COMPACT_WORDS:
        _kernels()["rows_expand_words"](*_grid(W, _col_groups(T.k, 8)), (_u64(T.data), np.int64(T.data.shape[1]),
                                                                         np.int32(T.k), _u64(X_v), ends, R.data,
                                                                         np.int64(W)))
        return
    _kernels()["rows_expand"](*_rows_grid(W * 64), (_u64(T.data), np.int64(T.data.shape[1]), np.int32(T.k), _u64(X_v),
                                          ends, R.data, np.int64(W)))


from .compact_routines import compact_factories  # noqa: E402  (after the kernels it wraps)

make_compact, make_expand = compact_factories(compact, expand, numb, is_table=_is_table, vec_ok=_vec_ok,
                                              nonempty=True)
