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
extern "C" __global__ void star_forall(long long start, long long m, long long W, long long NBITS, unsigned long long LASTMASK, unsigned long long* counts, unsigned long long* err, unsigned long long* tb_snap_p, long long k_snap_p, long long os_v_n, unsigned long long* tb_v_p, long long k_v_p) {
    __shared__ unsigned long long sh_word, sh_count;
    unsigned long long lc[28] = {0};
    long long v_loop = start + (long long)blockIdx.x;
    long long ps_v_j = 0;
    long long ps_v_s = 0;
    unsigned long long pv_v_v[R];
    unsigned long long v0[R];
    long long s1;
    long long s2;
    long long s3;
    long long s4;
    long long s5;
    unsigned long long v6[R];
    unsigned long long v7[R];
    if (v_loop < 1 || v_loop > k_snap_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[24]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v0[r] = (w < W) ? (tb_snap_p[(v_loop - 1) * W + w]) : 0ULL; }
    for (int r = 0; r < R; ++r) pv_v_v[r] = v0[r];
    ps_v_s = 0LL;
    s1 = 1LL; s2 = os_v_n;
    for (ps_v_j = s1; ps_v_j <= s2; ++ps_v_j) {
        s3 = ps_v_j;
        if (s3 < 1 || s3 > NBITS) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        if (threadIdx.x == 0) lc[2]++;
        { long long bw = (s3 - 1) >> 6; if (threadIdx.x == bw % blockDim.x) sh_word = pv_v_v[bw / blockDim.x]; }
        __syncthreads();
        s4 = (long long)((sh_word >> ((s3 - 1) & 63)) & 1ULL);
        __syncthreads();
        if (add_ovf(ps_v_s, s4, s5)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        ps_v_s = s5;
    }
    if ((ps_v_s > 2LL)) {
        if (1LL < 1 || 1LL > k_snap_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        if (threadIdx.x == 0) lc[24]++;
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v6[r] = (w < W) ? (tb_snap_p[(1LL - 1) * W + w]) : 0ULL; }
        if (threadIdx.x == 0) lc[11]++;
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v7[r] = (w < W) ? (pv_v_v[r] | v6[r]) : 0ULL; }
        if (v_loop < 1 || v_loop > k_v_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        if (threadIdx.x == 0) lc[25]++;
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; if (w < W) tb_v_p[(v_loop - 1) * W + w] = v7[r]; }
    }
done:
    if (threadIdx.x == 0) {
        if (lc[2]) atomicAdd(&counts[2], lc[2]);
        if (lc[11]) atomicAdd(&counts[11], lc[11]);
        if (lc[24]) atomicAdd(&counts[24], lc[24]);
        if (lc[25]) atomicAdd(&counts[25], lc[25]);
    }
}
