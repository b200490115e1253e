// Kernels several row moves share: the index check of GATHER and SCATTER (rows_check,
// rows_check_sliced), the marked rows' count and list (rows_popc, rows_list: GROUPMIN, COMPACT,
// EXPAND, distributed ranks) and rows' numbers (rows_values: GATHER, GROUPMIN, distributed ranks).
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
