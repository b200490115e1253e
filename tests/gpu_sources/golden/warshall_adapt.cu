typedef unsigned long long u64;
typedef long long i64;
// ---------------------------------------------------------------- checked integers (Star's are unbounded)
__device__ __forceinline__ bool add_ovf(i64 a, i64 b, i64& r) { r = (i64)((u64)a + (u64)b); return ((a ^ r) & (b ^ r)) < 0; }
__device__ __forceinline__ bool sub_ovf(i64 a, i64 b, i64& r) { r = (i64)((u64)a - (u64)b); return ((a ^ b) & (a ^ r)) < 0; }
__device__ __forceinline__ bool mul_ovf(i64 a, i64 b, i64& r) {
    r = (i64)((u64)a * (u64)b);
    if (a == 0 || b == 0) return false;
    i64 hi = __mul64hi(a, b);
    return !((hi == 0 && r >= 0) || (hi == -1 && r < 0));
}
extern "C" __global__ void star_forall(long long start, long long m, long long W, long long NBITS, unsigned long long LASTMASK, unsigned long long* counts, unsigned long long* err, unsigned long long* tb_snap_p, long long k_snap_p, long long os_v_k, unsigned long long* tb_v_p, long long k_v_p) {
    __shared__ unsigned long long sh_word, sh_count;
    unsigned long long lc[28] = {0};
    long long v_loop = start + (long long)blockIdx.x;
    unsigned long long pv_v_v[R];
    unsigned long long pv_v_w[R];
    unsigned long long v0[R];
    unsigned long long v1[R];
    long long s2;
    long long s3;
    unsigned long long v4[R];
    if (os_v_k < 1 || os_v_k > k_snap_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[24]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v0[r] = (w < W) ? (tb_snap_p[(os_v_k - 1) * W + w]) : 0ULL; }
    for (int r = 0; r < R; ++r) pv_v_w[r] = v0[r];
    if (v_loop < 1 || v_loop > k_snap_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[24]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v1[r] = (w < W) ? (tb_snap_p[(v_loop - 1) * W + w]) : 0ULL; }
    for (int r = 0; r < R; ++r) pv_v_v[r] = v1[r];
    s2 = os_v_k;
    if (s2 < 1 || s2 > NBITS) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[2]++;
    { long long bw = (s2 - 1) >> 6; if (threadIdx.x == bw % blockDim.x) sh_word = pv_v_v[bw / blockDim.x]; }
    __syncthreads();
    s3 = (long long)((sh_word >> ((s2 - 1) & 63)) & 1ULL);
    __syncthreads();
    if ((s3 == 1LL)) {
        if (threadIdx.x == 0) lc[11]++;
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v4[r] = (w < W) ? (pv_v_v[r] | pv_v_w[r]) : 0ULL; }
        for (int r = 0; r < R; ++r) pv_v_v[r] = v4[r];
    }
    if (v_loop < 1 || v_loop > k_v_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[25]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; if (w < W) tb_v_p[(v_loop - 1) * W + w] = pv_v_v[r]; }
done:
    if (threadIdx.x == 0) {
        if (lc[2]) atomicAdd(&counts[2], lc[2]);
        if (lc[11]) atomicAdd(&counts[11], lc[11]);
        if (lc[24]) atomicAdd(&counts[24], lc[24]);
        if (lc[25]) atomicAdd(&counts[25], lc[25]);
    }
}
