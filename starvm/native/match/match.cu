// MATCH (stdlib/search.star) on the GPU, for distributed GPU ranks; Batch: native/shared/search.cuh.
// Z[w] = X[w] and, for every column c, not (T[c][w] xor v_c); v_c is bit c of v[0].
template <int K, int B, int WPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
match_rows(const u64* __restrict__ T, const u64* __restrict__ X, const u64* __restrict__ v,
           long long W, u64* __restrict__ Z) {
    typedef Batch<K, B> Bt;
    const u64 pat = __ldg(v);
    const long long base = (long long)blockIdx.x * (BLOCK * WPT) + threadIdx.x;
#pragma unroll
    for (int i = 0; i < WPT; ++i) {
        const long long w = base + (long long)i * BLOCK;
        if (w >= W) break;
        u64 z = X[w];
        const u64* t = T + w;
#pragma unroll
        for (int b = 0; b < Bt::count; ++b) {
            if (!z) break;                              // no row left: the rest cannot matter
            u64 col[Bt::size];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j)
                if (b * Bt::size + j < K) col[j] = t[(long long)(b * Bt::size + j) * W];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j) {
                const int c = b * Bt::size + j;
                if (c < K) z &= ~(col[j] ^ (0ULL - ((pat >> c) & 1ULL)));   // v_c = 1: and COL
            }
        }
        Z[w] = z;
    }
}
