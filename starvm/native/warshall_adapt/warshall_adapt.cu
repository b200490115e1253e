// WARSHALL-adapt (stdlib/warshall.star) on the GPU: blocked bit-packed Warshall (warshall_adapt/cuda.py).
extern "C" __global__ void pivots_close(const unsigned long long* M, unsigned long long* S,
                                        int W, int kb, int cnt) {
    // block j: S[j] = M[p_j] | OR{ M[p_k] : pivot k reachable from pivot j through the block }
    __shared__ unsigned long long sub[64];
    __shared__ unsigned long long reach_s;
    int j = blockIdx.x;
    for (int t = threadIdx.x; t < 64; t += blockDim.x)
        sub[t] = (t < cnt) ? M[(long long)(64 * kb + t) * W + kb] : 0ULL;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long reach = (j < cnt) ? sub[j] : 0ULL, todo = reach;
        while (todo) {                       // a search over the 64 x 64 pivot sub-matrix
            int k = __ffsll((long long)todo) - 1;
            todo &= todo - 1;
            unsigned long long fresh = sub[k] & ~reach;
            reach |= fresh;
            todo |= fresh;
        }
        reach_s = reach;
    }
    __syncthreads();
    unsigned long long reach = reach_s;
    for (int w = threadIdx.x; w < W; w += blockDim.x) {
        unsigned long long acc = (j < cnt) ? M[(long long)(64 * kb + j) * W + w] : 0ULL, m = reach;
        while (m) { int k = __ffsll((long long)m) - 1; m &= m - 1; acc |= M[(long long)(64 * kb + k) * W + w]; }
        S[j * W + w] = acc;
    }
}

extern "C" __global__ void pivot_steps(const unsigned long long* M, int n, int W, int kb, int cnt,
                                       unsigned long long* total) {
    // total += sum over the pivots p of block kb of the rows holding bit p just before pivot p
    __shared__ unsigned long long sub[64];
    __shared__ unsigned long long pre[64];
    __shared__ unsigned long long warp_sums[32];
    for (int t = threadIdx.x; t < 64; t += blockDim.x)
        sub[t] = (t < cnt) ? M[(long long)(64 * kb + t) * W + kb] : 0ULL;
    __syncthreads();
    // pre[t]: pivot row t's word as it stands before pivot t (a Warshall on the 64 x 64
    // sub-matrix, thread r updating row r; row t itself does not change at pivot t)
    for (int t = 0; t < cnt; ++t) {
        unsigned long long pt = sub[t];
        if (threadIdx.x == 0) pre[t] = pt;
        if (threadIdx.x < cnt && threadIdx.x != t && ((sub[threadIdx.x] >> t) & 1ULL)) sub[threadIdx.x] |= pt;
        __syncthreads();
    }
    unsigned long long mine = 0ULL;
    for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < n;
         c += (long long)gridDim.x * blockDim.x) {
        unsigned long long w = M[c * W + kb];
        for (int t = 0; t < cnt; ++t)
            if ((w >> t) & 1ULL) { ++mine; w |= pre[t]; }
    }
    for (int off = 16; off > 0; off >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, off);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long sum = 0ULL;
        for (int i = 0; i < (int)(blockDim.x >> 5); ++i) sum += warp_sums[i];
        atomicAdd(total, sum);
    }
}

extern "C" __global__ void rows_update(unsigned long long* M, const unsigned long long* S,
                                       int n, int W, int kb, int use_smem) {
    extern __shared__ unsigned long long sS[];
    const unsigned long long* P = S;
    if (use_smem) {
        for (int idx = threadIdx.x; idx < 64 * W; idx += blockDim.x) sS[idx] = S[idx];
        __syncthreads();
        P = sS;
    }
    int lane = threadIdx.x & 31;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int nwarps = (gridDim.x * blockDim.x) >> 5;
    for (int c = warp; c < n; c += nwarps) {
        unsigned long long* row = M + (long long)c * W;
        unsigned long long wb = row[kb];
        if (wb == 0ULL) continue;
        unsigned long long bits = wb, m = wb;
        while (m) { int k = __ffsll((long long)m) - 1; m &= m - 1; bits |= P[k * W + kb]; }
        __syncwarp();   // every lane has read row[kb] before any lane rewrites it
        for (int w = lane; w < W; w += 32) {
            unsigned long long acc = row[w], mm = bits;
            while (mm) { int k = __ffsll((long long)mm) - 1; mm &= mm - 1; acc |= P[k * W + w]; }
            row[w] = acc;
        }
    }
}
