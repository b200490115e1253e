// SETMIN (stdlib/search.star) on the GPU: column 1 first, lt |= eq & F_j & ~T_j; eq &= ~(T_j xor F_j).
extern "C" __global__ void less_rows(const unsigned long long* T, const unsigned long long* F,
                                     const unsigned long long* X, int k, long long W,
                                     unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w >= W) return;
    unsigned long long eq = X[w], lt = 0ULL;
    for (int j = 0; j < k && eq; ++j) {
        unsigned long long t = T[(long long)j * W + w], f = F[(long long)j * W + w];
        lt |= eq & f & ~t;
        eq &= ~(t ^ f);
    }
    Z[w] = lt;
}
