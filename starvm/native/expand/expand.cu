// EXPAND (stdlib/rows.star) on the GPU: by words (expand_bits: native/shared/rows.cuh) or the
// warp kernel.
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
