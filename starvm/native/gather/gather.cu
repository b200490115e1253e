// GATHER (stdlib/rows.star) on the GPU; its index check and rows_values: native/shared/rows.cu.
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

// rows_values with every row listed, for T of at most 32 columns: 4-byte numbers.
extern "C" __global__ void rows_values32(const u64* T, int k, i64 W, i64 c, unsigned int* vals) {
    const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 base = j & ~31LL;
    if (base >= c) return;
    const u64 v = warp_values(T, 0, k, W, base, threadIdx.x & 31);
    if (j < c) vals[j] = (unsigned int)v;
}
