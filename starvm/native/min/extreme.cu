// MIN and MAX (stdlib/search.star) on the GPU: extreme_local, then extreme_fix; Batch and
// load_relaxed: native/shared/search.cuh.
// ctrl[0]: the global key g (~0 when idle), ctrl[1]: list length, ctrl[2]: kernel-2 counter.
// Column 0 is the most significant bit. MAX_ = false: minimum, true: maximum.
template <int K, int B, bool MAX_, int WPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
extreme_local(const u64* __restrict__ T, const u64* __restrict__ X, long long W,
              u64* __restrict__ Z, u64* ctrl, u64* __restrict__ list_key,
              u64* __restrict__ list_block) {
    typedef Batch<K, B> Bt;
    __shared__ u64 red[BLOCK / 32];
    __shared__ int keep_s;
    const u64 g0 = load_relaxed(ctrl);      // a value g has had: >= the final g
    const long long base = (long long)blockIdx.x * (BLOCK * WPT) + threadIdx.x;
    u64 z[WPT], key[WPT];
    u64 m = ~0ULL;
    bool any = false;
#pragma unroll
    for (int i = 0; i < WPT; ++i) {
        const long long w = base + (long long)i * BLOCK;
        u64 zz = w < W ? X[w] : 0ULL, kk = 0ULL;
        const u64* t = T + w;
#pragma unroll
        for (int b = 0; b < Bt::count; ++b) {
            if (!zz) break;
            u64 col[Bt::size];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j)
                if (b * Bt::size + j < K) col[j] = t[(long long)(b * Bt::size + j) * W];
#pragma unroll
            for (int j = 0; j < Bt::size; ++j) {
                const int c = b * Bt::size + j;
                if (c < K) {
                    // Star body: Y := Z and not COL (MIN) / Z and COL (MAX); if SOME(Y) then Z := Y.
                    const u64 y = MAX_ ? (zz & col[j]) : (zz & ~col[j]);
                    // key bit: 1 where no candidate qualified (MIN: the value's bit is 1;
                    // MAX: the value's bit is 0, so the key is the complement of the maximum).
                    kk |= (y == 0ULL) ? (1ULL << (K - 1 - c)) : 0ULL;
                    zz = y ? y : zz;
                }
            }
            // kk (the lower bits still 0) bounds the word's key from below
            if (b + 1 < Bt::count && kk > g0) zz = 0ULL;
        }
        z[i] = zz;
        key[i] = zz ? kk : ~0ULL;           // no row left: never selected (and Z is 0)
        m = key[i] < m ? key[i] : m;
        any |= zz != 0ULL;
    }
#pragma unroll
    for (int off = 16; off; off >>= 1) {
        const u64 o = __shfl_xor_sync(0xffffffffu, m, off);
        m = o < m ? o : m;
    }
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
    const int block_any = __syncthreads_or(any);
    if (threadIdx.x < 32) {
        u64 bm = threadIdx.x < BLOCK / 32 ? red[threadIdx.x] : ~0ULL;
#pragma unroll
        for (int off = 16; off; off >>= 1) {
            const u64 o = __shfl_xor_sync(0xffffffffu, bm, off);
            bm = o < bm ? o : bm;
        }
        if (threadIdx.x == 0) {
            int keep = 0;
            if (block_any) {
                const u64 seen = load_relaxed(ctrl);
                if (bm <= seen) {
                    const u64 old = bm < seen ? atomicMin(ctrl, bm) : seen;
                    keep = bm <= old;
                }
                if (keep) {
                    const u64 slot = atomicAdd(ctrl + 1, 1ULL);
                    list_key[slot] = bm;
                    list_block[slot] = blockIdx.x;
                }
            }
            red[0] = bm;
            keep_s = keep;
        }
    }
    __syncthreads();
    const int keep = keep_s;
    const u64 best = red[0];
#pragma unroll
    for (int i = 0; i < WPT; ++i) {
        const long long w = base + (long long)i * BLOCK;
        if (w < W) Z[w] = (keep && key[i] == best) ? z[i] : 0ULL;
    }
}

// One warp per listed block: zero its words unless its key is the final g. The last block
// to finish writes (found, g) to out (when not null) and resets ctrl for the next call.
extern "C" __global__ void extreme_fix(u64* ctrl, const u64* __restrict__ list_key,
                                       const u64* __restrict__ list_block, long long W,
                                       long long span, u64* __restrict__ Z, u64* out) {
    const u64 g = load_relaxed(ctrl);
    const u64 count = load_relaxed(ctrl + 1);
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < (long long)count;
         i += warps) {
        if (list_key[i] != g) {
            const long long lo = (long long)list_block[i] * span;
            const long long hi = lo + span < W ? lo + span : W;
            for (long long w = lo + lane; w < hi; w += 32) Z[w] = 0ULL;
        }
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const u64 done = atomicAdd(ctrl + 2, 1ULL);
        if (done == gridDim.x - 1) {                    // every block has read g and the list
            if (out) {                                  // a block listed itself iff a row was marked
                out[0] = count ? 1ULL : 0ULL;
                out[1] = g;
            }
            ctrl[0] = ~0ULL;
            ctrl[1] = 0ULL;
            ctrl[2] = 0ULL;
            __threadfence();
        }
    }
}
