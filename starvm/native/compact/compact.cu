// COMPACT (stdlib/rows.star) on the GPU: by words (compress_bits: native/shared/rows.cuh) or by
// the list of marked rows.
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
