// HIT (stdlib/search.star) on the GPU: Z[w] = X[w] & AND_j not(T[j][w] xor F[j][w]).
extern "C" __global__ void hit_rows(const unsigned long long* T, const unsigned long long* F,
                                    const unsigned long long* X, int k, long long W,
                                    unsigned long long* Z) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w >= W) return;
    unsigned long long z = X[w];
    for (int j = 0; j < k && z; ++j) z &= ~(T[(long long)j * W + w] ^ F[(long long)j * W + w]);
    Z[w] = z;
}
