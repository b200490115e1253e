// SCATTER (stdlib/rows.star) on the GPU; its index check: native/shared/rows.cu.
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
